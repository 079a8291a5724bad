"""Counting questions ("how many slices of bread are left", "how many layers are on the left",
"how many cubes are on the table", "how many welds are done"), answered from the scene the
controller has confirmed.

The count is what is really there now (the tracked scene, corrected by the controller's
reports), not what will be there once the queue has run. When the two differ, the answer says
both, so the operator is never told a layer is on the stack before the arm has put it there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.rules.normalize import normalize

HOW_MANY = re.compile(r"^(?:and )?how (?:many|much)\b")
_ON_SITE = re.compile(r"\b(?:on|in|at)\b(?: the)? (?P<where>[a-z0-9 ]+?)(?: stack| zone| slot)?$")
_REMAINING = re.compile(r"\b(left|remaining|remain|in (?:the )?suppl(?:y|ies)|there)\b")
_ROUTINE_WORDS = {"weld": "tack_weld", "tack": "tack_weld", "inspection": "camera_inspection",
                  "image": "camera_inspection", "picture": "camera_inspection",
                  "photo": "camera_inspection"}  # fmt: skip
"""Spoken stems of the weld cell's routines (what "how many welds" counts)."""


@dataclass(frozen=True)
class Count:
    """One counting answer: the confirmed number, and the one once the arm is done."""

    now: int
    planned: int
    what: str
    """The counted things and where, spoken after the number ("slices of bread left")."""

    def sentence(self) -> str:
        said = f"{_number(self.now, self.what)}."
        if self.planned != self.now:
            said = f"{said[:-1]} now; {self.planned} once the arm has finished."
        return said[0].upper() + said[1:]


Counter = Callable[[Scene], int]


def count_question(cell: Cell, text: str, confirmed: Scene, planned: Scene) -> Count | None:
    """The count `text` asks for, or None when it is no counting question this cell answers."""
    said = normalize(text).removesuffix(" please")
    if not HOW_MANY.match(said):
        return None
    found = _routine_count(cell, said) or _site_count(cell, said) or _supply_count(cell, said)
    if found is None:
        return None
    counter, what = found
    return Count(counter(confirmed), counter(planned), what)


def _routine_count(cell: Cell, said: str) -> tuple[Counter, str] | None:
    """Routines run so far ("how many welds are done")."""
    for stem, routine in _ROUTINE_WORDS.items():
        if routine in cell.routines and re.search(rf"\b{stem}(?:s|es|ing|ings)?\b", said):
            return _runs_of(routine), f"{routine.replace('_', ' ')}s done"
    return None


def _runs_of(routine: str) -> Counter:
    return lambda scene: sum(run.routine == routine for run in scene.log)


def _site_count(cell: Cell, said: str) -> tuple[Counter, str] | None:
    """What stands on a named place ("on the left", "in B1", "on the table")."""
    found = _ON_SITE.search(said)
    kind = _kind_named(cell, said)
    noun = kind or _noun(cell, said)
    if found is None:
        if noun != "layers" or not cell.zones():
            return None

        def on_active(scene: Scene) -> int:
            return len(scene.stacks.get(scene.active_zone or "", ()))

        return on_active, "layers on the stack being built"
    where = found.group("where").strip()
    if where in ("table", "cell", "board", "bench"):
        sites = [name for name, site in cell.sites.items() if site.kind != "supply"]
        place = "on the table"
    else:
        site = _site_named(cell, where)
        if site is None:
            return None
        sites, place = [site], f"on {site.replace('_', ' ')}"

    def counter(scene: Scene) -> int:
        return sum(1 for s in sites for obj in scene.stacks.get(s, ()) if kind in (None, obj))

    return counter, f"{noun} {place}"


def _supply_count(cell: Cell, said: str) -> tuple[Counter, str] | None:
    """What is left of an item in its supply ("how many slices of bread are left")."""
    kind = _kind_named(cell, said)
    if kind is None or not _REMAINING.search(said):
        return None
    supply = cell.objects[kind].supply
    if supply is None:
        return None
    noun = f"slices of {kind}" if re.search(r"\bslices?\b", said) else kind
    return (lambda scene: len(scene.stacks.get(supply, ()))), f"{noun} left in the supply"


def _kind_named(cell: Cell, said: str) -> str | None:
    """The object kind `said` names ("bread", "red cube"), plural forms included."""
    for name in sorted(cell.objects, key=len, reverse=True):
        if re.search(rf"\b{re.escape(normalize(name))}(?:s|es)?\b", said):
            return name
    return None


def _site_named(cell: Cell, where: str) -> str | None:
    for alias, zone in cell.zone_aliases.items():
        if normalize(alias) == where:
            return zone
    for name in cell.sites:
        if normalize(name.replace("_", " ")) == where or name.lower() == where.replace(" ", ""):
            return name
    return None


_NOUNS = ("cubes", "blocks", "layers", "slices", "items", "ingredients", "objects")


def _noun(cell: Cell, said: str) -> str:
    """The word the operator counted in, else the cell's own."""
    for noun in _NOUNS:
        if re.search(rf"\b{noun[:-1]}s?\b", said):
            return noun
    return "layers" if cell.items() else "objects"


def _number(count: int, what: str) -> str:
    """ "1 layer on the left" / "3 layers on the left" / "no layers on the left"."""
    if count != 1:
        return f"{count} {what}" if count else f"no {what}"
    words = what.split()
    plural = next((i for i, word in enumerate(words) if word.endswith("s")), None)
    if plural is not None:
        words[plural] = words[plural][:-1]
    return "1 " + " ".join(words)
