"""The LLM classifier rule: the one async rule, for answers patterns cannot foresee.

It asks a classifier which of a few labels an utterance means ("sure, why not" -> yes). With no
classifier configured (offline, no API key) it never matches, so a frame behaves exactly as its
pattern rules say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import structlog
from voiced.rules.catchall import has_real_words
from voiced.rules.rule import NO_MATCH, Action, Handled, Match, RuleResult, Utterance

log = structlog.get_logger(__name__)


class Classifier(Protocol):
    """Chooses one of `labels` for `text`, or None when none fits (or the model failed)."""

    async def classify(
        self, text: str, labels: Sequence[str], context: str
    ) -> tuple[str, str] | None:
        """(label, reasoning) or None."""


class LlmClassifier:
    """Matches when the classifier puts the utterance under one of `actions`' labels."""

    def __init__(
        self,
        name: str,
        actions: Mapping[str, Action],
        classifier: Classifier | None,
        context: str,
    ) -> None:
        self.name = name
        self.actions = dict(actions)
        self.classifier = classifier
        self.context = context

    def match(self, utterance: Utterance) -> RuleResult:
        """The synchronous path never waits for a model: see `match_async`."""
        return NO_MATCH

    async def match_async(self, utterance: Utterance) -> RuleResult:
        if self.classifier is None or not has_real_words(utterance.text):
            return NO_MATCH
        answer = await self.classifier.classify(utterance.text, list(self.actions), self.context)
        if answer is None:
            return NO_MATCH
        label, reasoning = answer
        action = self.actions.get(label)
        if action is None:
            log.warning("classifier answered an unknown label", label=label, rule=self.name)
            return NO_MATCH
        why = f"llm: {label} ({reasoning})" if reasoning else f"llm: {label}"
        return Handled(Match(self.name, label, why, {"label": label}, score=50.0), action)
