"""Command_Router: owns the frame stack and dispatches utterances exactly as seed 002 says.

Global rules run first (the stop rule: the one deliberate exception to the stack, like Pipecat's
system frames that are never cancelled, because "stop" must reach the robot from every frame and
mode). Then frames from the top down: each frame's rules in order; a handled rule stops dispatch;
`check_parent` hands the utterance to the frame below; a frame whose rules run out without
`check_parent` is exclusive and drops the utterance (logged, never an error).

`Frame`, the type on the stack, lives here too: the router runs a frame's hooks and the hooks
push and pop through the router, so the two are one idea.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import structlog
from voiced.frames.services import Services
from voiced.rules import CheckParent, Handled, Rule, RuleResult, Utterance

log = structlog.get_logger(__name__)

MODES = ("wake", "always")


class Frame:
    """A frame: an ordered rule list plus state that lives and dies with the frame.

    Subclasses build `self.rules` in `__init__`. A frame without `check_parent` in its rules is
    exclusive: what none of its rules handles is dropped (logged, never an error).
    """

    name: str = "frame"
    rules: Sequence[Rule] = ()
    dropped_by_stop: bool = False
    """True for frames whose half-said content "stop" discards (a query); False for frames whose
    content belongs to the operator (dictation keeps its note)."""

    def on_push(self, router: CommandRouter, now: float) -> None:
        """Called once the frame is on the stack."""

    def on_pop(self, router: CommandRouter, now: float) -> None:
        """Called once the frame has left the stack; its state goes with it."""

    def on_uncover(self, router: CommandRouter, now: float) -> None:
        """The frame above was popped: this one is on top again (timers restart here)."""

    async def on_tick(self, router: CommandRouter, now: float) -> None:
        """The input clock moved to `now` (seconds) while this frame is on top: timers listening
        to the operator fire here. Covered frames are not ticked: their timers wait."""

    def on_activity(self, now: float, voiced: bool) -> None:
        """Voice activity from the audio front end (a frame with a silence timer tracks it)."""

    async def on_end(self, router: CommandRouter) -> None:
        """The session ends (end of input, SIGTERM, SIGINT): hand on what belongs to the
        operator and has not been submitted yet (dictation's text). Nothing is said any more."""

    def help(self) -> str:
        """What the operator can say in this frame (for "what can I say")."""
        return ""

    def unsent(self) -> str | None:
        """A command this frame holds that has not been submitted yet (None: nothing)."""
        return None

    @property
    def exclusive(self) -> bool:
        return not any(rule.name == "check_parent" for rule in self.rules)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


@dataclass(frozen=True)
class StackChange:
    """A frame pushed or popped, or the listening mode changed: the daemon's `frame` event."""

    KIND: ClassVar[str] = "frame"
    VARIANT: ClassVar[str | None] = None
    action: str
    """push, pop or mode"""
    frame: str
    """The frame pushed or popped; for mode, the frame on top."""
    mode: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"action": self.action, "frame": self.frame}
        if self.mode is not None:
            out["mode"] = self.mode
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StackChange:
        unknown = set(data) - {"event", "t", "correlation_id", "action", "frame", "mode"}
        missing = {"action", "frame"} - set(data)
        if unknown or missing:
            wrong = ", ".join(sorted(unknown | missing))
            raise ValueError(f"event 'frame': unknown or missing field {wrong}")
        return cls(str(data["action"]), str(data["frame"]), data.get("mode"))


EventSink = Callable[[StackChange], None]


@dataclass(frozen=True)
class DispatchOutcome:
    """Where an utterance went."""

    frame: str | None
    """The frame whose rule handled it ("global" for a global rule), None when dropped."""
    rule: str | None
    why: str
    dropped: bool = False


