"""`voiced run`: every component under one owner, and a staged, bounded shutdown.

Start-up: data directory, cell and scene, controller (the in-process simulator or a real one),
frame router, robot pipeline, input, each built before anything runs (`Parts`). READY=1 goes to
systemd once input and the controller link are up. Then the one input loop runs
(`voiced.service.input_loop`) with the pipeline, the link keeper, the watchdog and what shows
the cell outside; STATUS= is composed by `voiced.service.status`. SIGTERM/SIGINT only set an
event; shutdown then runs in stages within `daemon.shutdown_timeout`
(`voiced.service.shutdown`): stop input, hand on unsaved dictation, stop the arm safely (STOP
on the control channel), let the pipeline record what really ran and the targets store what
they were given, write the final state, close the link.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import structlog

from voiced import eventtypes as ev
from voiced.commands.pending import Withdraw
from voiced.commands.pipeline import RobotPipeline
from voiced.config import Config, resolve_config_path
from voiced.errors import VoicedError
from voiced.events import EventLog
from voiced.frames import BaseFrame, CommandRouter, ReviewFrame
from voiced.frames.pause import pause_rule
from voiced.frames.stop import stop_rule
from voiced.history import History
from voiced.inputs.audio import FRAME_WORDS, AudioFrontEnd, bias_for
from voiced.inputs.hearing import GrammarChooser
from voiced.inputs.sources import (
    AudioInput,
    Input,
    NoInput,
    QueueInput,
    ReplayInput,
    TextInput,
)
from voiced.inputs.typed import TextInput as TextLines
from voiced.interpreter.tiers import LEARNED_VERBS, Interpreter
from voiced.link.controller import Controller, open_controller
from voiced.link.keeper import LinkKeeper
from voiced.link.saved_scene import SceneStore
from voiced.llm.classifier import AnthropicClassifier
from voiced.llm.client import LlmClient, LlmReply
from voiced.llm.sequence import usage_event
from voiced.mqtt.service import mqtt_service
from voiced.page.server import CellPage, drawing_of, read_token
from voiced.paths import DataDir, offline
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.service.cellstatus import RemoteInbox, StatusBoard
from voiced.service.frame_services import DaemonServices
from voiced.service.input_loop import InputLoop
from voiced.service.parts import Parts
from voiced.service.sdnotify import Notifier, run_watchdog, watchdog_interval
from voiced.service.shutdown import Shutdown, cancel
from voiced.service.status import StatusLine
from voiced.targets import DeferredQueue, build_targets
from voiced.words.examples import help_examples

log = structlog.get_logger(__name__)


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


class Daemon:
    """One run of the daemon. `run()` returns the process exit code."""

    def __init__(self, session: Session, notifier: Notifier | None = None) -> None:
        self.session = session
        self.config = session.config
        self.events = session.events
        self.notifier = notifier or Notifier()
        self.shutdown = asyncio.Event()
        self._healthy = True
        self.status = StatusLine(self.notifier, session.cell.name, session.config.daemon.mode)
        self.inbox = RemoteInbox()
        """Words from outside (the cell page's STOP, MQTT), taken between what is heard."""
        self._loop: InputLoop | None = None
        """The one input loop, once the parts it feeds are built."""
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
            ask=lambda question, answered, revised, level_db: self._ask(
                router, llm, question, answered, revised, level_db
            ),
            trace_dir=session.data.traces,
            history=history,
            review=self.config.review,
            interpreter=self._interpreter(llm),
            status=self.status.link_status,
        )
        targets = build_targets(self.config, session.data, self.events)
        services = DaemonServices(
            self.events, pipeline, targets, self.config.tts.voices,
            max_command_chars=self.config.daemon.max_utterance_chars,
        )  # fmt: skip
        router = self._router(services)
        front = await self._audio(stack, router, pipeline, services)
        board = StatusBoard(
            router, lambda: pipeline.belief, link, lambda: self.status.link, history
        )  # fmt: skip
        return Parts(controller, pipeline, services, router, front, self._input(front), board)

    async def _serve(self, parts: Parts) -> int:
        pipeline, router, front = parts.pipeline, parts.router, parts.front
        # The controller's report is the truth from the first moment: the saved scene is
        # corrected by it before anything can move (and what differed is said).
        await pipeline.reconcile("connected")
        self._loop = InputLoop(self.config, self.events, self.inbox, parts)
        shutdown = Shutdown(self.config, self.notifier, self.session.cell, self.shutdown)
        async with asyncio.TaskGroup() as group:
            worker = group.create_task(pipeline.run(), name="robot-pipeline")
            acceptor = group.create_task(pipeline.accept(), name="acceptance")
            keeper = group.create_task(pipeline.keeper.run(), name="link-keeper")
            watchdog = self._start_watchdog(group, pipeline.keeper)
            feeder = group.create_task(self._loop.run(), name="input")
            speech = group.create_task(front.feedback.run(), name="speech") if front else None
            outside = [
                group.create_task(work, name=name) for name, work in self._outside(parts)
            ]  # fmt: skip
            self.notifier.ready()
            self.status.announce(router.mode)
            unsubscribe = self.events.subscribe(self.status.on_event)
            log.info("ready", cell=self.session.cell.name, mode=router.mode, offline=offline())
            ended_by_signal = await shutdown.wait_for_end(feeder)
            await shutdown.finish(feeder, parts, ended_by_signal)
            unsubscribe()
            await cancel(feeder, worker, acceptor, keeper, watchdog, speech, *outside)
        self._emit_final_state(parts, shutdown)
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
            and not (self._loop is not None and self._loop.reading_ahead),
            is_stop=router.stops,
            moving=lambda: pipeline.workload.busy,
            room_echo_db=self.session.room_echo_db,
            on_status=self.status.announce,
            segments=self.page.exchanges.publish if self.page else None,
        )  # fmt: skip
        self.status.audio = lambda: front.status
        if self.config.stt.hypotheses > 1 or self.config.stt.repair:
            front.listener.choose = GrammarChooser(
                pipeline.interpreter, pipeline.belief, router, self.config.daemon.wake_word,
                FRAME_WORDS, router.stops,
                repair=self.config.stt.repair, judge=self.config.stt.judge,
                held=self.config.stt.held,
            )  # fmt: skip
        await front.start(stack)
        services.attach_voice(front.say, front.speaker, front.interrupt)
        services.attach_ears(front.listener.rehear)
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
            self.status.broker_status,
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
            lines = TextLines(session.text, pause, self.config.daemon.max_utterance_chars,
                              sends_after=query.complete_timeout)  # fmt: skip
            return TextInput(lines)
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
        level_db: float | None,
    ) -> Withdraw:
        if self.session.assume_yes:
            log.info("approved beforehand", question=question)
            self.events.emit(ev.Feedback(f"{question} Yes (approved beforehand)."))
            answered("yes")
            return lambda: None
        timeout = self.config.query.confirm_timeout
        classifier = AnthropicClassifier(llm, self._counted) if llm else None
        frame = ReviewFrame(question, answered, revised, timeout, classifier,
                            self.config.daemon.wake_words, level_db)  # fmt: skip
        router.push(frame)

        def withdraw() -> None:
            if frame in router.stack:
                router.pop(frame)

        return withdraw

    def _counted(self, reply: LlmReply | None, error: str | None) -> None:
        """The yes/no classifier's call, counted like every other (the `llm` event)."""
        self.events.emit(usage_event(reply, error))

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
        router.owner_hears_again = True  # after the wait for the interpreter (`InputLoop`)
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

    def _emit_final_state(self, parts: Parts, shutdown: Shutdown) -> None:
        self.events.emit(ev.FinalState(shutdown.final_state(parts)))
