"""After a fault the controller's report is the truth (issue 14).

Two pure steps, used whenever the link comes back and after every run cut short:

- `reconcile` takes the scene the daemon believes in and what the controller reports (pose,
  gripper, tool) and returns the scene that agrees with the controller, saying what differed.
  The gripper is replayed through `robot.physics`, the one model of cause and effect: an object
  believed held with the gripper now open is wherever physics says the opening put it (on a site
  if the arm is at a place height, else dropped), and an object under a gripper that is closed
  where it grasps is held.
- `rest_of` is what remains of an interrupted command, re-planned from the reconciled scene, for
  "continue": the steps not done, and for the step cut short while it held its object, the cell's
  own way of putting that object where the step was taking it (so nothing is fetched twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.compiler import Program, compile_sequence
from voiced.robot.connection import ControllerState
from voiced.robot.primitives import Grip, Pose
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.words.review import describe as say

GRIPPER_MM = 0.5
"""Openings closer than this are the same (the wire carries one decimal)."""


@dataclass(frozen=True)
class Reconciled:
    scene: Scene
    """The scene that agrees with the controller."""
    changes: tuple[str, ...]
    """What differed from the believed scene, in plain words (empty: it agreed)."""
    moved: bool = False
    """Whether the arm is elsewhere than believed (after a stop mid-move it always is, and that
    alone is no news to the operator)."""


def reconcile(cell: Cell, believed: Scene, state: ControllerState) -> Reconciled:
    """The believed scene corrected by the controller's report."""
    changes: list[str] = []
    scene = believed
    moved = False
    if state.pose is not None:
        if _distance(state.pose, believed.pose) > physics.POSITION_MM:
            moved = True
            changes.append(f"the arm is at {describe_pose(cell, state.pose)}")
        scene = scene.with_changes(pose=state.pose)
    if state.tool != believed.tool:
        changes.append(f"the tool on the flange is {state.tool or 'none'}")
        scene = scene.with_changes(tool=state.tool)
    if abs(state.gripper - believed.gripper) > GRIPPER_MM:
        scene = _regrip(cell, scene, state.gripper)
        if scene.holding != believed.holding:
            changes.append(_holding_change(believed, scene))
    return Reconciled(scene, tuple(changes), moved)


def _regrip(cell: Cell, scene: Scene, width: float) -> Scene:
    try:
        return physics.apply(cell, scene, Grip(width))
    except physics.PhysicsError:
        # A width the cell file calls impossible, or a grasp physics forbids: the controller
        # reported it, so it is the width; what it holds is then left as believed.
        return scene.with_changes(gripper=width)


def _holding_change(before: Scene, after: Scene) -> str:
    if after.holding is not None:
        return f"the gripper holds {after.holding}"
    lost = before.holding
    if lost in after.dropped[len(before.dropped) :]:
        return f"{lost} was let go away from any place"
    site = after.site_of(lost) if lost else None
    return f"{lost} was put down on {site}" if site else f"{lost} is no longer held"


def describe(cell: Cell, scene: Scene) -> str:
    """What the arm holds and where it is, for the operator."""
    held = f"holding {scene.holding}" if scene.holding else "holding nothing"
    tool = f", with the {scene.tool}" if scene.tool else ""
    return f"The arm is {held}{tool}, at {describe_pose(cell, scene.pose)}."


def describe_pose(cell: Cell, pose: Pose) -> str:
    named = physics.position_name(cell, pose)
    if named is not None:
        return named.replace("_", " ")
    site = physics.site_at(cell, pose)
    near = f" above {site.name.replace('_', ' ')}" if site is not None else ""
    return f"x {pose.x:.0f}, y {pose.y:.0f}, z {pose.z:.0f} mm{near}"


def _distance(a: Pose, b: Pose) -> float:
    return float(((a.x - b.x) ** 2 + (a.y - b.y) ** 2 + (a.z - b.z) ** 2) ** 0.5)


