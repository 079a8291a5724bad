"""What the daemon works out before its interpreter, in one order (`voiced.commands.early`):
the acceptance worker and `voiced interpret` both follow it."""

from __future__ import annotations

from voiced.robot.cellfile import load_cell

from voiced.commands.early import worked_out_first
from voiced.words.questions import Questions


def first(text: str) -> str:
    cell = load_cell("sandwich")
    early = worked_out_first(text, cell, cell.initial_scene, (), Questions(cell, None), None, None)
    if early is None:
        return "interpreter"
    if early.answer is not None:
        return f"answer: {early.answer.brief}"
    if early.resume:
        return "continue"
    assert early.meant is not None
    return f"{early.meant.source}: {early.meant.user_feedback or early.meant.interpretation}"


def test_each_kind_is_worked_out_before_the_interpreter() -> None:
    assert first("what is on the fixture") == "answer: Nothing is on the fixture."
    assert first("carry on") == "continue"
    assert first("go a bit faster").startswith("speed: ")
    assert first("undo that").startswith("undo: ")
    assert first("do that again").startswith("replay: ")
    assert first("add bread") == "interpreter"


def test_a_question_it_cannot_answer_goes_to_the_interpreter() -> None:
    # The model may still take it for a question; the frames do not answer it here.
    assert first("what is the meaning of life") == "interpreter"
