"""`voiced print-unit` and `voiced print-config`: the files an integrator pipes into place.

tests/test_packaging.py runs them from an installed wheel; these run them from the tree and
check what a shell pipeline does with them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.helpers import voiced, voiced_env

REPO = Path(__file__).resolve().parents[2]


def printed(tmp: Path, *args: str) -> str:
    proc = subprocess.run(voiced(*args), capture_output=True, text=True, env=voiced_env(tmp),
                          cwd=tmp, timeout=60)  # fmt: skip
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return proc.stdout


def test_print_unit_is_the_shipped_unit(tmp_path: Path) -> None:
    assert printed(tmp_path, "print-unit") == (REPO / "systemd/voiced.service").read_text()
    sysusers = (REPO / "systemd/voiced.sysusers.conf").read_text()
    assert printed(tmp_path, "print-unit", "--sysusers") == sysusers


def test_print_config_is_config_toml(tmp_path: Path) -> None:
    assert printed(tmp_path, "print-config") == (REPO / "config.toml").read_text()


def test_a_reader_that_stops_early_is_not_an_error(tmp_path: Path) -> None:
    # `voiced print-config | head -1`: the reader has gone before the file is written.
    proc = subprocess.Popen(voiced("print-config"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=voiced_env(tmp_path))  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""
