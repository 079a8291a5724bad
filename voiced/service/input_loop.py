"""The daemon's one input loop: what the operator says (heard, typed, from the page or MQTT)
to the frame router, in order, and the clock to the frames' timers.

What is said waits for the interpreter before it reaches the frames (so a question is in
place before the next line), never for the robot; a stop waits for nothing: while a line
waits, the input is read on for a stop, which then comes first and drops what was said before
it. At end of input every timer runs out and the last words are said.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog

from voiced import eventtypes as ev
from voiced import rules
from voiced.commands.pending import dropped_sentence
from voiced.commands.pipeline import RobotPipeline
from voiced.config import Config
from voiced.events import EventLog
from voiced.frames import CommandRouter
from voiced.frames.stop import heard_with_spotted_stop
from voiced.inputs.sources import Activity, AudioInput, InputReader, Tick, Utterance
from voiced.inputs.typed import Unusable, too_long
from voiced.logs import correlation
from voiced.service.cellstatus import RemoteInbox, RemoteWords
from voiced.service.parts import Parts
from voiced.targets import TargetResult

log = structlog.get_logger(__name__)

END_OF_INPUT_PAUSE = 3600.0
"""Input-clock seconds added at end of input: longer than every timer that listens."""
END_OF_INPUT_ROUNDS = 4
"""How many times the clock moves on at end of input (a query, then its question...)."""


class InputLoop:
    """Reads the run's input (and the words from outside) until it ends."""

    def __init__(self, config: Config, events: EventLog, inbox: RemoteInbox, parts: Parts) -> None:
        self.config = config
        self.events = events
        self.inbox = inbox
        self.parts = parts
        self._reader: InputReader | None = None
        """How the loop reads: it reads ahead for a stop while a line waits."""

    @property
    def reading_ahead(self) -> bool:
        """Whether what is read now was read ahead of a line still waiting for the interpreter
        (its wake word may be what opens the query: the frames, not the wake gate, judge it)."""
        return self._reader is not None and self._reader.ahead

    async def run(self) -> None:
        """Utterances to the router, ticks and activity to the frames' timers, until the input
        ends; then every timer runs out and the last words are said."""
        parts = self.parts
        self._reader = reader = InputReader(parts.source, self.inbox)
        try:
            await self._take_all(reader)
        finally:
            await reader.close()
        await run_out(parts.router, parts.pipeline, parts.router.now)
        if parts.front is not None:
            await parts.front.feedback.drain()

    async def _take_all(self, reader: InputReader) -> None:
        router = self.parts.router
        while True:
            try:
                event = await reader.next()
            except StopAsyncIteration:
                return
            if isinstance(event, RemoteWords):
                self.events.emit(ev.RemoteSaid(event.text, event.source))
                log.info("words from outside", text=event.text, source=event.source)
                await self._from_outside(event)
            elif isinstance(event, Tick):
                await router.tick(event.t)
            elif isinstance(event, Activity):
                router.activity(event.t, event.voiced)
            elif isinstance(event, Unusable):
                self.parts.services.ignore(event)
            else:
                await self._hear(event)

    async def _from_outside(self, words: RemoteWords) -> None:
        """Words from outside are a whole utterance. Audio's clock runs by itself, so the
        frames' timers send them on; typed text and no input have no clock of their own, so
        it moves on by a pause, as after a typed line and a blank one (else a command would
        wait in the query frame for the next line that may never come)."""
        router = self.parts.router
        text = words.text
        waking = router.mode == "wake" and router.top is router.stack[0]
        stop = router.stops(text)
        if waking and not stop and not self._woken(text):
            # Typed on a dashboard, a command is meant for the cell: nobody types the wake word.
            text = f"{self.config.daemon.wake_word} {text}"
        await self._hear(Utterance(text, router.now, source=words.source))
        if not isinstance(self.parts.source, AudioInput):
            await router.tick(router.now + self.config.query.silence_timeout + 0.1)

    def _woken(self, text: str) -> bool:
        """Whether `text` starts with the wake word (or one of its variants)."""
        said = rules.normalize(text)
        words = self.config.daemon.wake_words
        return any(said.startswith(rules.normalize(word)) for word in words)

    async def _hear(self, said: Utterance) -> None:
        router = self.parts.router
        with correlation(said.correlation_id) as cid:
            utterance = rules.Utterance(
                said.text, said.t, cid, source=said.source, level_db=said.level_db,
                doubt=said.doubt, start=said.start,
            )  # fmt: skip
            if said.result is not None:
                await self._run_as_routed(said, said.result, cid)
                return
            limit = self.config.daemon.max_utterance_chars
            if len(said.text) > limit:
                self.parts.services.ignore(too_long(said.text, len(said.text), limit))
                return
            stop = router.is_global(utterance)
            if not stop and await self._stopped_while_accepting():
                self._dropped_before_stop([said])
                return
            self.events.emit(said.announce or ev.Utterance(said.text))
            # The stop spotter acted on this speech: it was a stop, whatever the transcript
            # made of it ("top", "Stop it now"), and must not move anything after the stop.
            # What else it holds is named, as a stop in a transcript names what it drops.
            if not said.spotted:
                await router.dispatch(utterance)
                await self._hear_again()
                return
            dropped = heard_with_spotted_stop(router, said.text, self.config.daemon.wake_words)
            for command in dropped:
                self.events.emit(ev.Dropped(command, "said with a stop"))
            if dropped:
                self.parts.services.speak(dropped_sentence(dropped, lead="Heard with the stop."))

    async def _hear_again(self) -> None:
        """What a frame gave back to be heard from the top (a whole command after words that
        were none, the next order after one that waited) waits for the interpreter as what is
        said next does. A stop read meanwhile is taken next, and it drops what is left here
        as it drops a half-said command (named in what the operator hears)."""
        router = self.parts.router
        while router.again:
            if await self._stopped_while_accepting():
                return
            await router.dispatch(router.again.pop(0))

    async def _stopped_while_accepting(self) -> bool:
        """What is said waits for the interpreter (never for the robot), so a question it asks
        is in place before the next line arrives. A stop waits for nothing: while this waits,
        the input is read on, and a stop read meanwhile ends the wait (True) and is taken
        next; what was read before it was said before it, and is dropped."""
        pipeline, router = self.parts.pipeline, self.parts.router
        if pipeline.workload.accepted or self._reader is None:
            return False

        def is_stop(event: object) -> bool:
            text = event.text if isinstance(event, (Utterance, RemoteWords)) else None
            return text is not None and router.stops(text)

        found = await self._reader.until_stop(pipeline.wait_accepted(), is_stop)
        if found is None:
            return False
        before, stop = found
        log.warning("a stop was said while a command waited for the interpreter",
                    stop=stop.text)  # fmt: skip
        self._dropped_before_stop([e for e in before if isinstance(e, (Utterance, RemoteWords))])
        return True

    def _dropped_before_stop(self, said: Sequence[Utterance | RemoteWords]) -> None:
        """Words said before a stop that had not reached the frames yet: they never will."""
        for words in said:
            self.events.emit(ev.Utterance(words.text))
            self.events.emit(ev.Dropped(words.text, "said before a stop"))

    async def _run_as_routed(
        self, said: Utterance, result: asyncio.Future[TargetResult], cid: str
    ) -> None:
        """A command that went through the frames when it was first said (queued, replayed)
        goes to the robot pipeline as it is; its result (or error) goes back to its input.
        Nobody is there to answer a question, so the clock runs out on it: one that needs a
        yes is not run (unless approved beforehand, `voiced replay --yes`)."""
        self.events.emit(said.announce or ev.Utterance(said.text))
        pipeline, router = self.parts.pipeline, self.parts.router
        try:
            outcome = pipeline.submit(said.text, cid)
            await run_out(router, pipeline, router.now)
            result.set_result(await outcome)
        except Exception as error:  # the input records it and raises it
            result.set_exception(error)


async def run_out(router: CommandRouter, pipeline: RobotPipeline, clock: float) -> None:
    """End of input: let every timer that listens run out. A query that times out is
    submitted, and its interpretation may ask a question whose own timer starts then, so
    the clock moves on again until nothing new is waiting."""
    for round_ in range(1, END_OF_INPUT_ROUNDS + 1):
        await pipeline.wait_accepted()
        top = router.top
        await router.tick(clock + round_ * END_OF_INPUT_PAUSE)
        await pipeline.wait_accepted()
        if router.top is top and router.top is router.stack[0]:
            return
