"""Units of the issue-16 behaviours: the pause words, speed changes, undo and counting."""

from __future__ import annotations

import pytest
from voiced.frames.base import BaseFrame
from voiced.frames.pause import pause_rule
from voiced.frames.router import CommandRouter
from voiced.frames.stop import stop_rule
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules import Handled, Utterance

from tests.fakes import EventRecorder, FakeServices
from voiced.words.behaviours import behaviour_of, is_behaviour
from voiced.words.counting import count_question
from voiced.words.speed import speed_change
from voiced.words.undo import Placement, is_undo, placements, plan_undo, remember

SANDWICH = load_cell("sandwich")
BLOCKS = load_cell("blocks")
WELD = load_cell("weld")


def after(cell_name: str, *calls: SequenceStep) -> tuple[Scene, list[Placement]]:
    cell = load_cell(cell_name)
    program = compile_sequence(cell, cell.initial_scene, list(calls)).program
    assert program is not None
    return program.expected, placements(cell, program)


def add(item: str) -> SequenceStep:
    return SequenceStep("add_layer", {"item": item})


# -- pause -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    ["pause", "Hold on!", "hold it", "wait a second", "Wait, a second.", "computer, pause",
     "hold on a second", "pause please", "hang on", "okay hold on", "Wait!", "computer wait"],
)  # fmt: skip
def test_pause_words_are_a_global_rule(said: str) -> None:
    assert isinstance(pause_rule(["computer"]).match(Utterance(said, 0.0)), Handled)


@pytest.mark.parametrize(
    "said", ["wait 5 seconds", "pause for 3 seconds", "add bread and hold it there", "stop",
             "don't pause", "hold the welder"],
)  # fmt: skip
def test_commands_that_mention_waiting_are_not_pauses(said: str) -> None:
    assert not isinstance(pause_rule(["computer"]).match(Utterance(said, 0.0)), Handled)


async def test_the_router_hands_a_pause_to_the_services_from_any_frame() -> None:
    services = FakeServices()
    base = BaseFrame("computer", 1.5, 8.0)
    router = CommandRouter(base, services, EventRecorder(), [stop_rule(), pause_rule()], "wake")
    base.on_push(router, 0.0)
    await router.dispatch(Utterance("computer start dictation", 0.0))
    assert router.top.name == "dictation"
    await router.dispatch(Utterance("hold on", 0.0))
    assert router.top.name == "dictation", "a pause keeps the frames as they are"
    await router.dispatch(Utterance("stop", 0.1))
    assert services.pauses == ['operator said "hold on"']
    assert services.stops == ['operator said "stop"']


# -- speed -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "speed", "mm_s"),
    [("go a bit slower", "slow", 100), ("slow down", "slow", 100), ("faster please", "fast", 500),
     ("full speed", "fast", 500), ("speed it up", "fast", 500),
     ("normal speed", "normal", 250)],
)  # fmt: skip
def test_speed_phrases_step_between_the_cells_profiles(said: str, speed: str, mm_s: int) -> None:
    change = speed_change(SANDWICH, said, SANDWICH.initial_scene)  # starts at normal, 250
    assert change is not None and change.step == SequenceStep("set_speed", {"speed": speed})
    assert f"{mm_s} mm/s" in change.said


@pytest.mark.parametrize(("before", "after"), [(250.0, 125.0), (100.0, 50.0), (500.0, 250.0)])
def test_half_speed_halves_the_speed_the_arm_goes_at(before: float, after: float) -> None:
    """Never faster: after "slow down" (100 mm/s) half speed is 50, not half of the fastest."""
    scene = SANDWICH.initial_scene.with_changes(speed=before)
    change = speed_change(SANDWICH, "half speed", scene)
    assert change is not None and change.step is not None
    assert SANDWICH.resolve_speed(change.step.params["speed"]) == after
    assert f"{after:.0f} mm/s" in change.said


def test_slower_at_the_slowest_speed_says_so_and_moves_nothing() -> None:
    slow = SANDWICH.initial_scene.with_changes(speed=100.0)
    change = speed_change(SANDWICH, "slower", slow)
    assert change is not None and change.step is None
    assert "already at the slowest" in change.said


def test_a_command_with_a_speed_word_is_not_a_speed_change() -> None:
    assert speed_change(SANDWICH, "add bread faster", SANDWICH.initial_scene) is None
    assert not is_behaviour("add bread faster")


# -- undo ------------------------------------------------------------------------------------


def test_placements_follow_the_stacks_not_the_names() -> None:
    _, placed = after("sandwich", add("bread"), add("bread"))
    assert placed == [Placement("bread", "supply_bread", "assembly_fixture")] * 2


def test_undo_takes_the_top_layer_of_the_stack_last_added_to() -> None:
    scene, placed = after("sandwich", add("bread"),
                          SequenceStep("set_active_zone", {"zone": "assembly_left"}),
                          add("cheese"))  # fmt: skip
    plan = plan_undo(SANDWICH, scene, placed)
    assert plan.step == SequenceStep("remove_layer", {"zone": "assembly_left"})
    program = compile_sequence(SANDWICH, scene, [plan.step]).program
    assert program is not None
    assert program.expected.stacks["assembly_left"] == ()
    assert len(program.expected.stacks["supply_cheese"]) == 8
    assert remember(placed, placements(SANDWICH, program), undoing=True) == (placed[0],)


