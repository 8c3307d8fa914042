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
Error codes shared by the pure-Python core and the ROS interfaces.

The values mirror the constants in ``lerobot_tools_interfaces/msg/ErrorCodes.msg`` so the core
can be used without a ROS graph; ``test_interfaces.py`` checks that both stay identical.
"""

PARSE_ERROR = 'parse_error'
UNKNOWN_TOOL = 'unknown_tool'
INVALID_ARGUMENTS = 'invalid_arguments'
NOT_ALLOWED = 'not_allowed'
PAUSED = 'paused'
RATE_LIMITED = 'rate_limited'
BUSY = 'busy'
UNAVAILABLE = 'unavailable'
TIMEOUT = 'timeout'
ANSWER_LOST = 'answer_lost'
EXECUTION_FAILED = 'execution_failed'
STALE_FRAME = 'stale_frame'
NO_FRAME = 'no_frame'
CANCELLED = 'cancelled'
DUPLICATE = 'duplicate'
DENIED = 'denied'
APPROVAL_TIMEOUT = 'approval_timeout'

ALL_CODES = (
    PARSE_ERROR, UNKNOWN_TOOL, INVALID_ARGUMENTS, NOT_ALLOWED, PAUSED, RATE_LIMITED, BUSY,
    UNAVAILABLE, TIMEOUT, ANSWER_LOST, EXECUTION_FAILED, STALE_FRAME, NO_FRAME, CANCELLED,
    DUPLICATE, DENIED, APPROVAL_TIMEOUT,
)

# Whether a call's tool may have acted (the outcome field; Outcomes.msg says what each means):
# not_run (nothing was sent), ran (the executor answered how it ended), unknown (sent, then the
# answer was lost).
NOT_RUN = 'not_run'
RAN = 'ran'
UNKNOWN = 'unknown'
ALL_OUTCOMES = (NOT_RUN, RAN, UNKNOWN)
# Codes that only gates give before anything is sent: an executor that leaves the outcome field
# empty (one that is not a tool_server of this package) is read as not_run for these, unknown
# for TIMEOUT and ANSWER_LOST, and ran for anything else it answered.
GATE_CODES = (PARSE_ERROR, UNKNOWN_TOOL, INVALID_ARGUMENTS, NOT_ALLOWED, PAUSED, RATE_LIMITED,
              BUSY, UNAVAILABLE, DUPLICATE, DENIED, APPROVAL_TIMEOUT)
LOST_CODES = (TIMEOUT, ANSWER_LOST)


def answered_outcome(code: str, outcome: str = '') -> str:
    """
    Return the outcome of an executor's answer: its own when it gave one, else read off `code`.

    Only for answers that carry no outcome (an executor written before the field existed):
    every path of this package decides the outcome where it knows what was sent.
    """
    if outcome in ALL_OUTCOMES:
        return outcome
    if code in GATE_CODES:
        return NOT_RUN
    return UNKNOWN if code in LOST_CODES else RAN


# Outcomes that are not failures: the call was handled as intended (counted apart in diagnostics).
BENIGN_CODES = (DUPLICATE,)

# The outcomes each code comes with, and when (the reference's outcome column). A success is
# always ran.
CODE_OUTCOMES = {
    PARSE_ERROR: 'not_run',
    UNKNOWN_TOOL: 'not_run',
    INVALID_ARGUMENTS: 'not_run; ran when the tool itself refused a value after it was called '
                       '(a streamed say whose complete call turned out invalid)',
    NOT_ALLOWED: 'not_run',
    PAUSED: 'not_run (not sent, or refused by its tool_server before it started); ran when it '
            'was stopped part-way',
    RATE_LIMITED: 'not_run',
    BUSY: 'not_run; ran when a streamed say was speaking as its generation broke off',
    UNAVAILABLE: 'not_run',
    TIMEOUT: 'unknown',
    ANSWER_LOST: 'unknown',
    EXECUTION_FAILED: 'ran (not_run when the tool refused before acting, e.g. a bound goal '
                      'rejected by the robot)',
    STALE_FRAME: 'ran',
    NO_FRAME: 'ran',
    CANCELLED: 'not_run (stopped before it started); ran when it was stopped part-way; unknown '
               "when a bound goal's cancel was not confirmed",
    DUPLICATE: 'not_run',
    DENIED: 'not_run',
    APPROVAL_TIMEOUT: 'not_run',
}


# Exit status of a node that refused its configuration (sysexits.h EX_CONFIG): the launch
# files never restart a node that exits with it.
EXIT_CONFIGURATION_ERROR = 78


class ConfigurationError(ValueError):
    """
    A setting that cannot work (a path that cannot be written, a value out of range).

    The one type for every refusal of a user's configuration (parameters, catalogs, bindings,
    tool packages): raised on purpose, with a message naming the setting, the value and what to
    change; node runners print it as one line (exit status EXIT_CONFIGURATION_ERROR) instead
    of a traceback.
    """


class ToolError(Exception):
    """
    A tool failure that carries one of the error codes above.

    Tools raise it to choose the code a caller sees (``no_frame`` rather than the generic
    ``execution_failed`` that any other exception maps to). `outcome`: whether the tool may have
    acted (``NOT_RUN`` when it stopped before sending anything, ``UNKNOWN`` when a request went
    out and its answer did not come); empty means it ran.
    """

    def __init__(self, code: str, message: str, outcome: str = '') -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.outcome = outcome
