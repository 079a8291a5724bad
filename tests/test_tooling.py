"""The tree stays ruff-clean and mypy --strict clean (the team's style guide asks for both), and
the text a user reads names no design document by number."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_ruff_check() -> None:
    proc = run(str(BIN / "ruff"), "check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format() -> None:
    proc = run(str(BIN / "ruff"), "format", "--check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict() -> None:
    proc = run(sys.executable, str(REPO / ".ci" / "typecheck"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


USER_FACING = ["README.md", "config.toml", "docs/*.md", "systemd/*", "robot/cells/*.toml",
               "bench/*.md"]  # fmt: skip
DESIGN_NUMBER = re.compile(r"\bseeds?[\s-]+0\d\d\b|\bissue\s+#?\d+\b", re.IGNORECASE)


def test_user_facing_text_names_no_design_document_or_issue_by_number() -> None:
    """The design documents are cited by name; numbers (seed 000, issue 9) mean nothing to a
    user. Line breaks inside the phrase count too."""
    found = []
    for pattern in USER_FACING:
        for path in sorted(REPO.glob(pattern)):
            text = path.read_text("utf-8")
            found += [
                f"{path.relative_to(REPO)}: {m.group(0)!r}" for m in DESIGN_NUMBER.finditer(text)
            ]
    help_text = run(sys.executable, "-m", "voiced.cli", "--help").stdout
    found += [f"voiced --help: {m.group(0)!r}" for m in DESIGN_NUMBER.finditer(help_text)]
    assert not found, "\n".join(found)
