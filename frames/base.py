"""The base frame: the bottom of the stack. Wake word, modes, help."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import structlog
from voiced.frames.dictation import DictationFrame
from voiced.frames.query import CANCEL_WORDS, QueryFrame
from voiced.frames.router import CommandRouter, Frame
from voiced.frames.voice import VoicePickerFrame
from voiced.rules import (
    CatchAll,
    ExactSet,
    Handled,
    Match,
    Pattern,
    Prefix,
    Rule,
    Utterance,
    When,
    normalize,
)
from voiced.rules.question import is_question

log = structlog.get_logger(__name__)

MODE_NAMES = {"wake": "wake word mode", "always": "always listen mode"}


class BaseFrame(Frame):
    """Wake word pushes a query frame, and the rest of the utterance goes into it ("computer add
    bread" in one breath). In always-listen mode every utterance opens a query without the wake
    word. Mode words work from any frame that hands down with `check_parent`."""

    name = "base"

    def __init__(
        self,
        wake_word: str,
        silence_timeout: float,
        listen_timeout: float,
        variants: tuple[str, ...] = (),
        query_target: str = "robot",
        dictation_target: str = "note",
        complete_timeout: float | None = None,
        examples: tuple[str, ...] = (),
    ) -> None:
        self.complete_timeout = complete_timeout
        self.examples = examples
        """Commands the loaded cell understands, for help: said with the wake word in wake
        word mode, bare in always listen mode."""
        self.follow_until = float("-inf")
        """Until this clock reading, speech without the wake word opens a query: the
        operator went on after a whole command was sent on the short timer."""
        self.more_for: str | None = None
        """A command refused with a question for what it left out ("Put what?"): the next
        words, said until `more_until` without the wake word, finish it."""
        self.more_until = float("-inf")
        self.spoke_at = float("-inf")
        """When the latest speech began (voice activity; typed lines have none)."""
        self.wake_word = wake_word
        self.query_target = query_target
        self.dictation_target = dictation_target
        self.silence_timeout = silence_timeout
        self.listen_timeout = listen_timeout
        self._router: CommandRouter | None = None
        self.rules = _rules(self, variants)

    def on_push(self, router: CommandRouter, now: float) -> None:
        self._router = router

    def _always_listening(self) -> bool:
        # Only while nothing is open: an open query accumulates for itself.
        router = self._router
        return router is not None and router.mode == "always" and router.top is self

    def on_activity(self, now: float, voiced: bool) -> None:
        if voiced:
            self.spoke_at = now

    def _on_top(self) -> bool:
        return self._router is not None and self._router.top is self

    def _began_by(self, deadline: float) -> bool:
        """Whether nothing is open and the speech now heard began by `deadline`: judged by
        when it began, a long continuation that started in time counts."""
        router = self._router
        if router is None or router.top is not self:
            return False
        began = self.spoke_at if self.spoke_at > float("-inf") else router.now
        return began <= deadline

    def _following_up(self) -> bool:
        router = self._router
        return router is not None and router.mode == "wake" and self._began_by(self.follow_until)

    def expect_more(self, said: str | None) -> None:
        """`said` was refused with a question for what it left out ("put" -> "Put what?"):
        until the listen timeout, the operator's next words answer it, with or without the
        wake word. None: the question is gone (a stop came)."""
        if self._router is not None:
            self.more_for, self.more_until = said, self._router.now + self.listen_timeout

    def _answering(self) -> bool:
        return self.more_for is not None and self._began_by(self.more_until)

    def _answer(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        text = self._finished(router, utterance.text)
        self.more_for = None
        if normalize(text) in CANCEL_WORDS:
            router.services.speak("Cancelled.")
            return
        # Finished with words said before ("put" + "the cheese"), its audio is no longer its
        # words: never heard again whole from there.
        said = utterance if text == utterance.text else replace(utterance, start=None)
        self._query(router).append(text, said, router)

    def _finished(self, router: CommandRouter, answer: str) -> str:
        """The refused command finished by `answer` ("put" + "cheese" -> "put cheese", "the
        cheese on the left"; "go to" + "position 2"); anything else is taken as said: the
        command said again, one of its own ("go home", "add bread"), a question, "cancel"."""
        said, answer = self.more_for or "", answer.strip()
        verb = said.split()[0].lower() if said.split() else ""
        first = answer.split()[0].lower().strip(",.") if answer.split() else ""
        heard = normalize(answer)
        if first == verb or is_question(answer) or heard in CANCEL_WORDS:
            return answer
        return answer if router.services.starts_with_verb(heard) else f"{said} {answer}"

    def _quick_submit(self, now: float) -> None:
        # "computer add bread ... cheese and tomato": the quick path already sent the first
        # part, so the rest, said within the silence timer, is the next command rather than
        # words without a wake word.
        self.follow_until = now + self.silence_timeout

    def _follow_up(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        # Only a whole command without a verb of its own: talk nearby that happens to fall in
        # the window ("go home" from a colleague) is ignored as any speech without the wake
        # word is.
        if router.services.continues(normalize(utterance.text)):
            self._open_with_all(router, utterance, match)
        else:
            log.info("not a command; ignored", text=utterance.text, why="follow-up window")

    def _query(self, router: CommandRouter) -> QueryFrame:
        # The wake word said again while a query is open continues that query instead of
        # stacking a second one.
        if isinstance(router.top, QueryFrame):
            return router.top
        query = QueryFrame(
            self.silence_timeout,
            self.listen_timeout,
            self.query_target,
            self.complete_timeout,
            on_quick_submit=self._quick_submit,
        )
        router.push(query)
        return query

    async def _wake(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        rest = _rest_as_said(utterance.text, match)
        # The wake word said again in the same breath starts the next command: "computer add
        # bread. Computer, add meat on the left" is two.
        commands = split_at_wake_word(rest, self.wake_word) or [""]
        if self._answering() and commands[0]:
            commands[0] = self._finished(router, commands[0])
        self.more_for = None
        open_query = router.top
        opens_next = commands[0] and normalize(commands[0]) not in CANCEL_WORDS
        if isinstance(open_query, QueryFrame) and open_query.parts and opens_next:
            # "computer add bread" / "computer add cheese on the left", a line or a breath
            # apart: the wake word with words after it starts the next command, as it does
            # inside one breath; alone ("computer ... computer") it only keeps the query open,
            # and "computer, cancel" goes to the query it cancels.
            await open_query.send(router)
        for i, command in enumerate(commands):
            query = self._query(router)
            if not command:
                continue
            # The rest goes through the stack like any utterance, so "computer start dictation"
            # or "computer always listen" work in one breath; plain words land in the query.
            # As heard: its level, who sent it and the recogniser's doubt go with the words.
            # Its start is no longer known: the wake word's audio comes before it.
            await router.dispatch(replace(utterance, text=command, normalized="", start=None))
            if router.top is query and not query.parts:
                # Something else answered it ("computer mode query"): the wake word was for
                # that, and an empty query would only time out into "I didn't hear a command".
                router.pop(query)
            elif router.top is query and i < len(commands) - 1:
                await query.send(router)  # the next wake word ends this command

    def _open_with_all(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        self._query(router).append(utterance.text, utterance, router)

    def _start_dictation(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        _push_over_empty_query(router, DictationFrame(self.dictation_target))

    def _wake_mode(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.set_mode("wake")
        router.services.speak(f"Say {self.wake_word} first.")

    def _help(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        top = router.top
        said = top.help() or self.help()
        if isinstance(top, QueryFrame) and not top.parts and self.examples:
            # "computer, what can I say": the query is open, so the examples need no wake word.
            said += " For example: " + " or ".join(f'"{e}"' for e in self.examples) + "."
        router.services.speak(said)

    def help(self) -> str:
        wake = self._router is None or self._router.mode == "wake"
        return help_sentence(self.wake_word, self.examples, wake)


HELP_WORDS = ("what can i say", "help")


def help_sentence(wake_word: str, examples: Sequence[str], wake: bool) -> str:
    """What "what can I say" answers: the cell's examples, with the wake word in wake mode."""
    said = [f"{wake_word}, {e}" if wake else e for e in examples]
    lead = f'Say "{wake_word}" and a command' if wake else "Say a command"
    shown = " or ".join(f'"{e}"' for e in said)
    example = f", for example {shown}. " if said else ". "
    return (
        f"{lead}{example}"
        'You can also say "always listen", "wake word mode", "mode query", "switch voice", '
        '"start dictation" or "stop".'
    )


def _inside(wake_word: str) -> str:
    """The wake word after other words, with a command after it: "... and tomato. Computer add
    meat on the left" (talk or noise before it in the same segment). Exact words only; the
    fuzzy match is for the start of an utterance."""
    return rf"\b{re.escape(normalize(wake_word))}\b\s+(?P<rest>\S.*)$"


def split_at_wake_word(text: str, wake_word: str) -> list[str]:
    """`text` cut where the wake word is said again (exact words, as `_inside`), the pieces
    without it or the punctuation around it; empty pieces left out."""
    word = re.escape(normalize(wake_word)).replace(r"\ ", r"\s+")
    pieces = re.split(rf"[\s,.;:!?]*\b{word}\b[\s,.;:!?]*", text, flags=re.IGNORECASE)
    return [piece.strip() for piece in pieces if piece.strip()]


def after_wake_word(text: str, wake_words: Sequence[str]) -> str | None:
    """What the base frame hands on from `text` that starts with one of `wake_words` (heard
    near enough: "compute her, add bread"), in the operator's wording; None: no wake word."""
    found = Prefix("wake_word", wake_words, _nothing).match(Utterance(text))
    return _rest_as_said(text, found.match) if isinstance(found, Handled) else None


async def _nothing(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    """An action that is never run: `after_wake_word` only matches."""


def _rest_as_said(text: str, match: Match) -> str:
    """The words after the wake word, in the operator's own wording where it lines up with the
    normalised rest; otherwise the normalised rest itself. Either way it is shorter than the
    utterance, so dispatching it again always ends ("Computer,inspect ..." has its words joined
    differently from its normalised form)."""
    rest = match.args.get("rest", "")
    if not rest:
        return ""
    tokens = text.split()
    n_rest = len(rest.split())
    if 0 < n_rest <= len(tokens):
        said = " ".join(tokens[len(tokens) - n_rest :]).strip(" ,.!?")
        if normalize(said) == rest:
            return said
    return rest


def _push_over_empty_query(router: CommandRouter, frame: Frame) -> None:
    """Open `frame`, closing an empty query first (it was only the wake word)."""
    if isinstance(router.top, QueryFrame) and not router.top.parts:
        router.pop(router.top)
    router.push(frame)


def _switch_voice(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    _push_over_empty_query(router, VoicePickerFrame(router.services.voices()))


def _say_mode(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    router.services.speak(f"I am in {MODE_NAMES[router.mode]}.")


def _always(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    router.set_mode("always")
    router.services.speak("Always listening.")


def _rules(frame: BaseFrame, variants: tuple[str, ...]) -> tuple[Rule, ...]:
    """Mode words and help first, then the wake word (at the start, or inside an utterance with
    nothing open), then what is heard without it: an answer, always-listen, a follow-up."""
    wake_word = frame.wake_word
    return (
        ExactSet("mode_query", ["mode query", "what mode", "which mode"], _say_mode),
        ExactSet("always_listen", ["always listen", "always listen mode"], _always),
        ExactSet("wake_word_mode", ["wake word mode", "wake mode"], frame._wake_mode),
        ExactSet("help", HELP_WORDS, frame._help),
        ExactSet(
            "switch_voice",
            ["switch voice", "change voice", "change your voice"],
            _switch_voice,
        ),
        ExactSet(
            "start_dictation",
            ["start dictation", "take a note", "dictation mode"],
            frame._start_dictation,
        ),
        Prefix("wake_word", [wake_word, *variants], frame._wake),
        When(
            frame._on_top,
            Pattern("wake_word_inside", _inside(wake_word), frame._wake),
            "nothing open",
        ),
        When(frame._answering, CatchAll("answer", frame._answer), "asked for more"),
        When(frame._always_listening, CatchAll("always_query", frame._open_with_all), "always"),
        When(frame._following_up, CatchAll("follow_up", frame._follow_up), "follow-up"),
    )
