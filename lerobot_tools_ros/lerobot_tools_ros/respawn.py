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
When a launch file restarts a node that ended (pure: no launch, no rclpy).

After a crash of a node that ran fine; never after a configuration error, a clean exit or too
many restarts.

`lerobot_tools.launch.py` asks `RespawnPolicy.decide` each time a node it may respawn exits
(its `respawn`, `respawn_max`, `respawn_delay` arguments). A node that refused its
configuration exits EXIT_CONFIGURATION_ERROR (78) after one line saying what to change;
restarting it would print the same line forever, so the launch is shut down instead.
"""

from dataclasses import dataclass

from lerobot_tools_ros.errors import EXIT_CONFIGURATION_ERROR

__all__ = ['MIN_UPTIME_S', 'Decision', 'LaunchRefused', 'RespawnPolicy']

# A node that ends sooner than this after its start did not "run fine": it failed while
# starting (a bug, a device missing), and would most likely fail the same way again.
MIN_UPTIME_S = 10.0


class LaunchRefused(RuntimeError):
    """
    Raised by a launch file's action when a node refused its configuration.

    launch turns an exception raised by an action into its shutdown reason and a non-zero
    return code; a Shutdown event alone ends the launch with status 0.
    """


@dataclass(frozen=True)
class Decision:
    """Whether to restart a node that ended, and the one line that says so."""

    restart: bool
    shutdown: bool  # end the whole launch (a configuration error)
    message: str


@dataclass(frozen=True)
class RespawnPolicy:
    """Restart at most `max_restarts` times, `delay_s` after an exit, if it ran `min_uptime_s`."""

    max_restarts: int = 3
    delay_s: float = 2.0
    min_uptime_s: float = MIN_UPTIME_S

    def __post_init__(self) -> None:
        if self.max_restarts < 0 or self.delay_s < 0 or self.min_uptime_s < 0:
            raise ValueError(f'respawn limits must not be negative: {self}')

    def decide(self, node: str, returncode: int | None, uptime_s: float,
               restarts: int) -> Decision:
        """Return what to do now that `node` exited with `returncode` after `uptime_s`."""
        if returncode == EXIT_CONFIGURATION_ERROR:
            return Decision(False, True, f'{node} refused its configuration (exit status '
                                         f'{EXIT_CONFIGURATION_ERROR}; its error line above says '
                                         'what to change): not restarted, stopping the launch')
        if returncode == 0:
            return Decision(False, False, f'{node} exited normally: not restarted')
        how = (f'was killed by signal {-returncode}' if returncode is not None and returncode < 0
               else f'crashed (exit status {returncode})')
        if uptime_s < self.min_uptime_s:
            return Decision(False, False, f'{node} {how} {uptime_s:.1f} s after it started, '
                                          f'before running {self.min_uptime_s:g} s: not '
                                          'restarted (it would most likely fail again)')
        if restarts >= self.max_restarts:
            return Decision(False, False, f'{node} {how} after {uptime_s:.0f} s: not restarted, '
                                          f'it was restarted {restarts} time(s) already '
                                          f'(respawn_max:={self.max_restarts})')
        return Decision(True, False, f'{node} {how} after {uptime_s:.0f} s: restarting it in '
                                     f'{self.delay_s:g} s (restart {restarts + 1} of '
                                     f'{self.max_restarts})')
