"""The intent router's grammar-first special cases (seed 001): replay by id and "do that again".

Checked before any other interpretation: a replay loads an existing plan from the history
instead of parsing the words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voiced.history import History, Run
from voiced.interpreter.result import CREATIVE, Interpretation, unknown
from voiced.robot.sequence import StepFormatError, steps_from_json
from voiced.rules.normalize import words

REPLAY = "replay"
"""The source of a plan loaded from the history ("do that again", "run task <id>")."""

_RUN_TASK = re.compile(r"\b(?:run|replay|repeat) (?:task|run) ([0-9a-f]{8}(?:-[0-9a-f-]{1,28})?)\b")
_AGAIN = frozenset(
    {
        "do that again", "do it again", "again", "one more time", "repeat", "repeat that",
        "repeat the last one", "repeat the last task", "run the same", "same again",
        "do the same again", "run the latest task again", "do the last one again",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ReplayRequest:
    """A request to run an earlier plan again."""

    run_id: str | None
    """The (possibly shortened) run id named, or None for "the last completed one"."""


def replay_request(text: str) -> ReplayRequest | None:
    """The replay `text` asks for, if it asks for one."""
    lowered = text.lower()
    found = _RUN_TASK.search(lowered.replace(" - ", "-"))
    if found:
        return ReplayRequest(found.group(1))
    if " ".join(words(text)) in _AGAIN:
        return ReplayRequest(None)
    return None


def replay_of(
    history: History | None, cell: str, text: str, correlation_id: str | None
) -> Interpretation | None:
    """ "run task <id>" and "do that again": the plan loaded from the history (the run keeps its
    new correlation id), an explanation if there is none, or None when `text` asks no replay."""
    request = replay_request(text)
    if request is None:
        return None
    found = _find(history, cell, request)
    if isinstance(found, str):
        return unknown(text, found, source=REPLAY).with_changes(correlation_id=correlation_id)
    try:
        plan = steps_from_json(found.plan)
    except StepFormatError as error:
        feedback = f"I cannot read the plan of run {found.run_id[:8]}: {error}"
        return unknown(text, feedback, source=REPLAY).with_changes(correlation_id=correlation_id)
    return Interpretation(
        interpretation=f"Replay of {found.operator_input!r} ({found.run_id[:8]}).",
        sequence=plan, pass1_sequence=plan, confidence=0.95, validated=True,
        source=REPLAY, correlation_id=correlation_id,
        # A surprise build stays one when repeated, in any later session: never learned.
        is_creative=CREATIVE in found.source.split("+"),
    )  # fmt: skip


def _find(history: History | None, cell: str, request: ReplayRequest) -> Run | str:
    if history is None:
        return "I keep no history, so I cannot repeat anything."
    if request.run_id is None:
        run = history.last_completed(cell)
        return run or "There is nothing I have finished that I could do again."
    matches = history.find(request.run_id)
    if len(matches) != 1:
        return f"I found {len(matches) or 'no'} runs matching {request.run_id}."
    if matches[0].cell != cell:
        return f"Run {request.run_id} was for the {matches[0].cell} cell."
    return matches[0]
