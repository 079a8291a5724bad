"""The global stop rule: "stop", "halt", "freeze", "emergency stop" from every frame and mode.

It is the one rule that bypasses the frame stack (see `CommandRouter`). It matches the word
anywhere in an utterance ("computer stop", "stop stop stop", "oh no stop it"): a false stop is
safe, a missed one is not. A word joined to another by a hyphen is not a stop ("non-stop",
"stop-gap"), nor is a longer word ("stopwatch", "stopped").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from voiced.frames.dictation import END_PHRASES, STILL_DICTATING, DictationFrame
from voiced.frames.router import CommandRouter
from voiced.rules import NO_MATCH, Handled, Match, Rule, RuleResult, Utterance, normalize
from voiced.rules.negation import negated

STOP_WORDS = ("stop", "halt", "freeze", "emergency stop")


async def _stop(router: CommandRouter, utterance: Utterance, said_with: Sequence[str] = ()) -> None:
    dropped = [f for f in router.stack[1:] if f.dropped_by_stop]
    unsent = [text for f in dropped if (text := f.unsent())]
    unsent += [again.text for again in router.again]  # given back to be heard: never now
    router.again.clear()
    if not _kept_in_note(router, utterance.text, said_with):
        unsent += said_with
    # The arm first: popping frames can wait a few microseconds, the robot cannot.
    await router.services.stop(utterance.said_by, unsent)
    for frame in reversed(dropped):
        if frame in router.stack:
            router.pop(frame)
    if isinstance(router.top, DictationFrame):
        # The note survives a stop; but what is said next would go into it unannounced, and
        # "stop dictation" means both.
        said = normalize(utterance.text).split()
        if " ".join(said[-2:]) in END_PHRASES and len(said) <= 3:  # the wake word, at most
            await router.top.finish(router)
        else:
            router.services.speak(STILL_DICTATING)


STOP_PATTERN = re.compile(
    r"(?<![\w-])(?<!\bnon )(?:emergency stop|stop|halt|freeze)(?![\w-])(?! watch)"
)
"""On the text as written, lower case: normalising would turn "non-stop" into "non stop". The
transcriber writes those words apart too ("non stop", "stop watch"): neither is a stop."""


_EXCLAMATIONS = frozenset(
    ("oh", "no", "wait", "whoa", "woah", "uh", "um", "ah", "hey", "please", "ok", "okay", "god",
     "dear")
)  # fmt: skip
"""Said with a stop, never part of a command: they also end a command said before the stop
("put the tomato on the right, oh no, stop")."""
_NOT_COMMANDS = _EXCLAMATIONS | {
    "now", "it", "that", "this", "everything", "all", "the", "a", "robot", "arm", "right",
    "just", "i", "said", "emergency", "and", "then", "so", "careful", "look", "out", "there",
    "here", "moving", "move", "motion",
}  # fmt: skip
"""Words said around a stop word that do not make a command ("oh no, stop it", "stop moving
the arm now")."""
_COMMAND_WORDS = 2
"""Words other than those a piece needs to be a command the stop drops ("add bread")."""


def said_with_stop(text: str, wake_words: Sequence[str] = ()) -> list[str]:
    """The commands said in the same breath as a stop word, before or after it ("computer add
    bread and cheese, stop" -> ["add bread and cheese"]): the stop drops them, and the operator
    is told so. Wake words, stop words and the words of an exclamation are not commands."""
    lowered = text.lower()
    skip = {w for wake in wake_words for w in wake.lower().split()}
    pieces, start = [], 0
    for found in [*STOP_PATTERN.finditer(lowered), None]:
        end = found.start() if found else len(text)
        pieces.append(text[start:end])
        start = found.end() if found else end
    commands = []
    for piece in pieces:
        words = re.findall(r"[\w'-]+", piece)
        while words and (words[0].lower() in skip or words[0].lower() in _NOT_COMMANDS):
            words.pop(0)
        while words and words[-1].lower() in _EXCLAMATIONS:
            words.pop()
        meant = [w for w in words if w.lower() not in _NOT_COMMANDS | skip]
        if len(meant) >= _COMMAND_WORDS:
            commands.append(" ".join(words))
    # Once each: Whisper writes a short breath twice ("Stop, then go home, stop, then go home.").
    return list(dict.fromkeys(commands))


class StopWords:
    """The stop words in an utterance, as the transcriber wrote it."""

    name = "global_stop"

    def __init__(self, wake_words: Sequence[str] = ()) -> None:
        self.wake_words = tuple(wake_words)

    def match(self, utterance: Utterance) -> RuleResult:
        found = STOP_PATTERN.search(utterance.text.lower())
        if found is None:
            return NO_MATCH
        why = f'stop word "{found.group(0)}"'
        said_with = said_with_stop(utterance.text, self.wake_words)

        async def stop(router: CommandRouter, utterance: Utterance, match: Match) -> None:
            await _stop(router, utterance, said_with)

        return Handled(Match(self.name, found.group(0), why, {}), stop)


def heard_with_spotted_stop(
    router: CommandRouter, text: str, wake_words: Sequence[str]
) -> list[str]:
    """The commands in `text`, the transcript of speech the stop spotter already stopped on:
    nothing in it moves, and these are named as dropped. While dictating, its words are the
    note's (as `_stop` keeps them); talk is not named, only what would have been a command."""
    said_with = said_with_stop(text, wake_words)
    if _kept_in_note(router, text, said_with):
        return []
    named: list[str] = []
    for piece in said_with:
        command = _command_in(piece, router.services.is_complete)
        if command is not None and command not in named:
            named.append(command)
    return named


_LEADING_MISHEARD = 2
"""Words before a command in a stop's breath that may be misheard joining words ("stop, end go
home" for "stop, then go home")."""


def _command_in(piece: str, is_complete: Callable[[str], bool]) -> str | None:
    """`piece` if it is a whole command, else the whole command it ends with after a word or two
    (named only, never run: a misheard "then" must not hide what will not happen)."""
    words = piece.split()
    for skip in range(min(_LEADING_MISHEARD, len(words) - 1) + 1):
        if negated(normalize(" ".join(words[:skip])).split()):
            return None  # "stop, don't go home": not a command that will not happen
        rest = " ".join(words[skip:])
        if is_complete(rest):
            return rest
    return None


def _kept_in_note(router: CommandRouter, text: str, said_with: Sequence[str]) -> bool:
    """Whether a note is being dictated. Said while dictating, words around the stop word are
    the note's, word for word ("we need to stop the line at noon"): the arm stops, and nothing
    was a dropped command."""
    if not isinstance(router.top, DictationFrame):
        return False
    if said_with:
        router.top.parts.append(text.strip())
    return True


def stop_rule(wake_words: Sequence[str] = ()) -> Rule:
    return StopWords(wake_words)
