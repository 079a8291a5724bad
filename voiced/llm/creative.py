"""Creative commands (seed 000): detection, the two axes, choosing a combination, and the checker.

Python, not the model, decides what a creative build looks like: `choose_axes` draws one option
per axis (never an incompatible pair), and `check` decides whether a sequence honours both. The
same checker judges the model's sequence and the offline generator's (`voiced.llm.creative_gen`).

Definitions the seed leaves open, fixed here so that the checker can decide:

- A *layer* is an `add_layer(item)` (or a `pick_up(item)` later put down by `place_on_zone`); the
  zone it goes on is the last `set_active_zone` before it (`start_zone` before any).
- Categories: meat is protein; lettuce and tomato are vegetables; bread is starch; cheese is
  dairy. `category_grouped` = within every zone, proteins, then vegetables, then starch/dairy,
  with at least two of those groups used.
- `single_tall` = one zone, at least 6 layers; `single_short` = one zone, 2-3 layers.
- Conventional order = bread first (and last); `random_ordered` = every ingredient at least once,
  the first layer not bread.
- `doubled` = exactly two ingredients strictly alternating, at least 3 layers (A,B,A).
- `constrained` = only the named ingredients, each of them at least once.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from voiced.robot.sequence import SequenceStep

SPATIAL: Mapping[str, str] = {
    "single_tall": "one zone only — stack as many layers as possible (at least 6).",
    "single_short": "one zone only — exactly 2–3 layers, stop there.",
    "three_zone_split": "use all three zones via set_active_zone() — three builds in sequence.",
    "two_zone_contrast": "two zones with opposing ingredient sets (no ingredient in both).",
    "palindrome": "one zone — the ingredient sequence must read IDENTICALLY forwards and "
    "backwards (at least 3 layers).",
    "inverted": "one zone — reverse of conventional order, bread absolutely last.",
}
"""Axis 1, spatial structure: how layers are spread over zones and height."""

INGREDIENT_LOGIC: Mapping[str, str] = {
    "all_one": "one ingredient repeated 4–6 times, nothing else.",
    "category_grouped": "all proteins first, then all vegetables, then starch/dairy (in every "
    "zone; at least two of the groups).",
    "full_set": "every available ingredient at least once, unusual order.",
    "random_ordered": "all ingredients in a non-obvious, non-conventional order (do not start "
    "with bread).",
    "doubled": "pick exactly TWO ingredients and alternate them: A,B,A,B,A,B. Nothing else.",
    "constrained": "only the ingredients named in the command, each at least once.",
}
"""Axis 2, ingredient logic: which ingredients are used and why."""

INCOMPATIBLE: Mapping[str, frozenset[str]] = {
    # The seed's pairs.
    "palindrome": frozenset({"random_ordered", "category_grouped", "full_set"}),
    "inverted": frozenset({"all_one"}),
    # Added: 2-3 layers cannot hold one ingredient 4-6 times, or all five ingredients.
    "single_short": frozenset({"all_one", "full_set", "random_ordered"}),
    # Added: disjoint zone sets need two ingredient groups, and an A,B,A,B alternation would have
    # to cross from one zone's set into the other's.
    "two_zone_contrast": frozenset({"all_one", "doubled"}),
}
"""Axis 1 option -> the axis 2 options it contradicts."""

CATEGORIES: Mapping[str, str] = {
    "meat": "protein",
    "lettuce": "vegetable",
    "tomato": "vegetable",
    "bread": "starch",
    "cheese": "dairy",
}
"""The sandwich cell's ingredients and their categories."""

CATEGORY_RANK: Mapping[str, int] = {"protein": 0, "vegetable": 1, "starch": 2, "dairy": 2}
"""Order of the groups in `category_grouped` (starch and dairy form one group)."""

INGREDIENTS: tuple[str, ...] = tuple(CATEGORIES)
"""Every ingredient, in the cell's order."""

MAX_DRAWS = 10
"""Random draws before `choose_axes` picks from the compatible pairs directly (seed: 10)."""

_PATTERNS = (
    r"\bimpress\b",
    r"\bgo wild\b",
    r"\bsurprise\b",
    r"\bcreative\b",
    r"\bcreativity\b",
    r"\bbeautiful\b",
    r"\bwork of art\b",
    r"\bmasterpiece\b",
    r"\bbuild a tower\b",
    r"\bbest .* can\b",
    r"\bsomething delicious\b",
    r"\bdo something\b",
    r"\bgo crazy\b",
    r"\bhave fun\b",
    r"\bfancy\b",
    r"\belaborate\b",
    r"\bshow off\b",
    r"\bshow me what you(?:'ve)? (?:can do|got)\b",
    r"\bsomething (?:cool|fun|special|interesting|unusual|different|new|original|unique|random)\b",
    r"\byour (?:choice|call|pick)\b",
    r"\byou (?:choose|decide)\b",
    r"\bup to you\b",
    r"\bwhatever you (?:want|like|fancy)\b",
    r"\bexperiment(?:al)?\b",
    r"\binvent\b",
    r"\bartistic\b",
    r"\bget wild\b",
)
_CREATIVE = re.compile("|".join(_PATTERNS), re.IGNORECASE)


