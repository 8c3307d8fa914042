"""
One `main()` for every node executable of this package.

Starts rclpy, spins the node on a SingleThreadedExecutor (measured fastest for these nodes),
turns a configuration error into one clear line and exit status 1, and shuts down cleanly on
Ctrl-C.
"""

import sys
from typing import Callable

from lerobot_tools_ros.catalog import CatalogError
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

# What a node's constructor raises for bad parameters or a bad catalog.
CONFIGURATION_ERRORS = (CatalogError, ValueError, TypeError)


def run_node(make_node: Callable[[], Node], name: str, args: list[str] | None = None) -> int:
    """Create the node from `make_node`, spin it until shutdown, return the exit status."""
    rclpy.init(args=args)
    node = None
    try:
        node = make_node()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except CONFIGURATION_ERRORS as exc:
        print(f'[{name}] error: {exc}', file=sys.stderr)
        return 1
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
