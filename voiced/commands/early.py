"""What the daemon works out itself before its interpreter, in one order: a question it can
answer from the cell, the scene and the history; "continue"; a speed change or an undo; a
replay request. The acceptance worker and `voiced interpret` both take it from here, so the
two cannot drift apart. (The stop, "what can I say" and the pause words come before all of
this: the frames act on them before a command is submitted.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from voiced.history import History
from voiced.interpreter.result import Interpretation
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.rules.normalize import normalize
from voiced.rules.question import is_question
from voiced.words.behaviours import behaviour_of
from voiced.words.questions import Answer, Questions
from voiced.words.replay import replay_of
from voiced.words.undo import Placement

CONTINUE = frozenset(("continue", "carry on", "go on", "keep going", "resume", "please continue",
                      "continue please", "finish it", "finish that", "finish the job",
                      "resume please", "carry on please", "go ahead and continue",
                      "ok continue", "okay continue", "you can continue",
                      "continue now"))  # fmt: skip
"""What the operator says to finish a command cut short or paused (asked first, re-planned)."""


@dataclass(frozen=True)
class Early:
    """One thing worked out before the interpreter (exactly one field is set)."""

    answer: Answer | None = None
    """A question answered: nothing moves."""
    resume: bool = False
    """ "continue": the paused or cut-short command is finished."""
    meant: Interpretation | None = None
    """A speed change, an undo or a replay: checked and planned as any command."""


def worked_out_first(
    text: str,
    cell: Cell,
    planned: Scene,
    placed: Sequence[Placement],
    questions: Questions,
    history: History | None,
    correlation_id: str | None,
    confirmed: Scene | None = None,
) -> Early | None:
    """The first of them `text` is, or None when the interpreter decides. `planned` is the cell
    once everything accepted has run, `confirmed` what the controller reports done."""
    if is_question(text):
        answer = questions.answer(text, planned, confirmed)
        if answer is not None:
            return Early(answer=answer)
    if normalize(text) in CONTINUE:
        return Early(resume=True)
    meant = behaviour_of(cell, text, planned, placed, correlation_id)
    meant = meant or replay_of(history, cell.name, text, correlation_id)
    return Early(meant=meant) if meant is not None else None
