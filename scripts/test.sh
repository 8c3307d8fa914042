#!/usr/bin/env bash
# The README's test command: bootstrap/build if needed, then pytest over the workspace
# (linters, unit tests, and tests that start real nodes talking over DDS on loopback).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/bootstrap.sh
set +u
# shellcheck disable=SC1091
. scripts/env.sh
set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# `pytest` (not `python -m pytest`): the source tree's lerobot_tools_interfaces/ directory must
# not shadow the built package. Exit status 5 (no tests collected) fails like any other.
exec pytest lerobot_tools_ros/test -p no:cacheprovider -q -ra "$@"
