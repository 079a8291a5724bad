"""Killing a writer with SIGKILL at a moment of our choosing: the crash-safety tests' one tool."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_and_kill(script: str, args: list[str], after: float) -> None:
    """Run `script` (Python source that prints "ready" once it starts writing) with `args`, let
    it write for `after` seconds, then SIGKILL it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        time.sleep(after)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
