"""Subcommands of ``lerobot-tools-ros``; each module is listed in ``cli.COMMANDS``."""