@dataclass(frozen=True)
class Axes:
    """One option from each axis."""

    spatial: str
    """A key of SPATIAL."""
    ingredient: str
    """A key of INGREDIENT_LOGIC."""

    def reasoning(self, explanation: str) -> str:
        """The seed's creative_reasoning format."""
        return f"Axis 1: {self.spatial} × Axis 2: {self.ingredient} — {explanation}"


@dataclass(frozen=True)
class CreativeAssignment:
    """What Python decided for one creative command, before any model sees it."""

    axes: Axes
    """The combination to build."""
    named_items: tuple[str, ...] = ()
    """Ingredients the command named (then axis 2 is `constrained`)."""
    variation: int = 0
    """A random number put in the prompt: the API no longer takes a temperature, so this is
    what makes two runs of the same creative command differ."""


def is_creative(text: str) -> bool:
    """True when the command asks for creativity (seed 000's pattern list, completed)."""
    return _CREATIVE.search(text) is not None


def named_items(text: str, items: Iterable[str] = INGREDIENTS) -> tuple[str, ...]:
    """The ingredients a command names (singular or plural), in the order it names them."""
    found: list[tuple[int, str]] = []
    for item in items:
        forms = "|".join(re.escape(form) for form in (item, item + "s", item + "es"))
        match = re.search(rf"\b(?:{forms})\b", text, re.IGNORECASE)
        if match is not None:
            found.append((match.start(), item))
    return tuple(item for _, item in sorted(found))


def compatible(spatial: str, ingredient: str, named: Sequence[str] = ()) -> bool:
    """False for the incompatible pairs, and for `constrained` when the named ingredients
    cannot satisfy axis 1 (inverted without bread, two zones from one ingredient, more than
    three named for a 2-3 layer build)."""
    if ingredient in INCOMPATIBLE.get(spatial, frozenset()):
        return False
    if ingredient != "constrained":
        return True
    if not named:
        return False
    if spatial == "inverted":
        return "bread" in named
    if spatial == "two_zone_contrast":
        return len(set(named)) >= 2
    if spatial == "single_short":
        return len(set(named)) <= 3
    return True


def choose_axes(rng: random.Random, named: Sequence[str] = ()) -> Axes:
    """Draw a compatible combination: up to MAX_DRAWS random draws (the seed's retry), then a
    direct choice among the compatible pairs. Axis 2 is `constrained` when ingredients were
    named (the constrained override); it is never drawn otherwise."""
    spatials = list(SPATIAL)
    ingredients = ["constrained"] if named else [k for k in INGREDIENT_LOGIC if k != "constrained"]
    for _ in range(MAX_DRAWS):
        spatial, ingredient = rng.choice(spatials), rng.choice(ingredients)
        if compatible(spatial, ingredient, named):
            return Axes(spatial, ingredient)
    pairs = [Axes(s, i) for s in spatials for i in ingredients if compatible(s, i, named)]
    return rng.choice(pairs)


def assign(text: str, rng: random.Random, items: Iterable[str] = INGREDIENTS) -> CreativeAssignment:
    """The assignment for a creative command: named ingredients, axes, a variation number."""
    named = named_items(text, items)
    return CreativeAssignment(choose_axes(rng, named), named, rng.randrange(1, 10_000))


@dataclass(frozen=True)
class Layers:
    """Where a sequence puts its layers."""

    flat: tuple[str, ...]
    """Every layer's ingredient, in order."""
    zones: Mapping[str, tuple[str, ...]]
    """Zone -> its layers in order (zones in order of first use)."""
    home_right_after_last_layer: bool
    """No go_home comes after the last layer, or the first one that does comes right after it."""


def layers_of(sequence: Sequence[SequenceStep], start_zone: str = "<active zone>") -> Layers:
    """Read the layers a sequence builds (see the module docstring)."""
    zone, held = start_zone, None
    flat: list[str] = []
    zones: dict[str, list[str]] = {}
    last_layer = -1
    for index, step in enumerate(sequence):
        name, item = step.instruction, step.params.get("item")
        layer: str | None = None
        if name == "set_active_zone" and isinstance(step.params.get("zone"), str):
            zone = str(step.params["zone"])
        elif name == "add_layer" and isinstance(item, str):
            layer = item
        elif name == "pick_up" and isinstance(item, str):
            held = item
        elif name == "place_on_zone" and held is not None:
            layer, held = held, None
        if layer is not None:
            flat.append(layer)
            zones.setdefault(zone, []).append(layer)
            last_layer = index
    homes_after = [
        i for i, s in enumerate(sequence) if s.instruction == "go_home" and i > last_layer
    ]
    right_after = not homes_after or homes_after[0] == last_layer + 1
    return Layers(tuple(flat), {z: tuple(v) for z, v in zones.items()}, right_after)


