"""Text normalisation shared by every rule: lower case, no punctuation, number words as digits.

Speech-to-text writes "Computer, add bread." or "go to position two"; rules compare against
"computer add bread" and "go to position 2".
"""

from __future__ import annotations

import re

_NUMBER_WORDS = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_TENS = {20, 30, 40, 50, 60, 70, 80, 90}
# Apostrophes vanish ("what's" -> "whats"); other punctuation becomes a word break.
_APOSTROPHES = re.compile(r"['’`]")
_NON_WORD = re.compile(r"[^a-z0-9.]+")
_STRAY_DOTS = re.compile(r"(?<![0-9])\.|\.(?![0-9])")


def words(text: str) -> list[str]:
    """Lower-case words with punctuation removed; decimal points inside numbers survive."""
    lowered = _APOSTROPHES.sub("", text.lower())
    spaced = _STRAY_DOTS.sub(" ", _NON_WORD.sub(" ", lowered))
    return spaced.split()


def _numbers_to_digits(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        value = _NUMBER_WORDS.get(tokens[i])
        # "oh" is only a number next to other digits ("one oh five"), never on its own.
        if value is None or (tokens[i] == "oh" and not (out and out[-1].isdigit())):
            out.append(tokens[i])
            i += 1
            continue
        nxt = _NUMBER_WORDS.get(tokens[i + 1]) if i + 1 < len(tokens) else None
        if value in _TENS and nxt is not None and 0 < nxt < 10:
            out.append(str(value + nxt))
            i += 2
        else:
            out.append(str(value))
            i += 1
    return out


def normalize(text: str) -> str:
    """The canonical form rules match against: "Go to Position Two!" -> "go to position 2"."""
    return " ".join(_numbers_to_digits(words(text)))
