"""Sentence templates at work: an utterance a template matches -> its composite, slots as
parameters; where they stand among the tiers."""

from __future__ import annotations

from pathlib import Path

import pytest
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell, parse_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.sequence import SequenceStep

from tests.interpreter.helpers import grammar
from tests.robot.test_sentences import bare
from voiced.config import Config
from voiced.inputs.audio import bias_for
from voiced.interpreter.grammar import Grammar
from voiced.interpreter.templates import Templates
from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir


def templates(name: str) -> Templates:
    return Templates(load_cell(name), grammar(name).vocabulary)


def step(instruction: str, **params: object) -> SequenceStep:
    return SequenceStep(instruction, params)


def tack(position: str) -> SequenceStep:
    return step("run_routine_at", position=position, routine="tack_weld")


def move(cube: str, to: str) -> SequenceStep:
    return step("move_object", object=cube, to=to)


# The packaged cells' own templates: what is said -> the composite call.
MATCHES = [
    ("weld", "run a weld at position 2", tack("Pos_2")),
    ("weld", "Run a weld on position two.", tack("Pos_2")),
    ("weld", "tack the second seam", tack("Pos_2")),
    ("weld", "could you tack the second seam please", tack("Pos_2")),
    ("weld", "photograph the 3rd seam",
     step("run_routine_at", position="Pos_3", routine="camera_inspection")),
    ("weld", "mount the camera", step("attach_tool", tool="Camera")),
    ("weld", "head to safe pos 1", step("move_to_position", position="Safe_Pos_1")),
    ("weld", "take it easy", step("set_speed", speed="slow")),
    ("sandwich", "slap some cheese on top", step("add_layer", item="cheese")),
    ("sandwich", "another layer of tomato", step("add_layer", item="tomato")),
    ("sandwich", "hand me the lettuce", step("pick_up", item="lettuce")),
    ("sandwich", "build on the left one from now on",
     step("set_active_zone", zone="assembly_left")),
    ("sandwich", "bin the whole thing", step("clear_assembly")),
    ("sandwich", "hurry up", step("set_speed", speed="fast")),
    ("blocks", "slide the red block over to the left", move("red cube", "left")),
    ("blocks", "carry the blue cube to B2", move("blue cube", "B2")),
    ("blocks", "park green in the spare spot", move("green cube", "B1")),
    ("blocks", "grab the red one", step("pick", object="red cube")),  # the grammar's words
    ("blocks", "grab the golden cube", None),  # no such cube
    ("weld", "run a weld at position 9", None),  # no such position
    ("sandwich", "slap some avocado on top", None),  # no such item
]  # fmt: skip


@pytest.mark.parametrize(("cell", "text", "expected"), MATCHES, ids=[m[1] for m in MATCHES])
def test_a_template_gives_its_composite_with_the_slots_as_parameters(
    cell: str, text: str, expected: SequenceStep | None
) -> None:
    found = templates(cell).match(text)
    assert (found.step if found else None) == expected


@pytest.mark.parametrize("cell", ["sandwich", "weld", "blocks", "barista"])
def test_every_template_example_compiles_on_its_cell(cell: str) -> None:
    """Each phrasing given to the recogniser means a command the cell can run from its
    initial scene (or refuses for the scene, never for the words)."""
    matcher = templates(cell)
    examples = matcher.examples()
    assert len(examples) >= 5
    for text in examples:
        found = matcher.match(text)
        assert found is not None, text
        result = compile_sequence(matcher.cell, matcher.cell.initial_scene, [found.step])
        assert all("unknown" not in str(e) for e in result.errors), (text, result.errors)


def weld(templates_toml: str) -> Cell:
    return parse_cell(bare("weld") + templates_toml, "shop/weld.toml", "weld")


INSPECT_ON_GO = """
[[sentences.intents.run_routine_at]]
sentences = ["go to {position}"]
slots = { routine = "camera_inspection" }

[sentences.intents.release_tool_and_home]
sentences = ["park"]
"""


def test_a_template_with_an_apostrophe_matches_what_is_said_with_it() -> None:
    """What is said loses its punctuation, a template keeps its apostrophe: "I'd like" is
    matched with the apostrophe kept, number words read as digits all the same."""
    cell = weld(
        '[sentences.intents.move_to_position]\nsentences = ["I\'d like you at {position}"]\n'
    )
    matcher = Templates(cell, grammar("weld").vocabulary)
    for said in (
        "I'd like you at position 2",
        "I’d like you at position two.",
        "i'd LIKE you at pos 2",
    ):
        found = matcher.match(said)
        assert (found.step if found else None) == step("move_to_position", position="Pos_2"), said


def interpreter(cell: Cell, tmp_path: Path) -> Interpreter:
    return Interpreter(cell, DataDir(tmp_path), None, LlmSettings(), lambda event: None)


