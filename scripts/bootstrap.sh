#!/usr/bin/env bash
# From a fresh Debian/Ubuntu machine without ROS 2 to a built workspace, in one command.
#
#   1. Debian packages (espeak-ng, libportaudio2, xmllint, cmake): installed when root,
#      else the exact apt-get command is printed.
#   2. .venv (Python 3.11) with ROS 2 Kilted from PyPI wheels and every Python dependency,
#      pinned in requirements.txt (+ requirements-tts.txt for torch/pocket-tts).
#   3. The wheels' CMake include-path quirk, fixed inside .venv (scripts/fix_wheel_cmake_paths.py).
#   4. colcon build of both packages into install/.
#
# Idempotent: each step is skipped when its inputs have not changed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3.11}"
VENV="$ROOT/.venv"
APT_PACKAGES=(espeak-ng libportaudio2 libxml2-utils cmake g++)

say() { printf '[bootstrap] %s\n' "$*"; }

# 1. Debian packages -----------------------------------------------------------------------
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  else
    say "missing Debian packages: ${missing[*]}"
    say "run: sudo apt-get update && sudo apt-get install -y ${missing[*]}"
    say "(continuing; the tests that need them will fail until they are installed)"
  fi
else
  say "Debian packages present: ${APT_PACKAGES[*]}"
fi

# 2. Virtual environment ---------------------------------------------------------------------
if ! command -v "$PYTHON" >/dev/null; then
  say "error: $PYTHON not found. The ROS 2 Kilted wheels are built for CPython 3.11;"
  say "install it (e.g. apt-get install python3.11-venv) or set PYTHON=/path/to/python3.11"
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
fi
req_files=(requirements.txt)
[ -f requirements-tts.txt ] && req_files=(requirements-tts.txt requirements.txt)
stamp="$VENV/.requirements.sha256"
want="$(cat "${req_files[@]}" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  for req in "${req_files[@]}"; do
    say "pip install -r $req"
    # (this machine's pip.conf names index folders that do not exist; pip warns per package)
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" 2>&1 \
      | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
  done
  echo "$want" > "$stamp"
else
  say "Python requirements up to date (${req_files[*]})"
fi

# 3. CMake include paths of the wheels -------------------------------------------------------
say "pointing the wheels' CMake targets at local include dirs (inside .venv only):"
"$VENV/bin/python" scripts/fix_wheel_cmake_paths.py "$VENV"

# 4. colcon build ----------------------------------------------------------------------------
say "colcon build -> $ROOT/install"
set +u
# shellcheck disable=SC1091
. "$VENV/bin/activate"
set -u
export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV"
colcon --log-base log build --symlink-install \
  --base-paths lerobot_tools_interfaces lerobot_tools_ros \
  --event-handlers console_cohesion- summary+ status- \
  --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$VENV/bin/python" \
  2>&1 | grep -v "doesn't contain any 'local_setup" || { say "colcon build failed"; exit 1; }
test -f install/setup.bash || { say "colcon build produced no install/setup.bash"; exit 1; }
say "done. Enter the workspace with: . scripts/env.sh   (or prefix commands with scripts/with_env.sh)"
