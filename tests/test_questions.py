"""Questions answered from the cell, scene and history, without motion."""

from __future__ import annotations

from pathlib import Path

import pytest
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.sequence import SequenceStep
from voiced.rules.question import is_question

from voiced.commands.sequence_builder import build
from voiced.history import History
from voiced.words.questions import Questions


@pytest.mark.parametrize(
    ("said", "question"),
    [
        ("What positions are available?", True),
        ("where is the robot", True),
        ("Show me the tools", True),
        ("give me the last 15 tasks", True),
        ("What did you do?", True),
        ("tell me more", True),
        ("which tool are you holding", True),
        ("Can you weld at position 2?", False),
        ("please go home", False),
        ("add bread", False),
        ("weld at position 1 and 2", False),
    ],
)
def test_is_question(said: str, question: bool) -> None:
    assert is_question(said) is question


WELD = load_cell("weld")
SANDWICH = load_cell("sandwich")


@pytest.mark.parametrize(
    ("cell_name", "said", "expected"),
    [
        (
            "weld",
            "what positions are available",
            "The positions are Home, Safe_Pos_1, Pos_1, Pos_2 and Pos_3.",
        ),
        ("weld", "show me the tools", "The tools are Camera and Welder."),
        ("weld", "which routines are there", "The routines are tack_weld and camera_inspection."),
        ("weld", "where is the robot", "I am at Home."),
        ("weld", "which tool are you holding", "I have no tool on."),
        ("sandwich", "what ingredients do you have", "bread, meat, cheese, lettuce and tomato"),
        ("sandwich", "what is on the left stack", "Nothing is on the left."),
        ("sandwich", "are you holding anything", "I am holding nothing."),
    ],
)
def test_answers(cell_name: str, said: str, expected: str) -> None:
    cell = load_cell(cell_name)
    answer = Questions(cell, None).answer(said, cell.initial_scene)
    assert answer is not None
    assert expected in answer.brief


@pytest.mark.parametrize(("said", "full"), [
    ("what positions are available",
     "Home (home), Safe_Pos_1 (safe), Pos_1 (work), Pos_2 (work), Pos_3 (work)"),
    ("which routines are there",
     "tack_weld (needs the Welder), camera_inspection (needs the Camera)"),
])  # fmt: skip
def test_the_full_answer_keeps_the_details_the_spoken_one_leaves_out(said: str, full: str) -> None:
    answer = Questions(WELD, None).answer(said, WELD.initial_scene)
    assert answer is not None and answer.full == full


def test_what_is_on_a_stack_after_building() -> None:
    steps = [SequenceStep("add_layer", {"item": i}) for i in ("bread", "cheese")]
    program = compile_sequence(SANDWICH, SANDWICH.initial_scene, steps).program
    assert program is not None
    answer = Questions(SANDWICH, None).answer("what's on the fixture", program.expected)
    assert answer is not None
    assert answer.brief == "On the fixture, bottom to top: bread and cheese."


