"""The global stop rule: "stop", "halt", "freeze", "emergency stop" from every frame and mode.

It is the one rule that bypasses the frame stack (see `CommandRouter`). It matches the word
anywhere in an utterance ("computer stop", "stop stop stop", "oh no stop it"): a false stop is
safe, a missed one is not. A word joined to another by a hyphen is not a stop ("non-stop",
"stop-gap"), nor is a longer word ("stopwatch", "stopped").
"""

from __future__ import annotations

import re

from voiced.frames.router import CommandRouter
from voiced.rules import NO_MATCH, Handled, Match, Rule, RuleResult, Utterance

STOP_WORDS = ("stop", "halt", "freeze", "emergency stop")


async def _stop(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    dropped = [f for f in router.stack[1:] if f.dropped_by_stop]
    unsent = [text for f in dropped if (text := f.unsent())]
    # The arm first: popping frames can wait a few microseconds, the robot cannot.
    await router.services.stop(utterance.said_by, unsent)
    for frame in reversed(dropped):
        if frame in router.stack:
            router.pop(frame)


STOP_PATTERN = re.compile(
    r"(?<![\w-])(?<!\bnon )(?:emergency stop|stop|halt|freeze)(?![\w-])(?! watch)"
)
"""On the text as written, lower case: normalising would turn "non-stop" into "non stop". The
transcriber writes those words apart too ("non stop", "stop watch"): neither is a stop."""


class StopWords:
    """The stop words in an utterance, as the transcriber wrote it."""

    name = "global_stop"

    def match(self, utterance: Utterance) -> RuleResult:
        found = STOP_PATTERN.search(utterance.text.lower())
        if found is None:
            return NO_MATCH
        why = f'stop word "{found.group(0)}"'
        return Handled(Match(self.name, found.group(0), why, {}), _stop)


def stop_rule() -> Rule:
    return StopWords()
