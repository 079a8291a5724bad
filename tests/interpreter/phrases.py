"""The grammar's phrase table: what operators say in each cell and the exact sequence it means.

Shared by the table tests (tests/interpreter/test_grammar_table.py) and the parse-time benchmark
(bench/grammar_parse.py). A case's `scene` is a state view (docs/CELLS.md) overriding the cell's
initial scene; every expected sequence must compile from that scene.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Step = tuple[str, Mapping[str, Any]]


def s(instruction: str, **params: Any) -> Step:
    return (instruction, params)


def layers(*items: str) -> tuple[Step, ...]:
    return tuple(s("add_layer", item=item) for item in items)


def nudge(direction: str, distance: Any = None) -> tuple[Step]:
    extra = {} if distance is None else {"distance": distance}
    return (s("move_relative", direction=direction, **extra),)


def move(obj: str, to: str) -> tuple[Step]:
    return (s("move_object", object=f"{obj} cube", to=to),)


def at(routine: str, *positions: int) -> tuple[Step, ...]:
    return tuple(s("run_routine_at", routine=routine, position=f"Pos_{n}") for n in positions)


@dataclass(frozen=True)
class Case:
    """One phrasing and its meaning."""

    cell: str
    said: str
    expected: tuple[Step, ...]
    scene: Mapping[str, Any] = field(default_factory=dict)
    """State-view overrides of the initial scene (empty: the initial scene)."""


HOLDING_CHEESE = {"holding": "cheese"}
BREAD_ON_FIXTURE = {"zones": {"assembly_fixture": ["bread"]}}
TWO_STACKS = {"zones": {"assembly_left": ["bread"], "assembly_right": ["bread", "meat"]}}
WITH_CAMERA = {"tool": "Camera"}
WITH_WELDER = {"tool": "Welder"}
HOLDING_RED = {"holding": "red cube", "scattered": ["green cube", "blue cube"]}
LEFT = s("set_active_zone", zone="assembly_left")
RIGHT = s("set_active_zone", zone="assembly_right")
MIDDLE = s("set_active_zone", zone="assembly_fixture")
HOME = s("go_home")


def _sandwich() -> list[Case]:
    c = "sandwich"
    return [
        Case(c, "add bread", layers("bread")),
        Case(c, "Add bread, cheese and tomato.", layers("bread", "cheese", "tomato")),
        Case(c, "could you please add some lettuce", layers("lettuce")),
        Case(c, "bread cheese bread", layers("bread", "cheese", "bread")),
        Case(c, "put meat on the left", (LEFT, *layers("meat"))),
        Case(c, "put lettuce over there", (MIDDLE, *layers("lettuce"))),
        Case(c, "put tomato in the middle", (MIDDLE, *layers("tomato"))),
        Case(c, "on the right add bread and cheese", (RIGHT, *layers("bread", "cheese"))),
        Case(c, "add bread on the left and cheese on the right",
             (LEFT, *layers("bread"), RIGHT, *layers("cheese"))),
        Case(c, "three layers of cheese", layers("cheese", "cheese", "cheese")),
        Case(c, "add two breads and a cheese", layers("bread", "bread", "cheese")),
        Case(c, "add a couple of tomatoes", layers("tomato", "tomato")),
        Case(c, "add cheese twice", layers("cheese", "cheese")),
        Case(c, "add bread three times", layers("bread", "bread", "bread")),
        Case(c, "add bread then cheese then two more",
             layers("bread", "cheese", "cheese", "cheese")),
        Case(c, "add three cheese then another bread",
             layers("cheese", "cheese", "cheese", "bread")),
        Case(c, "put bread on every stack", (LEFT, *layers("bread"), MIDDLE, *layers("bread"),
                                             RIGHT, *layers("bread"))),
        Case(c, "put cheese on all zones", (LEFT, *layers("cheese"), MIDDLE, *layers("cheese"),
                                            RIGHT, *layers("cheese"))),
        Case(c, "put meat on both stacks", (LEFT, *layers("meat"), RIGHT, *layers("meat")),
             TWO_STACKS),
        Case(c, "put cheese on the left and right stacks",
             (LEFT, *layers("cheese"), RIGHT, *layers("cheese"))),
        Case(c, "make a cheese sandwich on the right",
             (RIGHT, *layers("bread", "cheese", "bread"))),
        Case(c, "add bread and then go home", (*layers("bread"), HOME)),
        Case(c, "add cheese after that add meat", layers("cheese", "meat")),
        Case(c, "add lettuce and tomatoes on the right side then go home",
             (RIGHT, *layers("lettuce", "tomato"), HOME)),
        Case(c, "go home", (HOME,)),
        Case(c, "go back home", (HOME,)),
        Case(c, "switch to the left stack", (LEFT,)),
        Case(c, "use the right one", (RIGHT,)),
        Case(c, "go to the left stack", (LEFT,)),
        Case(c, "pick up the cheese", (s("pick_up", item="cheese"),)),
        Case(c, "put it down", (s("place_on_zone"),), HOLDING_CHEESE),
        Case(c, "put it on the right stack", (RIGHT, s("place_on_zone")), HOLDING_CHEESE),
        Case(c, "slowly add bread", (s("set_speed", speed="slow"), *layers("bread"))),
        Case(c, "add meat quickly", (s("set_speed", speed="fast"), *layers("meat"))),
        Case(c, "slow down", (s("set_speed", speed="slow"),)),
        Case(c, "speed up", (s("set_speed", speed="fast"),)),
        Case(c, "set the speed to 300", (s("set_speed", speed=300),)),
        Case(c, "wait 3 seconds", (s("wait", seconds=3),)),
        Case(c, "wait for two seconds then add bread", (s("wait", seconds=2), *layers("bread"))),
        Case(c, "move up a bit", nudge("up", "a bit")),
        Case(c, "a little to the left", nudge("left", "a little")),
        Case(c, "move left 30 millimetres", nudge("left", 30)),
        Case(c, "move forward 5 cm", nudge("forward", 50)),
        Case(c, "nudge it right", nudge("right")),
        Case(c, "raise the arm slightly", nudge("up", "slightly")),
        Case(c, "go back a little", nudge("backward", "a little")),
        Case(c, "put it back", (s("return_to_stack"),), HOLDING_CHEESE),
        Case(c, "undo", (s("return_to_stack"),)),
        Case(c, "start over", (s("clear_assembly"), HOME), BREAD_ON_FIXTURE),
        Case(c, "never mind", (s("clear_assembly"), HOME), BREAD_ON_FIXTURE),
        Case(c, "cancel that", (s("clear_assembly"), HOME), HOLDING_CHEESE),
        Case(c, "I made a mistake", (s("return_to_stack"),), HOLDING_CHEESE),
        Case(c, "oops, I made a mistake", (s("clear_assembly"),), TWO_STACKS),
        Case(c, "take the cheese off", (s("return_to_stack"),), HOLDING_CHEESE),
        Case(c, "clear the left stack", (LEFT, s("clear_assembly")), TWO_STACKS),
        Case(c, "clear all stacks", (LEFT, s("clear_assembly"), MIDDLE, s("clear_assembly"),
                                     RIGHT, s("clear_assembly")), TWO_STACKS),
    ]  # fmt: skip


def _weld() -> list[Case]:
    c = "weld"
    return [
        Case(c, "go to position 2", (s("move_to_position", position="Pos_2"),)),
        Case(c, "go to position two", (s("move_to_position", position="Pos_2"),)),
        Case(c, "move to pos 3", (s("move_to_position", position="Pos_3"),)),
        Case(c, "go to the safe position", (s("move_to_position", position="Safe_Pos_1"),)),
        Case(c, "go to position 1 then 2", (s("move_to_position", position="Pos_1"),
                                            s("move_to_position", position="Pos_2"))),
        Case(c, "go to position 1 and back home", (s("move_to_position", position="Pos_1"), HOME)),
        Case(c, "visit all positions", tuple(s("move_to_position", position=f"Pos_{n}")
                                             for n in (1, 2, 3))),
        Case(c, "go to position 1 slowly", (s("set_speed", speed="slow"),
                                            s("move_to_position", position="Pos_1"))),
        Case(c, "go home", (HOME,)),
        Case(c, "weld at position 1", at("tack_weld", 1)),
        Case(c, "tack weld position 3", at("tack_weld", 3)),
        Case(c, "weld at positions 1, 2 and 3", at("tack_weld", 1, 2, 3)),
        Case(c, "weld at 1 and 3", at("tack_weld", 1, 3)),
        Case(c, "run tack weld at position 2", at("tack_weld", 2)),
        Case(c, "weld all positions then go home", (*at("tack_weld", 1, 2, 3), HOME)),
        Case(c, "inspect all positions", at("camera_inspection", 1, 2, 3)),
        Case(c, "do a full inspection", at("camera_inspection", 1, 2, 3)),
        Case(c, "do a full scan", at("camera_inspection", 1, 2, 3)),
        Case(c, "inspect positions 1 and 3", at("camera_inspection", 1, 3)),
        Case(c, "scan position 2", at("camera_inspection", 2)),
        Case(c, "run camera inspection on all positions", at("camera_inspection", 1, 2, 3)),
        Case(c, "weld and inspect position 1", (*at("tack_weld", 1), *at("camera_inspection", 1))),
        Case(c, "inspect position 2 then weld it", (*at("camera_inspection", 2),
                                                    *at("tack_weld", 2))),
        Case(c, "weld here", (s("run_routine", routine="tack_weld"),), WITH_WELDER),
        Case(c, "grab the camera", (s("attach_tool", tool="Camera"),)),
        Case(c, "attach the welder", (s("attach_tool", tool="Welder"),)),
        Case(c, "switch to the welder", (s("release_tool"), s("attach_tool", tool="Welder")),
             WITH_CAMERA),
        Case(c, "release the tool", (s("release_tool"),), WITH_CAMERA),
        Case(c, "put the camera away", (s("release_tool"),), WITH_CAMERA),
        Case(c, "return the tool and go home", (s("release_tool_and_home"),), WITH_WELDER),
        Case(c, "finish up", (s("release_tool_and_home"),)),
        Case(c, "set speed to fast", (s("set_speed", speed="fast"),)),
    ]  # fmt: skip


def _blocks() -> list[Case]:
    c = "blocks"
    return [
        Case(c, "pick up the red cube", (s("pick", object="red cube"),)),
        Case(c, "grab the blue block", (s("pick", object="blue cube"),)),
        Case(c, "take the green one", (s("pick", object="green cube"),)),
        Case(c, "pick up red", (s("pick", object="red cube"),)),
        Case(c, "put it on B1", (s("place", site="B1"),), HOLDING_RED),
        Case(c, "place it in the center", (s("place", site="center"),), HOLDING_RED),
        Case(c, "drop it on spot 4", (s("place", site="S4"),), HOLDING_RED),
        Case(c, "put it on the left", (s("place", site="left"),), HOLDING_RED),
        Case(c, "move the red cube to the left", move("red", "left")),
        Case(c, "put the blue cube on buffer 2", move("blue", "B2")),
        Case(c, "move the green cube to slot 3", move("green", "B3")),
        Case(c, "put the red cube in the middle", move("red", "center")),
        Case(c, "move the blue one to the back", move("blue", "back")),
        Case(c, "take the red cube to B3", move("red", "B3")),
        Case(c, "put the red and green cubes in the center",
             (*move("red", "center"), *move("green", "center"))),
        Case(c, "move red to b1 and green to b2", (*move("red", "B1"), *move("green", "B2"))),
        Case(c, "put the red cube on the pyramid left", move("red", "pyramid_left")),
        Case(c, "go home", (HOME,)),
        Case(c, "slow down then move the red cube to the right",
             (s("set_speed", speed="slow"), *move("red", "right"))),
    ]  # fmt: skip


CASES: tuple[Case, ...] = (*_sandwich(), *_weld(), *_blocks())
"""Every phrasing, sandwich then weld then blocks."""
