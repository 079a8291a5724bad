"""Commands the daemon works out itself, before the grammar: speed changes ("go a bit slower",
"full speed") and undo ("take the last one off"). Both depend on the state (the planned speed,
what was put down), which the grammar does not track; both then go the normal way: compiled,
checked, read back where the cell or settings ask for it, queued and executed.
"""

from __future__ import annotations

from collections.abc import Sequence

from voiced.interpreter.result import Interpretation, unknown
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.normalize import normalize
from voiced.words.speed import is_speed_change, speed_change
from voiced.words.undo import Placement, is_undo, plan_undo

SPEED = "speed"
UNDO = "undo"
"""The interpretations' `source` (an undo's run takes back the placement it reverses)."""
RESUME = "resume"
"""The source of "continue" after a pause (confirmed, it ends the pause)."""
_PUT_BACK = ("put that back", "put it back")


def is_behaviour(text: str) -> bool:
    """Whether `text` is a whole command of this module (for the query's quick submit)."""
    return is_speed_change(text) or is_undo(text)


def behaviour_of(
    cell: Cell,
    text: str,
    planned: Scene,
    placed: Sequence[Placement],
    correlation_id: str | None,
) -> Interpretation | None:
    """The interpretation of a speed change or an undo (a refusal says why), or None."""
    change = speed_change(cell, text, planned)
    if change is not None:
        if change.step is None:
            return unknown(text, change.said, source=SPEED)
        return _meant(change.said, (change.step,), SPEED, correlation_id)
    if not is_undo(text):
        return None
    if planned.holding is not None and normalize(text).endswith(_PUT_BACK):
        return None  # the held object goes back: the cell's own return_to_stack
    plan = plan_undo(cell, planned, placed)
    if plan.step is None:
        return unknown(text, plan.said, source=UNDO)
    return _meant(f"Undo: {plan.said}", (plan.step,), UNDO, correlation_id)


def _meant(
    said: str, steps: tuple[SequenceStep, ...], source: str, cid: str | None
) -> Interpretation:
    return Interpretation(
        interpretation=said, sequence=steps, pass1_sequence=steps, confidence=0.95, validated=True,
        user_feedback=said, source=source, correlation_id=cid,
    )  # fmt: skip