@dataclass(frozen=True)
class Interrupted:
    """A command cut short (stop, failure, lost link): what it was and how far it got."""

    text: str
    """What the operator said."""
    program: Program
    before: Scene
    """The scene the run started from."""
    completed: frozenset[int]
    """Primitives known to have completed (the HELLO reply's last_done settles the rest)."""
    run: int
    """The executor's run number (its report is settled after a reconnect)."""
    settled: bool
    """Whether every primitive's outcome is known (False after a lost link, until the
    reconnect's last_done settles it)."""

    def first_unfinished(self) -> int:
        """The index of the first step not wholly done."""
        for index, step in enumerate(self.program.steps):
            if not all(i in self.completed for i in range(step.start, step.end)):
                return index
        return len(self.program.steps)

    def not_done(self, cell: Cell) -> list[str]:
        """The steps not done, as the cell says them ("add bread")."""
        steps = self.program.steps[self.first_unfinished() :]
        return [say(cell, step.call) for step in steps]


def rest_of(cell: Cell, cut: Interrupted, scene: Scene) -> list[SequenceStep] | None:
    """The steps that finish `cut` from `scene`, or None when no plan from here compiles."""
    steps = cut.program.steps
    first = cut.first_unfinished()
    if first < len(steps) and _placed_already(cell, cut, first, scene):
        first += 1  # cut after it set its object down, before the lift: nothing to redo
    rest = [step.call for step in steps[first:]]
    if not rest:
        return []
    if _compiles(cell, scene, rest):
        return rest
    if scene.holding is None:
        return None
    # The step was cut while carrying its object: put it where the step was taking it.
    upto = [step.call for step in steps[: first + 1]]
    planned = compile_sequence(cell, cut.before, upto)
    if planned.program is None:
        return None
    target = _destination(planned.program.expected, scene)
    if target is None:
        return None
    placed = _placed(scene, target)
    for finish in _placings(cell, target):
        compiled = compile_sequence(cell, scene, [finish])
        if (
            compiled.program is not None
            and _same(compiled.program.expected, placed)
            and _compiles(cell, scene, [finish, *rest[1:]])
        ):
            return [finish, *rest[1:]]
    return None


def _placed_already(cell: Cell, cut: Interrupted, index: int, scene: Scene) -> bool:
    """Whether step `index`, cut short, already left the objects as it would have when done
    (it stopped on its way back up): only then is it skipped."""
    upto = [step.call for step in cut.program.steps[: index + 1]]
    planned = compile_sequence(cell, cut.before, upto).program
    if planned is None or _same(planned.expected, cut.before):
        return False  # a step that moves no object (a move of the arm) is redone
    return _same(planned.expected, scene)


def _destination(planned: Scene, scene: Scene) -> str | None:
    """Where the plan was taking the held object: the one site whose planned stack is today's
    with that object on top (objects of a kind are alike, so it is found by the stacks)."""
    held = scene.holding
    sites = [site for site, stack in planned.stacks.items()
             if tuple(stack) == (*scene.stacks.get(site, ()), held)]  # fmt: skip
    return sites[0] if len(sites) == 1 else None


def _placed(scene: Scene, site: str) -> Scene:
    """`scene` with the held object set down on `site` and nothing else changed."""
    held = scene.holding
    assert held is not None
    return scene.with_stack(site, (*scene.stacks.get(site, ()), held)).with_changes(holding=None)


def _same(a: Scene, b: Scene) -> bool:
    return dict(a.stacks) == dict(b.stacks) and a.holding == b.holding and a.dropped == b.dropped


def _placings(cell: Cell, site: str) -> Sequence[SequenceStep]:
    """Calls of the cell's public composites that might set the held object down on `site`:
    those without parameters and those with one (given the place); the compiler then shows
    which of them does exactly that."""
    calls: list[SequenceStep] = []
    for name, composite in cell.composites.items():
        if composite.internal or len(composite.params) > 1:
            continue
        params = {p.name: site for p in composite.params}
        calls.append(SequenceStep(name, params))
    return calls


def _compiles(cell: Cell, scene: Scene, calls: Sequence[SequenceStep]) -> bool:
    return compile_sequence(cell, scene, calls).program is not None
