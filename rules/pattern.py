"""Prefix and regex rules, both capturing arguments."""

from __future__ import annotations

import re
from collections.abc import Iterable

from voiced.rules.normalize import PREFIX_THRESHOLD, fuzzy_prefix, normalize
from voiced.rules.rule import NO_MATCH, Action, Handled, Match, RuleResult, Utterance


class Prefix:
    """Matches when the utterance starts with one of `prefixes`; the rest is captured as `rest`.

    The prefix is compared against the first one to three words joined together, so a wake word
    heard as "compute her" or "computers" still matches "computer" (rapidfuzz ratio >= `fuzzy`;
    None: exact prefixes only). An exact prefix wins over any near miss.
    """

    def __init__(
        self,
        name: str,
        prefixes: Iterable[str],
        action: Action,
        fuzzy: float | None = PREFIX_THRESHOLD,
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
        for prefix in self.prefixes:
            size = len(prefix.split())
            if tokens[:size] == prefix.split():
                rest = " ".join(tokens[size:])
                match = Match(self.name, prefix, f'prefix "{prefix}"', {"rest": rest})
                return Handled(match, self.action)
        if self.fuzzy is None:
            return NO_MATCH
        hit = fuzzy_prefix(tokens, self.prefixes, self.fuzzy)
        if hit is None:
            return NO_MATCH
        heard = " ".join(tokens[: hit.size])
        why = f'fuzzy prefix "{heard}"~"{hit.form}" {hit.score:.0f}'
        args = {"rest": " ".join(tokens[hit.size :])}
        return Handled(Match(self.name, hit.form, why, args, hit.score), self.action)


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
