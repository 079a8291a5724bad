"""Text as every matcher compares it: one normaliser, one number-word converter, one fuzzy matcher.

Speech-to-text writes "Computer, add bread." or "go to position two"; rules compare against
"computer add bread" and "go to position 2". The rules, the interpreter's lexer, the audio guards
and wake word, rearrangement targets and the LLM resolver all take their forms of text from here.
Where one of them needs a different form (the guards keep apostrophes, names keep their
punctuation, the interpreter reads "three hundred") that is a named argument here, not a copy.

Like the rest of `voiced.rules` this imports nothing else of the project, so `voiced.audio` and
`voiced.robot` may use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz, process

# --- words -------------------------------------------------------------------------------------

Apostrophes = Literal["drop", "keep", "split"]
"""What an apostrophe does inside a word: "drop" ("what's" -> "whats": rules, interpreter),
"keep" ("what's": the audio guards, whose words are shown again) or "split" ("what s": every
character but a letter or digit breaks words, as the wake word counts them in the raw text)."""

_APOSTROPHES = re.compile(r"['’`]")
_STRAY_DOTS = re.compile(r"(?<![0-9])\.|\.(?![0-9])")


def _non_word(keep_apostrophe: bool, keep_dots: bool) -> re.Pattern[str]:
    kept = ("'" if keep_apostrophe else "") + ("." if keep_dots else "")
    return re.compile(f"[^a-z0-9{kept}]+")


_NON_WORD = {(a, d): _non_word(a, d) for a in (False, True) for d in (False, True)}


def words(text: str, *, apostrophes: Apostrophes = "drop", decimals: bool = True) -> list[str]:
    """Lower-case words of letters and digits; any other character breaks words.

    `apostrophes`: see `Apostrophes`. `decimals`: a dot between digits stays ("2.5"); False makes
    every dot a break ("2 5")."""
    lowered = text.lower()
    if apostrophes == "drop":
        lowered = _APOSTROPHES.sub("", lowered)
    elif apostrophes == "keep":
        lowered = lowered.replace("’", "'")
    spaced = _NON_WORD[apostrophes == "keep", decimals].sub(" ", lowered)
    if decimals:
        spaced = _STRAY_DOTS.sub(" ", spaced)
    return spaced.split()


def fold(text: str, breaks: str = "") -> str:
    """Only case and spacing folded ("Top_Left  Corner" -> "top_left corner"), each character
    of `breaks` read as a space (breaks="_-": "top left corner"). For names, where the rest of
    the punctuation is part of the name."""
    lowered = text.lower()
    for char in breaks:
        lowered = lowered.replace(char, " ")
    return " ".join(lowered.split())


# --- number words ------------------------------------------------------------------------------

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


def numbers_to_digits(
    tokens: Sequence[str], *, scales: bool = False, oh_after_digit: bool = False
) -> list[str]:
    """Every run of number words becomes one digit string ("twenty five" -> "25"); a word that
    cannot continue the number starts the next one ("one two" -> "1 2"). Other words stay.

    `scales`: "hundred" and "thousand" join the run ("three hundred and fifty" -> "350"), as
    the interpreter reads quantities; off, they stay words ("1 hundred").
    `oh_after_digit`: "oh" right after a digit is a zero ("one oh five" -> "1 0 5"), as codes are
    dictated; never on its own ("oh no")."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if oh_after_digit and tokens[i] == "oh" and out and out[-1].isdigit():
            out.append("0")
            i += 1
            continue
        value, used = _read_number(tokens, i, scales)
        if used:
            out.append(str(value))
            i += used
        else:
            out.append(tokens[i])
            i += 1
    return out


def _read_number(words: Sequence[str], start: int, scales: bool) -> tuple[int, int]:
    """(value, words used) of the number-word run at `start`; used is 0 when there is none."""
    total = current = 0
    last = ""
    i = start
    while i < len(words):
        word = words[i]
        after_round = last == "scale" and current % 100 == 0
        if word in _SMALL and (
            not last or after_round or (last == "tens" and 0 < _SMALL[word] < 10)
        ):
            current += _SMALL[word]
            last = "small"
        elif word in _TENS and (not last or after_round):
            current += _TENS[word]
            last = "tens"
        elif scales and word == "hundred" and current < 100 and last != "scale":
            current = max(current, 1) * 100
            last = "scale"
        elif scales and word == "thousand" and (current or not last) and total == 0:
            total, current = (current or 1) * 1000, 0
            last = "scale"
        elif word == "and" and last == "scale" and _next_is_number(words, i + 1):
            pass  # "three hundred and fifty"
        else:
            break
        i += 1
    return (total + current, i - start) if last else (0, 0)


def _next_is_number(words: Sequence[str], index: int) -> bool:
    return index < len(words) and (words[index] in _SMALL or words[index] in _TENS)


def normalize(text: str) -> str:
    """The canonical form rules match against: "Go to Position Two!" -> "go to position 2"."""
    return " ".join(numbers_to_digits(words(text), oh_after_digit=True))


# --- fuzzy matching ----------------------------------------------------------------------------

PREFIX_THRESHOLD = 85.0
"""Least rapidfuzz ratio (0-100) for leading words to be taken for a prefix they nearly spell:
"computers" (94) and "compute her" (89) are "computer"."""


def closest(query: str, choices: Iterable[str], cutoff: float) -> tuple[str, float] | None:
    """The choice most like `query` (the first of equals) and its score, if at least `cutoff`."""
    # A list, never a mapping: given a dict, rapidfuzz would return its values.
    found = process.extractOne(query, list(choices), scorer=fuzz.ratio, score_cutoff=cutoff)
    return None if found is None else (found[0], found[1])


def ranked(
    query: str, choices: Sequence[str], cutoff: float, limit: int
) -> list[tuple[str, float]]:
    """Up to `limit` choices scoring at least `cutoff`, most like `query` first."""
    found = process.extract(query, choices, scorer=fuzz.ratio, limit=limit, score_cutoff=cutoff)
    return [(choice, score) for choice, score, _ in found]


@dataclass(frozen=True)
class PrefixHit:
    """Leading words taken for one of the forms."""

    form: str
    """The form they were taken for, as given."""
    size: int
    """How many leading words."""
    score: float
    """rapidfuzz ratio of those words joined against the form joined (100: the same letters)."""


def fuzzy_prefix(
    tokens: Sequence[str], forms: Iterable[str], threshold: float = PREFIX_THRESHOLD
) -> PrefixHit | None:
    """The form the first words of `tokens` spell best, spaces aside, if at least `threshold`.

    A form of n words (space-separated, normalised like `tokens`) is compared with the first one
    to n+2 words joined, because speech to text splits and joins words at random ("compute her",
    "computers"). The earlier form and the shorter run win a tie; an empty form never matches."""
    best: PrefixHit | None = None
    for form in forms:
        target = form.replace(" ", "")
        if not target:
            continue
        for n in range(1, min(len(tokens), len(form.split()) + 2) + 1):
            score = fuzz.ratio("".join(tokens[:n]), target)
            if score >= threshold and (best is None or score > best.score):
                best = PrefixHit(form, n, score)
    return best
