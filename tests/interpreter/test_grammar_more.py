"""Grammar behaviour beyond the table: scene-dependent readings, the seed 003 verb resolver
hook, release-and-home merging, performance sanity."""

from __future__ import annotations

from voiced.robot.cellfile import load_cell

from tests.interpreter.helpers import cell, grammar, scene
from voiced.interpreter.grammar import Grammar, interpret


def names(result_sequence: object) -> list[str]:
    return [s.instruction for s in result_sequence]  # type: ignore[attr-defined]


def test_a_mistake_depends_on_what_is_held() -> None:
    g = grammar("sandwich")
    holding = g.parse("I made a mistake", scene=scene("sandwich", {"holding": "meat"}))
    assert names(holding.sequence) == ["return_to_stack"] and holding.notes == ()
    empty = g.parse("I made a mistake", scene=scene("sandwich"))
    assert names(empty.sequence) == ["clear_assembly"]
    unknown = g.parse("I made a mistake")
    assert names(unknown.sequence) == ["return_to_stack"] and unknown.confidence == 0.85


def test_slower_and_faster_step_through_the_speed_profiles() -> None:
    g = grammar("sandwich")
    fast = scene("sandwich").with_changes(speed=500.0)
    assert g.parse("go slower", scene=fast).sequence[0].params == {"speed": "normal"}
    slow = scene("sandwich").with_changes(speed=100.0)
    assert g.parse("faster", scene=slow).sequence[0].params == {"speed": "normal"}


def test_a_tool_change_releases_the_other_tool_first() -> None:
    g = grammar("weld")
    welder = scene("weld", {"tool": "Welder"})
    assert names(g.parse("grab the camera", scene=welder).sequence) == [
        "release_tool", "attach_tool"]  # fmt: skip
    assert names(g.parse("grab the camera", scene=scene("weld")).sequence) == ["attach_tool"]


def test_a_resolved_verb_joins_the_semantic_map() -> None:
    g = Grammar(cell("sandwich"))
    assert g.parse("tally the bread").error.fallback == "resolve_phrase"  # type: ignore[union-attr]
    assert g.add_verb("tally", "add_layer")
    assert names(g.parse("tally the bread and cheese").sequence) == ["add_layer", "add_layer"]
    assert not g.add_verb("teleport", "no_such_composite")
    assert g.add_verb("scram", "go_home")
    assert names(g.parse("scram").sequence) == ["go_home"]
    assert names(g.parse("add bread then scram").sequence) == ["add_layer", "go_home"]


def test_interpret_describes_the_sequence() -> None:
    result = interpret(grammar("sandwich"), "put meat and cheese on the left then go home")
    assert (
        result.interpretation == "Switch to assembly_left, then add meat and cheese, then go home."
    )
    assert result.source == "grammar" and result.validated


def test_a_cell_loaded_from_a_path_gets_the_same_grammar(tmp_path: object) -> None:
    from pathlib import Path

    source = Path(load_cell("weld").source).read_text(encoding="utf-8")
    path = Path(str(tmp_path)) / "mycell.toml"
    path.write_text(source, encoding="utf-8")
    g = Grammar(load_cell(path))
    assert names(g.parse("inspect all positions").sequence) == ["run_routine_at"] * 3
