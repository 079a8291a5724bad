"""The daemon's implementation of `frames.Services`: speech out, dispatch targets, stop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence

import structlog

from voiced.audio.transcribe import Transcript
from voiced.audio.tts import Speaker
from voiced.commands.pending import Outcome, dropped_sentence
from voiced.commands.pipeline import RobotPipeline
from voiced.events import EventLog
from voiced.eventtypes import Dropped, Feedback, Ignored, Submitted, VoicePicked
from voiced.frames.services import HeardWhole
from voiced.inputs.typed import MAX_UTTERANCE_CHARS, Unusable, too_long
from voiced.logs import correlation
from voiced.targets import SubmitTarget, TargetResult
from voiced.targets.base import ASKS_FOR_MORE, NOTE
from voiced.words.plain import spoken

log = structlog.get_logger(__name__)

ROBOT = "robot"
DEFAULT_VOICES = ("Alex", "Annie", "Michael", "Linda", "Andy")
"""espeak-ng voice variants with names an operator can say."""


class DaemonServices:
    """What frames reach: feedback to the operator, the dispatch targets and the global stop.

    Submissions to the robot are interpreted at once (see `RobotPipeline`); the other targets may
    wait on a disk or a server for seconds, so each runs in a background task the daemon owns and
    awaits before it exits. Each target delivers one submission at a time, in the order they were
    said (each waits for the one before it to the same target): left to race, the threads that
    write would store "add cheese" after "add tomato". A target that fails hands the text to the
    note target: nothing the operator said is lost."""

    def __init__(
        self,
        events: EventLog,
        pipeline: RobotPipeline,
        targets: Mapping[str, SubmitTarget],
        voices: Sequence[str] = DEFAULT_VOICES,
        *,
        max_command_chars: int = MAX_UTTERANCE_CHARS,
    ) -> None:
        self.events = events
        self.max_command_chars = max_command_chars
        """A command longer than this (lines a query joined) is refused; notes may be longer."""
        self.pipeline = pipeline
        self.targets = dict(targets)
        self._voices = tuple(voices)
        self.voice = self._voices[0]
        self._tasks: set[asyncio.Task[TargetResult]] = set()
        self._last: dict[str, asyncio.Task[TargetResult]] = {}
        """Per target, the submission the next one waits for."""
        self._say: Callable[[str], None] | None = None
        self._speaker: Speaker | None = None
        self._interrupt: Callable[[str], list[str]] = lambda why: []
        self._rehear: Callable[[float, float], Awaitable[Transcript | None]] | None = None
        self.expect_more: Callable[[str | None], None] = lambda said: None
        """Told what a command said when it was refused with a question for what it left out
        ("Put what?"): the base frame takes the answer (`BaseFrame.expect_more`); None after
        a stop: nothing said before it is finished after it."""

    def attach_voice(
        self,
        say: Callable[[str], None],
        speaker: Speaker,
        interrupt: Callable[[str], list[str]],
    ) -> None:
        """Speak through `say` from now on (the audio front end's playback), cut it off with
        `interrupt`, and pick voices from `speaker`."""
        self._say = say
        self._speaker = speaker
        self._interrupt = interrupt
        self._voices = tuple(speaker.voices()) or self._voices

    def attach_ears(self, rehear: Callable[[float, float], Awaitable[Transcript | None]]) -> None:
        """Hear stretches of audio again through `rehear` (the listener's)."""
        self._rehear = rehear

    async def hear_whole(self, start: float, end: float) -> HeardWhole | None:
        """Not while the arm moves: the listener, and with it the stop spotter, waits while
        the stretch is decoded (seconds, with decoding held to the sentences)."""
        if self._rehear is None:
            return None
        if self.pipeline.workload.moving:
            log.info("not heard again whole: the arm moves", start=start, end=end)
            return None
        transcript = await self._rehear(start, end)
        if transcript is None or not transcript.text.strip():
            return None
        return HeardWhole(transcript.text, transcript.doubt)

    def values_named(self, text: str) -> frozenset[tuple[str, ...]]:
        return self.pipeline.values_named(text)

    def speak(self, text: str) -> None:
        text = spoken(text)
        log.info("feedback", text=text)
        self.events.emit(Feedback(text))
        if self._say is not None:
            self._say(text)

    def is_complete(self, text: str) -> bool:
        return self.pipeline.is_complete(text)

    def continues(self, text: str) -> bool:
        return self.pipeline.continues(text)

    def may_go_on(self, text: str) -> bool:
        return self.pipeline.may_go_on(text)

    def starts_with_verb(self, text: str) -> bool:
        return self.pipeline.starts_with_verb(text)

    def voices(self) -> tuple[str, ...]:
        return self._voices

    def set_voice(self, name: str) -> None:
        self.voice = name
        if self._speaker is not None:
            self._speaker.set_voice(name)
        self.events.emit(VoicePicked(name))

    async def submit(
        self,
        target: str,
        text: str,
        correlation_id: str | None,
        *,
        source: str = "voiced",
        doubt: str | None = None,
        level_db: float | None = None,
    ) -> None:
        if target != NOTE and len(text) > self.max_command_chars:
            self.ignore(too_long(text, len(text), self.max_command_chars))
            return
        if doubt is not None and target != ROBOT:
            # Only the robot's pipeline says a guess back before acting on it: a queue, a task
            # API or a model would take it as said.
            self.dropped(text, f"heard unsure ({doubt}); the {target} target cannot ask",
                         correlation_id, lead="I am not sure I heard you right.")  # fmt: skip
            return
        with _said_as(correlation_id):
            self.events.emit(Submitted(target, text, source))
        if target == ROBOT:
            outcome = self.pipeline.submit(text, correlation_id, doubt=doubt, level_db=level_db)
            outcome.add_done_callback(functools.partial(self._asked, text))
            return
        task = asyncio.create_task(
            self._deliver(target, text, correlation_id, source, self._last.get(target)),
            name=f"submit-{target}",
        )
        self._last[target] = task
        self._tasks.add(task)
        task.add_done_callback(self._forget)

    def _asked(self, said: str, outcome: Outcome) -> None:
        if outcome.cancelled() or outcome.exception() is not None:
            return
        if outcome.result().detail.get(ASKS_FOR_MORE):
            self.expect_more(said)

    def _forget(self, task: asyncio.Task[TargetResult]) -> None:
        self._tasks.discard(task)
        for target, last in list(self._last.items()):
            if last is task:
                del self._last[target]

    def dropped(
        self, text: str, reason: str, correlation_id: str | None, *, lead: str = "Not understood."
    ) -> None:
        with _said_as(correlation_id):
            log.info("dropped", text=text, reason=reason)
            self.events.emit(Dropped(text, reason))
            self.speak(dropped_sentence([text], lead=lead))

    def asks(self, text: str) -> bool:
        return self.pipeline.asks(text)

    def about_the_cell(self, text: str) -> bool:
        return self.pipeline.about_the_cell(text)

    def ignore(self, unusable: Unusable) -> None:
        """Input that cannot be a command: said and logged, never dispatched, so nothing of it
        reaches the history or a queue (a 10 MB line must not become a 10 MB row)."""
        log.warning("input ignored", reason=unusable.reason, length=unusable.length)
        self.events.emit(Ignored(unusable.reason, unusable.length, unusable.head))
        self.speak(f"I ignored that input: it is {unusable.reason}.")

    async def _deliver(
        self,
        target: str,
        text: str,
        correlation_id: str | None,
        source: str,
        after: asyncio.Task[TargetResult] | None,
    ) -> TargetResult:
        if after is not None:
            # Its outcome is its own (reported by it); only its turn matters here.
            await asyncio.wait([after])
        with correlation(correlation_id):
            result = await self.targets[target].submit(text, correlation_id, source=source)
            if result.ok or target == NOTE:
                self.speak(result.message)
                return result
            saved = await self.targets[NOTE].submit(
                text, correlation_id, source=f"{source} (after {target} failed)"
            )
            also = " I saved it as a note instead." if saved.ok else f" {saved.message}"
            self.speak(result.message + also)
            return result

    async def flush(self) -> None:
        """Wait for every submission still on its way (called before the daemon exits)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def interrupt(self, why: str) -> list[str]:
        """Stop talking at once; returns what was cut short or never said."""
        return self._interrupt(why)

    async def pause(self, reason: str) -> None:
        # Silence first, as for a stop: "hold on" means the voice too.
        silenced = self.interrupt("pause")
        self.speak(await self.pipeline.pause(reason, silenced=silenced))

    async def stop(self, reason: str, unsent: Sequence[str] = ()) -> None:
        # Silence first: the operator said stop, and that means the voice too.
        silenced = self.interrupt("stop")
        self.expect_more(None)
        running = self.pipeline.workload.running()
        dropped = await self.pipeline.stop(reason, unsent, silenced=silenced)
        # A command about to start may still be withdrawable: then it is dropped, not
        # cut short ("continue" would not finish it), and is said once.
        self.speak(dropped_sentence(dropped, cut=_without(running, dropped)))


def _without(texts: Sequence[str], taken: Sequence[str]) -> list[str]:
    """`texts` less one occurrence of each of `taken`, in order."""
    left = list(taken)
    kept = []
    for text in texts:
        if text in left:
            left.remove(text)
        else:
            kept.append(text)
    return kept


def _said_as(correlation_id: str | None) -> contextlib.AbstractContextManager[object]:
    """The correlation id of the words acted on: a query sends its words while the next
    utterance's id is bound."""
    return correlation(correlation_id) if correlation_id else contextlib.nullcontext()
