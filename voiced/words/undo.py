"""Undo: "undo that", "take the last one off", "remove the top layer", "put that back".

The daemon remembers what each accepted command placed (`placements`: which object went from
which site to which). Undo takes the newest placement whose object is still on top where it
was put and moves it back, through the cell's own composites: it looks for the public composite
call that, compiled from the planned scene, does exactly that and nothing else (sandwich:
`remove_layer` of the zone, the layer going back to its supply; blocks: `move_object` back to
where the cube stood). A placement that never happened (dropped by a stop) is skipped, because
its object is not where it would have been put.

The undo is then a command like any other: checked by the compiler, read back or confirmed as
the cell and the settings say, executed, and itself remembered as undoing that placement (so a
second undo takes the one before).

A weld, a camera image, a move of the arm: those cannot be undone, and the operator hears so.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.compiler import Program, compile_sequence
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.normalize import normalize

UNDO_PHRASES = re.compile(
    r"^(?:please |computer |ok |okay )*(?:"
    r"undo(?: that| it| the last(?: one| 1| thing| move| layer| command)?| please)?"
    r"|take (?:the last (?:one|1)|that|it|the (?:last|top) layer|the top (?:one|1)) (?:off|away)"
    r"|take off (?:the last (?:one|1)|the (?:top|last) layer|the top (?:one|1))"
    r"|remove (?:the )?(?:top|last) (?:layer|one|1|cube|block)"
    r"|put (?:that|it|the last (?:one|1)) back"
    r")(?: please)?$"
)
"""Said with the arm holding nothing ("put that back" with something in the gripper puts the
held object back: that is the cell's own return_to_stack)."""
MAX_REMEMBERED = 50


@dataclass(frozen=True)
class Placement:
    """One object set down by a command: from where it was taken to where it was put."""

    obj: str
    source: str
    target: str

    def reversed(self) -> Placement:
        return Placement(self.obj, self.target, self.source)


@dataclass(frozen=True)
class UndoPlan:
    """The undo worked out: the call that does it and what it puts back, or why there is none."""

    step: SequenceStep | None
    said: str
    """What it does ("put the bread back on the bread supply") or why it cannot."""
    placement: Placement | None = None
    """The placement it takes back."""


def is_undo(text: str) -> bool:
    return UNDO_PHRASES.match(normalize(text)) is not None


def placements(cell: Cell, program: Program) -> list[Placement]:
    """What `program` sets down, in order (walked through physics from its start scene)."""
    found: list[Placement] = []
    scene, source = program.start, None
    for primitive in program.primitives:
        after = physics.apply(cell, scene, primitive)
        if scene.holding is None and after.holding is not None:
            source = _changed_site(scene, after, after.holding)
        elif scene.holding is not None and after.holding is None:
            target = _changed_site(after, scene, scene.holding)
            if source is not None and target is not None and target != source:
                found.append(Placement(scene.holding, source, target))
            source = None
        scene = after
    return found


def _changed_site(more: Scene, less: Scene, obj: str) -> str | None:
    """The site whose stack in `more` is its stack in `less` with `obj` on top (objects of a
    kind are alike, so it is found by the stacks, not by name)."""
    for site, stack in more.stacks.items():
        if stack[-1:] == (obj,) and tuple(less.stacks.get(site, ())) == stack[:-1]:
            return site
    return None


def remember(
    placed: Sequence[Placement], new: Sequence[Placement], undoing: bool
) -> tuple[Placement, ...]:
    """The placements remembered after a command that set down `new`: an undo's own move takes
    back the placement it reverses instead of adding one."""
    kept = list(placed)
    for placement in new:
        back = placement.reversed()
        if undoing and back in kept:
            del kept[len(kept) - 1 - kept[::-1].index(back)]
        else:
            kept.append(placement)
    return tuple(kept[-MAX_REMEMBERED:])


def _place_said(cell: Cell, placement: Placement) -> str:
    """Where it goes back, as the operator says it: "the bread supply", not its site id."""
    site = cell.sites.get(placement.source)
    if site is not None and site.kind == "supply":
        return f"the {placement.obj} supply"
    return placement.source.replace("_", " ")


def plan_undo(cell: Cell, scene: Scene, placed: Sequence[Placement]) -> UndoPlan:
    """How to take back the newest placement still standing in `scene`."""
    if not cell.objects:
        what = "A weld cannot be undone" if cell.routines else "Nothing here can be undone"
        return UndoPlan(None, f"{what}: I can only take back what I have put down.")
    if scene.holding is not None:
        return UndoPlan(None, f"I am holding the {scene.holding}; put it down first.")
    for placement in reversed(placed):
        if scene.stacks.get(placement.target, ())[-1:] != (placement.obj,):
            continue  # never happened (a stop dropped it), or something stands on it now
        step = _call_that_moves(cell, scene, placement.reversed())
        if step is None:
            return UndoPlan(None, f"I cannot put the {placement.obj} back from here.")
        where = _place_said(cell, placement)
        return UndoPlan(step, f"Put the {placement.obj} back on {where}.", placement)
    return UndoPlan(None, "There is nothing I put down that I could take back.")


def _call_that_moves(cell: Cell, scene: Scene, move: Placement) -> SequenceStep | None:
    """The public composite call that moves `move.obj` from the top of `move.source` onto
    `move.target` and changes nothing else on the cell; one that asks for a yes comes last."""
    wanted = _moved(scene, move)
    found: list[tuple[bool, int, SequenceStep]] = []
    for call in _candidates(cell, move):
        compiled = compile_sequence(cell, scene, [call])
        program = compiled.program
        if program is None or not _same_cell(program.expected, wanted):
            continue
        composite = cell.composite(call.instruction)
        asks = composite is not None and composite.confirm
        found.append((asks, len(program.primitives), call))
    return min(found, key=lambda entry: entry[:2])[2] if found else None


def _candidates(cell: Cell, move: Placement) -> Iterator[SequenceStep]:
    values = (move.obj, move.source, move.target)
    for name, composite in cell.composites.items():
        if composite.internal or len(composite.params) > 2:
            continue
        names = [param.name for param in composite.params]
        for chosen in itertools.product(values, repeat=len(names)):
            yield SequenceStep(name, dict(zip(names, chosen, strict=True)))


def _moved(scene: Scene, move: Placement) -> Scene:
    stacks = dict(scene.stacks)
    stacks[move.source] = stacks[move.source][:-1]
    stacks[move.target] = (*stacks[move.target], move.obj)
    return scene.with_changes(stacks=stacks)


def _same_cell(a: Scene, b: Scene) -> bool:
    return dict(a.stacks) == dict(b.stacks) and a.holding == b.holding and a.dropped == b.dropped
