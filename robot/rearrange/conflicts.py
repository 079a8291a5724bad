"""What a target asks that cannot all be true at once, in words fit to speak.

Two cubes in one position, or more of a cube than the cell has ("there is only one red cube: it
cannot be in two places at once"). The planner refuses such a target with the reason
(voiced.robot.rearrange), and so does the model's target reader (voiced.llm.rearrange), which
never sends one back for correction: corrected, the model would drop a part of what the operator
said and the rest would run. Spoken contradictions between clauses ("red on blue and blue on
red") are the grammar's to find (voiced.interpreter.contradictions).
"""

from __future__ import annotations

from collections.abc import Mapping

from voiced.robot.rearrange.targets import TargetError, extract_object_value
from voiced.rules.normalize import fold


def target_contradictions(payload: object, available: Mapping[str, int]) -> list[str]:
    """What a target asks that cannot all be true at once, fit to speak: a position given to
    two objects, or more of an object than the cell has (`available`: how many of each there
    are; an object with none is not counted here, it is simply missing). A malformed payload
    gives [] for what cannot be read (validation says what is wrong with it)."""
    inner = payload.get("target_structure", payload) if isinstance(payload, Mapping) else None
    placements = inner.get("placements") if isinstance(inner, Mapping) else None
    if not isinstance(placements, list):
        return []
    free = inner.get("relationship") == "none" if isinstance(inner, Mapping) else False
    found: list[str] = []
    at: dict[str, list[str]] = {}
    wanted: dict[str, int] = {}
    for placement in placements:
        try:
            obj = extract_object_value(placement)
        except TargetError:
            continue
        wanted[obj] = wanted.get(obj, 0) + 1
        raw = placement.get("position")
        if not isinstance(raw, str):
            continue
        position = fold(raw, breaks="_-")
        taken = at.setdefault(position, [])
        room = 3 if free and position == "center" else 1
        if len(taken) == room:
            found.append(f"the {position} is given to both the {taken[-1]} and the {obj}")
        taken.append(obj)
    found += [
        shortage(o, n, available[o]) for o, n in wanted.items() if 0 < available.get(o, 0) < n
    ]
    return found


def shortage(obj: str, wanted: int, there: int) -> str:
    """Why a target that places `obj` `wanted` times cannot be: the cell has only `there`."""
    if there == 0:
        return f"the target needs the {obj}, which is not in the cell (and it has no supply)"
    if there == 1:
        return f"there is only one {obj}: it cannot be in {_count(wanted)} places at once"
    return (
        f"the target needs {_count(wanted)} {_plural(obj)}, and there are only "
        f"{_count(there)} in the cell"
    )


def _count(n: int) -> str:
    return {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}.get(n, str(n))


def _plural(obj: str) -> str:
    """ "green cubes" for "green cube" (the cell's names are "<colour> <type>")."""
    return obj if obj.endswith("s") else f"{obj}s"
