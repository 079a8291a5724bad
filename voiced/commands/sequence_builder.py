"""The sequence builder (seed 001): high-level goals become atomic steps, deterministically.

Goals are the operator's intent as composite calls (`run_routine_at(tack_weld, Pos_1)`,
`move_to_position`, `attach_tool`, `release_tool`, `release_tool_and_home`, `go_home`,
`run_routine`). The builder adds what the cell needs and nothing else: it routes every move
between areas (home, work positions, tool stands) through the cell's `travel_via` pose, and it
changes tools only where a routine needs another one — never because a move was asked for.
Cells without `travel_via` keep their goals as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep

STAND = "stand"
"""The area of the tool stands."""
LIFT_AT_LEAST_MM = 1.0
"""Below the approach height by less than this is at it (the controller's own rounding)."""
NEAR_MM = 150.0
"""How close the arm must be to a place to count as being in its area."""


@dataclass(frozen=True)
class Built:
    """The atomic steps, or why the goals cannot be built."""

    steps: tuple[SequenceStep, ...] = ()
    errors: tuple[str, ...] = ()
    """Plain-English problems (unknown position, a routine whose tool does not exist)."""


@dataclass
class _Arm:
    """Where the arm will be and what it will hold while the steps are laid out."""

    cell: Cell
    area: str
    position: str | None
    tool: str | None
    steps: list[SequenceStep] = field(default_factory=list)

    def go(self, area: str, step: SequenceStep, position: str | None = None) -> None:
        via = self.cell.travel_via
        if via and self.area not in (area, "safe") and area != "safe" and position != via:
            self.steps.append(_call("move_to_position", position=via))
            self.area, self.position = "safe", via
        self.steps.append(step)
        self.area, self.position = area, position

    def move_to(self, position: str) -> None:
        if position != self.position:
            self.go(self.cell.poses[position].role, _call("move_to_position", position=position),
                    position)  # fmt: skip

    def take_tool(self, tool: str) -> None:
        if self.tool == tool:
            return
        if self.tool is not None:
            self.go(STAND, _call("release_tool"))
        self.go(STAND, _call("attach_tool", tool=tool))
        self.tool = tool

    def put_tool_back(self) -> None:
        if self.tool is not None:
            self.go(STAND, _call("release_tool"))
            self.tool = None


def build(cell: Cell, scene: Scene, goals: Sequence[SequenceStep]) -> Built:
    """The atomic steps for `goals`, starting from `scene`."""
    if cell.travel_via is None:
        return Built(tuple(goals))
    errors = [e for goal in goals for e in _check(cell, goal)]
    if errors:
        return Built(errors=tuple(errors))
    arm = _Arm(cell, *_where(cell, scene), scene.tool)
    if _crosses(goals):
        _lift_off_a_stand(arm, scene)
    for goal in goals:
        _lay_out(arm, goal.instruction, goal.params)
    return Built(tuple(arm.steps))


_NAVIGATION = frozenset(("run_routine_at", "run_routine", "move_to_position", "go_home",
                         "attach_tool", "release_tool", "release_tool_and_home"))  # fmt: skip
"""Goals that take the arm across the cell (a speed change, a wait or a nudge do not)."""


def _crosses(goals: Sequence[SequenceStep]) -> bool:
    """Whether the first goal that moves the arm takes it across the cell."""
    for goal in goals:
        if goal.instruction in ("set_speed", "wait"):
            continue
        return goal.instruction in _NAVIGATION
    return False


def _lift_off_a_stand(arm: _Arm, scene: Scene) -> None:
    """Stopped part-way down to a tool stand (a stop, a fault): straight up to the approach
    height first, as a tool change leaves a stand. A joint move from there to the next stand
    or the safe pose swept low past the tools."""
    cell = arm.cell
    if arm.area != STAND or arm.position is not None or not cell.tools:
        return
    if cell.composite("move_relative") is None:
        return
    stand = min((t.stand for t in cell.tools.values()), key=scene.pose.distance_to)
    rise = stand.z + cell.motion.approach_mm - scene.pose.z
    if rise > LIFT_AT_LEAST_MM:
        arm.steps.append(_call("move_relative", direction="up", distance=round(rise, 1)))


def _lay_out(arm: _Arm, name: str, params: Mapping[str, Any]) -> None:
    cell = arm.cell
    if name == "run_routine_at":
        arm.take_tool(_tool_for(cell, params["routine"]))
        arm.move_to(params["position"])
        arm.steps.append(_call("run_routine", routine=params["routine"]))
    elif name == "run_routine":
        back_to = arm.position
        arm.take_tool(_tool_for(cell, params["routine"]))
        if back_to is not None:
            arm.move_to(back_to)
        arm.steps.append(_call("run_routine", routine=params["routine"]))
    elif name == "move_to_position":
        arm.move_to(params["position"])
    elif name == "go_home":
        arm.move_to(_home(cell))
    elif name == "attach_tool":
        arm.take_tool(params["tool"])
    elif name == "release_tool":
        arm.put_tool_back()
    elif name == "release_tool_and_home":
        arm.put_tool_back()
        arm.move_to(_home(cell))
    else:
        arm.steps.append(_call(name, **params))  # speed, waits: no navigation involved


def _check(cell: Cell, goal: SequenceStep) -> list[str]:
    params = goal.params
    errors = []
    position = params.get("position")
    if position is not None and position not in cell.poses:
        errors.append(f"Position '{position}' does not exist (positions: "
                      f"{', '.join(cell.poses)})")  # fmt: skip
    routine = params.get("routine")
    if routine is not None:
        found = cell.routines.get(routine)
        if found is None:
            errors.append(f"Routine '{routine}' does not exist (routines: "
                          f"{', '.join(cell.routines)})")  # fmt: skip
        elif found.tool is not None and found.tool not in cell.tools:
            errors.append(f"Routine '{routine}' needs the tool '{found.tool}', which this cell "
                          "does not have")  # fmt: skip
    tool = params.get("tool")
    if tool is not None and tool not in cell.tools:
        errors.append(f"Tool '{tool}' does not exist (tools: {', '.join(cell.tools)})")
    return errors


def _tool_for(cell: Cell, routine: str) -> str:
    tool = cell.routines[routine].tool
    assert tool is not None  # routines without a tool never reach a tool change
    return tool


def _home(cell: Cell) -> str:
    return next((p.name for p in cell.poses.values() if p.role == "home"), "Home")


def _where(cell: Cell, scene: Scene) -> tuple[str, str | None]:
    """The area the arm is in, and the named position it is at (if any)."""
    best: tuple[float, str, str | None] | None = None
    for pose in cell.poses.values():
        distance = scene.pose.distance_to(pose.pose)
        if best is None or distance < best[0]:
            best = (distance, pose.role, pose.name if distance < 5.0 else None)
    for tool in cell.tools.values():
        distance = scene.pose.distance_to(tool.stand)
        if best is None or distance < best[0]:
            best = (distance, STAND, None)
    if best is None or best[0] > NEAR_MM:
        return "unknown", None
    return best[1], best[2]


def _call(instruction: str, **params: Any) -> SequenceStep:
    return SequenceStep(instruction, params)