def test_undo_in_blocks_moves_the_cube_back_where_it_was() -> None:
    scene, placed = after("blocks", SequenceStep("move_object", {"object": "red cube", "to": "B1"}))
    plan = plan_undo(BLOCKS, scene, placed)
    assert plan.step == SequenceStep("move_object", {"object": "red cube", "to": "S1"})


def test_undo_skips_what_never_happened() -> None:
    scene, placed = after("sandwich", add("bread"))
    ghost = Placement("cheese", "supply_cheese", "assembly_fixture")  # dropped by a stop
    plan = plan_undo(SANDWICH, scene, [*placed, ghost])
    assert plan.placement == placed[0]


def test_a_weld_cannot_be_undone() -> None:
    plan = plan_undo(WELD, WELD.initial_scene, [])
    assert plan.step is None and "weld cannot be undone" in plan.said


def test_nothing_to_undo_is_said_plainly() -> None:
    meant = behaviour_of(SANDWICH, "undo that", SANDWICH.initial_scene, (), None)
    assert meant is not None and not meant.sequence
    assert meant.user_feedback == "There is nothing I put down that I could take back."


def test_put_that_back_while_holding_is_left_to_the_cell() -> None:
    holding = SANDWICH.initial_scene.with_changes(holding="bread")
    assert behaviour_of(SANDWICH, "put that back", holding, (), None) is None


@pytest.mark.parametrize(
    "said", ["undo", "undo that", "take the last one off", "remove the top layer",
             "put that back", "undo the last move please", "take off the top layer"],
)  # fmt: skip
def test_undo_phrases(said: str) -> None:
    assert is_undo(said)


# -- counting --------------------------------------------------------------------------------


def test_counts_are_of_the_confirmed_scene_and_say_what_is_coming() -> None:
    planned, _ = after("sandwich", add("bread"), add("bread"))
    count = count_question(SANDWICH, "how many slices of bread are left", planned, planned)
    assert count is not None and count.sentence() == "6 slices of bread left in the supply."
    count = count_question(SANDWICH, "how many layers are on the fixture",
                           SANDWICH.initial_scene, planned)  # fmt: skip
    assert count is not None
    assert count.sentence() == "No layers on the fixture now; 2 once the arm has finished."


@pytest.mark.parametrize(
    ("cell", "said", "answer"),
    [("sandwich", "how many layers are on the left", "No layers on the left."),
     ("blocks", "how many cubes are on the table", "3 cubes on the table."),
     ("blocks", "how many cubes are in B1", "No cubes on B1."),
     ("weld", "how many welds are done", "No tack welds done."),
     ("weld", "how many inspections have you done", "No camera inspections done.")],
)  # fmt: skip
def test_counting_questions(cell: str, said: str, answer: str) -> None:
    loaded = load_cell(cell)
    count = count_question(loaded, said, loaded.initial_scene, loaded.initial_scene)
    assert count is not None and count.sentence() == answer


@pytest.mark.parametrize(
    ("cell", "said", "answer"),
    [("sandwich", "how many avocados are left", "There is no avocado in this cell."),
     ("sandwich", "how many layers of pineapple are left", "There is no pineapple in this cell."),
     ("blocks", "how many pyramids are there", "There is no pyramid in this cell."),
     ("sandwich", "how many tomatoes are left", "8 layers of tomato left in the supply."),
     ("blocks", "how many green cubes are there", "1 green cube in the cell."),
     ("blocks", "how many yellow cubes are there", "No yellow cubes in the cell.")],
)  # fmt: skip
def test_a_count_of_what_the_cell_lacks_says_so(cell: str, said: str, answer: str) -> None:
    """Never a count of something else ("how many avocados" is not a count of layers), and
    numbers agree with their nouns ("8 layers of tomato", not "8 tomato")."""
    loaded = load_cell(cell)
    count = count_question(loaded, said, loaded.initial_scene, loaded.initial_scene)
    assert count is not None and count.sentence() == answer


def test_a_count_of_positions_or_routines_is_left_to_their_own_answers() -> None:
    weld = load_cell("weld")
    for said in ("how many positions are there", "how many seams are left"):
        assert count_question(weld, said, weld.initial_scene, weld.initial_scene) is None


def test_one_is_said_in_the_singular() -> None:
    scene, _ = after("sandwich", add("meat"))
    count = count_question(SANDWICH, "how many layers are on the fixture", scene, scene)
    assert count is not None and count.sentence() == "1 layer on the fixture."


def test_a_goal_already_reached_is_said_as_now_or_as_by_then() -> None:
    """ "go to the welder" twice: while the first still runs, the welder is not on yet."""
    from voiced.commands.acceptance import already_done

    goal = (SequenceStep("attach_tool", {"tool": "Welder"}),)
    assert already_done(goal) == "I already hold the Welder."
    assert already_done(goal, settled=False) == "I will already hold the Welder by then."
    home = (SequenceStep("go_home", {}),)
    assert already_done(home, settled=False) == "I will already be home by then."


def test_a_stop_from_outside_says_who_sent_it() -> None:
    from voiced.rules import Utterance

    assert Utterance("stop").said_by == 'operator said "stop"'
    assert Utterance("stop", source="page").said_by == 'the cell\'s page sent "stop"'
    assert Utterance("stop", source="mqtt").said_by == 'MQTT sent "stop"'
    assert Utterance("hold on", source="hub").said_by == 'hub sent "hold on"'
