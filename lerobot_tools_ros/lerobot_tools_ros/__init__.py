"""ROS 2 runtime for the tool calls LeRobot policies emit."""

__version__ = '0.1.0'
