"""`voiced run`: every component under one owner, and a staged, bounded shutdown.

Start-up: data directory, cell and scene, controller (the in-process simulator or a real one),
frame router, robot pipeline, input. READY=1 goes to systemd once input and the controller link
are up. SIGTERM/SIGINT only set an event; shutdown then runs in stages within
`daemon.shutdown_timeout`: stop input, hand on unsaved dictation, stop the arm safely (STOP on
the control channel), let the pipeline record what really ran and the targets store what they
were given, write the final state, close the link.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from voiced import eventtypes as ev
from voiced import rules
from voiced.commands.pending import Withdraw, dropped_sentence
from voiced.commands.pipeline import RobotPipeline
from voiced.config import Config, resolve_config_path
from voiced.errors import VoicedError
from voiced.events import EventLog
from voiced.eventtypes import Record
from voiced.frames import BaseFrame, CommandRouter, ReviewFrame
from voiced.frames.pause import pause_rule
from voiced.frames.router import StackChange
from voiced.frames.stop import heard_with_spotted_stop, stop_rule
from voiced.history import History
from voiced.inputs.audio import FRAME_WORDS, AudioFrontEnd, bias_for
from voiced.inputs.hearing import GrammarChooser
from voiced.inputs.sources import (
    Activity,
    AudioInput,
    Input,
    NoInput,
    QueueInput,
    ReadAhead,
    ReplayInput,
    TextInput,
    Tick,
    Utterance,
    with_remote,
)
from voiced.inputs.typed import Unusable, too_long
from voiced.interpreter.tiers import LEARNED_VERBS, Interpreter
from voiced.link.controller import Controller, open_controller
from voiced.link.keeper import LinkKeeper
from voiced.link.saved_scene import SceneStore
from voiced.llm.classifier import AnthropicClassifier
from voiced.llm.client import LlmClient, LlmReply
from voiced.llm.sequence import usage_event
from voiced.logs import correlation
from voiced.mqtt.service import mqtt_service
from voiced.page.server import CellPage, drawing_of, read_token
from voiced.paths import DataDir, offline
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.view import state_view
from voiced.service.cellstatus import RemoteInbox, RemoteWords, StatusBoard
from voiced.service.frame_services import DaemonServices
from voiced.service.sdnotify import Notifier, run_watchdog, watchdog_interval
from voiced.targets import DeferredQueue, TargetResult, build_targets
from voiced.words.examples import help_examples

log = structlog.get_logger(__name__)

END_OF_INPUT_PAUSE = 3600.0
"""Input-clock seconds added at end of input: longer than every timer that listens."""
END_OF_INPUT_ROUNDS = 4
"""How many times the clock moves on at end of input (a query, then its question...)."""
DRAIN_POLL_S = 0.2
"""How often the end-of-input wait looks at the controller link."""


@dataclass(frozen=True)
class Session:
    """What `voiced run` was asked to do, after config and command line are merged."""

    config: Config
    cell: Cell
    scene: Scene
    data: DataDir
    text: str | None
    events: EventLog
    queue: bool = False
    """Work off the deferred queue instead of listening (`voiced queue run`)."""
    replay: str | None = None
    """Replay this run id instead of listening (`voiced replay RUN_ID`)."""
    assume_yes: bool = False
    """Answer yes to every question (`voiced replay --yes`): the caller approved beforehand."""
    audio: str | None = None
    """Listen to audio: "mic", a file path, or "-" (raw 16 kHz s16le on stdin)."""
    fast: bool = False
    """Audio files only: as fast as possible instead of real-time pace."""
    room_echo_db: float | None = None
    """Audio files only: mix the daemon's own speech into the input as a loudspeaker in the
    room would, at this level (dB) relative to the synthesised speech (see `voiced.audio.room`)."""
    scene_given: bool = False
    """`scene` came from --scene: no saved scene is restored."""


@dataclass(frozen=True)
class Parts:
    """Everything one run is made of, built in one place (`Daemon._assemble`) before any of it
    runs."""

    controller: Controller
    pipeline: RobotPipeline
    services: DaemonServices
    router: CommandRouter
    front: AudioFrontEnd | None
    """The audio front end (`--audio`); None for every other input."""
    source: Input
    """What the daemon listens to."""
    board: StatusBoard
    """The cell as seen from outside (the cell page, MQTT)."""


class Daemon:
    """One run of the daemon. `run()` returns the process exit code."""

    def __init__(self, session: Session, notifier: Notifier | None = None) -> None:
        self.session = session
        self.config = session.config
        self.events = session.events
        self.notifier = notifier or Notifier()
        self.shutdown = asyncio.Event()
        self._healthy = True
        self._mode = session.config.daemon.mode
        self._link: str | None = None
        self.inbox = RemoteInbox()
        """Words from outside (the cell page's STOP, MQTT), taken between what is heard."""
        self._broker: str | None = None
        self._audio_status: Callable[[], str | None] = lambda: None
        """The audio front end's word for STATUS= (a speech server or satellite lost)."""
        self._reader: ReadAhead | None = None
        """How the input loop reads (`_listen`): it reads ahead for a stop while it waits."""
        self.page = self._page()
        """The cell's page (`[page] enabled`), following events from the start."""

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_signal, sig)
        try:
            async with (
                contextlib.AsyncExitStack() as stack,
                open_controller(
                    self.config, self.session.cell, self.session.scene, self.events
                ) as controller,
            ):
                return await self._serve(await self._assemble(stack, controller))
        except* VoicedError as group:
            # A component's error inside the task group: report it as itself, not as a group.
            raise group.exceptions[0] from None
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
            self.notifier.close()

    def _on_signal(self, sig: signal.Signals) -> None:
        log.info("shutdown requested", signal=sig.name)
        self.shutdown.set()

    async def _assemble(self, stack: contextlib.AsyncExitStack, controller: Controller) -> Parts:
        """Every part of the run, each built before anything uses it; the callbacks that tie
        them together (speech, questions) close over the parts themselves."""
        session, link = self.session, controller.link
        history = History(session.data.history)
        interrupted = history.mark_interrupted()
        if interrupted:
            log.warning("runs interrupted by the last shutdown", count=interrupted)
        llm = LlmClient.from_env(self.config.llm)
        if llm is not None:
            stack.push_async_callback(llm.aclose)
        store = SceneStore(session.cell, session.data, history, link, self.events)
        pipeline = RobotPipeline(
            session.cell,
            store.starting(session.scene, session.scene_given),
            link,
            self.events,
            speak=lambda text: services.speak(text),
            save_scene=store.save,
            ask=lambda question, answered, revised: self._ask(
                router, llm, question, answered, revised
            ),
            trace_dir=session.data.traces,
            history=history,
            review=self.config.review,
            interpreter=self._interpreter(llm),
            status=self._link_status,
        )
        targets = build_targets(self.config, session.data, self.events)
        services = DaemonServices(
            self.events, pipeline, targets, self.config.tts.voices,
            max_command_chars=self.config.daemon.max_utterance_chars,
        )  # fmt: skip
        router = self._router(services)
        front = await self._audio(stack, router, pipeline, services)
        board = StatusBoard(
            router, lambda: pipeline.belief, link, lambda: self._link, history
        )  # fmt: skip
        return Parts(controller, pipeline, services, router, front, self._input(front), board)

    async def _serve(self, parts: Parts) -> int:
        pipeline, router, front = parts.pipeline, parts.router, parts.front
        # The controller's report is the truth from the first moment: the saved scene is
        # corrected by it before anything can move (and what differed is said).
        await pipeline.reconcile("connected")
        async with asyncio.TaskGroup() as group:
            worker = group.create_task(pipeline.run(), name="robot-pipeline")
            acceptor = group.create_task(pipeline.accept(), name="acceptance")
            keeper = group.create_task(pipeline.keeper.run(), name="link-keeper")
            watchdog = self._start_watchdog(group, pipeline.keeper)
            feeder = group.create_task(self._listen(parts), name="input")
            speech = group.create_task(front.feedback.run(), name="speech") if front else None
            outside = [
                group.create_task(work, name=name) for name, work in self._outside(parts)
            ]  # fmt: skip
            self.notifier.ready()
            self._announce_status(router.mode)
            unsubscribe = self.events.subscribe(self._on_event)
            log.info("ready", cell=self.session.cell.name, mode=router.mode, offline=offline())
            ended_by_signal = await self._wait_for_end(feeder)
            await self._finish(feeder, parts, ended_by_signal)
            unsubscribe()
            await _cancel(feeder, worker, acceptor, keeper, watchdog, speech, *outside)
        self._emit_final_state(parts)
        return 0

    async def _audio(
        self,
        stack: contextlib.AsyncExitStack,
        router: CommandRouter,
        pipeline: RobotPipeline,
        services: DaemonServices,
    ) -> AudioFrontEnd | None:
        """The audio front end for `--audio`, with its model loaded before READY=1."""
        if self.session.audio is None:
            return None
        bias = bias_for(pipeline.belief.cell, pipeline.interpreter.bias_phrases(), self.config)
        base = router.stack[0]
        front = AudioFrontEnd(
            self.config, self.session.audio, self.session.fast, self.events, bias,
            # Read ahead of a command still waiting for the interpreter, a segment is judged
            # before that command reaches the frames: its wake word may be what opens the
            # query, so the frames, not the gate, judge it (they drop what has no wake word).
            wake_required=lambda: router.mode == "wake" and router.top is base
            and not (self._reader is not None and self._reader.ahead),
            is_stop=router.stops,
            moving=lambda: pipeline.workload.busy,
            room_echo_db=self.session.room_echo_db,
            on_status=lambda: self._announce_status(self._mode),
            segments=self.page.exchanges.publish if self.page else None,
        )  # fmt: skip
        self._audio_status = lambda: front.status
        if self.config.stt.hypotheses > 1 or self.config.stt.repair:
            front.listener.choose = GrammarChooser(
                pipeline.interpreter, pipeline.belief, router, self.config.daemon.wake_word,
                FRAME_WORDS, router.stops,
                repair=self.config.stt.repair, judge=self.config.stt.judge,
                held=self.config.stt.held,
            )  # fmt: skip
        await front.start(stack)
        services.attach_voice(front.say, front.speaker, front.interrupt)
        return front

    def _outside(self, parts: Parts) -> list[tuple[str, Coroutine[Any, Any, None]]]:
        """What shows the cell to the outside and takes its words (`parts.board`,
        `self.inbox`), each a task of the run that ends with it."""
        outside: list[tuple[str, Coroutine[Any, Any, None]]] = []
        if self.page is not None:
            drawing = drawing_of(lambda: parts.pipeline.belief)
            outside.append(
                ("cell-page", self.page.serve(parts.board.snapshot, drawing, self.inbox))
            )
        mqtt = mqtt_service(
            self.config, self.session.cell.name, parts.board, self.inbox, self.events,
            self._broker_status,
        )  # fmt: skip
        if mqtt is not None:
            outside.append(("mqtt", mqtt.run()))
        return outside

    def _page(self) -> CellPage | None:
        settings = self.config.page
        if not settings.enabled:
            return None
        token = read_token(settings, lambda path: resolve_config_path(self.config, path))
        return CellPage(settings, self.events, token)

    def _input(self, front: AudioFrontEnd | None) -> Input:
        """What this session listens to: the queue, a replay, audio, typed text, or nothing."""
        session = self.session
        if session.queue:
            return QueueInput(DeferredQueue(session.data.queue), self.events)
        if session.replay is not None:
            return ReplayInput(session.replay, self.events)
        if front is not None:
            return AudioInput(front, self.events)
        if session.text is not None:
            query = self.config.query
            pause = query.silence_timeout + 0.1
            return TextInput(session.text, pause, self.config.daemon.max_utterance_chars,
                             sends_after=query.complete_timeout)  # fmt: skip
        return NoInput()

    def _interpreter(self, llm: LlmClient | None) -> Interpreter:
        cfg = self.config
        interpreter = Interpreter(
            self.session.cell, self.session.data, llm, cfg.llm, self.events,
            phrase_threshold=cfg.interpreter.phrase_threshold,
            learn_threshold=cfg.interpreter.learn_threshold,
        )  # fmt: skip
        if interpreter.writer.last_error is not None:
            self.events.emit(ev.Failure("learned", str(interpreter.writer.last_error)))
        if interpreter.verbs.problem is not None:
            self.events.emit(ev.Failure(LEARNED_VERBS, interpreter.verbs.problem))
        for problem in interpreter.cell.sentences.problems:
            # The cell runs without the wrong template (its other templates and the grammar
            # still hear everything else).
            log.warning("sentence template left out", problem=str(problem))
            self.events.emit(ev.Failure("sentences", str(problem)))
        return interpreter

    def _ask(
        self,
        router: CommandRouter,
        llm: LlmClient | None,
        question: str,
        answered: Callable[[str], None],
        revised: Callable[[str], None],
    ) -> Withdraw:
        if self.session.assume_yes:
            log.info("approved beforehand", question=question)
            self.events.emit(ev.Feedback(f"{question} Yes (approved beforehand)."))
            answered("yes")
            return lambda: None
        timeout = self.config.query.confirm_timeout
        classifier = AnthropicClassifier(llm, self._counted) if llm else None
        frame = ReviewFrame(question, answered, revised, timeout, classifier)
        router.push(frame)

        def withdraw() -> None:
            if frame in router.stack:
                router.pop(frame)

        return withdraw

    def _counted(self, reply: LlmReply | None, error: str | None) -> None:
        """The yes/no classifier's call, counted like every other (the `llm` event)."""
        self.events.emit(usage_event(reply, error))

    def _announce_status(self, mode: str) -> None:
        self._mode = mode
        link = f"; controller {self._link}" if self._link else ""
        audio = f"; {words}" if (words := self._audio_status()) else ""
        broker = f"; {self._broker}" if self._broker else ""
        cell = self.session.cell.name
        self.notifier.status(f"listening: {mode} mode, cell {cell}{link}{audio}{broker}")

    def _broker_status(self, words: str | None) -> None:
        """The MQTT service's word for STATUS= ("mqtt broker away, retrying"); None: up."""
        self._broker = words
        self._announce_status(self._mode)

    def _link_status(self, text: str | None) -> None:
        """The link keeper's word for STATUS= ("link lost, reconnecting"); None: it is up."""
        self._link = text
        self._announce_status(self._mode)

    def _on_event(self, record: Record) -> None:
        change = record.event
        if isinstance(change, StackChange) and change.mode is not None:
            self._announce_status(change.mode)

    def _router(self, services: DaemonServices) -> CommandRouter:
        cfg = self.config
        base = BaseFrame(
            cfg.daemon.wake_word,
            cfg.query.silence_timeout,
            cfg.query.listen_timeout,
            cfg.daemon.wake_variants,
            cfg.targets.query,
            cfg.targets.dictation,
            min(cfg.query.complete_timeout, cfg.query.silence_timeout),
            help_examples(self.session.cell),
        )
        wake_words = cfg.daemon.wake_words
        rules_first = [stop_rule(wake_words), pause_rule(wake_words)]
        router = CommandRouter(base, services, self.events, rules_first, cfg.daemon.mode)
        base.on_push(router, 0.0)
        router.owner_hears_again = True  # after the wait for the interpreter (`_hear_again`)
        services.expect_more = base.expect_more
        return router

    def _start_watchdog(
        self, group: asyncio.TaskGroup, keeper: LinkKeeper
    ) -> asyncio.Task[None] | None:
        interval = watchdog_interval()
        if interval is None:
            return None

        def healthy() -> bool:
            """Healthy, and the controller link up or its keeper still trying."""
            return self._healthy and keeper.healthy

        return group.create_task(
            run_watchdog(self.notifier, interval, healthy, self.shutdown), name="watchdog"
        )

    # -- listening ---------------------------------------------------------------------------

    async def _listen(self, parts: Parts) -> None:
        """The one input loop: utterances to the router, ticks and activity to the frames'
        timers, until the input ends; then every timer runs out and the last words are said."""
        router = parts.router
        async with contextlib.aclosing(with_remote(parts.source, self.inbox)) as events:
            self._reader = reader = ReadAhead(events)
            try:
                await self._take_all(reader, parts)
            finally:
                await reader.close()
        await _run_out(router, parts.pipeline, router.now)
        if parts.front is not None:
            await parts.front.feedback.drain()

    async def _take_all(self, reader: ReadAhead, parts: Parts) -> None:
        router = parts.router
        while True:
            try:
                event = await reader.next()
            except StopAsyncIteration:
                return
            if isinstance(event, RemoteWords):
                self.events.emit(ev.RemoteSaid(event.text, event.source))
                log.info("words from outside", text=event.text, source=event.source)
                await self._from_outside(event, parts)
            elif isinstance(event, Tick):
                await router.tick(event.t)
            elif isinstance(event, Activity):
                router.activity(event.t, event.voiced)
            elif isinstance(event, Unusable):
                parts.services.ignore(event)
            else:
                await self._hear(event, parts)

    async def _from_outside(self, words: RemoteWords, parts: Parts) -> None:
        """Words from outside are a whole utterance. Audio's clock runs by itself, so the
        frames' timers send them on; typed text and no input have no clock of their own, so
        it moves on by a pause, as after a typed line and a blank one (else a command would
        wait in the query frame for the next line that may never come)."""
        router = parts.router
        text = words.text
        waking = router.mode == "wake" and router.top is router.stack[0]
        stop = router.stops(text)
        if waking and not stop and not self._woken(text):
            # Typed on a dashboard, a command is meant for the cell: nobody types the wake word.
            text = f"{self.config.daemon.wake_word} {text}"
        await self._hear(Utterance(text, router.now, source=words.source), parts)
        if not isinstance(parts.source, AudioInput):
            await router.tick(router.now + self.config.query.silence_timeout + 0.1)

    def _woken(self, text: str) -> bool:
        """Whether `text` starts with the wake word (or one of its variants)."""
        said = rules.normalize(text)
        words = self.config.daemon.wake_words
        return any(said.startswith(rules.normalize(word)) for word in words)

    async def _hear(self, said: Utterance, parts: Parts) -> None:
        router = parts.router
        with correlation(said.correlation_id) as cid:
            utterance = rules.Utterance(said.text, said.t, cid, source=said.source)
            if said.result is not None:
                await self._run_as_routed(said, said.result, cid, parts)
                return
            limit = self.config.daemon.max_utterance_chars
            if len(said.text) > limit:
                parts.services.ignore(too_long(said.text, len(said.text), limit))
                return
            stop = router.is_global(utterance)
            if not stop and await self._stopped_while_accepting(parts):
                self._dropped_before_stop([said])
                return
            self.events.emit(said.announce or ev.Utterance(said.text))
            # The stop spotter acted on this speech: it was a stop, whatever the transcript
            # made of it ("top", "Stop it now"), and must not move anything after the stop.
            # What else it holds is named, as a stop in a transcript names what it drops.
            if not said.spotted:
                await router.dispatch(utterance)
                await self._hear_again(parts)
                return
            dropped = heard_with_spotted_stop(router, said.text, self.config.daemon.wake_words)
            for command in dropped:
                self.events.emit(ev.Dropped(command, "said with a stop"))
            if dropped:
                parts.services.speak(dropped_sentence(dropped, lead="Heard with the stop."))

    async def _hear_again(self, parts: Parts) -> None:
        """What a frame gave back to be heard from the top (a whole command after words that
        were none, the next order after one that waited) waits for the interpreter as what is
        said next does. A stop read meanwhile is taken next, and it drops what is left here
        as it drops a half-said command (named in what the operator hears)."""
        router = parts.router
        while router.again:
            if await self._stopped_while_accepting(parts):
                return
            await router.dispatch(router.again.pop(0))

    async def _stopped_while_accepting(self, parts: Parts) -> bool:
        """What is said waits for the interpreter (never for the robot), so a question it asks
        is in place before the next line arrives. A stop waits for nothing: while this waits,
        the input is read on, and a stop read meanwhile ends the wait (True) and is taken
        next; what was read before it was said before it, and is dropped."""
        pipeline, router = parts.pipeline, parts.router
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
        self, said: Utterance, result: asyncio.Future[TargetResult], cid: str, parts: Parts
    ) -> None:
        """A command that went through the frames when it was first said (queued, replayed)
        goes to the robot pipeline as it is; its result (or error) goes back to its input.
        Nobody is there to answer a question, so the clock runs out on it: one that needs a
        yes is not run (unless approved beforehand, `voiced replay --yes`)."""
        self.events.emit(said.announce or ev.Utterance(said.text))
        try:
            outcome = parts.pipeline.submit(said.text, cid)
            await _run_out(parts.router, parts.pipeline, parts.router.now)
            result.set_result(await outcome)
        except Exception as error:  # the input records it and raises it
            result.set_exception(error)

    # -- ending ------------------------------------------------------------------------------

    async def _wait_for_end(self, feeder: asyncio.Task[None]) -> bool:
        """Wait until the input ends or a signal arrives; True for a signal."""
        await self._until_signalled(feeder)
        return self.shutdown.is_set()

    async def _until_signalled(self, task: asyncio.Task[Any]) -> None:
        """Until `task` ends or a shutdown signal arrives (`task` is left as it is)."""
        stopper = asyncio.create_task(self.shutdown.wait(), name="shutdown-wait")
        try:
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await _cancel(stopper)

    async def _finish(self, feeder: asyncio.Task[None], parts: Parts, by_signal: bool) -> None:
        # End of input: let the robot finish what was asked and the targets deliver what was
        # said, unless a signal comes first.
        if not by_signal and await self._unless_signalled(self._drain(parts)):
            return  # everything said was done or delivered
        self.notifier.stopping()
        feeder.cancel()
        # Before the arm is stopped: handing dictation on only starts its write, and that write
        # must not depend on how long stopping takes. It is awaited with the other deliveries.
        await parts.router.end()
        try:
            async with asyncio.timeout(self.config.daemon.shutdown_timeout):
                await self._stop_motion(parts)
                await parts.services.flush()
        except TimeoutError:
            log.error("shutdown took too long; abandoning the controller link",
                      timeout=self.config.daemon.shutdown_timeout)  # fmt: skip

    async def _drain(self, parts: Parts) -> bool:
        """True once everything said was done and delivered; False if the robot could not be
        waited for (then the shutdown that follows drops, and names, what still waits)."""
        await parts.router.end()
        if not await self._idle_unless_link_down(parts):
            return False
        await parts.services.flush()
        return True

    async def _idle_unless_link_down(self, parts: Parts) -> bool:
        """Until the robot is idle (True). With the controller link down, work may wait for a
        controller that is gone: after the shutdown timeout without a link the daemon stops
        waiting (False)."""
        idle = asyncio.ensure_future(parts.pipeline.wait_idle())
        keeper, loop = parts.pipeline.keeper, asyncio.get_running_loop()
        patience = self.config.daemon.shutdown_timeout
        down_since: float | None = None
        try:
            while not (await asyncio.wait({idle}, timeout=DRAIN_POLL_S))[0]:
                if keeper.up.is_set():
                    down_since = None
                elif down_since is None:
                    down_since = loop.time()
                elif loop.time() - down_since > patience:
                    log.warning("end of input with the controller link down: not waiting for "
                                "the robot", timeout=patience)  # fmt: skip
                    return False
            return True
        finally:
            idle.cancel()

    async def _unless_signalled(self, work: Coroutine[Any, Any, bool]) -> bool:
        """Run `work` until it finishes (its answer) or a shutdown signal arrives (False: it
        is cancelled, and awaited)."""
        task = asyncio.create_task(work, name="drain")
        try:
            await self._until_signalled(task)
        finally:
            finished = task.done()
            await _cancel(task)
        # Its error, if it had one, is not lost.
        return task.result() if finished else False

    async def _stop_motion(self, parts: Parts) -> None:
        """Nothing said before SIGTERM moves after it: pending work is dropped, motion stops."""
        pipeline = parts.pipeline
        moving = pipeline.workload.moving
        await pipeline.shutdown()
        await pipeline.wait_idle()
        if moving:
            log.warning("stopped for shutdown", state=self._final_state(parts))

    # -- state -------------------------------------------------------------------------------

    def _final_state(self, parts: Parts) -> dict[str, Any]:
        scene = parts.pipeline.belief.scene
        sim = parts.controller.sim
        if sim is not None:
            # The simulator's scene is the ground truth; only the active zone is logical.
            scene = sim.scene.with_changes(active_zone=scene.active_zone)
        return state_view(self.session.cell, scene)

    def _emit_final_state(self, parts: Parts) -> None:
        self.events.emit(ev.FinalState(self._final_state(parts)))


async def _run_out(router: CommandRouter, pipeline: RobotPipeline, clock: float) -> None:
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


async def _cancel(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancel each task still running and wait until every one has ended: nothing cancelled is
    left pending. Their errors are not raised here (the task group reports its own)."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
