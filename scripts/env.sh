# Source this file to enter the built workspace: the venv with the ROS 2 wheels, then the
# colcon install space. Used by scripts/with_env.sh and by the README's commands.
# LEROBOT_ROS_DISTRO=jazzy selects the Jazzy venv and install-jazzy/ (scripts/distro.sh).
LEROBOT_WS="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=distro.sh
. "$LEROBOT_WS/scripts/distro.sh" || return 2
# shellcheck disable=SC1091
. "$LEROBOT_VENV/bin/activate"
# The wheels install their ament index into the venv; colcon and ament_index look there.
export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
if [ -f "$LEROBOT_INSTALL/setup.bash" ]; then
  # setup.bash trips over unset variables; relax nounset while sourcing it.
  _lerobot_nounset=$(set +o | grep nounset); set +u
  # shellcheck disable=SC1091
  . "$LEROBOT_INSTALL/setup.bash"
  eval "$_lerobot_nounset"
  # ROS puts a package's executables in lib/<package> (for `ros2 run`); without the ros2 CLI,
  # put them on PATH: lerobot-tools-ros, dispatcher, tool_server, speaker, ...
  export PATH="$LEROBOT_INSTALL/lerobot_tools_ros/lib/lerobot_tools_ros:$PATH"
fi
unset _lerobot_nounset
