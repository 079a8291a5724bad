"""The lexer: spoken text to tokens over one cell's precompiled vocabulary.

Normalises ("Put 3 slices of Cheese, please!" -> "put 3 slices of cheese please"), turns number
words into digits, then matches the longest known phrase at each word. A word the cell does not
know is checked against known speech-to-text confusions and then, with rapidfuzz, against the
cell's content words; a unique near miss snaps to the vocabulary word and the snap is recorded
(`Lexed.snaps`). Fillers ("please", "could you") are dropped; they are never snap targets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from voiced.interpreter.numbers import as_number
from voiced.interpreter.vocabulary import (
    COUNT_MISHEARD,
    MISHEARD_BEFORE,
    Entry,
    Reading,
    VerbSense,
    Vocabulary,
    normal_words,
)
from voiced.rules.normalize import ranked

SNAP_CUTOFF = 80.0
"""Least rapidfuzz ratio (0-100) for a near miss of six letters or more to snap."""
SHORT_SNAP_CUTOFF = 85.0
"""The same for words of four or five letters ("brad" -> "bread" 89, "plate" -> "place" 80 no)."""
SNAP_MARGIN = 5.0
"""A snap must beat the runner-up of a different meaning by this much (otherwise ambiguous)."""
_NEVER_SNAPPED = frozenset({
    "what", "want", "with", "have", "this", "when", "where", "there", "their", "they", "them",
    "then", "than", "were", "will", "would", "should", "shall", "must", "been", "being", "does",
    "done", "make", "made", "sure", "mode", "more", "most", "much", "many", "like", "okay",
    "fine", "good", "nice", "great", "plate",
})  # fmt: skip
"""Everyday words that are near some vocabulary word but are never a mishearing of it."""


@dataclass(frozen=True)
class Token:
    """One word or phrase of the command."""

    text: str
    """The words as heard (normalised)."""
    start: int
    """Character offset in `Lexed.said`."""
    readings: Mapping[str, Reading]
    """Kind -> meaning; empty for an unknown word."""
    snapped: str | None = None
    """The vocabulary words it was taken for, when it was a near miss."""

    def has(self, kind: str) -> bool:
        return kind in self.readings

    def text_value(self, kind: str) -> str:
        """The reading of `kind` as a name (raises KeyError when absent)."""
        return str(self.readings[kind])

    def number(self, kind: str = "number") -> float:
        value = self.readings[kind]
        assert isinstance(value, float)
        return value

    def verb(self) -> VerbSense | None:
        sense = self.readings.get("verb")
        return sense if isinstance(sense, VerbSense) else None

    @property
    def unknown(self) -> bool:
        return not self.readings


@dataclass(frozen=True)
class Lexed:
    """A command as tokens."""

    said: str
    """The normalised text the token offsets refer to (the failure `context`)."""
    tokens: tuple[Token, ...]
    """Everything but fillers, in order."""
    snaps: tuple[tuple[str, str], ...]
    """(heard, taken as) for every near miss that snapped."""


class Lexer:
    """Tokenises commands for one cell; build once per cell (the tables are precompiled)."""

    def __init__(self, vocabulary: Vocabulary, snap_cutoff: float = SNAP_CUTOFF) -> None:
        self.vocabulary = vocabulary
        self.snap_cutoff = snap_cutoff
        self._phrases = dict(vocabulary.phrases)
        self._targets = list(vocabulary.snap_targets)
        self._cache: dict[str, tuple[Entry, str] | None] = {}

    def add_phrase(self, phrase: str, entry: Entry) -> None:
        """Teach the lexer a phrase at run time (a verb the LLM resolver mapped)."""
        key = tuple(normal_words(phrase))
        if key:
            self._phrases[key] = entry

    def lex(self, text: str) -> Lexed:
        words = normal_words(text)
        said = " ".join(words)
        offsets = _offsets(words)
        tokens: list[Token] = []
        snaps: list[tuple[str, str]] = []
        i = 0
        while i < len(words):
            token, used = self._token_at(words, i, offsets[i])
            i += used
            if token.snapped is not None:
                snaps.append((token.text, token.snapped))
            if "filler" not in token.readings:
                tokens.append(token)
        return Lexed(said, tuple(tokens), tuple(snaps))

    def _token_at(self, words: list[str], i: int, start: int) -> tuple[Token, int]:
        if i + 1 < len(words):
            target = MISHEARD_BEFORE.get((words[i], words[i + 1]))
            if target is not None and (target,) in self._phrases:
                return Token(words[i], start, self._phrases[(target,)].readings, target), 1
        for size in range(min(self.vocabulary.longest, len(words) - i), 0, -1):
            entry = self._phrases.get(tuple(words[i : i + size]))
            if entry is not None:
                text = " ".join(words[i : i + size])
                return Token(text, start, entry.readings, entry.canonical), size
        word = words[i]
        number = as_number(word)
        if number is None and i + 1 < len(words) and words[i + 1].startswith("layer"):
            number = COUNT_MISHEARD.get(word)
        if number is not None:
            return Token(word, start, {"number": number}), 1
        near = self._near_miss(word)
        if near is not None:
            entry, target = near
            return Token(word, start, entry.readings, target), 1
        return Token(word, start, {}), 1

    def _near_miss(self, word: str) -> tuple[Entry, str] | None:
        if word not in self._cache:
            self._cache[word] = self._snap(word)
        return self._cache[word]

    def _snap(self, word: str) -> tuple[Entry, str] | None:
        target = self.vocabulary.heard_as.get(word)
        if target is not None:
            return self._phrases[(target,)], target
        if len(word) < 4 or word in _NEVER_SNAPPED or not word.isalpha():
            return None
        cutoff = self.snap_cutoff if len(word) >= 6 else max(self.snap_cutoff, SHORT_SNAP_CUTOFF)
        found = ranked(word, self._targets, cutoff, limit=4)
        if not found:
            return None
        best, score = found[0]
        entry = self.vocabulary.snap_targets[best]
        for other, other_score in found[1:]:
            different = self.vocabulary.snap_targets[other].readings != entry.readings
            if different and score - other_score < SNAP_MARGIN:
                return None  # "snap only when unambiguous"
        return entry, best


def _offsets(words: list[str]) -> list[int]:
    offsets: list[int] = []
    position = 0
    for word in words:
        offsets.append(position)
        position += len(word) + 1
    return offsets
