"""A refusal says what went wrong in the words the operator used: a closed cell names where an
order left its sentences, a negation is named as such, never looked up as a name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interpreter.helpers import cell, grammar
from voiced.interpreter.templategraph import off_the_sentences
from voiced.interpreter.templates import Templates
from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir


async def refusal(name: str, said: str, tmp_path: Path) -> tuple[str, str, str]:
    """(feedback, first validation issue, interpretation) of `said` in cell `name`."""
    tiers = Interpreter(cell(name), DataDir(tmp_path), None, LlmSettings(), lambda event: None)
    understood = await tiers.interpret(said, cell(name).initial_scene, (), None)
    meant = understood.interpretation
    assert not meant.sequence, meant
    return meant.user_feedback or "", meant.validation_issues[0], meant.interpretation


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        # A size the cell sells, before the way an order opens: not "I don't know the word";
        # nor 'I lost it at "large"', which said nothing a customer could act on.
        ("large latte", "not an order as I take them: say the whole order"),
        # A drink is also one of the machine's routines: not the weld cell's "Where should I run".
        ("a latte please", "not an order as I take them: say the whole order"),
        ("latte", "not an order as I take them: say the whole order"),
        ("I want a large latte with two sugars",
         'I lost it at "two" after "I want a large latte with"'),
        ("I want a large latte with", 'not finished: what comes after "I want a large latte with"'),
        # Read as another command by skipping the order's words: a speed of 2 mm/s for every
        # later order, from a misheard "Do an iced mocha with some sweet."
        ("2 an iced mocha with some switch", "not an order as I take them: say the whole order"),
        ("2 lattes with some switch", "not an order as I take them: say the whole order"),
        ("two americanos at speed 2", "not an order as I take them: say the whole order"),
    ],
)  # fmt: skip
async def test_a_closed_cell_says_where_an_order_left_its_sentences(
    said: str, reason: str, tmp_path: Path
) -> None:
    feedback, issue, _ = await refusal("barista", said, tmp_path)
    assert reason in feedback and reason in issue
    assert "can I get a medium latte with milk" in feedback  # what to say instead
    assert "don't know the word" not in feedback and "run" not in feedback


async def test_a_closed_cell_takes_commands_that_name_none_of_its_things(tmp_path: Path) -> None:
    tiers = Interpreter(cell("barista"), DataDir(tmp_path), None, LlmSettings(), lambda e: None)
    for said, instruction in (("set the speed to 2", "set_speed"), ("go home", "go_home")):
        understood = await tiers.interpret(said, cell("barista").initial_scene, (), None)
        assert [s.instruction for s in understood.interpretation.sequence] == [instruction]


async def test_words_about_nothing_the_closed_cell_sells_keep_the_grammar_reason(
    tmp_path: Path,
) -> None:
    feedback, _, _ = await refusal("barista", "add cheese", tmp_path)
    assert feedback.startswith("I don't have cheese")


def test_an_order_the_sentences_take_is_not_off_them() -> None:
    templates = Templates(cell("barista"), grammar("barista").vocabulary)
    assert off_the_sentences(templates, "can I get an eight ounce latte") is None
    assert off_the_sentences(templates, "can I get an 8 ounce latte") is None
    # An open cell's templates are not every command it takes: no such reason there.
    sandwich = Templates(cell("sandwich"), grammar("sandwich").vocabulary)
    assert off_the_sentences(sandwich, "slap cheese") is None


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("don't add cheese", "don't"),
        ("do not add cheese", "not"),
        ("add bread without cheese", "without"),
        ("add cheese but not tomato", "but not"),
        ("add bread, no cheese", "no"),
        # Not only where the unknown words open with it: "Unknown command" went to the
        # model's verb resolver, which may map the words to a command.
        ("I really don't want cheese", "I really don't want"),
    ],
)
async def test_a_negation_is_named_not_looked_up_as_an_ingredient(
    said: str, named: str, tmp_path: Path
) -> None:
    feedback, _, _ = await refusal("sandwich", said, tmp_path)
    assert feedback.startswith(f'I can\'t act on "{named}": say only what to do'), feedback
    assert "I don't have" not in feedback


def test_a_negated_command_is_nothing_a_model_is_asked_about() -> None:
    # Before the verb the negation takes the whole command back; after it a model may read
    # "add bread but no cheese" as bread.
    scene = cell("sandwich").initial_scene
    whole = grammar("sandwich").parse("don't add cheese", scene, ())
    part = grammar("sandwich").parse("add bread but no cheese", scene, ())
    assert whole.error is not None and whole.error.fallback == "none"
    assert part.error is not None and part.error.fallback == "interpret"


def test_a_templates_number_reads_as_the_words_that_gave_it() -> None:
    templates = Templates(cell("barista"), grammar("barista").vocabulary)
    found = templates.match("can I get a dark roast latte with lots of brown sugar")
    assert found is not None
    meaning = templates.interpret(found, None).interpretation
    assert "roast: dark roast" in meaning and "sugar amount: lots of (4)" in meaning, meaning
    assert "_" not in meaning.split(", from the template")[0]


@pytest.mark.parametrize("said", ["don't make me a latte", "please don't make me a latte"])
async def test_a_closed_cell_names_a_negation_too(said: str, tmp_path: Path) -> None:
    # The closed cell's "I lost it at ..." had replaced the negation's reason with the lost
    # word as normalised text ("dont").
    feedback, issue, _ = await refusal("barista", said, tmp_path)
    assert feedback.startswith("I can't act on \"don't\": say only what to do"), feedback
    assert "lost it" not in feedback and "lost it" not in issue


@pytest.mark.parametrize(
    "said", ["weld seam four", "weld seam 4", "go over to seam nine", "weld the fourth seam"]
)
async def test_a_seam_the_cell_does_not_have_is_answered_with_its_seams(
    said: str, tmp_path: Path
) -> None:
    # The weld cell's own list names its work positions seam 1 to 3: "I don't have seam —
    # available positions are: Home, ..." named neither the seam said nor the ones there are.
    feedback, _, _ = await refusal("weld", said, tmp_path)
    named = {"weld the fourth seam": "the fourth seam", "go over to seam nine": "seam 9"}
    assert feedback == (
        f"I don't have {named.get(said, 'seam 4')} — the seams are: seam 1 (Pos_1), "
        "seam 2 (Pos_2), seam 3 (Pos_3)"
    ), feedback


@pytest.mark.parametrize(
    ("cell_name", "said", "feedback"),
    [
        # After "to" or "on" a place belongs: the places are listed, not the cubes.
        ("blocks", "move the red cube to B4",
         "I don't have B4 — available places are: S1, S2, S3, S4, S5, S6, B1, B2, B3, center, "
         "left, right, front, back, pyramid_left, pyramid_right, pyramid_top"),
        ("sandwich", "add cheese on the other stack",
         "I don't have other — available stacks are: left, right, center"),
        # Where a thing belongs, the things are still listed.
        ("sandwich", "add avocado",
         "I don't have avocado — available ingredients are: bread, meat, cheese, lettuce, tomato"),
    ],
)  # fmt: skip
async def test_an_unknown_name_is_answered_with_names_of_its_kind(
    cell_name: str, said: str, feedback: str, tmp_path: Path
) -> None:
    got, _, _ = await refusal(cell_name, said, tmp_path)
    assert got == feedback


@pytest.mark.parametrize("cell_name", ["barista", "blocks"])
async def test_all_right_is_an_acknowledgement_not_a_direction(
    cell_name: str, tmp_path: Path
) -> None:
    # The kitchen's "All right." had been answered "This cell cannot move the arm by a
    # distance" ("right" a direction, "all" an amount).
    feedback, _, _ = await refusal(cell_name, "All right.", tmp_path)
    assert feedback.startswith("I heard nothing to do")


@pytest.mark.parametrize(
    ("cell_name", "said", "own"),
    [
        # A closed cell's sentence is a command of its own, whatever the grammar makes of its
        # opening: "No, no, no, no, no." ... "May I have a light roast, double shot
        # espresso?" had been joined and refused (the order taken for the rest of the "no").
        ("barista", "may i have a light roast double shot espresso", True),
        ("barista", "i want a light roast coffee", True),
        ("barista", "a large latte", False),
        ("sandwich", "cheese on the left", False),
        ("sandwich", "add cheese", True),
    ],
)
def test_what_is_a_command_of_its_own(cell_name: str, said: str, own: bool, tmp_path: Path) -> None:
    tiers = Interpreter(cell(cell_name), DataDir(tmp_path), None, LlmSettings(), lambda e: None)
    assert tiers.starts_with_verb(said) is own
