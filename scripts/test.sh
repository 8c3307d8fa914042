#!/usr/bin/env bash
# The README's test command, as a ROS CI runs it: bootstrap/build if needed, then
#   colcon test --packages-select lerobot_tools_ros && colcon test-result --verbose
# in the built workspace (linters, unit tests, and tests that start real nodes over DDS on
# loopback). LEROBOT_ROS_DISTRO=jazzy tests against the Jazzy wheels (scripts/distro.sh).
# Arguments go to pytest (through colcon's --pytest-args), e.g. scripts/test.sh -k dispatcher.
#
# Fails when a test fails or errors, when pytest could not run, and when no test ran at all
# (colcon test alone reports success for all three). The last line is the count from pytest's
# JUnit report: "lerobot_tools_ros: N passed, N failed, N skipped".
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/bootstrap.sh
set +u
# shellcheck disable=SC1091
. scripts/env.sh
set -u
# What pytest gets from colcon test: this environment (colcon adds the workspace's hooks).
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export RCUTILS_COLORIZED_OUTPUT=0
export PYTHONUNBUFFERED=1
# Bytecode is cached: the suite starts hundreds of node processes, and each would otherwise
# compile what it imports again, and each pytest worker would rewrite every test module's
# asserts again (~12 s of CPU per worker). Set, but empty: colcon test sets an unset
# PYTHONDONTWRITEBYTECODE to 1, and Python reads an empty one as unset. (Some machines set it
# globally.)
export PYTHONDONTWRITEBYTECODE=

PACKAGE=lerobot_tools_ros
RESULTS="$LEROBOT_BUILD/$PACKAGE/pytest.xml"
rm -f "$RESULTS"
# colcon's --pytest-args takes the rest of the line; a leading space keeps "-k" and the like
# from being read as colcon options (colcon strips it).
# Tests wait on DDS and on node processes starting: LEROBOT_TEST_WORKERS pytest-xdist workers
# (default 4 on 2 cores) share the tests out as they finish; 0 runs them in this one process.
workers="${LEROBOT_TEST_WORKERS:-4}"
pytest_args=(" -ra" " -p" " no:cacheprovider")
if [ "$workers" != 0 ]; then pytest_args+=(" -n" " $workers" " --dist" " worksteal"); fi
for arg in "$@"; do pytest_args+=(" $arg"); done

say() { printf '[test] %s\n' "$*"; }
if [ "$workers" != 0 ] && [ $# -eq 0 ]; then
  # The workers start at once: without this each would rewrite the same test modules.
  say "pytest --collect-only: the test modules' rewritten bytecode, once for the $workers workers"
  python -m pytest "$PACKAGE/test" --collect-only -q -p no:cacheprovider -p no:xdist > /dev/null \
    || say "(collecting failed: colcon test below reports why)"
fi
say "colcon test --packages-select $PACKAGE (ROS 2 $LEROBOT_ROS_DISTRO)"
status=0
colcon --log-base "$LEROBOT_LOG" test --packages-select "$PACKAGE" \
  --base-paths lerobot_tools_interfaces lerobot_tools_ros \
  --build-base "$LEROBOT_BUILD" --install-base "$LEROBOT_INSTALL" \
  --event-handlers console_direct+ console_cohesion- summary+ status- \
  --return-code-on-test-failure \
  --pytest-args "${pytest_args[@]}" || status=$?
say "colcon test-result --verbose"
colcon test-result --test-result-base "$LEROBOT_BUILD/$PACKAGE" --verbose || status=$?

# The counts pytest wrote; no report, or a report of no test, fails.
python - "$RESULTS" "$PACKAGE" "$status" <<'PY'
import pathlib
import sys
import xml.etree.ElementTree as ET

path, package, status = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
if not path.exists():
    print(f'{package}: pytest wrote no report ({path}); colcon test did not run it')
    sys.exit(1)
root = ET.parse(path).getroot()
suites = [root] if root.tag == 'testsuite' else root.findall('testsuite')
count = {k: sum(int(s.get(k, 0)) for s in suites)
         for k in ('tests', 'failures', 'errors', 'skipped')}
failed = count['failures'] + count['errors']
passed = count['tests'] - failed - count['skipped']
if count['tests'] == 0 or passed == 0:
    print(f'{package}: no test ran ({count["tests"]} collected); something emptied the suite')
    sys.exit(1)
print(f'{package}: {passed} passed, {failed} failed, {count["skipped"]} skipped')
sys.exit(1 if failed or status else 0)
PY
