"""Catch-all rule: any utterance with real words in it."""

from __future__ import annotations

import re

from voiced.rules.normalize import words
from voiced.rules.rule import NO_MATCH, Action, Handled, Match, RuleResult, Utterance

# Whisper's bracketed tags ([BLANK_AUDIO], (music)) and hesitation noises are not words.
_TAGS = re.compile(r"\[[^\]]*\]|\([^)]*\)|<\|[^|]*\|>")
_FILLERS = frozenset({"uh", "um", "erm", "er", "ah", "hmm", "mm", "hm", "uhm"})


def has_real_words(text: str) -> bool:
    """True when the text holds at least one word that is not a tag or a filler."""
    stripped = _TAGS.sub(" ", text)
    return any(t not in _FILLERS for t in words(stripped, apostrophes="split", decimals=False))


class CatchAll:
    """Handles every utterance with real words; the action receives the text as said."""

    def __init__(self, name: str, action: Action) -> None:
        self.name = name
        self.action = action

    def match(self, utterance: Utterance) -> RuleResult:
        if not has_real_words(utterance.text):
            return NO_MATCH
        match = Match(self.name, utterance.text, "catch-all: real words", {"text": utterance.text})
        return Handled(match, self.action)
