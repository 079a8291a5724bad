"""Exact-set rule: the whole utterance is one of a set of phrases (with STT-tolerant fuzzing)."""

from __future__ import annotations

from collections.abc import Iterable

from voiced.rules.normalize import closest, normalize
from voiced.rules.rule import NO_MATCH, Action, Handled, Match, RuleResult, Utterance

PHRASE_THRESHOLD = 86.0
"""Least rapidfuzz ratio for a whole utterance to be taken for a phrase it nearly spells
("cancell" 92 is "cancel"). It has been one point stricter than the prefix rules'
(`voiced.rules.normalize.PREFIX_THRESHOLD`) since it was written; kept apart, not merged, so no
phrase starts or stops matching."""


class ExactSet:
    """Matches when the normalised utterance equals one of `phrases`.

    With `fuzzy` set (a rapidfuzz ratio 0..100) a near miss also matches, so "computers" or
    "compute her" still hit "computer". Spaces are ignored for the fuzzy comparison because speech
    to text splits and joins words at random ("read back" / "readback").
    """

    def __init__(
        self,
        name: str,
        phrases: Iterable[str],
        action: Action,
        fuzzy: float | None = PHRASE_THRESHOLD,
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
        best = closest(squashed, self._squashed, self.fuzzy)
        if best is None:
            return NO_MATCH
        squashed_phrase, score = best
        phrase = self._squashed[squashed_phrase]
        why = f'fuzzy "{text}"~"{phrase}" {score:.0f}'
        return Handled(Match(self.name, phrase, why, score=score), self.action)
