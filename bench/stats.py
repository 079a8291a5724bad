"""Percentile summaries of timing samples (nanoseconds in, microseconds out)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Summary:
    """Distribution of one timing, in microseconds."""

    samples: int
    p50_us: float
    p95_us: float
    p99_us: float
    min_us: float
    mean_us: float

    def to_dict(self) -> dict[str, Any]:
        return {key: round(value, 3) for key, value in asdict(self).items()}


def percentile(ordered: Sequence[int], p: float) -> int:
    """Nearest-rank percentile of already sorted samples."""
    if not ordered:
        raise ValueError("no samples")
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


def summarise(samples_ns: Sequence[int]) -> Summary:
    """p50/p95/p99/min/mean of `samples_ns`, in microseconds."""
    ordered = sorted(samples_ns)
    return Summary(
        samples=len(ordered),
        p50_us=percentile(ordered, 50) / 1e3,
        p95_us=percentile(ordered, 95) / 1e3,
        p99_us=percentile(ordered, 99) / 1e3,
        min_us=ordered[0] / 1e3,
        mean_us=statistics.fmean(ordered) / 1e3,
    )