async def meaning(tiers: Interpreter, text: str) -> tuple[str, list[SequenceStep]]:
    cell = tiers.cell
    understood = await tiers.interpret(text, cell.initial_scene, [], "cid")
    return understood.interpretation.source, list(understood.interpretation.sequence)


async def test_a_template_wins_over_the_grammars_reading_of_the_same_words(
    tmp_path: Path,
) -> None:
    plain = interpreter(weld(""), tmp_path / "plain")
    assert await meaning(plain, "go to position 2") == (
        "grammar", [step("move_to_position", position="Pos_2")],
    )  # fmt: skip
    templated = interpreter(weld(INSPECT_ON_GO), tmp_path / "templated")
    assert await meaning(templated, "go to position 2") == (
        "template", [step("run_routine_at", position="Pos_2", routine="camera_inspection")],
    )  # fmt: skip
    # Words the template does not cover still go to the grammar.
    assert (await meaning(templated, "go home"))[0] == "grammar"


async def test_the_phrase_bank_wins_over_a_template(tmp_path: Path) -> None:
    """ "park" is a packaged phrase of the weld cell: exact phrases come first."""
    templated = interpreter(weld(INSPECT_ON_GO), tmp_path)
    source, _ = await meaning(templated, "park")
    assert source == "phrase_bank"


async def test_a_template_phrasing_is_a_whole_command_for_the_quick_submit(
    tmp_path: Path,
) -> None:
    tiers = interpreter(load_cell("sandwich"), tmp_path)
    scene = tiers.cell.initial_scene
    assert not Grammar(tiers.cell).parse("bin the whole thing", scene, []).success
    assert tiers.complete_offline("bin the whole thing", scene, [])
    assert (await meaning(tiers, "bin the whole thing")) == ("template", [step("clear_assembly")])


async def test_a_cell_whose_templates_have_a_problem_keeps_the_others(tmp_path: Path) -> None:
    broken = weld(INSPECT_ON_GO + '\n[sentences.intents.fly]\nsentences = ["fly"]\n')
    assert len(broken.sentences.problems) == 1
    tiers = interpreter(broken, tmp_path)
    assert await meaning(tiers, "go to position 2") == (
        "template", [step("run_routine_at", routine="camera_inspection", position="Pos_2")],
    ), "the integrator's own reading of 'go to', as without the broken one"  # fmt: skip
    all_broken = weld('[sentences.intents.fly]\nsentences = ["fly"]\n')
    assert all_broken.sentences.problems and not all_broken.sentences.blocks
    tiers = interpreter(all_broken, tmp_path)
    assert not tiers.templates
    assert await meaning(tiers, "go to position 2") == (
        "grammar", [step("move_to_position", position="Pos_2")],
    )  # fmt: skip


def test_template_phrasings_join_the_recognisers_bias(tmp_path: Path) -> None:
    tiers = interpreter(load_cell("weld"), tmp_path)
    phrases = tiers.bias_phrases()
    assert "park" in phrases  # the phrase bank's
    assert "tack the first seam" in phrases and "mount the camera" in phrases
    bias = bias_for(tiers.cell, phrases, Config())
    assert "tack the first seam" in bias.phrases
    assert "tack the first seam" in bias.hotwords()


def test_slots_say_where_each_value_was_heard_and_what_else_its_list_holds() -> None:
    found = templates("barista").slots("Could you brew a 12 ounce latte with some soy milk?")
    assert found is not None
    heard = {found.form[s.start : s.end]: s.others for s in found.spans}
    assert set(heard) == {"12 ounce", "latte", "some", "soy milk"}
    assert "twelve ounce" not in heard["12 ounce"]  # the same cup, said another way
    assert "twenty ounce" in heard["12 ounce"] and "mocha" in heard["latte"]
    assert heard["some"] == ("a little bit of", "a bit of", "a lot of", "lots of")


def test_slots_of_a_list_inside_an_alternative_rule_are_found() -> None:
    found = templates("weld").slots("tack the second seam")
    assert found is not None and len(found.spans) == 1
    assert found.spans[0].others == ("the first seam", "the third seam")
    assert templates("weld").slots("go home now") is None


def test_the_templates_words_are_phrases_the_repair_may_put_in() -> None:
    phrases = templates("barista").phrases()
    assert {"brew", "iced mocha", "skim milk", "a little bit of", "twelve ounce"} <= set(phrases)
    # A short rule of plain words, said every way ("<ask>"); none from a rule with a list.
    assert {"brew a", "brew an", "id like a", "may i have an"} <= set(phrases)
    assert not [p for p in phrases if "{" in p or "ounce latte" in p]
    assert templates("sandwich").phrases() == [] or all(p for p in templates("sandwich").phrases())
