"""Exact-set rule: the whole utterance is one of a set of phrases (with STT-tolerant fuzzing)."""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz import fuzz, process
from voiced.rules.normalize import normalize
from voiced.rules.rule import NO_MATCH, Action, Handled, Match, RuleResult, Utterance


class ExactSet:
    """Matches when the normalised utterance equals one of `phrases`.

    With `fuzzy` set (a rapidfuzz ratio 0..100) a near miss also matches, so "computers" or
    "compute her" still hit "computer". Spaces are ignored for the fuzzy comparison because speech
    to text splits and joins words at random ("read back" / "readback").
    """

    def __init__(
        self, name: str, phrases: Iterable[str], action: Action, fuzzy: float | None = 86.0
    ) -> None:
        self.name = name
        self.action = action
        self.fuzzy = fuzzy
        self.phrases = frozenset(normalize(p) for p in phrases)
        if not self.phrases:
            raise ValueError(f"rule {name!r} needs at least one phrase")
        self._squashed = {p.replace(" ", ""): p for p in self.phrases}

    def match(self, utterance: Utterance) -> RuleResult:
        text = utterance.normalized
        if text in self.phrases:
            return Handled(Match(self.name, text, f'exact "{text}"'), self.action)
        if self.fuzzy is None or not text:
            return NO_MATCH
        squashed = text.replace(" ", "")
        best = process.extractOne(squashed, self._squashed.keys(), scorer=fuzz.ratio)
        if best is None or best[1] < self.fuzzy:
            return NO_MATCH
        phrase = self._squashed[best[0]]
        why = f'fuzzy "{text}"~"{phrase}" {best[1]:.0f}'
        return Handled(Match(self.name, phrase, why, score=best[1]), self.action)
