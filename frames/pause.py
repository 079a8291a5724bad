"""The global pause rule: "pause", "hold on", "hold it", "wait", from every frame.

Like the stop it bypasses the frame stack and takes the stop's fast path (the stop spotter
hears it too, since it asks the router's global rules), but it keeps the rest of the plan:
the daemon halts the arm and holds what was said, and "continue" asks before any of it runs.

Unlike the stop it must be the whole utterance (a leading wake word or "okay", a trailing
"please" aside): "wait 5 seconds" and "add bread and hold it there" are commands, not pauses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voiced.frames.router import CommandRouter
from voiced.rules import NO_MATCH, Handled, Match, Rule, RuleResult, Utterance

PAUSE_WORDS = (
    "pause", "hold on", "hold it", "hold up", "hang on", "wait a second", "wait a moment",
    "wait a minute", "wait a sec", "one moment", "wait",
)  # fmt: skip
_LEADING = ("okay", "ok", "oh", "hey", "please", "robot", "computer")
_TRAILING = ("please", "a second", "a moment", "a sec", "a minute", "there", "now", "it",
             "for a second", "for a moment", "the robot", "the arm")  # fmt: skip


def _pattern(wake_words: Sequence[str]) -> re.Pattern[str]:
    lead = "|".join(re.escape(w.lower()) for w in (*wake_words, *_LEADING))
    core = "|".join(re.escape(w) for w in PAUSE_WORDS)
    tail = "|".join(re.escape(w) for w in sorted(_TRAILING, key=len, reverse=True))
    return re.compile(rf"^(?:(?:{lead}) )*(?P<pause>{core})(?: (?:{tail}))*$")


def _plain(text: str) -> str:
    """Lower case, punctuation gone (a transcript writes "Hold on!", "Wait, a second.")."""
    return " ".join(re.sub(r"[^\w' ]+", " ", text.lower()).split())


class PauseWords:
    """The pause phrases, when they are all that was said."""

    name = "global_pause"

    def __init__(self, wake_words: Sequence[str] = ()) -> None:
        self.pattern = _pattern(wake_words)

    def match(self, utterance: Utterance) -> RuleResult:
        found = self.pattern.match(_plain(utterance.text))
        if found is None:
            return NO_MATCH
        why = f'pause words "{found.group("pause")}"'
        return Handled(Match(self.name, found.group("pause"), why, {}), _pause)


async def _pause(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    await router.services.pause(utterance.said_by)
    # A command still being said ("I want a latte" ... "hold on") is not sent after the
    # pause: the operator held it back too. Dropped aloud, as a stop drops it.
    held = [f for f in router.stack[1:] if f.dropped_by_stop and f.unsent()]
    for frame in reversed(held):
        router.pop(frame)
    for frame in held:
        router.services.dropped(
            frame.unsent() or "", "paused before it was sent", None, lead="Held back."
        )


def pause_rule(wake_words: Sequence[str] = ()) -> Rule:
    return PauseWords(wake_words)
