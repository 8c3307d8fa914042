#!/usr/bin/env bash
# From a fresh Debian/Ubuntu machine without ROS 2 to a built workspace, in one command.
#
#   1. Debian packages (espeak-ng, libportaudio2, xmllint, cmake): installed when root,
#      else the exact apt-get command is printed.
#   2. A venv (Python 3.11) with ROS 2 from PyPI wheels and every Python dependency, pinned in
#      requirements.txt (Kilted, .venv) or requirements-jazzy.txt (Jazzy, .venv-jazzy), plus
#      requirements-tts.txt for torch/pocket-tts (LEROBOT_TTS: on for Kilted, off for Jazzy).
#   3. The wheels' CMake include-path quirk, fixed inside that venv (fix_wheel_cmake_paths.py).
#   4. colcon build of both packages into install/ (Jazzy: install-jazzy/).
#
# The distribution comes from LEROBOT_ROS_DISTRO (kilted, the default, or jazzy); see distro.sh.
# Idempotent: each step is skipped when its inputs have not changed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3.11}"
LEROBOT_WS="$ROOT"
# shellcheck source=distro.sh
. "$ROOT/scripts/distro.sh"
VENV="$LEROBOT_VENV"
APT_PACKAGES=(espeak-ng libportaudio2 libxml2-utils cmake g++ iproute2)
# The installer of the pinned Python requirements (pip is the fallback); see step 2.
UV_VERSION=0.13.8

say() { printf '[bootstrap] %s\n' "$*"; }
say "ROS 2 $LEROBOT_ROS_DISTRO (LEROBOT_ROS_DISTRO): venv ${VENV#"$ROOT"/}, $LEROBOT_REQUIREMENTS," \
  "${LEROBOT_INSTALL#"$ROOT"/}/"

# 1. Debian packages -----------------------------------------------------------------------
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian packages: ${missing[*]}"
    # One installer at a time: .ci/run bootstraps both distros at once (apt-get install of a
    # package the other one installed meanwhile does nothing).
    (
      flock 9
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
    ) 9>"${TMPDIR:-/tmp}/lerobot_tools_ros-apt.lock"
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
  say "error: $PYTHON not found. The ROS 2 wheels are built for CPython 3.11;"
  say "install it (e.g. apt-get install python3.11-venv) or set PYTHON=/path/to/python3.11"
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
  echo "$LEROBOT_ROS_DISTRO" > "$VENV/.lerobot_ros_distro"
fi
# A venv holds one distro's wheels only: refuse one that holds another's (made before this
# marker existed: told by its rclpy, 9.x Kilted, 7.x Jazzy).
have="$(cat "$VENV/.lerobot_ros_distro" 2>/dev/null || "$VENV/bin/python" - <<'PY'
from importlib import metadata
try:
    major = metadata.version('ros-rclpy').split('.')[0]
except metadata.PackageNotFoundError:
    major = ''
print({'9': 'kilted', '7': 'jazzy'}.get(major, ''))
PY
)"
if [ -n "$have" ] && [ "$have" != "$LEROBOT_ROS_DISTRO" ]; then
  say "error: $VENV holds ROS 2 $have wheels, not $LEROBOT_ROS_DISTRO; remove it (and"
  say "${LEROBOT_BUILD#"$ROOT"/}/ ${LEROBOT_INSTALL#"$ROOT"/}/) or choose LEROBOT_ROS_DISTRO=$have"
  exit 1
fi
[ -n "$have" ] || echo "$LEROBOT_ROS_DISTRO" > "$VENV/.lerobot_ros_distro"
req_files=("$LEROBOT_REQUIREMENTS")
if [ "$LEROBOT_TTS" = 1 ] && [ -f requirements-tts.txt ]; then
  req_files=(requirements-tts.txt "$LEROBOT_REQUIREMENTS")
else
  say "without requirements-tts.txt (LEROBOT_TTS=$LEROBOT_TTS): the pocket-tts tests skip"
fi
stamp="$VENV/.requirements.sha256"
compiling=''
want="$(cat "${req_files[@]}" | sha256sum | cut -d' ' -f1)"
pip_install() {
  # (this machine's pip.conf names index folders that do not exist; pip warns per package)
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@" 2>&1 \
    | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
  return "${PIPESTATUS[0]}"
}
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # uv resolves and installs the pinned files in seconds where pip takes minutes; torch alone
  # comes through pip, which takes this machine's local CPU wheel (uv would download a CUDA
  # build). Without uv (offline, or its install fails) pip installs everything. uv copies
  # (never hard-links) from its cache: step 3 edits files of the venv in place. Neither
  # compiles bytecode: scripts/warm_bytecode.py writes it for what is imported (step 4).
  torch_pin="$(grep -h -m1 -E '^torch==' "${req_files[@]}" || true)"
  if [ -n "$torch_pin" ]; then
    say "pip install $torch_pin"
    pip_install --no-compile "$torch_pin"
  fi
  if [ "${LEROBOT_USE_UV:-1}" = 1 ] && pip_install "uv==$UV_VERSION" \
      && say "uv pip install -r ${req_files[*]}" \
      && "$VENV/bin/uv" pip install --quiet --link-mode=copy \
        --python "$VENV/bin/python" \
        "${req_files[@]/#/--requirements=}"; then
    :
  else
    for req in "${req_files[@]}"; do
      say "pip install -r $req"
      pip_install -r "$req"
    done
  fi
  # The libraries' bytecode is written while colcon builds the interfaces (step 4; neither
  # needs the other): the build's code generators leave one core idle much of the time.
  say "writing the bytecode of the libraries the nodes and tests import (beside the build)"
  env -u PYTHONDONTWRITEBYTECODE "$VENV/bin/python" scripts/warm_bytecode.py libraries &
  compiling=$!
  echo "$want" > "$stamp"
else
  say "Python requirements up to date (${req_files[*]})"
fi

# 3. CMake include paths of the wheels -------------------------------------------------------
say "pointing the wheels' CMake targets at local include dirs (inside ${VENV#"$ROOT"/} only):"
"$VENV/bin/python" scripts/fix_wheel_cmake_paths.py "$VENV"

# 4. colcon build ----------------------------------------------------------------------------
say "colcon build -> $LEROBOT_INSTALL"
set +u
# shellcheck disable=SC1091
. "$VENV/bin/activate"
set -u
export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV"
colcon --log-base "$LEROBOT_LOG" build --symlink-install \
  --build-base "$LEROBOT_BUILD" --install-base "$LEROBOT_INSTALL" \
  --base-paths lerobot_tools_interfaces lerobot_tools_ros \
  --event-handlers console_cohesion- summary+ status- \
  --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$VENV/bin/python" \
  2>&1 | grep -v "doesn't contain any 'local_setup" || { say "colcon build failed"; exit 1; }
test -f "$LEROBOT_INSTALL/setup.bash" || { say "colcon build produced no $LEROBOT_INSTALL/setup.bash"; exit 1; }
if [ -n "$compiling" ]; then
  wait "$compiling" || true  # a module not imported here is compiled at its first import
fi
# The package's own bytecode (in the build space; seconds).
env -u PYTHONDONTWRITEBYTECODE scripts/with_env.sh python scripts/warm_bytecode.py package || true
say "done. Enter the workspace with: . scripts/env.sh   (or prefix commands with scripts/with_env.sh)"
