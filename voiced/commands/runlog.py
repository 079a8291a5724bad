"""How every command ended: its row in the history, its outcome, and what the operator hears
when it fails."""

from __future__ import annotations

from collections.abc import Callable

import structlog

from voiced import eventtypes as ev
from voiced.commands.pending import PendingWork, Ticket
from voiced.errors import VoicedError
from voiced.events import EventLog
from voiced.history import History
from voiced.interpreter.result import CREATIVE, Interpretation
from voiced.robot.sequence import steps_to_json
from voiced.targets.base import ASKS_FOR_MORE, TargetResult
from voiced.words.plain import command_failure

log = structlog.get_logger(__name__)


class RunLog:
    def __init__(
        self,
        cell_name: Callable[[], str],
        history: History | None,
        pending: PendingWork,
        events: EventLog,
        speak: Callable[[str], None],
    ) -> None:
        self.cell_name = cell_name
        self.history = history
        self.pending = pending
        self.events = events
        self.speak = speak

    def record(
        self,
        ticket: Ticket,
        result: Interpretation,
        status: str,
        feedback: str | None = None,
        *,
        intent: str = "action",
    ) -> None:
        if self.history is None:
            return
        plan = steps_to_json(result.sequence)
        source = result.source
        if result.is_creative and CREATIVE not in source.split("+"):
            source += f"+{CREATIVE}"  # a repeat of one: "do that again" later must know it
        ticket.run_id = self.history.record(
            ticket.text, plan, cell=self.cell_name(), status=status, source=source,
            correlation_id=result.correlation_id, feedback=feedback, intent=intent,
        )  # fmt: skip
        self._changed(ticket.run_id, ticket.text, status, feedback)

    def question(self, ticket: Ticket, said: str, answer: str | None) -> None:
        """A question, stored as one: what was said, and the full answer when there was one
        (then "answered", else "rejected")."""
        if self.history is None:
            return
        ticket.run_id = self.history.record(
            ticket.text, [], cell=self.cell_name(), intent="question", source="questions",
            status="answered" if answer is not None else "rejected",
            correlation_id=ticket.correlation_id, feedback=said, answer=answer,
        )  # fmt: skip
        self._changed(ticket.run_id, ticket.text, "answered" if answer else "rejected", said)

    def replan(self, ticket: Ticket, plan: list[dict[str, object]]) -> None:
        """The operator revised the plan before it ran."""
        if self.history is not None and ticket.run_id is not None:
            self.history.replan(ticket.run_id, plan)

    def update(self, ticket: Ticket, status: str, feedback: str | None = None) -> None:
        if self.history is None:
            return
        if ticket.run_id is not None:
            self.history.update(ticket.run_id, status, feedback)
            self._changed(ticket.run_id, ticket.text, status, feedback)
        for run_id in ticket.carries:
            said = f'{feedback} (by "{ticket.text}")' if feedback else None
            self.history.update(run_id, status, said)
            self._changed(run_id, None, status, said)

    def hold_over(self, runs: tuple[str, ...], status: str, feedback: str) -> None:
        """A pause ended without "continue": the rows it held end as `status`."""
        if self.history is None:
            return
        for run_id in runs:
            self.history.update(run_id, status, feedback)
            self._changed(run_id, None, status, feedback)

    def _changed(self, run_id: str, said: str | None, status: str, feedback: str | None) -> None:
        """A history row changed: the `run` event, so that what shows the cell (the page, MQTT)
        is told the moment a command ends, not at the next event."""
        self.events.emit(ev.RunChanged(run_id, status, said, feedback))

    def settle(
        self, ticket: Ticket, ok: bool, message: str, *, asks_for_more: bool = False
    ) -> None:
        """`ticket` is no longer pending, and its outcome is known (`asks_for_more`: refused
        with a question for what it left out, "Put what?")."""
        self.pending.release(ticket)
        if not ticket.outcome.done():
            detail = {ASKS_FOR_MORE: True} if asks_for_more else {}
            ticket.outcome.set_result(TargetResult(ok, message, detail))

    def finish(self, ticket: Ticket, status: str, message: str, ok: bool = False) -> None:
        """Record how a command ended and settle its outcome."""
        self.update(ticket, status, message)
        self.settle(ticket, ok, message)

    def refuse(self, ticket: Ticket, feedback: str) -> None:
        self.speak(feedback)
        self.settle(ticket, False, feedback)

    def failed(self, text: str, exc: Exception) -> str:
        """A command that raised: logged, emitted, said; returns what was said."""
        if isinstance(exc, VoicedError):
            log.error("command failed", text=text, error=str(exc))
            self.events.emit(ev.Failure(type(exc).__name__, str(exc)))
            message = command_failure(exc)
        else:
            log.exception("command crashed", text=text)
            self.events.emit(ev.Failure("internal", repr(exc)))
            message = "Something went wrong inside me; the command was not finished."
        self.speak(message)
        return message
