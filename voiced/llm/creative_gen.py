"""The offline creative generator: a sequence that satisfies both axes exactly, with no model.

Creative commands therefore work without an API key, and a model's creative sequence that fails
`voiced.llm.creative.check` is replaced by one from here. Layers are planned per zone from the
supplies left in the scene (at most what each supply holds), then written as
`set_active_zone` / `add_layer` calls ending with `go_home`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

from voiced.interpreter.result import CREATIVE, Interpretation
from voiced.llm.creative import (
    CATEGORIES,
    CATEGORY_RANK,
    INGREDIENTS,
    Axes,
    CreativeAssignment,
    check,
)
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep

_NEEDED = ("add_layer", "set_active_zone", "go_home")

_LENGTHS: Mapping[str, tuple[int, int]] = {
    "single_tall": (6, 8),
    "single_short": (2, 3),
    "three_zone_split": (4, 7),
    "palindrome": (3, 7),
    "inverted": (4, 6),
}
"""Layers per build for the one-list shapes (two_zone_contrast splits ingredient sets)."""


class CreativeUnavailable(ValueError):
    """The cell or what is left in its supplies cannot build the combination."""


def supported(cell: Cell) -> bool:
    """True when the cell has the composites and ingredients creative builds use."""
    has_steps = all(cell.composite(name) is not None for name in _NEEDED)
    return has_steps and set(INGREDIENTS) <= set(cell.items()) and len(cell.zones()) >= 3


def stock(cell: Cell, scene: Scene) -> dict[str, int]:
    """How many of each ingredient its supply holds in `scene`."""
    counts: dict[str, int] = {}
    for item in INGREDIENTS:
        supply = cell.objects[item].supply if item in cell.objects else None
        counts[item] = scene.stacks.get(supply or "", ()).count(item)
    return counts


def generate(
    cell: Cell,
    axes: Axes,
    rng: random.Random,
    named: Sequence[str] = (),
    *,
    scene: Scene | None = None,
) -> tuple[SequenceStep, ...]:
    """A sequence honouring both axes. Raises CreativeUnavailable."""
    if not supported(cell):
        raise CreativeUnavailable(f"the {cell.name} cell has no ingredients and zones to build on")
    scene = scene or cell.initial_scene
    left = stock(cell, scene)
    pool = [item for item in INGREDIENTS if left[item] > 0]
    _require_supplies(axes, pool)
    builds = _builds(axes, rng, list(named), pool)
    used = Counter(item for build in builds for item in build)
    short = [item for item, count in used.items() if count > left.get(item, 0)]
    if short:
        raise CreativeUnavailable(f"not enough {', '.join(sorted(short))} left")
    zones = rng.sample(list(cell.zones()), len(builds))
    steps: list[SequenceStep] = []
    if scene.holding is not None:
        steps.append(SequenceStep("return_to_stack"))
    for zone, build in zip(zones, builds, strict=True):
        steps.append(SequenceStep("set_active_zone", {"zone": zone}))
        steps.extend(SequenceStep("add_layer", {"item": item}) for item in build)
    steps.append(SequenceStep("go_home"))
    return tuple(steps)


def _require_supplies(axes: Axes, pool: list[str]) -> None:
    """Raise CreativeUnavailable when an empty supply makes the combination impossible."""
    missing: list[str] = []
    if len(pool) < 2:
        missing.append("a second ingredient")
    if axes.ingredient in ("full_set", "random_ordered"):
        missing += [item for item in INGREDIENTS if item not in pool]
    if axes.spatial == "inverted" and "bread" not in pool:
        missing.append("bread")
    if axes.ingredient == "category_grouped":
        if not any(_rank(i) < 2 for i in pool):
            missing.append("meat, lettuce or tomato")
        if not any(_rank(i) == 2 for i in pool):
            missing.append("bread or cheese")
    if missing:
        raise CreativeUnavailable(f"the supplies have run out of {', '.join(missing)}")


def _builds(axes: Axes, rng: random.Random, named: list[str], pool: list[str]) -> list[list[str]]:
    if axes.spatial == "two_zone_contrast":
        return _contrast(axes.ingredient, rng, named, pool)
    flat = _flat(axes, rng, named, pool)
    if axes.spatial != "three_zone_split":
        return [flat]
    first, second = sorted(rng.sample(range(1, len(flat)), 2))
    return [flat[:first], flat[first:second], flat[second:]]


def _flat(axes: Axes, rng: random.Random, named: list[str], pool: list[str]) -> list[str]:
    low, high = _LENGTHS[axes.spatial]
    spatial = axes.spatial
    match axes.ingredient:
        case "all_one":
            return [rng.choice(pool)] * rng.randint(max(low, 4), min(high, 6))
        case "doubled":
            return _doubled(spatial, rng, pool, low, high)
        case "full_set" | "random_ordered":
            return _everything(axes.ingredient, spatial, rng, pool, rng.randint(max(low, 5), high))
        case "category_grouped":
            return _grouped(spatial, rng, pool, rng.randint(low, high))
        case _:
            return _named(spatial, rng, named, rng.randint(low, high))


def _doubled(spatial: str, rng: random.Random, pool: list[str], low: int, high: int) -> list[str]:
    if spatial == "inverted":
        # Bread must come last: A, bread, A, bread (an even length ending on bread).
        first, second = rng.choice([i for i in pool if i != "bread"]), "bread"
        size = rng.choice([n for n in range(low, high + 1) if n % 2 == 0])
    else:
        first, second = rng.sample(pool, 2)
        sizes = [n for n in range(max(low, 3), high + 1)]
        if spatial == "palindrome":
            sizes = [n for n in sizes if n % 2 == 1]
        size = rng.choice(sizes)
    return [first if i % 2 == 0 else second for i in range(size)]


def _everything(
    logic: str, spatial: str, rng: random.Random, pool: list[str], size: int
) -> list[str]:
    if spatial == "inverted":
        others = [i for i in pool if i != "bread"]
        body = others + rng.choices(others, k=max(0, size - 1 - len(others)))
        rng.shuffle(body)
        return [*body, "bread"]
    flat = list(pool) + rng.choices(pool, k=max(0, size - len(pool)))
    rng.shuffle(flat)
    if logic == "random_ordered" and flat[0] == "bread":
        swap = next(i for i, item in enumerate(flat) if item != "bread")
        flat[0], flat[swap] = flat[swap], flat[0]
    return flat


def _rank(item: str) -> int:
    return CATEGORY_RANK[CATEGORIES[item]]


def _grouped(spatial: str, rng: random.Random, pool: list[str], size: int) -> list[str]:
    # At least two category groups: one item from the top group and one from below it.
    high = [i for i in pool if _rank(i) == 2]
    low = [i for i in pool if _rank(i) < 2]
    if spatial == "inverted":
        high = ["bread"]
    chosen = [rng.choice(low), rng.choice(high)]
    chosen += rng.choices(pool if spatial != "inverted" else low + high, k=size - 2)
    rng.shuffle(chosen)
    ordered = sorted(chosen, key=_rank)
    if spatial == "inverted":
        # Bread is in the last group, so moving one to the very end keeps the grouping.
        ordered.remove("bread")
        ordered.append("bread")
    return ordered


def _named(spatial: str, rng: random.Random, named: list[str], size: int) -> list[str]:
    items = list(dict.fromkeys(named))
    rng.shuffle(items)
    if spatial == "palindrome":
        half = items if len(items) > 1 else items * 2
        return half + half[-2::-1]
    if spatial == "inverted":
        others = [i for i in items if i != "bread"]
        return [*others, "bread"] if others else ["bread", "bread"]
    if spatial == "single_short":
        return items if len(items) > 1 else items * 2
    extra = rng.choices(items, k=max(0, size - len(items)))
    flat = items + extra
    rng.shuffle(flat)
    return flat


def _contrast(logic: str, rng: random.Random, named: list[str], pool: list[str]) -> list[list[str]]:
    if logic == "category_grouped":
        below = [i for i in pool if _rank(i) < 2]
        top = [i for i in pool if _rank(i) == 2]
        first = sorted(rng.sample(below, rng.randint(1, len(below))), key=_rank)
        return [first, rng.sample(top, rng.randint(1, len(top)))]
    items = list(dict.fromkeys(named)) if logic == "constrained" else list(pool)
    rng.shuffle(items)
    cut = rng.randint(1, len(items) - 1)
    first, second = items[:cut], items[cut:]
    if logic == "random_ordered" and first[0] == "bread":
        if len(first) == 1:
            first, second = second, first
        else:
            first[0], first[1] = first[1], first[0]
    return [first, second]


def offline_interpretation(
    text: str,
    cell: Cell,
    scene: Scene,
    assignment: CreativeAssignment,
    rng: random.Random,
    correlation_id: str | None = None,
    note: str | None = None,
) -> Interpretation:
    """A creative command answered by the generator alone (no key, or the model failed)."""
    axes, named = assignment.axes, assignment.named_items
    try:
        sequence = generate(cell, axes, rng, named, scene=scene)
    except CreativeUnavailable as error:
        return Interpretation(
            interpretation=f"Creative build: {text}",
            confidence=0.1,
            user_feedback=f"I can't build that creatively: {error}.",
            is_creative=True,
            source=CREATIVE,
            correlation_id=correlation_id,
        )
    problems = check(axes, sequence, named)
    issues = ((note,) if note else ()) + tuple(problems)
    return Interpretation(
        interpretation=f"Creative build ({axes.spatial}, {axes.ingredient}): {text}",
        sequence=sequence,
        pass1_sequence=sequence,
        composite_name=None,
        confidence=0.8,
        validated=not problems,
        validation_issues=issues,
        is_creative=True,
        creative_reasoning=axes.reasoning(describe(sequence) + " (built offline)"),
        source=CREATIVE,
        correlation_id=correlation_id,
    )


def describe(sequence: Sequence[SequenceStep]) -> str:
    """The builds in words: "assembly_left: bread, cheese, bread; assembly_right: meat"."""
    builds: list[tuple[str, list[str]]] = [("the active zone", [])]
    for step in sequence:
        if step.instruction == "set_active_zone":
            builds.append((str(step.params.get("zone", "")), []))
        elif step.instruction == "add_layer":
            builds[-1][1].append(str(step.params.get("item", "")))
    return "; ".join(f"{zone}: {', '.join(items)}" for zone, items in builds if items)
