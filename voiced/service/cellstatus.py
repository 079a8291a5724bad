"""The cell as seen from outside: one snapshot for everything that shows or publishes it (the
cell page, MQTT `state`), and one inbox for what comes in from outside (a STOP button, an MQTT
`stop` or `say`).

The snapshot is read, never kept: mode and frames from the router, the link and halt from the
controller's last report, the cell from the scene the controller confirmed (`Belief.scene`), the
commands from the history. So a page or a broker shows what the daemon itself would answer, and
after a link fault it shows the controller's picture as soon as the daemon has it.

What comes from outside enters the daemon's one input loop as an utterance, exactly as if it were
said: a remote stop takes the path of a spoken "stop" (so nothing said before it moves after
it), a remote command the path of a spoken one (frames, questions, confirmation).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from voiced.commands.belief import Belief
from voiced.frames.router import CommandRouter
from voiced.history import History, Run
from voiced.robot.link import ControllerLink
from voiced.robot.view import state_view

RECENT_COMMANDS = 20
"""How many of the last commands a snapshot carries."""
STOP_WORD = "stop"
"""What a remote stop says: the global stop rule's own word."""


@dataclass(frozen=True)
class CommandOutcome:
    """One command from the history, as an operator reads it."""

    said: str
    status: str
    """done, stopped, refused, ... (the history's status)."""
    intent: str
    """action, question or unknown."""
    feedback: str | None
    """What the operator was told."""
    at: str
    """When it was said (ISO 8601, UTC)."""
    run_id: str
    correlation_id: str | None = None
    """The utterance's correlation id, as on its events (the cell page ties them together)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "said": self.said,
            "status": self.status,
            "intent": self.intent,
            "feedback": self.feedback,
            "at": self.at,
            "run_id": self.run_id,
            "correlation_id": self.correlation_id,
        }


@dataclass(frozen=True)
class CellStatus:
    """The cell right now, as the daemon knows it."""

    cell: str
    mode: str
    """wake or always."""
    frames: tuple[str, ...]
    """The frame stack, bottom first (base, query, dictation, confirm, ...)."""
    link: str
    """"up", or the link keeper's word for it ("link lost, reconnecting")."""
    halted: bool
    """The controller reported itself halted (a stop, a lost heartbeat, a disconnect)."""
    halt_reason: str | None
    holding: str | None
    tool: str | None
    state: dict[str, Any]
    """The cell's state as in `final_state` (its `state_view` keys), of the confirmed scene."""
    commands: tuple[CommandOutcome, ...] = field(default=())
    """The last commands of this cell, newest first (at most RECENT_COMMANDS)."""

    @property
    def last_command(self) -> CommandOutcome | None:
        return self.commands[0] if self.commands else None

    def to_dict(self) -> dict[str, Any]:
        last = self.last_command
        return {
            "cell": self.cell,
            "mode": self.mode,
            "frames": list(self.frames),
            "link": self.link,
            "halted": self.halted,
            "halt_reason": self.halt_reason,
            "holding": self.holding,
            "tool": self.tool,
            "state": self.state,
            "last_command": None if last is None else last.to_dict(),
            "commands": [command.to_dict() for command in self.commands],
        }


class StatusBoard:
    """Reads a `CellStatus` on demand from the parts of a run (`Daemon._assemble` builds it)."""

    def __init__(
        self,
        router: CommandRouter,
        belief: Callable[[], Belief],
        link: ControllerLink,
        link_word: Callable[[], str | None],
        history: History,
    ) -> None:
        self._router = router
        self._belief = belief
        self._link = link
        self._link_word = link_word
        self._history = history

    def snapshot(self) -> CellStatus:
        belief = self._belief()
        cell, scene = belief.cell, belief.scene
        reported = self._link.latest_state
        halted = reported is not None and reported.status == "halted"
        runs = self._history.last(RECENT_COMMANDS, cell=cell.name)
        return CellStatus(
            cell=cell.name,
            mode=self._router.mode,
            frames=tuple(frame.name for frame in self._router.stack),
            link=self._link_word() or "up",
            halted=halted,
            halt_reason=reported.halt_reason if reported is not None and halted else None,
            holding=scene.holding,
            tool=scene.tool,
            state=state_view(cell, scene),
            commands=tuple(_outcome(run) for run in runs),
        )


def _outcome(run: Run) -> CommandOutcome:
    return CommandOutcome(
        run.operator_input, run.status, run.intent, run.feedback, run.created_at, run.run_id,
        run.correlation_id,
    )  # fmt: skip


@dataclass(frozen=True)
class RemoteWords:
    """Words from outside the microphone, to be taken as said."""

    text: str
    source: str
    """Who sent them: "page", "mqtt", ... (logged and in the `remote` event)."""


class RemoteInbox:
    """What the outside says to the daemon; the input loop takes it in order with what it hears."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[RemoteWords] = asyncio.Queue()

    def stop(self, source: str) -> None:
        """The global stop, as if "stop" were said now."""
        self._queue.put_nowait(RemoteWords(STOP_WORD, source))

    def say(self, text: str, source: str) -> None:
        """A command (or question), as if said now."""
        self._queue.put_nowait(RemoteWords(text, source))

    async def next(self) -> RemoteWords:
        return await self._queue.get()