class CommandRouter:
    """The frame stack and its dispatcher. The bottom frame is never popped."""

    def __init__(
        self,
        base: Frame,
        services: Services,
        events: EventSink,
        global_rules: Sequence[Rule] = (),
        mode: str = "wake",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.services = services
        self.global_rules = tuple(global_rules)
        self._events = events
        self._mode = mode
        self._stack: list[Frame] = [base]
        self.now = 0.0
        self.said_until = 0.0
        """When the latest utterance dispatched ended (any frame's): speech after it that
        reached no frame was not heard as words."""
        self.changed = asyncio.Event()
        self.again: list[Utterance] = []
        """Utterances a frame gave back to be heard from the top once more (`hear_again`)."""
        self.owner_hears_again = False
        """Whether the owner (the daemon) takes `again` after each dispatch, as it takes what
        is said next (after what was submitted is accepted, a stop first); else `dispatch`
        hears them itself."""
        """Set whenever a frame is pushed or popped (cleared by whoever waits on it)."""

    @property
    def stack(self) -> tuple[Frame, ...]:
        return tuple(self._stack)

    @property
    def top(self) -> Frame:
        return self._stack[-1]

    @property
    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self._mode = mode
        self._events(StackChange("mode", self.top.name, mode))
        log.info("mode changed", mode=mode)

    def push(self, frame: Frame) -> None:
        self._stack.append(frame)
        self.changed.set()
        self._events(StackChange("push", frame.name))
        log.info("frame pushed", frame=frame.name, depth=len(self._stack))
        frame.on_push(self, self.now)

    def pop(self, frame: Frame) -> None:
        """Pop `frame` (and anything above it). Popping the base frame is a programming error."""
        if frame not in self._stack or frame is self._stack[0]:
            raise ValueError(f"cannot pop {frame!r}: not poppable from {self._stack!r}")
        while self._stack[-1] is not frame:
            self.pop(self._stack[-1])
        self._stack.pop()
        self.changed.set()
        self._events(StackChange("pop", frame.name))
        log.info("frame popped", frame=frame.name, depth=len(self._stack))
        frame.on_pop(self, self.now)
        self.top.on_uncover(self, self.now)

    def is_global(self, utterance: Utterance) -> bool:
        """True when a global rule (the stop) will handle this utterance."""
        return any(isinstance(rule.match(utterance), Handled) for rule in self.global_rules)

    def stops(self, text: str) -> bool:
        """True when `text`, said now, is a stop (a global rule handles it)."""
        return self.is_global(Utterance(text, self.now))

    async def dispatch(self, utterance: Utterance) -> DispatchOutcome:
        """Route one utterance; returns where it went."""
        outcome = await self._dispatch_one(utterance)
        while self.again and not self.owner_hears_again:
            await self._dispatch_one(self.again.pop(0))
        return outcome

    def hear_again(self, utterance: Utterance) -> None:
        """Hear `utterance` from the top of the stack once the current one is done: a frame
        that gave it back ("not mine after all") must not route it past the wait for what it
        just submitted."""
        self.again.append(utterance)

    async def _dispatch_one(self, utterance: Utterance) -> DispatchOutcome:
        self.now = max(self.now, utterance.t)
        self.said_until = max(self.said_until, utterance.t)
        for rule in self.global_rules:
            result = rule.match(utterance)
            if isinstance(result, Handled):
                return await self._run("global", rule.name, result, utterance)
        outcome = await self._dispatch_frame(len(self._stack) - 1, utterance)
        return outcome or self._drop(self.top.name, utterance)

    async def _dispatch_frame(self, index: int, utterance: Utterance) -> DispatchOutcome | None:
        """Run frame `index`'s rules in order. `check_parent` asks the frame below first; if that
        frame (and those below it) leave the utterance unhandled, this frame carries on with its
        remaining rules. None means unhandled: for a frame without `check_parent` that is the
        exclusive drop."""
        frame = self._stack[index]
        for rule in frame.rules:
            result = await _match(rule, utterance)
            if isinstance(result, Handled):
                return await self._run(frame.name, rule.name, result, utterance)
            if isinstance(result, CheckParent) and index > 0:
                outcome = await self._dispatch_frame(index - 1, utterance)
                if outcome is not None:
                    return outcome
        return None

    async def _run(
        self, frame: str, rule: str, handled: Handled, utterance: Utterance
    ) -> DispatchOutcome:
        why = handled.match.why
        log.info("rule matched", frame=frame, rule=rule, why=why, text=utterance.text)
        done = handled.action(self, utterance, handled.match)
        if inspect.isawaitable(done):
            await done
        return DispatchOutcome(frame, rule, why)

    def _drop(self, frame: str, utterance: Utterance) -> DispatchOutcome:
        log.info("utterance dropped", frame=frame, text=utterance.text, reason="no rule matched")
        return DispatchOutcome(None, None, f"dropped by {frame}: no rule matched", dropped=True)

    async def tick(self, now: float) -> None:
        """Advance the input clock; the top frame fires its timers. A timer that pops its frame
        may leave another frame on top whose own timer is also due, so tick until stable."""
        self.now = max(self.now, now)
        seen: set[int] = set()
        while id(self.top) not in seen:
            seen.add(id(self.top))
            await self.top.on_tick(self, self.now)

    async def end(self) -> None:
        """The session ends: every frame, top first, hands on what it still holds."""
        for frame in reversed(self._stack):
            await frame.on_end(self)

    def activity(self, now: float, voiced: bool) -> None:
        """Voice activity from the audio front end, for frames with silence timers."""
        self.now = max(self.now, now)
        for frame in self._stack:
            frame.on_activity(now, voiced)


async def _match(rule: Rule, utterance: Utterance) -> RuleResult:
    """Rules match synchronously; the LLM classifier is the one that may be awaited."""
    match_async = getattr(rule, "match_async", None)
    if match_async is not None:
        result: RuleResult = await match_async(utterance)
        return result
    return rule.match(utterance)
