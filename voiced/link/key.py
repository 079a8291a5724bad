"""Where the daemon's controller key comes from: `[controller] key_file`, else the credential
systemd loaded (`LoadCredential=controller-key:...`), else none."""

from __future__ import annotations

import os
from pathlib import Path

from voiced.config import Config, resolve_config_path
from voiced.robot.auth import load_key

CREDENTIAL = "controller-key"
"""The credential's name in the unit's LoadCredential= line."""


def key_path(config: Config) -> Path | None:
    if config.controller.key_file:
        return resolve_config_path(config, config.controller.key_file)
    directory = os.environ.get("CREDENTIALS_DIRECTORY")
    if directory and (Path(directory) / CREDENTIAL).is_file():
        return Path(directory) / CREDENTIAL
    return None


def controller_key(config: Config) -> bytes | None:
    """The key, or None; a named file that cannot be read raises ControllerConnectionError."""
    path = key_path(config)
    return None if path is None else load_key(path)
