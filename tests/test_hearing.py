"""The recogniser's hypotheses held to the live grammar (voiced.hearing), with a real router,
a real interpreter and the sandwich cell; espeak-ng supplies the sounds for the repair."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from voiced.audio.transcribe import Choice
from voiced.frames.base import BaseFrame
from voiced.frames.dictation import DictationFrame
from voiced.frames.pause import pause_rule
from voiced.frames.router import CommandRouter
from voiced.frames.stop import stop_rule
from voiced.robot.cellfile import load_cell
from voiced.rules import Utterance

from tests.fakes import EventRecorder, FakeServices
from voiced.audioinput import FRAME_WORDS
from voiced.belief import Belief
from voiced.config import Config
from voiced.hearing import GrammarChooser
from voiced.interpreter.tiers import Interpreter
from voiced.paths import DataDir

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")


def chooser(
    tmp: Path, mode: str = "wake", repair: bool = True
) -> tuple[GrammarChooser, CommandRouter]:
    cell = load_cell("sandwich")
    interpreter = Interpreter(cell, DataDir(tmp), None, Config().llm, lambda event: None)
    base = BaseFrame("computer", 1.5, 8.0)
    router = CommandRouter(base, FakeServices(), EventRecorder(), [stop_rule(), pause_rule()], mode)
    base.on_push(router, 0.0)
    belief = Belief(cell, cell.initial_scene, cell.initial_scene)
    choose = GrammarChooser(
        interpreter, belief, router, "computer", FRAME_WORDS,
        lambda text: router.is_global(Utterance(text, router.now)), repair=repair,
    )  # fmt: skip
    return choose, router


def test_the_first_hypothesis_the_grammar_reads_whole_is_kept(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    heard = ["Computer add layer this.", "Computer add this.", "Computer add lettuce."]
    # "add this" parses ("put it down"), but nothing is held: it cannot run, so it is passed by.
    assert choose(heard) == Choice(2)


def test_in_wake_mode_a_hypothesis_without_the_wake_word_is_not_a_command(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    assert choose(["Can you add bread?", "Computer add bread."]) == Choice(1)
    always, _ = chooser(tmp_path / "always", mode="always")
    assert always(["add bread", "computer add bread"]) == Choice(0)


def test_stop_and_frame_words_are_kept_as_they_are(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    assert choose(["Stop!", "Computer, stop."]) == Choice(0)
    assert choose(["hold on", "computer go home"]) == Choice(0)
    assert choose(["Yes.", "computer add bread"]) == Choice(0)


@needs_espeak
def test_a_command_nothing_reads_is_repaired_by_sound(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    choice = choose(["Computer, art bread.", "Computer, art bred."])
    assert choice is not None and choice.index == 0
    assert choice.text == "computer add bread" or choice.text == "computer at bread"
    off, _ = chooser(tmp_path / "off", repair=False)
    assert off(["Computer, art bread."]) is None


@needs_espeak
def test_talk_questions_and_dictation_are_never_bent_into_commands(tmp_path: Path) -> None:
    choose, router = chooser(tmp_path)
    assert choose(["Somebody left a mop by the loading dock."]) is None  # no wake word
    # A question is kept as heard (the daemon answers it), never repaired into a command.
    asked = choose(["Computer, what is on the left stack?", "Computer, put it on the left stack."])
    assert asked == Choice(0)
    router.push(DictationFrame("note"))
    assert choose(["computer art bread", "computer add bread"]) is None


def test_a_name_the_cell_lacks_is_kept_and_never_swapped_for_one_it_has(tmp_path: Path) -> None:
    """ "add avocado": the operator was understood, and must hear that there is no avocado; a
    lower hypothesis or a repair naming tomato would move the arm for a command never given."""
    choose, _ = chooser(tmp_path)
    assert choose(["Computer add avocado.", "Computer add tomato."]) == Choice(0)
    assert choose(["Computer, art avocado.", "Computer add avocado.", "Computer add tomato."]) == (
        Choice(1)
    )


def test_the_wake_word_alone_is_kept_only_as_the_best_hypothesis(tmp_path: Path) -> None:
    """Lower down, "Computer," is the best hypothesis cut short: taking it would lose the rest
    (the question "what positions are available" became a bare wake word)."""
    choose, _ = chooser(tmp_path)
    assert choose(["Computer,"]) == Choice(0)
    assert choose(["Computer, what positions are available?", "Computer,"]) == Choice(0)
    assert choose(["Computer, the parcel van is late again.", "Computer,"]) != Choice(1)
