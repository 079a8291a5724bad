"""Files the package carries for the integrator to install elsewhere.

An installed wheel has no source tree, so the systemd unit, its service account and the
configuration template are printed from the package (`voiced print-unit`, `voiced print-config`)
and the integrator pipes them where they belong.
"""

from __future__ import annotations

from importlib.resources import files

from voiced.config import default_config_toml

UNIT = "voiced.service"
SYSUSERS = "voiced.sysusers.conf"


def systemd_file(name: str) -> str:
    """One of the files of systemd/ in the source tree (`voiced.systemd` once installed)."""
    return files("voiced.systemd").joinpath(name).read_text(encoding="utf-8")


def config_template() -> str:
    """What `python -m voiced.config` prints and config.toml holds: every key, its default."""
    return default_config_toml()
