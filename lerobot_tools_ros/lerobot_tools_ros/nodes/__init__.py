"""ROS 2 nodes: thin wiring of parameters, topics and services around the pure-Python core."""
