"""Creative commands: detection, the axis draw, the constrained override, the checker, and the
offline generator (a property test over every compatible axis combination)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.sequence import SequenceStep, steps
from voiced.robot.view import scene_from_view

from voiced.llm.creative import (
    INCOMPATIBLE,
    INGREDIENT_LOGIC,
    INGREDIENTS,
    SPATIAL,
    Axes,
    assign,
    check,
    choose_axes,
    compatible,
    is_creative,
    named_items,
)
from voiced.llm.creative_gen import CreativeUnavailable, generate, offline_interpretation

SANDWICH = load_cell("sandwich")
NAMED_SETS = [
    (),
    ("bread",),
    ("meat",),
    ("lettuce", "tomato"),
    ("bread", "cheese", "meat"),
    ("tomato", "meat", "cheese", "lettuce"),
    INGREDIENTS,
]
COMBINATIONS = [
    (Axes(spatial, logic), named)
    for spatial in SPATIAL
    for logic in INGREDIENT_LOGIC
    for named in NAMED_SETS
    if (logic == "constrained") == bool(named) and compatible(spatial, logic, named)
]


def test_every_axis_option_appears_in_some_compatible_combination() -> None:
    assert {axes.spatial for axes, _ in COMBINATIONS} == set(SPATIAL)
    assert {axes.ingredient for axes, _ in COMBINATIONS} == set(INGREDIENT_LOGIC)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(COMBINATIONS), st.integers(min_value=0, max_value=2**32 - 1))
def test_the_offline_generator_satisfies_both_axes(
    combination: tuple[Axes, tuple[str, ...]], seed: int
) -> None:
    axes, named = combination
    sequence = generate(SANDWICH, axes, random.Random(seed), named)
    assert check(axes, sequence, named) == []
    compiled = compile_sequence(SANDWICH, SANDWICH.initial_scene, sequence)
    assert compiled.ok, compiled.errors


@pytest.mark.parametrize(("axes", "named"), COMBINATIONS, ids=str)
def test_each_combination_once(axes: Axes, named: tuple[str, ...]) -> None:
    for seed in range(20):
        assert check(axes, generate(SANDWICH, axes, random.Random(seed), named), named) == []


def test_incompatible_pairs_are_never_chosen() -> None:
    seen = set()
    for seed in range(3000):
        axes = choose_axes(random.Random(seed))
        assert axes.ingredient not in INCOMPATIBLE.get(axes.spatial, frozenset())
        assert axes.ingredient != "constrained"
        seen.add(axes)
    assert Axes("palindrome", "all_one") in seen and Axes("inverted", "doubled") in seen
    assert Axes("palindrome", "full_set") not in seen and Axes("inverted", "all_one") not in seen


@pytest.mark.parametrize("named", [n for n in NAMED_SETS if n])
def test_naming_ingredients_forces_constrained(named: tuple[str, ...]) -> None:
    for seed in range(500):
        axes = choose_axes(random.Random(seed), named)
        assert axes.ingredient == "constrained"
        assert compatible(axes.spatial, axes.ingredient, named)


def test_assign_reads_the_named_ingredients() -> None:
    assignment = assign("do something with the tomatoes and lettuce", random.Random(1))
    assert assignment.named_items == ("tomato", "lettuce")
    assert assignment.axes.ingredient == "constrained"
    assert compatible(assignment.axes.spatial, "constrained", assignment.named_items)


@pytest.mark.parametrize(
    ("text", "creative"),
    [
        ("impress me", True),
        ("go wild", True),
        ("surprise me with a sandwich", True),
        ("be creative", True),
        ("make something beautiful", True),
        ("make a work of art", True),
        ("build a tower", True),
        ("make the best sandwich you can", True),
        ("make something delicious", True),
        ("do something with the lettuce", True),
        ("go crazy", True),
        ("have fun with it", True),
        ("something fancy please", True),
        ("an elaborate one", True),
        ("show me what you can do", True),
        ("your choice", True),
        ("you decide", True),
        ("make a cheese sandwich", False),
        ("can you pick up the bread", False),
        ("put bread on the left", False),
        ("go home", False),
        ("start over", False),
    ],
)
def test_is_creative(text: str, creative: bool) -> None:
    assert is_creative(text) is creative


def test_named_items_in_order_of_mention() -> None:
    assert named_items("cheese, then some tomatoes and bread") == ("cheese", "tomato", "bread")
    assert named_items("surprise me") == ()


def layers(*items: str, zone: str = "assembly_left") -> tuple[SequenceStep, ...]:
    return (
        SequenceStep("set_active_zone", {"zone": zone}),
        *(SequenceStep("add_layer", {"item": i}) for i in items),
        SequenceStep("go_home"),
    )


@pytest.mark.parametrize(
    ("axes", "sequence", "named", "problem"),
    [
        (Axes("palindrome", "all_one"), layers("bread", "bread", "cheese", "bread"), (), "back"),
        (Axes("inverted", "doubled"), layers("bread", "meat", "bread", "meat"), (), "not bread"),
        (Axes("single_tall", "all_one"), layers("meat", "meat", "meat"), (), "at least 6"),
        (Axes("single_short", "doubled"), layers("meat", "bread", "meat", "bread"), (), "2-3"),
        (
            Axes("two_zone_contrast", "full_set"),
            layers("meat", "bread") + layers("bread", "cheese", "lettuce", "tomato", zone="x"),
            (),
            "both zones use bread",
        ),
        (Axes("three_zone_split", "all_one"), layers("meat", "meat", "meat", "meat"), (), "1 z"),
        (Axes("single_tall", "doubled"), layers(*["meat", "meat", "bread"] * 2), (), "alternate"),
        (
            Axes("single_tall", "category_grouped"),
            layers("bread", "meat", "lettuce", "tomato", "cheese", "meat"),
            (),
            "not proteins",
        ),
        (
            Axes("single_tall", "random_ordered"),
            layers("bread", "meat", "cheese", "lettuce", "tomato", "meat"),
            (),
            "starts with bread",
        ),
        (Axes("single_tall", "full_set"), layers(*["meat"] * 6), (), "never uses"),
        (
            Axes("single_short", "constrained"),
            layers("lettuce", "meat"),
            ("lettuce", "tomato"),
            "did not name",
        ),
        (Axes("single_short", "all_one"), steps("go_home"), (), "adds no layers"),
    ],
)
def test_checker_finds_the_problem(
    axes: Axes, sequence: tuple[SequenceStep, ...], named: tuple[str, ...], problem: str
) -> None:
    problems = check(axes, sequence, named)
    assert problems and any(problem in p for p in problems), problems


def test_inverted_needs_bread_right_before_go_home() -> None:
    base = layers("meat", "cheese", "bread")
    late_home = (*base[:-1], SequenceStep("wait", {"seconds": 1}), base[-1])
    assert check(Axes("inverted", "doubled"), base) != []  # not alternating: doubled fails
    assert check(Axes("inverted", "category_grouped"), base) == []
    assert "go_home" in check(Axes("inverted", "category_grouped"), late_home)[0]


def test_offline_interpretation_fields() -> None:
    assignment = assign("impress me", random.Random(3))
    result = offline_interpretation(
        "impress me", SANDWICH, SANDWICH.initial_scene, assignment, random.Random(3), "cid"
    )
    assert result.is_creative and result.composite_name is None and result.validated
    assert result.source == "creative" and result.correlation_id == "cid"
    assert result.creative_reasoning is not None
    assert result.creative_reasoning.startswith(
        f"Axis 1: {assignment.axes.spatial} × Axis 2: {assignment.axes.ingredient} — "
    )


def test_the_generator_respects_empty_supplies() -> None:
    scene = scene_from_view(SANDWICH, {"supplies": {"bread": 0}}, "test")
    with pytest.raises(CreativeUnavailable, match="bread"):
        generate(SANDWICH, Axes("inverted", "doubled"), random.Random(1), scene=scene)
    sequence = generate(SANDWICH, Axes("single_tall", "doubled"), random.Random(1), scene=scene)
    assert all(s.params.get("item") != "bread" for s in sequence)


def test_a_held_item_is_put_back_first() -> None:
    scene = scene_from_view(SANDWICH, {"holding": "cheese"}, "test")
    sequence = generate(SANDWICH, Axes("single_short", "doubled"), random.Random(2), scene=scene)
    assert sequence[0] == SequenceStep("return_to_stack")
    assert compile_sequence(SANDWICH, scene, sequence).ok


def test_cells_without_ingredients_cannot_build_creatively() -> None:
    with pytest.raises(CreativeUnavailable):
        generate(load_cell("weld"), Axes("single_tall", "doubled"), random.Random(1))
