"""Near-miss repair by sound, checked by the grammar; the strict reading it is held to."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from voiced.robot.cellfile import load_cell
from voiced.rules.negation import undoes
from voiced.rules.sounds import Sounds, coarse, similarity

from voiced.config import Config
from voiced.interpreter.repair import (
    Repairer,
    name_words,
    undoing,
    uses_every_name,
    vocabulary_phrases,
)
from voiced.interpreter.tiers import Interpreter
from voiced.paths import DataDir
from voiced.words.offered import head_nouns

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")


def interpreter(cell: str, tmp: Path) -> Interpreter:
    return Interpreter(load_cell(cell), DataDir(tmp), None, Config().llm, lambda event: None)


def repaired(cell: str, text: str, tmp: Path) -> str | None:
    it = interpreter(cell, tmp)
    vocabulary = it.grammar.vocabulary
    heads = head_nouns(it.cell)
    repairer = Repairer(vocabulary_phrases(vocabulary), Sounds(), name_words(vocabulary), heads)
    scene = it.cell.initial_scene
    fixed = repairer.repair(text, lambda t: it.understands(t, scene, ()))
    return None if fixed is None else fixed.text


def test_the_coarse_key_keeps_consonants_and_merges_vowels_and_voicing() -> None:
    assert coarse("l'EtIs") == "lVtVs"
    assert coarse("'ad") == coarse("'A@t") == "Vt"
    assert coarse("w'Eld3") == "wVlt V".replace(" ", "")


@needs_espeak
def test_words_that_sound_alike_score_higher_than_words_that_do_not() -> None:
    heard = Sounds().of(["art", "add", "bread", "layer this", "lettuce", "tomato"])
    assert similarity(heard["art"], heard["add"]) > similarity(heard["art"], heard["bread"])
    assert similarity(heard["layer this"], heard["lettuce"]) > similarity(
        heard["layer this"], heard["tomato"]
    )


def test_without_espeak_nothing_is_compared_by_sound(tmp_path: Path) -> None:
    sounds = Sounds(program="no-such-espeak-program")
    assert not sounds.available
    it = interpreter("sandwich", tmp_path)
    repairer = Repairer(vocabulary_phrases(it.grammar.vocabulary), sounds)
    assert repairer.repair("art bread", lambda t: True) is None


@needs_espeak
@pytest.mark.parametrize(
    ("cell", "heard", "meant"),
    [
        ("sandwich", "art bread", "add bread"),
        ("sandwich", "add layer this", "add lettuce"),
        ("weld", "pick up the weld", "pick up the welder"),
        ("weld", "weld at position 2 and free", "weld at position 2 and 3"),
    ],
)
def test_a_transcript_the_grammar_cannot_read_is_repaired_by_sound(
    tmp_path: Path, cell: str, heard: str, meant: str
) -> None:
    """The repair means what was said (its words may differ: "at bread" is "add bread")."""
    fixed = repaired(cell, heard, tmp_path)
    assert fixed is not None
    it = interpreter(cell, tmp_path / "meant")
    scene = it.cell.initial_scene
    assert (
        it.grammar.parse(fixed, scene, ()).sequence == it.grammar.parse(meant, scene, ()).sequence
    )


@needs_espeak
@pytest.mark.parametrize(
    ("heard", "meant"),
    [
        # A milk the cell does not sell is not one it does: "oat milk" / "whole milk" scored
        # 0.73 with "milk" in both, "oat" / "whole" alone is 0.42 (an allergen swapped).
        ("can i have a latte with oat milk", None),
        ("can i have a latte with goat milk", None),
        # The word that changes still sounds like the one put in.
        ("can i have a latte with skin milk", "can i have a latte with skim milk"),
        ("can i have a latte with so milk", "can i have a latte with soy milk"),
    ],
)
def test_a_repair_is_judged_on_the_words_it_changes(
    tmp_path: Path, heard: str, meant: str | None
) -> None:
    assert repaired("barista", heard, tmp_path) == meant


@needs_espeak
@pytest.mark.parametrize(
    "talk",
    [
        "the lamp burned paraffin until the twenties",
        "visitors climb a hundred steps to see the lens",
        "somebody left a mop by the loading dock",
    ],
)
def test_other_talk_is_not_turned_into_a_command(tmp_path: Path, talk: str) -> None:
    assert repaired("sandwich", talk, tmp_path) is None


@needs_espeak
def test_a_word_is_never_replaced_by_its_neighbour(tmp_path: Path) -> None:
    """ "clear near assembly" must not become "clear clear assembly" (clear twice)."""
    assert repaired("sandwich", "clear near assembly", tmp_path) != "clear clear assembly"


@needs_espeak
def test_a_name_heard_is_never_swapped_for_another_word(tmp_path: Path) -> None:
    """Every word of "both meat on the left" is the cell's ("put" heard as "both"). Without
    the guard, "left" (a place that was heard) becomes "lift" and the arm picks the meat up;
    with it, the repair reads the place as said."""
    it = interpreter("sandwich", tmp_path)
    scene = it.cell.initial_scene
    unguarded = Repairer(vocabulary_phrases(it.grammar.vocabulary), Sounds())
    swapped = unguarded.repair("both meat on the left", lambda t: it.understands(t, scene, ()))
    assert swapped is not None and swapped.text == "both meat on the lift"
    fixed = repaired("sandwich", "both meat on the left", tmp_path / "guarded")
    assert fixed is not None
    meant = it.grammar.parse("put meat on the left", scene, ()).sequence
    assert it.grammar.parse(fixed, scene, ()).sequence == meant


@needs_espeak
def test_the_word_before_the_name_of_a_kind_is_never_swapped_away(tmp_path: Path) -> None:
    """ "raw sugar" swapped whole for "sugar" made a plain-sugar latte unasked: the word
    before "sugar" says which sugar. A name put in its place is still tried ("skin milk")."""
    assert repaired("barista", "give me a large latte with raw sugar", tmp_path) is None
    assert repaired("barista", "give me a large latte with some raw sugar", tmp_path) is None
    skim = repaired("barista", "can i have a latte with skin milk", tmp_path / "skim")
    assert skim == "can i have a latte with skim milk"


@needs_espeak
@pytest.mark.parametrize(
    "heard",
    ["give me a large latte with sugar oops", "can i get a large latte with sugar wait",
     "give me a large latte wait brown sugar", "give me a large latte with sugar hold on"],
)  # fmt: skip
def test_words_that_take_the_command_back_are_never_repaired_away(
    tmp_path: Path, heard: str
) -> None:
    assert repaired("barista", heard, tmp_path) is None
    it = interpreter("barista", tmp_path / "edits")
    vocabulary = it.grammar.vocabulary
    repairer = Repairer(vocabulary_phrases(vocabulary), Sounds(), name_words(vocabulary),
                        head_nouns(it.cell))  # fmt: skip
    scene = it.cell.initial_scene
    assert repairer.edited(heard, lambda t: it.understands(t, scene, ()), ("a", "with")) == []


@needs_espeak
def test_a_word_that_only_changes_the_command_may_still_be_a_mishearing(tmp_path: Path) -> None:
    """ "instead" changes a command rather than taking it back, and is what "inspect" is
    misheard as: it is repaired as before (the project's test corpus lost two weld sessions
    while every take-back word was kept)."""
    assert repaired("weld", "instead of position 1", tmp_path) == "inspect of position 1"
    assert undoes("oops") and undoes("wait") and undoes("don't") and not undoes("instead")
    assert undoing(["latte", "hold", "on", "oops", "no", "sugar"]) == {1, 2, 3, 4}
    assert undoes("No, give me a latte.") and undoes("Don’t.") and not undoes("Give me a latte.")


def test_understands_refuses_a_reading_that_drops_named_things(tmp_path: Path) -> None:
    it = interpreter("sandwich", tmp_path)
    scene = it.cell.initial_scene
    assert it.understands("put cheese on the right", scene, ())
    assert it.understands("add bread", scene, ())
    # The grammar reads these by dropping words ("put back what is held"): not what was said.
    assert it.complete_offline("back cheese on the right", scene, ())
    assert not it.understands("back cheese on the right", scene, ())
    assert not it.understands("add chease", scene, ())  # a near miss snapped
    parsed = it.grammar.parse("put cheese on the right", scene, ())
    assert uses_every_name(it.grammar, "put cheese on the right", parsed.sequence)
    assert not uses_every_name(it.grammar, "put cheese on the right", parsed.sequence[:1])


def test_understands_takes_the_cells_own_templates(tmp_path: Path) -> None:
    it = interpreter("weld", tmp_path)
    assert it.understands("tack the second seam", it.cell.initial_scene, ())


@pytest.mark.parametrize(
    ("cell", "said", "missing"),
    [
        ("sandwich", "add avocado", True),
        ("blocks", "put the green cube on the yellow cube", True),
        ("weld", "go to position 9", True),
        ("weld", "pick up the weld", False),  # known words in a shape that fails: repairable
        ("sandwich", "art bread", False),
        ("sandwich", "add bread", False),
    ],
)
def test_a_command_naming_what_the_cell_lacks_is_told_apart(
    tmp_path: Path, cell: str, said: str, missing: bool
) -> None:
    it = interpreter(cell, tmp_path)
    assert it.names_what_is_missing(said, it.cell.initial_scene, ()) is missing
