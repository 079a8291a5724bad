"""Which commands the query frame may send after the short silence: those the offline tiers
already act on whole (issue 5's quick path), and not a half-said one."""

from __future__ import annotations

from pathlib import Path

import pytest
from voiced.robot.cellfile import load_cell

from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir


def _interpreter(cell: str, tmp_path: Path) -> Interpreter:
    return Interpreter(load_cell(cell), DataDir(tmp_path), None, LlmSettings(), lambda event: None)


@pytest.mark.parametrize(
    ("cell", "text", "complete"),
    [
        ("sandwich", "add bread", True),  # grammar
        ("sandwich", "add", False),
        ("sandwich", "put meat on the", False),
        ("sandwich", "put meat", False),  # the grammar would default the place
        ("sandwich", "put meat on the left", True),
        ("weld", "go to position 3", True),
        ("weld", "go to position", False),
        ("blocks", "stack the blue cube on the red cube", True),  # arrangement
        ("blocks", "stack the blue cube on the", False),
        ("blocks", "put the green cube on the blue cube", True),
        ("sandwich", "cheese and", False),
        ("sandwich", "add bread.", True),
        ("sandwich", "", False),
        ("blocks", "stack the blue cube on the golden cube", False),  # no such cube
        ("sandwich", "start over", True),  # ends on "over", but needs nothing more
        ("sandwich", "Start over.", True),
        ("sandwich", "put it back", True),  # a placing verb, but it undoes
        ("sandwich", "put bread over", False),
        ("weld", "start over", False),  # the weld grammar has no restart
    ],
)
def test_complete_offline(cell: str, text: str, complete: bool, tmp_path: Path) -> None:
    interpreter = _interpreter(cell, tmp_path)
    scene = interpreter.cell.initial_scene
    assert interpreter.complete_offline(text, scene, []) is complete


@pytest.mark.parametrize(
    ("text", "continues"),
    [("cheese and tomato", True), ("and cheese", True), ("go home", False),
     ("add bread", False), ("put meat on the left", False), ("we are going out", False)],
)  # fmt: skip
def test_a_continuation_has_no_verb_of_its_own(text: str, continues: bool, tmp_path: Path) -> None:
    interpreter = _interpreter("sandwich", tmp_path)
    assert interpreter.continues_offline(text, interpreter.cell.initial_scene, []) is continues


async def test_a_cue_word_in_long_talk_is_no_creative_command(tmp_path: Path) -> None:
    interpreter = _interpreter("sandwich", tmp_path)
    scene = interpreter.cell.initial_scene
    talk = ("The lamp burned until the 1920s, when an engineer arrived with a generator and "
            "a creative glass.")  # fmt: skip
    understood = await interpreter.interpret(talk, scene, [], None)
    assert not understood.interpretation.sequence
    assert not interpreter.complete_offline(talk, scene, [])
    short = await interpreter.interpret("make me something creative", scene, [], None)
    assert short.interpretation.is_creative and short.interpretation.sequence