def test_history_questions_and_follow_ups(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    for i in range(12):
        history.record(f"go to position {i % 3 + 1}", [], cell="weld", status="completed")
    questions = Questions(WELD, history)
    first = questions.answer("give me the last 5 tasks", WELD.initial_scene)
    assert first is not None and first.full.count("\n") == 4
    assert "go to position 3" in first.full  # the newest (i = 11)
    more = questions.answer("show me 10 more", WELD.initial_scene)
    assert more is not None and more.full.count("\n") == 6  # only 7 left
    ten = Questions(WELD, history)
    said = ten.answer("give me the last 10 tasks", WELD.initial_scene)
    assert said is not None and said.brief.startswith("The last 10: ")
    assert said.brief.count(", completed") == 5 and said.brief.endswith("; and 5 more (say more).")
    rest = ten.answer("show me 5 more", WELD.initial_scene)
    assert rest is not None and rest.brief.startswith("The next 5: "), "from the 6th on"
    done = questions.answer("what did you do", WELD.initial_scene)
    assert done is not None and done.brief == 'You asked "go to position 3"; it is done.'
    history.record("inspect all positions", [], cell="weld", status="planned")
    waiting = questions.answer("what did you do", WELD.initial_scene)
    assert waiting is not None
    assert waiting.brief == 'You asked "inspect all positions"; it is waiting to run.'


def test_every_history_status_has_plain_words() -> None:
    from voiced.history import STATUSES
    from voiced.words.plain import RUN_STATUS

    assert set(RUN_STATUS) == set(STATUSES)


def test_follow_up_without_a_list() -> None:
    answer = Questions(WELD, None).answer("tell me more", WELD.initial_scene)
    assert answer is not None and "question first" in answer.brief


def test_not_a_question_we_know() -> None:
    assert Questions(WELD, None).answer("what is the weather", WELD.initial_scene) is None


@pytest.mark.parametrize(
    ("said", "topic"),
    [
        ("what tools do you have", "tools"),
        ("which tool are you holding", "tool"),
        ("what tool is on", "tool"),
        ("show me the tools", "tools"),
    ],
)
def test_tool_questions_are_told_apart(said: str, topic: str) -> None:
    answer = Questions(WELD, None).answer(said, WELD.initial_scene)
    assert answer is not None and answer.topic == topic


BLOCKS = load_cell("blocks")


@pytest.mark.parametrize(
    ("steps", "said", "expected"),
    [
        ((), "where is the green cube", "The green cube is on the table at S2."),
        ((), "where's the blue one", "The blue cube is on the table at S3."),
        ((("move_object", {"object": "red cube", "to": "B2"}),), "where can I find the red block",
         "The red cube is in buffer slot B2."),
        ((("move_object", {"object": "red cube", "to": "center"}),
          ("move_object", {"object": "blue cube", "to": "center"})), "where is the blue cube",
         "The blue cube is at the center, on the red cube."),
        ((("pick", {"object": "green cube"}),), "where is the green cube",
         "I am holding the green cube."),
        ((), "where is the purple cube", "The purple cube is not in the cell."),
        ((), "where are you", "I am at home."),
    ],
)  # fmt: skip
def test_where_an_object_is(steps: tuple[tuple[str, dict[str, str]], ...], said: str,
                            expected: str) -> None:  # fmt: skip
    sequence = [SequenceStep(name, params) for name, params in steps]
    program = compile_sequence(BLOCKS, BLOCKS.initial_scene, sequence).program
    assert program is not None
    answer = Questions(BLOCKS, None).answer(said, program.expected)
    assert answer is not None and answer.brief == expected


def test_state_answers_are_of_what_the_controller_confirmed_and_say_what_is_coming() -> None:
    """Asked while the arm fetches the welder: it does not hold it yet."""
    now = WELD.initial_scene
    step = SequenceStep("attach_tool", {"tool": "Welder"})
    program = compile_sequence(WELD, now, build(WELD, now, (step,)).steps).program
    assert program is not None
    planned = program.expected
    questions = Questions(WELD, None)
    answer = questions.answer("which tool are you holding", planned, now)
    assert answer is not None
    assert answer.brief == "Now, I have no tool on. Once the arm has finished, I hold the Welder."
    settled = questions.answer("which tool are you holding", planned, planned)
    assert settled is not None and settled.brief == "I hold the Welder."


def test_now_and_later_read_as_two_sentences() -> None:
    """It read "Now: Nothing is on the fixture. Once the arm has finished: On the fixture,
    bottom to top: ..." (capitals after colons)."""
    cell = load_cell("sandwich")
    now = cell.initial_scene
    steps = (
        SequenceStep("add_layer", {"item": "bread"}),
        SequenceStep("add_layer", {"item": "meat"}),
    )
    program = compile_sequence(cell, now, build(cell, now, steps).steps).program
    assert program is not None
    answer = Questions(cell, None).answer("what is on the fixture", program.expected, now)
    assert answer is not None
    assert answer.brief == (
        "Now, nothing is on the fixture. Once the arm has finished, on the fixture, bottom to "
        "top: bread and meat."
    )


BARISTA = load_cell("barista")


@pytest.mark.parametrize(
    ("cell", "said", "brief"),
    [
        (BARISTA, "do you have soy milk?", "Yes, soy milk is one of the milks."),
        (BARISTA, "Do you have any iced mocha?", "Yes, iced mocha is one of the drinks."),
        (BARISTA, "do you have a 12 ounce?", "Yes, twelve ounce is one of the sizes."),
        (BARISTA, "do you have decaf?", "No, there is no decaf here."),
        # Something like what the cell has: no, and what it has of that kind.
        (BARISTA, "do you have oat milk?", "No, there is no oat milk here. The milks are milk, "
                                           "cream, skim milk, whole milk, soy milk and 1 more."),
        (BARISTA, "what drinks do you have?", "The drinks are americano, cappuccino, espresso, "
                                              "latte, mocha and 5 more."),
        (BARISTA, "do you have any milks?", "Yes, milk is one of the milks."),
        (BARISTA, "which sugars are there", "The sugars are sugar, sweetener and brown sugar."),
        (SANDWICH, "do you have tomatoes?", "Yes, tomato is one of the ingredients."),
        (SANDWICH, "have you got ham", "No, there is no ham here."),
        # By the noun the names end in, the kind's own word, or a tool.
        (BARISTA, "do you have cups?", "The cups are small cup, medium cup, large cup, 8 ounce "
                                       "cup, 12 ounce cup and 2 more."),
        (BARISTA, "what shots do you have", "The shots are single shot, double shot and triple "
                                            "shot."),
        (WELD, "do you have a welder?", "Yes, welder is one of the tools."),
        (WELD, "do you have the second seam?", "Yes, the second seam is one of the seams."),
    ],
)  # fmt: skip
def test_whether_the_cell_has_a_thing(cell: Cell, said: str, brief: str) -> None:
    # "Do you have decaf?" had been read as a command: "I don't know the word 'have decaf'",
    # and in the sandwich cell "do you have cheese" as "I don't have have".
    assert is_question(said)
    answer = Questions(cell, None).answer(said, cell.initial_scene)
    assert answer is not None
    assert answer.brief == brief


@pytest.mark.parametrize("said", ["do you have a large latte?", "do you have my latte?"])
def test_an_order_asked_as_a_question_is_not_answered_no(said: str) -> None:
    # "No, there is no large latte here." for what the cell makes: such words are no thing
    # of the cell to say yes or no to.
    assert Questions(BARISTA, None).answer(said, BARISTA.initial_scene) is None
