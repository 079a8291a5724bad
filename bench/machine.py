"""What the figures were measured on."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    """The `model name` of the first CPU in /proc/cpuinfo (the platform's guess elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or "unknown"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or "unknown"


def usable_cores() -> int:
    """CPUs this process may run on (the affinity mask where there is one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_info() -> dict[str, Any]:
    return {
        "cpu_model": cpu_model(),
        "cores": usable_cores(),
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.platform(),
    }
