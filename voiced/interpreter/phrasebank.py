"""The phrase bank: known phrases -> sequences, the interpreter's fast path (seed 000).

Entries come from the packaged `phrase_bank.json` (common phrases per cell) and from the data
directory's `phrase_bank.json` (`learned_aliases`, written by the memory writer), which closes
seed 000's "memory pipeline" loop: a learned phrase works on the very next utterance
(`add_alias`) and after a restart (`load`).

Matching compares normalised text with fillers dropped ("could you make a BLT please" is "make
blt"). Fuzzy matching (rapidfuzz ratio >= threshold) only forgives misheard words: a phrase that
differs in a number, or in a word the cell knows ("position 1" vs "position 2", "left" vs
"right"), is never a fuzzy hit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import structlog

from voiced.errors import Problem
from voiced.interpreter.confidence import phrase_confidence
from voiced.interpreter.result import Interpretation
from voiced.interpreter.vocabulary import normal_words
from voiced.paths import DataDir
from voiced.robot.cell import Cell
from voiced.robot.sequence import SequenceStep, StepFormatError
from voiced.rules.normalize import ranked

log = structlog.get_logger(__name__)

DEFAULT_THRESHOLD = 90.0
"""Least rapidfuzz ratio (0-100) for a fuzzy hit."""
PACKAGED = "phrase_bank.json"
"""The seed phrase bank shipped with the package (voiced/interpreter/phrase_bank.json)."""
LEARNED_KEY = "learned_aliases"
"""The data directory file's section: cell -> phrase -> {"composite", "sequence"}."""
_DROPPED = frozenset({
    "please", "the", "a", "an", "could", "can", "would", "will", "you", "me", "just", "now",
    "kindly", "robot", "some", "for", "ok", "okay",
})  # fmt: skip

SameContent = Callable[[str, str], bool]
"""Whether two texts name the same things (cell words, numbers); the grammar supplies one."""


@dataclass(frozen=True)
class PhraseMatch:
    """A phrase bank hit."""

    phrase: str
    """The bank's phrase (normalised)."""
    heard: str
    """What was said (normalised)."""
    sequence: tuple[SequenceStep, ...]
    """What the phrase means."""
    score: float
    """rapidfuzz ratio, 100 for an exact hit."""
    exact: bool
    learned: bool
    """True for a learned alias (data directory), False for a packaged phrase."""


def key(text: str) -> str:
    """The comparison form of a phrase: normalised words without fillers."""
    return " ".join(w for w in normal_words(text) if w not in _DROPPED)


