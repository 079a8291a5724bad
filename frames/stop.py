"""The global stop rule: "stop", "halt", "freeze", "emergency stop" from every frame and mode.

It is the one rule that bypasses the frame stack (see `CommandRouter`). It matches the word
anywhere in an utterance ("computer stop", "stop stop stop", "oh no stop it"): a false stop is
safe, a missed one is not.
"""

from __future__ import annotations

from frames.router import CommandRouter
from rules import Match, Pattern, Rule, Utterance

STOP_WORDS = ("stop", "halt", "freeze", "emergency stop")


async def _stop(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    dropped = [f for f in router.stack[1:] if f.dropped_by_stop]
    unsent = [text for f in dropped if (text := f.unsent())]
    # The arm first: popping frames can wait a few microseconds, the robot cannot.
    await router.services.stop(f'operator said "{utterance.text}"', unsent)
    for frame in reversed(dropped):
        if frame in router.stack:
            router.pop(frame)


def stop_rule() -> Rule:
    return Pattern("global_stop", r"\b(?:emergency stop|stop|halt|freeze)\b", _stop)
