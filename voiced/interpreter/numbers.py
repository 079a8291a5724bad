"""Numbers as spoken: digits and units.

Speech-to-text writes numbers either way ("3", "three", "30mm"), so the lexer splits glued units
off and turns every run of number words into one digit string
(`voiced.rules.normalize.numbers_to_digits`, with scales: "three hundred and fifty" -> "350")
before it looks anything up. Counting phrases ("a couple of", "twice") are vocabulary, not
arithmetic: see vocabulary.py.
"""

from __future__ import annotations

import re

# "30mm", "b1", "pos2": a letter-digit boundary inside a word is a word break.
_GLUED = re.compile(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])")

UNIT_FACTORS: dict[str, float] = {"mm": 1.0, "cm": 10.0, "in": 25.4, "s": 1.0, "min": 60.0,
                                  "ms": 0.001, "mm/s": 1.0}  # fmt: skip
"""Unit readings (vocabulary.UNITS) -> factor to the cell's units (mm, seconds, mm/s)."""
UNIT_DIMENSIONS: dict[str, str] = {"mm": "distance", "cm": "distance", "in": "distance",
                                   "s": "duration", "min": "duration", "ms": "duration",
                                   "mm/s": "speed"}  # fmt: skip
"""Unit reading -> what it measures."""
DISTANCE_UNITS = frozenset(unit for unit, kind in UNIT_DIMENSIONS.items() if kind == "distance")
"""The units of a distance ("cm", "mm", "in")."""


def as_number(word: str) -> float | None:
    """The value of a digit string ("3", "2.5"); None for anything else."""
    if not word or not (word[0].isdigit() or (word[0] == "." and len(word) > 1)):
        return None
    try:
        return float(word)
    except ValueError:
        return None


def tidy(value: float) -> int | float:
    """30.0 -> 30: parameters read better (and compare equal in tests) without a stray `.0`."""
    return int(value) if value == int(value) else value


def split_glued(words: list[str]) -> list[str]:
    """["30mm", "b1"] -> ["30", "mm", "b", "1"]."""
    out: list[str] = []
    for word in words:
        out.extend(_GLUED.sub(" ", word).split())
    return out
