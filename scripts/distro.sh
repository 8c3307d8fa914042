# Sourced by bootstrap.sh, env.sh and test.sh: which ROS 2 distribution this workspace uses, and
# where its venv and colcon directories are.
#
# LEROBOT_ROS_DISTRO=kilted (default) | jazzy. A variable of this project, not ROS_DISTRO: a
# sourced /opt/ros/<distro>/setup.bash sets ROS_DISTRO, and that must not switch the wheels.
# Each distro has its own venv and its own build/install/log directories, because the two
# distros' wheels share names: installing one over the other would leave a mixed venv, and a
# build made against one distro's interfaces does not load with the other's rclpy.
#   kilted: .venv        requirements.txt        build/        install/        log/
#   jazzy:  .venv-jazzy  requirements-jazzy.txt  build-jazzy/  install-jazzy/  log-jazzy/
# LEROBOT_TTS=1|0: also install requirements-tts.txt (default: 1 for kilted, 0 for jazzy).
LEROBOT_ROS_DISTRO="${LEROBOT_ROS_DISTRO:-kilted}"
case "$LEROBOT_ROS_DISTRO" in
  kilted)
    LEROBOT_VENV="$LEROBOT_WS/.venv"
    LEROBOT_REQUIREMENTS="requirements.txt"
    LEROBOT_SUFFIX=""
    LEROBOT_TTS="${LEROBOT_TTS:-1}" ;;
  jazzy)
    LEROBOT_VENV="$LEROBOT_WS/.venv-jazzy"
    LEROBOT_REQUIREMENTS="requirements-jazzy.txt"
    LEROBOT_SUFFIX="-jazzy"
    # torch + pocket-tts (requirements-tts.txt) do not touch ROS and are tested with Kilted;
    # leaving them out keeps CI's second venv small (their tests skip). LEROBOT_TTS=1 adds them.
    LEROBOT_TTS="${LEROBOT_TTS:-0}" ;;
  *)
    echo "LEROBOT_ROS_DISTRO must be kilted or jazzy, not '$LEROBOT_ROS_DISTRO'" >&2
    return 2 ;;
esac
LEROBOT_BUILD="$LEROBOT_WS/build$LEROBOT_SUFFIX"
LEROBOT_INSTALL="$LEROBOT_WS/install$LEROBOT_SUFFIX"
LEROBOT_LOG="$LEROBOT_WS/log$LEROBOT_SUFFIX"
export LEROBOT_ROS_DISTRO
