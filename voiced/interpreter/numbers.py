"""Numbers as spoken: digits, number words ("twenty five", "three hundred and fifty") and units.

Speech-to-text writes numbers either way ("3", "three", "30mm"), so the lexer turns every run of
number words into one digit string before it looks anything up, and splits glued units off.
Counting phrases ("a couple of", "twice") are vocabulary, not arithmetic: see vocabulary.py.
"""

from __future__ import annotations

import re

_SMALL = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000}
# "30mm", "b1", "pos2": a letter-digit boundary inside a word is a word break.
_GLUED = re.compile(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])")

UNIT_FACTORS: dict[str, float] = {"mm": 1.0, "cm": 10.0, "in": 25.4, "s": 1.0, "min": 60.0,
                                  "ms": 0.001, "mm/s": 1.0}  # fmt: skip
"""Unit readings (vocabulary.UNITS) -> factor to the cell's units (mm, seconds, mm/s)."""
UNIT_DIMENSIONS: dict[str, str] = {"mm": "distance", "cm": "distance", "in": "distance",
                                   "s": "duration", "min": "duration", "ms": "duration",
                                   "mm/s": "speed"}  # fmt: skip
"""Unit reading -> what it measures."""


def is_number_word(word: str) -> bool:
    return word in _SMALL or word in _TENS or word in _SCALES


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


def words_to_digits(words: list[str]) -> list[str]:
    """Every run of number words becomes one digit string: "three hundred and fifty" -> "350",
    "twenty five" -> "25", "one" -> "1". Other words are kept as they are."""
    out: list[str] = []
    i = 0
    while i < len(words):
        value, used = _read_number(words, i)
        if used:
            out.append(str(value))
            i += used
        else:
            out.append(words[i])
            i += 1
    return out


def _read_number(words: list[str], start: int) -> tuple[int, int]:
    """(value, words used) of the number-word run at `start`; used is 0 when there is none.
    A word that cannot continue the number ("five five") ends it."""
    total = current = 0
    last = ""
    i = start
    while i < len(words):
        word = words[i]
        if word in _SMALL and (
            not last or last == "tens" or (last == "scale" and current % 100 == 0)
        ):
            current += _SMALL[word]
            last = "small"
        elif word in _TENS and (not last or (last == "scale" and current % 100 == 0)):
            current += _TENS[word]
            last = "tens"
        elif word == "hundred" and current < 100 and last != "scale":
            current = max(current, 1) * 100
            last = "scale"
        elif word == "thousand" and (current or not last) and total == 0:
            total, current = (current or 1) * 1000, 0
            last = "scale"
        elif word == "and" and last == "scale" and _next_is_small(words, i + 1):
            pass  # "three hundred and fifty"
        else:
            break
        i += 1
    return (total + current, i - start) if last else (0, 0)


def _next_is_small(words: list[str], index: int) -> bool:
    return index < len(words) and (words[index] in _SMALL or words[index] in _TENS)
