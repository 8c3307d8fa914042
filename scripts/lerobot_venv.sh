#!/usr/bin/env bash
# Make .venv-lerobot: Python 3.12 with lerobot 0.6.1 (requirements-lerobot-check.txt), for the
# tests that make and read datasets with LeRobot's own code. Reused when it already holds that
# lerobot. Python 3.12 is taken from LEROBOT_PYTHON312, else python3.12 on PATH, else a pyenv
# install; without one this says so and exits 2 (the test then skips). The venv counts as made
# only once READY is written at the end (a venv half made, or made by hand, is not used).
# Measured on a 2-core machine: 2-5 min idle or at nice 19 beside other work, 13 min under heavy
# load; ~5.4 GB (torch 2.11 with its CUDA libraries: PyPI's torch for Linux pulls them in;
# LeRobot's dataset code imports torch).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv-lerobot"
REQUIREMENTS="$ROOT/requirements-lerobot-check.txt"
READY="$VENV/.lerobot-check-ready"
say() { printf '[lerobot-venv] %s\n' "$*"; }

find_python() {
  local candidate
  for candidate in "${LEROBOT_PYTHON312:-}" python3.12 \
      "$HOME"/.pyenv/versions/3.12*/bin/python3.12; do
    [ -n "$candidate" ] || continue
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
      command -v "$candidate" || echo "$candidate"
      return 0
    fi
  done
  return 1
}

if [ -f "$READY" ] && "$VENV/bin/python" -c \
    'import importlib.metadata as m, sys; sys.exit(m.version("lerobot") != "0.6.1")' 2>/dev/null
then
  say "$VENV already holds lerobot 0.6.1"
  exit 0
fi
if ! python312="$(find_python)"; then
  say "no Python 3.12 here (set LEROBOT_PYTHON312 to one); the upstream check will skip"
  exit 2
fi
say "creating $VENV with $python312 ($(date +%T))"
start=$SECONDS
"$python312" -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
touch "$READY"
say "done in $((SECONDS - start)) s: $(du -sh "$VENV" | cut -f1)"