class PhraseBank:
    """Known phrases of one cell. Mutable only through `add_alias`."""

    def __init__(self, cell: Cell, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.cell = cell
        self.threshold = threshold
        self._entries: dict[str, tuple[tuple[SequenceStep, ...], bool]] = {}
        self.problems: list[Problem] = []
        """What was skipped while loading (malformed or unknown entries), for the log."""

    @classmethod
    def packaged(cls, cell: Cell, threshold: float = DEFAULT_THRESHOLD) -> PhraseBank:
        """The packaged phrases for `cell` (by its name) only."""
        bank = cls(cell, threshold)
        text = resources.files("voiced.interpreter").joinpath(PACKAGED).read_text("utf-8")
        phrases = json.loads(text).get("cells", {}).get(cell.name, {})
        for phrase, sequence in phrases.items():
            bank._add(phrase, sequence, False, f"{PACKAGED}: cells.{cell.name}.{phrase}")
        return bank

    @classmethod
    def load(
        cls, cell: Cell, data_dir: DataDir | None, threshold: float = DEFAULT_THRESHOLD
    ) -> PhraseBank:
        """Packaged phrases plus the data directory's learned aliases for `cell`. A malformed
        file or entry is skipped and reported (`problems`, and a warning in the log)."""
        bank = cls.packaged(cell, threshold)
        if data_dir is not None:
            bank._load_learned(data_dir.phrase_bank)
        return bank

    def add_alias(self, phrase: str, sequence: Sequence[SequenceStep]) -> None:
        """A learned phrase, effective at once (the memory writer persists it)."""
        self._entries[key(phrase)] = (tuple(sequence), True)

    def phrases(self) -> list[str]:
        return list(self._entries)

    def exact(self, text: str) -> PhraseMatch | None:
        heard = key(text)
        found = self._entries.get(heard)
        if found is None:
            return None
        return PhraseMatch(heard, heard, found[0], 100.0, True, found[1])

    def fuzzy(self, text: str, same_content: SameContent | None = None) -> PhraseMatch | None:
        """The best phrase at or above the threshold that names the same things."""
        heard = key(text)
        if not heard or not self._entries:
            return None
        for phrase, score in ranked(heard, list(self._entries), self.threshold, limit=5):
            if _digits(phrase) != _digits(heard):
                continue
            if same_content is not None and not same_content(phrase, heard):
                continue
            sequence, learned = self._entries[phrase]
            return PhraseMatch(phrase, heard, sequence, float(score), phrase == heard, learned)
        return None

    def match(self, text: str, same_content: SameContent | None = None) -> PhraseMatch | None:
        return self.exact(text) or self.fuzzy(text, same_content)

    def interpret(self, hit: PhraseMatch, correlation_id: str | None = None) -> Interpretation:
        """Seed 000's result for a hit (source "phrase_bank")."""
        how = "known phrase" if hit.exact else f"sounds like '{hit.phrase}' ({hit.score:.0f}%)"
        return Interpretation(
            interpretation=f"{hit.phrase.capitalize()} ({how}).",
            sequence=hit.sequence,
            pass1_sequence=hit.sequence,
            confidence=phrase_confidence(hit.score, self.threshold, hit.exact),
            validated=True,
            source="phrase_bank",
            correlation_id=correlation_id,
        )

    def _add(self, phrase: object, raw: object, learned: bool, where: str) -> None:
        sequence = self._sequence(raw, where)
        if not isinstance(phrase, str) or not key(phrase):
            self.problems.append(Problem(where, "", "a phrase must be a non-empty string"))
        elif sequence is not None:
            self._entries[key(phrase)] = (sequence, learned)

    def _sequence(self, raw: object, where: str) -> tuple[SequenceStep, ...] | None:
        if not isinstance(raw, list) or not raw:
            self.problems.append(Problem(where, "", "expected a non-empty list of steps"))
            return None
        try:
            steps = tuple(SequenceStep.from_dict(step) for step in raw)
        except StepFormatError as error:
            self.problems.append(Problem(where, "", f"malformed step: {error}"))
            return None
        unknown = [s.instruction for s in steps if self.cell.composite(s.instruction) is None]
        if unknown:
            self.problems.append(Problem(where, "", f"unknown instruction {unknown[0]!r}"))
            return None
        return steps

    def _load_learned(self, path: Path) -> None:
        if not path.exists():
            return
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            self._report(Problem(str(path), "", f"cannot read learned aliases: {error}"))
            return
        section = data.get(LEARNED_KEY, {}) if isinstance(data, dict) else None
        aliases = section.get(self.cell.name, {}) if isinstance(section, dict) else None
        if not isinstance(aliases, dict):
            self._report(Problem(str(path), LEARNED_KEY, "expected an object per cell"))
            return
        before = len(self.problems)
        for phrase, entry in aliases.items():
            where = f"{path}: {LEARNED_KEY}.{self.cell.name}.{phrase}"
            self._add(phrase, _alias_sequence(self.cell, entry), True, where)
        for problem in self.problems[before:]:
            log.warning("phrase bank entry skipped", problem=str(problem))

    def _report(self, problem: Problem) -> None:
        self.problems.append(problem)
        log.warning("phrase bank entry skipped", problem=str(problem))


def _alias_sequence(cell: Cell, entry: object) -> object:
    """A learned alias runs its composite when the cell has it (loaded from
    learned_composites.json), else the sequence it was learned from."""
    if not isinstance(entry, Mapping):
        return entry
    composite = entry.get("composite")
    if isinstance(composite, str) and cell.composite(composite) is not None:
        return [{"instruction": composite, "params": {}}]
    return entry.get("sequence")


def _digits(text: str) -> list[str]:
    return [w for w in text.split() if w[:1].isdigit()]
