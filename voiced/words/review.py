"""Human review (seed 001): read a plan back, and revise it the way the operator says.

The grammar handles the common revisions on the plan itself: "skip position 2" drops the steps
that use it, "also position 3" repeats the last such step for it, "use the camera" switches the
routines to the one that tool serves, "tomato instead of cheese" swaps a value. Anything else is
not understood here (the caller may ask the language model, or the operator again).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.program import Composite
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.normalize import normalize

_SKIP = re.compile(r"^(?:revise |but )?(?:skip|without|not|drop|leave out|no) (?:the )?(?P<x>.+)$")
_ALSO = re.compile(r"^(?:revise |but )?(?:also|and|add|plus) (?:the )?(?P<x>.+)$")
_SWAP = re.compile(
    r"^(?:revise |but )?(?:use )?(?:the )?(?P<new>.+?) instead of (?:the )?(?P<old>.+)$"
)
_POLITE = frozenset({"please", "thanks", "thank", "you", "ok", "okay"})
_USE = re.compile(r"^(?:revise |but )?(?:use|with) (?:the )?(?P<x>.+)$")


def describe(cell: Cell, step: SequenceStep) -> str:
    """One step as it is read back: the composite's `say` template, else its name and values."""
    composite = cell.composite(step.instruction)
    params = {k: _said(cell, composite, k, v) for k, v in step.params.items()}
    if composite is not None and composite.say:
        try:
            return composite.say.format(**params)
        except KeyError:
            pass  # a parameter left to its default: fall back to the plain form
    values = " ".join(params.values())
    return f"{step.instruction.replace('_', ' ')} {values}".strip()


def read_back(cell: Cell, sequence: Sequence[SequenceStep]) -> str:
    """ "I will tack weld at Pos 1, then tack weld at Pos 2." for a plan."""
    said = _zones_cleared(cell, list(sequence))
    if not said:
        return "I have nothing to do."
    return "I will " + ", then ".join(said) + "."


def _zones_cleared(cell: Cell, plan: list[SequenceStep]) -> list[str]:
    """Each step read back, where a zone chosen and then cleared is said as one ("clear what is
    on the fixture and on the right", not "switch to assembly fixture, then clear the assembly,
    then switch to ..."); the zone chosen again after them, as it was, goes unsaid."""
    said: list[str] = []
    cleared: list[str] = []
    for i, step in enumerate(plan):
        after = plan[i + 1] if i + 1 < len(plan) else None
        zone = step.params.get("zone") if step.instruction == "set_active_zone" else None
        if zone is not None and after is not None and after.instruction == "clear_assembly":
            cleared.append(place_said(cell, str(zone)))
            continue
        if step.instruction == "clear_assembly" and i > 0 and cleared:
            continue
        if cleared:
            said.append("clear what is on " + " and on ".join(cleared))
            cleared = []
            if zone is not None and (after is None or after.instruction == "go_home"):
                continue
        said.append(describe(cell, step))
    if cleared:
        said.append("clear what is on " + " and on ".join(cleared))
    return said


def revise(
    cell: Cell, sequence: Sequence[SequenceStep], feedback: str
) -> list[SequenceStep] | None:
    """The plan changed as `feedback` says, or None when the revision is not understood."""
    said = " ".join(w for w in normalize(feedback).split() if w not in _POLITE)
    values = _spoken_values(cell)
    plan = list(sequence)
    if swap := _SWAP.match(said):
        new, old = values.get(swap["new"]), values.get(swap["old"])
        return None if new is None or old is None else _replace(plan, old, new)
    if skip := _SKIP.match(said):
        target = values.get(skip["x"])
        kept = [step for step in plan if target not in step.params.values()]
        return None if target is None or len(kept) == len(plan) else kept
    if also := _ALSO.match(said):
        target = values.get(also["x"])
        return None if target is None else _repeat_with(plan, target, values)
    if use := _USE.match(said):
        return _use_tool(cell, plan, values.get(use["x"]))
    return None


def _changed(step: SequenceStep, change: Callable[[Any], Any]) -> SequenceStep:
    """`step` with `change` applied to each of its values."""
    return SequenceStep(step.instruction, {k: change(v) for k, v in step.params.items()})


