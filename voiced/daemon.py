"""`voiced run`: every component under one owner, and a staged, bounded shutdown.

Start-up: data directory, cell and scene, controller (the in-process simulator or a real one),
frame router, robot pipeline, input. READY=1 goes to systemd once input and the controller link
are up. SIGTERM/SIGINT only set an event; shutdown then runs in stages within
`daemon.shutdown_timeout`: stop input, stop the arm safely (STOP on the control channel), let
the pipeline record what really ran, write the final state, close the link.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import structlog

from voiced.audioinput import (
    Activity,
    AudioFrontEnd,
    BargeIn,
    Heard,
    Spotted,
    Tick,
    bias_for,
    spotted_fields,
    utterance_fields,
)
from voiced.config import Config
from voiced.errors import ControllerAuthError, ControllerConnectionError, VoicedError
from voiced.events import EventLog
from voiced.frames import BaseFrame, CommandRouter, ReviewFrame
from voiced.frames.stop import stop_rule
from voiced.history import History
from voiced.interpreter.tiers import Interpreter
from voiced.linkkey import controller_key
from voiced.llm.classifier import AnthropicClassifier
from voiced.llm.client import LlmClient
from voiced.logs import correlation
from voiced.paths import DataDir, atomic_write_json, offline
from voiced.pending import Withdraw
from voiced.pipeline import RobotPipeline
from voiced.robot.cell import Cell
from voiced.robot.link import ControllerLink
from voiced.robot.physics import position_name
from voiced.robot.saved import read_saved_scene
from voiced.robot.scene import Scene
from voiced.robot.simulator import Simulator
from voiced.robot.view import state_view
from voiced.rules import Utterance
from voiced.sdnotify import Notifier, run_watchdog, watchdog_interval
from voiced.services import DaemonServices
from voiced.targets import DeferredQueue, QueuedItem, TargetResult, build_targets, work_off
from voiced.textinput import Line, TextInput

log = structlog.get_logger(__name__)

END_OF_INPUT_PAUSE = 3600.0
"""Input-clock seconds added at end of input: longer than every timer that listens."""
END_OF_INPUT_ROUNDS = 4
"""How many times the clock moves on at end of input (a query, then its question...)."""


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
        self.sim: Simulator | None = None
        self.pipeline: RobotPipeline | None = None
        self.llm_client: LlmClient | None = None
        self.front: AudioFrontEnd | None = None
        self._stack = contextlib.AsyncExitStack()
        self.services: DaemonServices
        self._healthy = True
        self._mode = session.config.daemon.mode
        self._link: str | None = None

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_signal, sig)
        try:
            async with self._stack, self._controller() as link:
                return await self._serve(link)
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

    @contextlib.asynccontextmanager
    async def _controller(self) -> AsyncIterator[ControllerLink]:
        cfg = self.config.controller
        async with contextlib.AsyncExitStack() as stack:
            if cfg.is_simulated:
                # Its own key, new per run: the in-process simulator is authenticated too.
                key: bytes | None = secrets.token_hex(32).encode("ascii")
                allow = False
                self.sim = Simulator(
                    self.session.cell,
                    self.session.scene,
                    time_scale=self.config.simulator.time_scale,
                    heartbeat_timeout=cfg.heartbeat_timeout,
                    key=key,
                )
                await stack.enter_async_context(self.sim)
                host, motion, control = "127.0.0.1", self.sim.motion_port, self.sim.control_port
                log.info("simulator started", motion_port=motion, control_port=control)
            else:
                endpoint = cfg.endpoint
                assert endpoint is not None  # the config validated the address
                host, motion = endpoint
                control = cfg.control_port_for(motion)
                key, allow = controller_key(self.config), cfg.allow_unauthenticated
            link = ControllerLink(
                host,
                motion,
                control,
                connect_timeout=cfg.connect_timeout,
                heartbeat_interval=cfg.heartbeat_interval,
                heartbeat_timeout=cfg.heartbeat_timeout,
                window=cfg.window,
                on_line=self._on_line,
                key=key,
                allow_unauthenticated=allow,
            )
            try:
                entered = await stack.enter_async_context(link)
            except ControllerConnectionError as exc:
                kind = "auth" if isinstance(exc, ControllerAuthError) else "link"
                self.events.emit("error", {"kind": kind, "reason": str(exc)})
                raise
            yield entered

    def _on_line(self, direction: str, channel: str, line: str) -> None:
        """Every line on the controller link becomes an event, except the heartbeat chatter."""
        if line.startswith(("PING", "PONG")):
            return
        seq = line.split(" ", 1)[0]
        if direction == "tx" and channel == "motion" and seq.isdigit():
            self.events.emit("primitive", {"seq": int(seq), "line": line})
        else:
            self.events.emit("controller", {"direction": direction, "channel": channel,
                                            "line": line})  # fmt: skip

    async def _serve(self, link: ControllerLink) -> int:
        session = self.session
        self.history = History(session.data.history)
        interrupted = self.history.mark_interrupted()
        if interrupted:
            log.warning("runs interrupted by the last shutdown", count=interrupted)
        pipeline = RobotPipeline(
            session.cell,
            self._starting_scene(link),
            link,
            self.events,
            speak=lambda text: services.speak(text),
            save_scene=self._save_scene,
            ask=lambda question, answered, revised: self._ask(router, question, answered, revised),
            trace_dir=session.data.traces,
            history=self.history,
            review=self.config.review,
            interpreter=self._interpreter(),
            status=self._link_status,
        )
        self.pipeline = pipeline
        targets = build_targets(self.config, session.data, self.events)
        services = DaemonServices(self.events, pipeline, targets, self.config.tts.voices)
        self.services = services
        router = self._router(services)
        front = await self._audio(router, pipeline, services)
        # The controller's report is the truth from the first moment: the saved scene is
        # corrected by it before anything can move (and what differed is said).
        await pipeline.reconcile("connected")
        async with asyncio.TaskGroup() as group:
            worker = group.create_task(pipeline.run(), name="robot-pipeline")
            acceptor = group.create_task(pipeline.accept(), name="acceptance")
            keeper = group.create_task(pipeline.keeper.run(), name="link-keeper")
            watchdog = self._start_watchdog(group)
            feeder = group.create_task(self._feed(router), name="input")
            speech = group.create_task(front.feedback.run(), name="speech") if front else None
            self.notifier.ready()
            self._announce_status(router.mode)
            unsubscribe = self.events.subscribe(self._on_event)
            log.info("ready", cell=session.cell.name, mode=router.mode, offline=offline())
            ended_by_signal = await self._wait_for_end(feeder)
            await self._finish(feeder, pipeline, ended_by_signal)
            unsubscribe()
            for task in (worker, acceptor, keeper, watchdog, speech):
                if task is not None:
                    task.cancel()
        self._emit_final_state()
        if self.llm_client is not None:
            await self.llm_client.aclose()
        return 0

    async def _audio(
        self, router: CommandRouter, pipeline: RobotPipeline, services: DaemonServices
    ) -> AudioFrontEnd | None:
        """The audio front end for `--audio`, with its model loaded before READY=1."""
        if self.session.audio is None:
            return None
        phrases = pipeline.interpreter.grammar.phrase_bank.phrases()
        bias = bias_for(pipeline.cell, phrases, self.config)
        base = router.stack[0]
        front = AudioFrontEnd(
            self.config, self.session.audio, self.session.fast, self.events, bias,
            wake_required=lambda: router.mode == "wake" and router.top is base,
            is_stop=lambda text: router.is_global(Utterance(text, router.now)),
            moving=lambda: pipeline.busy,
            room_echo_db=self.session.room_echo_db,
        )  # fmt: skip
        await front.start(self._stack)
        services.attach_voice(front.say, front.speaker, front.interrupt)
        self.front = front
        return front

    def _interpreter(self) -> Interpreter:
        cfg = self.config
        self.llm_client = LlmClient.from_env(cfg.llm)
        interpreter = Interpreter(
            self.session.cell, self.session.data, self.llm_client, cfg.llm, self.events,
            phrase_threshold=cfg.interpreter.phrase_threshold,
            learn_threshold=cfg.interpreter.learn_threshold,
        )  # fmt: skip
        if interpreter.writer.last_error is not None:
            self.events.emit(
                "error", {"kind": "learned", "error": str(interpreter.writer.last_error)}
            )
        return interpreter

    def _ask(
        self,
        router: CommandRouter,
        question: str,
        answered: Callable[[str], None],
        revised: Callable[[str], None],
    ) -> Withdraw:
        if self.session.assume_yes:
            log.info("approved beforehand", question=question)
            self.events.emit("feedback", {"text": f"{question} Yes (approved beforehand)."})
            answered("yes")
            return lambda: None
        timeout = self.config.query.confirm_timeout
        classifier = AnthropicClassifier(self.llm_client) if self.llm_client else None
        frame = ReviewFrame(question, answered, revised, timeout, classifier)
        router.push(frame)

        def withdraw() -> None:
            if frame in router.stack:
                router.pop(frame)

        return withdraw

    def _announce_status(self, mode: str) -> None:
        self._mode = mode
        link = f"; controller {self._link}" if self._link else ""
        self.notifier.status(f"listening: {mode} mode, cell {self.session.cell.name}{link}")

    def _link_status(self, text: str | None) -> None:
        """The link keeper's word for STATUS= ("link lost, reconnecting"); None: it is up."""
        self._link = text
        self._announce_status(self._mode)

    def _on_event(self, record: dict[str, Any]) -> None:
        if record["event"] == "frame" and record.get("action") == "mode":
            self._announce_status(record["mode"])

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
        )
        router = CommandRouter(base, services, self.events, [stop_rule()], cfg.daemon.mode)
        base.on_push(router, 0.0)
        return router

    def _start_watchdog(self, group: asyncio.TaskGroup) -> asyncio.Task[None] | None:
        interval = watchdog_interval()
        if interval is None:
            return None
        return group.create_task(
            run_watchdog(self.notifier, interval, self._is_healthy, self.shutdown),
            name="watchdog",
        )

    def _is_healthy(self) -> bool:
        """Healthy, and the controller link up or its keeper still trying."""
        return self._healthy and (self.pipeline is None or self.pipeline.keeper.healthy)

    async def _wait_for_end(self, feeder: asyncio.Task[None]) -> bool:
        """Wait until the input ends or a signal arrives; True for a signal."""
        stopper = asyncio.create_task(self.shutdown.wait(), name="shutdown-wait")
        try:
            await asyncio.wait({feeder, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
        return self.shutdown.is_set()

    async def _finish(
        self, feeder: asyncio.Task[None], pipeline: RobotPipeline, by_signal: bool
    ) -> None:
        # End of input: let the robot finish what was asked and the targets deliver what was
        # said, unless a signal comes first.
        if not by_signal and await self._unless_signalled(self._drain(pipeline)):
            return
        self.notifier.stopping()
        feeder.cancel()
        try:
            async with asyncio.timeout(self.config.daemon.shutdown_timeout):
                await self._stop_motion(pipeline)
                await self.services.flush()
        except TimeoutError:
            log.error("shutdown took too long; abandoning the controller link",
                      timeout=self.config.daemon.shutdown_timeout)  # fmt: skip

    async def _drain(self, pipeline: RobotPipeline) -> None:
        await pipeline.wait_idle()
        await self.services.flush()

    async def _unless_signalled(self, work: Coroutine[Any, Any, None]) -> bool:
        """Run `work` until it finishes (True) or a shutdown signal arrives (False)."""
        task = asyncio.create_task(work, name="drain")
        stopper = asyncio.create_task(self.shutdown.wait(), name="shutdown-wait")
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if task.done():
            return True
        task.cancel()
        return False

    async def _stop_motion(self, pipeline: RobotPipeline) -> None:
        """Nothing said before SIGTERM moves after it: pending work is dropped, motion stops."""
        moving = pipeline.moving
        await pipeline.shutdown()
        await pipeline.wait_idle()
        if moving:
            log.warning("stopped for shutdown", state=self._final_state())

    async def _feed(self, router: CommandRouter) -> None:
        if self.session.queue:
            await self._feed_queue(router)
            return
        if self.session.replay is not None:
            await self._feed_replay(router, self.session.replay)
            return
        if self.session.audio is not None:
            await self._feed_audio(router)
            return
        text = self.session.text
        if text is None:
            await self.shutdown.wait()
            return
        source = TextInput(text, pause=self.config.query.silence_timeout + 0.1)
        assert self.pipeline is not None
        async for event in source.events():
            if isinstance(event, Line):
                with correlation() as cid:
                    utterance = Utterance(event.text, event.t, cid)
                    if not router.is_global(utterance):
                        # Typed lines wait for the interpreter (never for the robot), so a
                        # question it asks is in place before the next line arrives. A stop
                        # waits for nothing.
                        await self.pipeline.wait_accepted()
                    self.events.emit("utterance", {"text": event.text})
                    await router.dispatch(utterance)
            await router.tick(event.t)
        await self._run_out(router, source.clock)

    async def _run_out(self, router: CommandRouter, clock: float) -> None:
        """End of input: let every timer that listens run out. A query that times out is
        submitted, and its interpretation may ask a question whose own timer starts then, so
        the clock moves on again until nothing new is waiting."""
        assert self.pipeline is not None
        for round_ in range(1, END_OF_INPUT_ROUNDS + 1):
            await self.pipeline.wait_accepted()
            top = router.top
            await router.tick(clock + round_ * END_OF_INPUT_PAUSE)
            await self.pipeline.wait_accepted()
            if router.top is top and router.top is router.stack[0]:
                return

    async def _feed_audio(self, router: CommandRouter) -> None:
        """Utterances from the listener enter the router like typed lines; activity and ticks
        drive the frames' timers on the audio clock."""
        assert self.pipeline is not None and self.front is not None
        listener = self.front.listener
        async for event in listener.events():
            if isinstance(event, Heard):
                with correlation() as cid:
                    # Timers count from the end of the last word, not from the end of the
                    # hangover: the operator stopped talking then.
                    utterance = Utterance(event.text, event.segment.vad.speech_end, cid)
                    stop = router.is_global(utterance)
                    if not stop:
                        await self.pipeline.wait_accepted()
                    self.events.emit("utterance", utterance_fields(event))
                    if not (stop and event.spotted):  # the spotter has stopped the arm
                        await router.dispatch(utterance)
                await router.tick(event.t)
            elif isinstance(event, Spotted):
                with correlation() as cid:
                    self.events.emit("spotted", spotted_fields(event))
                    await router.dispatch(Utterance(event.text, event.speech_end, cid))
            elif isinstance(event, BargeIn):
                cut = self.front.feedback.interrupt(event.position, "barge-in")
                self.events.emit("barge_in", {"audio_t": round(event.t, 3), "cut": cut})
            elif isinstance(event, Activity):
                router.activity(event.t, event.voiced)
            elif isinstance(event, Tick):
                await router.tick(event.t)
            else:
                self.front.describe(event)
        await self._run_out(router, listener.now)
        await self.front.feedback.drain()

    async def _feed_queue(self, router: CommandRouter) -> None:
        """Each pending queued command goes to the robot pipeline in turn; its outcome is
        recorded. Nobody is there to answer a question, so one that needs a yes is not run."""
        assert self.pipeline is not None
        pipeline = self.pipeline

        async def handle(item: QueuedItem) -> TargetResult:
            with correlation(item.correlation_id) as cid:
                self.events.emit("utterance", {"text": item.text, "queued": item.id})
                outcome = pipeline.submit(item.text, cid)
                await self._run_out(router, router.now)
                return await outcome

        done = await work_off(DeferredQueue(self.session.data.queue), handle)
        ok = sum(1 for _, result in done if result.ok)
        self.events.emit("queue", {"worked_off": len(done), "ok": ok})

    async def _feed_replay(self, router: CommandRouter, run_id: str) -> None:
        assert self.pipeline is not None
        with correlation() as cid:
            self.events.emit("utterance", {"text": f"run task {run_id}", "replay": run_id})
            outcome = self.pipeline.submit(f"run task {run_id}", cid)
            await self._run_out(router, router.now)
            result = await outcome
        self.events.emit("replay", {"run_id": run_id, "ok": result.ok, "message": result.message})

    def _starting_scene(self, link: ControllerLink) -> Scene:
        """--scene; else the scene saved when this very controller was last driven (kept per
        controller identity: a simulator's world is never restored for a real cell, nor one
        simulator's for another); else the cell's initial scene. The controller's report then
        corrects it (`reconcile`)."""
        session = self.session
        greeting = link.greeting
        controller = _identity(link)
        saved = session.data.scene(session.cell.name, controller)
        if greeting is not None and greeting.kind == "sim":
            # Every simulator is a new identity: keep the scene of the latest one only.
            prefix = saved.name[: -len(f"{controller}.json")]
            for stale in saved.parent.glob(f"{prefix}sim_*.json"):
                if stale != saved:
                    stale.unlink(missing_ok=True)
        if session.scene_given or not saved.exists():
            return session.scene
        scene = read_saved_scene(session.cell, saved)
        log.info("restored the saved scene", path=str(saved), controller=controller)
        return scene

    def _save_scene(self, scene: Scene) -> None:
        cell = self.session.cell
        self.history.save_state(cell.name, position_name(cell, scene.pose), scene.tool)
        # The controller of the moment: a reconnect may have found another.
        controller = _identity(self.pipeline.link) if self.pipeline is not None else "unknown"
        path = self.session.data.scene(self.session.cell.name, controller)
        try:
            atomic_write_json(path, scene.to_dict())
        except OSError as exc:
            self.events.emit("error", {"kind": "persist", "path": str(path), "error": str(exc)})
            log.error("could not save the scene", path=str(path), error=str(exc))

    def _final_state(self) -> dict[str, Any]:
        assert self.pipeline is not None
        scene = self.pipeline.scene
        if self.sim is not None:
            # The simulator's scene is the ground truth; only the active zone is logical.
            scene = self.sim.scene.with_changes(active_zone=scene.active_zone)
        return state_view(self.session.cell, scene)

    def _emit_final_state(self) -> None:
        if self.pipeline is not None:
            self.events.emit("final_state", {"state": self._final_state()})


def _identity(link: ControllerLink) -> str:
    """The identity the controller greeted with (saved state is kept per identity)."""
    return link.greeting.controller if link.greeting is not None else "unknown"
