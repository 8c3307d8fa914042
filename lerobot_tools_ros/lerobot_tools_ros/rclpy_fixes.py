# Copyright 2026 lerobot_tools_ros contributors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.


"""
Work-arounds for what the rclpy releases we run on get wrong or lack; each says why.

This is the only module that touches rclpy's private names (a structure test checks it).

`NodeSnapshot`: a managed node's cleanup takes away everything its configure made, which rclpy
has no API for (read-only parameters cannot be undeclared, parameter callbacks not dropped).

`send_goal_async`: rclpy 9.1.2 (Kilted) `ActionClient.send_goal_async` registers two futures
per goal with the executor and completes one (a regression of ros2/rclpy#1308, fixed upstream
by ros2/rclpy#1532). The orphan is never removed from the client's `_futures`, which every
executor pass over the client walks: each goal leaks memory and makes every later action message
slower (after 10,000 goals, each message walked 10,000 futures; the dispatcher's throughput fell
from hundreds to tens of calls/s). Jazzy's rclpy has one future and is left alone.
"""

from typing import Any


def parameter_overrides(node: Any) -> dict | None:
    """
    Return the values a parameters file or -p gave `node`, by name (None: rclpy keeps none).

    rclpy keeps them in the node's private `_parameter_overrides` (Humble, Jazzy, Kilted) and
    offers no API to read the ones not declared (a map's keys, a misspelled name).
    """
    return getattr(node, '_parameter_overrides', None)


def parameters_declared_on(node: Any) -> dict:
    """Return `node`'s declared parameters by name (rclpy's private `_parameters`)."""
    return getattr(node, '_parameters', {})


def send_goal_async(client: Any, goal: Any, **kwargs: Any) -> Any:
    """Send a goal like `client.send_goal_async`, dropping the orphan future rclpy may leave."""
    futures = getattr(client, '_futures', None)
    if not isinstance(futures, list):
        return client.send_goal_async(goal, **kwargs)
    # Executor threads may add and remove futures meanwhile (MultiThreadedExecutor): find the
    # orphan by identity, never by position. `before` keeps the known ones alive (ids stay unique).
    before = list(futures)
    known = {id(f) for f in before}
    future = client.send_goal_async(goal, **kwargs)
    added = [f for f in list(futures) if id(f) not in known and f is not future]
    # Read after `added`: rclpy files a future as pending before it adds it to `_futures`, and
    # unfiles it only once done, so every live future in `added` is in here but the orphan.
    pending = [f for name in ('_pending_goal_requests', '_pending_result_requests',
                              '_pending_cancel_requests')
               for f in list(getattr(client, name, {}).values())]
    for candidate in added:
        if not candidate.done() and all(candidate is not p for p in pending):
            try:
                futures.remove(candidate)  # never completed, never removed by rclpy
            except ValueError:
                pass
    return future


_ENTITIES = (('_publishers', 'destroy_publisher'), ('_subscriptions', 'destroy_subscription'),
             ('_clients', 'destroy_client'), ('_services', 'destroy_service'),
             ('_timers', 'destroy_timer'), ('_guards', 'destroy_guard_condition'))
_CALLBACK_LISTS = ('_on_set_parameters_callbacks', '_pre_set_parameters_callbacks',
                   '_post_set_parameters_callbacks')


class NodeSnapshot:
    """
    What a node holds now; `take_away` destroys what was added since (a managed node's cleanup).

    rclpy offers no way to un-declare a read-only parameter or to drop a parameter callback, and
    keeps its entities in private lists: this reads and edits them (rclpy 7.1-9.1; the managed
    node tests go through cleanup and configure again on both distros).
    """

    def __init__(self, node: Any, keep: frozenset = frozenset()) -> None:
        self.keep = keep
        self.entities = {attr: list(getattr(node, attr, ())) for attr, _ in _ENTITIES}
        self.waitables = list(getattr(node, '_waitables', ()))
        self.parameters = set(node._parameters)
        self.callbacks = {attr: list(getattr(node, attr, ())) for attr in _CALLBACK_LISTS}
        self.attributes = dict(vars(node))

    def take_away(self, node: Any) -> None:
        """Destroy every entity, parameter and callback added since; restore the attributes."""
        for waitable in [w for w in getattr(node, '_waitables', ()) if w not in self.waitables]:
            destroy = getattr(waitable, 'destroy', None)
            try:
                if destroy is not None:
                    destroy()  # action servers and clients remove themselves from the node
                else:
                    node.remove_waitable(waitable)
            except Exception as exc:  # noqa: B902 - release the rest regardless
                node.get_logger().warning(f'cleanup: {type(waitable).__name__}: {exc}')
        for attr, destroy in _ENTITIES:
            for entity in [e for e in getattr(node, attr, ()) if e not in self.entities[attr]]:
                try:
                    getattr(node, destroy)(entity)
                except Exception as exc:  # noqa: B902 - release the rest regardless
                    node.get_logger().warning(f'cleanup: {type(entity).__name__}: {exc}')
        for name in [name for name in node._parameters if name not in self.parameters]:
            # Read-only parameters cannot be undeclared through the API: forgotten directly.
            node._parameters.pop(name, None)
            node._descriptors.pop(name, None)
        for attr in _CALLBACK_LISTS:
            callbacks = getattr(node, attr, None)
            if callbacks is not None:
                callbacks[:] = [c for c in callbacks if c in self.callbacks[attr]]
        for name in [name for name in vars(node) if name not in self.attributes]:
            delattr(node, name)
        for name, value in self.attributes.items():
            if name not in self.keep and getattr(node, name, None) is not value:
                setattr(node, name, value)
