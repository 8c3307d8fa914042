#!/usr/bin/env bash
# Run one command inside the built workspace, e.g. scripts/with_env.sh lerobot-tools-ros catalog
set -euo pipefail
# shellcheck disable=SC1091
. "$(dirname "$0")/env.sh"
exec "$@"
