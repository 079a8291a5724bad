"""matplotlib for the benchmarks' plots, when it is installed (it is the `bench` extra)."""

from __future__ import annotations

from typing import Any

MISSING = "matplotlib is not installed (pip install -e '.[bench]')"
"""Why a plot was skipped."""


def pyplot() -> Any | None:
    """matplotlib.pyplot drawing to files (the Agg backend), or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt
