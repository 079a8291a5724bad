"""A rule that only applies while a condition holds (e.g. always-listen mode)."""

from __future__ import annotations

from collections.abc import Callable

from voiced.rules.rule import NO_MATCH, Rule, RuleResult, Utterance


class When:
    """Wraps `rule` so it matches only while `condition()` is true; `why` names the condition."""

    def __init__(self, condition: Callable[[], bool], rule: Rule, why: str) -> None:
        self.condition = condition
        self.rule = rule
        self.why = why
        self.name = f"{rule.name} (when {why})"

    def match(self, utterance: Utterance) -> RuleResult:
        return self.rule.match(utterance) if self.condition() else NO_MATCH