def _replace(plan: list[SequenceStep], old: str, new: str) -> list[SequenceStep] | None:
    if not any(value == old for step in plan for value in step.params.values()):
        return None
    return [_changed(step, lambda value: new if value == old else value) for step in plan]


def _repeat_with(
    plan: list[SequenceStep], target: str, values: Mapping[str, str]
) -> list[SequenceStep] | None:
    """Repeat the last step that has a value of the same kind as `target`, with `target`."""
    kind = _kind_of(target, values)
    for step in reversed(plan):
        for key, value in step.params.items():
            if _kind_of(str(value), values) == kind:
                return [*plan, SequenceStep(step.instruction, {**step.params, key: target})]
    return None


def _use_tool(cell: Cell, plan: list[SequenceStep], tool: str | None) -> list[SequenceStep] | None:
    """Switch every routine in the plan to the one the named tool serves."""
    routines = [r.name for r in cell.routines.values() if tool is not None and r.tool == tool]
    if len(routines) != 1:
        return None
    return _replace_kind(plan, set(cell.routines), routines[0])


def _replace_kind(plan: list[SequenceStep], kind: set[str], new: str) -> list[SequenceStep] | None:
    if not any(v in kind and v != new for step in plan for v in step.params.values()):
        return None
    return [_changed(step, lambda value: new if value in kind else value) for step in plan]


def _kind_of(value: str, values: Mapping[str, str]) -> str:
    # The kind is remembered as a prefix of the spoken key; see _spoken_values.
    for key, known in values.items():
        if known == value and key.startswith("\0"):
            return key.split("\0")[1]
    return ""


def _spoken_values(cell: Cell) -> dict[str, str]:
    """Spoken forms of every value a plan can contain -> the value. Keys starting with NUL
    record each value's kind ("\\0position\\0Pos_1")."""
    kinds: dict[str, list[str]] = {
        "position": list(cell.poses),
        "object": list(cell.objects),
        "zone": list(cell.zones()),
        "tool": list(cell.tools),
        "routine": list(cell.routines),
    }
    spoken: dict[str, str] = {}
    for kind, names in kinds.items():
        for name in names:
            spoken[f"\0{kind}\0{name}"] = name
            spoken[normalize(name.replace("_", " "))] = name
            spoken[normalize(name)] = name
            if found := re.fullmatch(r"pos_(\d+)", name.lower()):
                spoken[f"position {found.group(1)}"] = name
    for word, zone in cell.zone_aliases.items():
        spoken.setdefault(normalize(word), zone)
    return spoken


def _spoken(value: Any) -> str:
    return str(value).replace("_", " ")


def _said(cell: Cell, composite: Composite | None, name: str, value: Any) -> str:
    """A step's value as read back: a routine by its `say`, anything else in words."""
    spec = composite.param(name) if composite is not None else None
    routine = cell.routines.get(str(value)) if spec is not None and spec.type == "routine" else None
    return routine.say if routine is not None and routine.say else _spoken(value)


def surprise_said(cell: Cell, before: Scene, after: Scene, lead: str = "A surprise") -> str:
    """What a surprise build will put where, said before it runs ("A surprise: bread, cheese
    and bread on the right; meat on the fixture."; "Again: ..." for a repeat of one)."""
    placed = []
    for zone in cell.zones():
        new = after.stacks.get(zone, ())[len(before.stacks.get(zone, ())) :]
        if new:
            placed.append(f"{_listed(list(new))} on {place_said(cell, zone)}")
    return f"{lead}: {'; '.join(placed)}." if placed else f"{lead}."


def zone_said(cell: Cell, zone: str) -> str:
    """A zone as the operator names it: the alias that is a word of its name ("left" for
    assembly_left), else its first one-word alias, else its name in words."""
    words = zone.split("_")
    aliases = [alias for alias, target in cell.zone_aliases.items() if target == zone]
    named = [alias for alias in aliases if alias in words]
    single = [alias for alias in aliases if " " not in alias]
    return (named or single or [zone.replace("_", " ")])[0]


def place_said(cell: Cell, site: str) -> str:
    """A place as the operator names it: "the left" for a zone, a buffer's name ("B1")."""
    return f"the {zone_said(cell, site)}" if site in cell.zones() else site.replace("_", " ")


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