def check(
    axes: Axes,
    sequence: Sequence[SequenceStep],
    named: Sequence[str] = (),
    *,
    ingredients: Sequence[str] = INGREDIENTS,
    start_zone: str = "<active zone>",
) -> list[str]:
    """Every way `sequence` fails the combination `axes` (empty when it honours both). Zone and
    item names must be canonical (the deterministic validator makes them so)."""
    layers = layers_of(sequence, start_zone)
    if not layers.flat:
        return ["the sequence adds no layers"]
    problems = [f"{item} is not an ingredient" for item in _unknown(layers.flat, ingredients)]
    spatial = _SPATIAL_CHECKS[axes.spatial](layers)
    if spatial:
        problems.append(f"{axes.spatial}: {spatial}")
    ingredient = _ingredient_problem(axes.ingredient, layers, named, ingredients)
    if ingredient:
        problems.append(f"{axes.ingredient}: {ingredient}")
    return problems


def _unknown(flat: Sequence[str], ingredients: Sequence[str]) -> list[str]:
    return sorted(set(flat) - set(ingredients))


def _shown(flat: Sequence[str]) -> str:
    return ", ".join(flat)


def _one_zone(layers: Layers) -> str | None:
    if len(layers.zones) != 1:
        return f"uses {len(layers.zones)} zones, not one"
    return None


def _single_tall(layers: Layers) -> str | None:
    if len(layers.flat) < 6:
        return f"only {len(layers.flat)} layers (at least 6)"
    return _one_zone(layers)


def _single_short(layers: Layers) -> str | None:
    if not 2 <= len(layers.flat) <= 3:
        return f"{len(layers.flat)} layers (2-3)"
    return _one_zone(layers)


def _three_zone_split(layers: Layers) -> str | None:
    if len(layers.zones) < 3:
        return f"builds on {len(layers.zones)} zones, not all three"
    return None


def _two_zone_contrast(layers: Layers) -> str | None:
    if len(layers.zones) != 2:
        return f"builds on {len(layers.zones)} zones, not two"
    first, second = (set(v) for v in layers.zones.values())
    shared = sorted(first & second)
    return f"both zones use {_shown(shared)}" if shared else None


def _palindrome(layers: Layers) -> str | None:
    if len(layers.flat) < 3:
        return f"only {len(layers.flat)} layers (at least 3)"
    if layers.flat != layers.flat[::-1]:
        return f"{_shown(layers.flat)} does not read the same backwards"
    return _one_zone(layers)


def _inverted(layers: Layers) -> str | None:
    if layers.flat[-1] != "bread":
        return f"the last layer is {layers.flat[-1]}, not bread"
    if not layers.home_right_after_last_layer:
        return "the step before go_home is not the final add_layer(bread)"
    return _one_zone(layers)


_SPATIAL_CHECKS = {
    "single_tall": _single_tall,
    "single_short": _single_short,
    "three_zone_split": _three_zone_split,
    "two_zone_contrast": _two_zone_contrast,
    "palindrome": _palindrome,
    "inverted": _inverted,
}


def _ingredient_problem(
    logic: str, layers: Layers, named: Sequence[str], ingredients: Sequence[str]
) -> str | None:
    flat, used = layers.flat, set(layers.flat)
    missing = [i for i in ingredients if i not in used]
    match logic:
        case "all_one":
            if len(used) != 1:
                return f"uses {len(used)} ingredients ({_shown(sorted(used))}), not one"
            return None if 4 <= len(flat) <= 6 else f"{len(flat)} layers (4-6)"
        case "category_grouped":
            return _category_problem(layers)
        case "full_set":
            return f"never uses {_shown(missing)}" if missing else None
        case "random_ordered":
            if missing:
                return f"never uses {_shown(missing)}"
            return "starts with bread, the conventional order" if flat[0] == "bread" else None
        case "doubled":
            return _doubled_problem(flat)
        case "constrained":
            return _constrained_problem(used, named)
    return f"unknown ingredient logic {logic!r}"


def _rank(item: str) -> int:
    return CATEGORY_RANK.get(CATEGORIES.get(item, ""), 3)


def _category_problem(layers: Layers) -> str | None:
    for zone, stack in layers.zones.items():
        ranks = [_rank(item) for item in stack]
        if ranks != sorted(ranks):
            return f"{zone}: {_shown(stack)} is not proteins, then vegetables, then starch/dairy"
    groups = {_rank(item) for item in layers.flat}
    return None if len(groups) >= 2 else "uses only one category group"


def _doubled_problem(flat: Sequence[str]) -> str | None:
    if len(set(flat)) != 2:
        return f"uses {len(set(flat))} ingredients, not exactly two"
    if len(flat) < 3:
        return f"only {len(flat)} layers (at least 3: A,B,A)"
    if any(a == b for a, b in itertools.pairwise(flat)):
        return f"{_shown(flat)} does not alternate"
    return None


def _constrained_problem(used: set[str], named: Sequence[str]) -> str | None:
    if not named:
        return "the command named no ingredients"
    extra = sorted(used - set(named))
    if extra:
        return f"uses {_shown(extra)}, which the command did not name"
    unused = [i for i in named if i not in used]
    return f"never uses {_shown(unused)}" if unused else None
