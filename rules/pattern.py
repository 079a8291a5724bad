"""Prefix and regex rules, both capturing arguments."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rapidfuzz import fuzz
from voiced.rules.normalize import normalize
from voiced.rules.rule import NO_MATCH, Action, Handled, Match, RuleResult, Utterance


class Prefix:
    """Matches when the utterance starts with one of `prefixes`; the rest is captured as `rest`.

    The prefix is compared against the first one to three words joined together, so a wake word
    heard as "compute her" or "computers" still matches "computer" (rapidfuzz ratio >= `fuzzy`).
    """

    def __init__(
        self, name: str, prefixes: Iterable[str], action: Action, fuzzy: float | None = 85.0
    ) -> None:
        self.name = name
        self.action = action
        self.fuzzy = fuzzy
        self.prefixes = tuple(normalize(p) for p in prefixes)
        if not self.prefixes:
            raise ValueError(f"rule {name!r} needs at least one prefix")

    def match(self, utterance: Utterance) -> RuleResult:
        tokens = utterance.normalized.split()
        if not tokens:
            return NO_MATCH
        best: tuple[float, str, int] | None = None
        for prefix in self.prefixes:
            size = len(prefix.split())
            if tokens[:size] == prefix.split():
                rest = " ".join(tokens[size:])
                match = Match(self.name, prefix, f'prefix "{prefix}"', {"rest": rest})
                return Handled(match, self.action)
            if self.fuzzy is None:
                continue
            target = prefix.replace(" ", "")
            for n in range(1, min(len(tokens), size + 2) + 1):
                score = fuzz.ratio("".join(tokens[:n]), target)
                if score >= self.fuzzy and (best is None or score > best[0]):
                    best = (score, prefix, n)
        if best is None:
            return NO_MATCH
        score, prefix, n = best
        heard = " ".join(tokens[:n])
        why = f'fuzzy prefix "{heard}"~"{prefix}" {score:.0f}'
        args = {"rest": " ".join(tokens[n:])}
        return Handled(Match(self.name, prefix, why, args, score), self.action)


class Pattern:
    """Matches a regular expression against the normalised text; named groups become arguments."""

    def __init__(self, name: str, pattern: str, action: Action) -> None:
        self.name = name
        self.action = action
        self.regex = re.compile(pattern)

    def match(self, utterance: Utterance) -> RuleResult:
        found = self.regex.search(utterance.normalized)
        if found is None:
            return NO_MATCH
        args = {k: v for k, v in found.groupdict().items() if v is not None}
        why = f"pattern /{self.regex.pattern}/"
        return Handled(Match(self.name, found.group(0), why, args), self.action)
