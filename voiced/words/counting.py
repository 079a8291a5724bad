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
from voiced.words.review import place_said

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


@dataclass(frozen=True)
class NoSuchThing:
    """A count of something the cell does not have ("how many avocados are left")."""

    what: str
    """As the operator named it, in the singular."""

    def sentence(self) -> str:
        return f"There is no {self.what} in this cell."


Counter = Callable[[Scene], int]

_ASKED_TAIL = frozenset({"are", "is", "were", "was", "do", "does", "did", "have", "has", "can",
                         "will", "would", "left", "remaining", "remain", "on", "in", "at",
                         "there", "of"})  # fmt: skip
"""Words that end what is counted ("how many avocados ARE left")."""
_ASKED = re.compile(
    r"^(?:and )?how (?:many|much) (?:more )?(?:(?:slices|pieces|layers) of )?(?P<what>[a-z ]+?)"
    rf"(?: (?:{'|'.join(sorted(_ASKED_TAIL))})\b.*)?$"
)
_TOPICS = frozenset({"time", "thing", "them", "more", "position", "station", "place", "tool",
                     "routine", "command", "instruction", "weld", "seam", "stack", "zone", "site",
                     *(noun[:-1] for noun in ("cubes", "blocks", "layers", "slices", "items",
                                              "ingredients", "objects"))})  # fmt: skip
"""Head nouns after "how many" that count something other than objects."""
_COUNTED_AS_OBJECTS = frozenset({"cube", "block", "layer", "slice", "item", "ingredient", "object"})
"""Of those, the ones a colour or kind in front makes a count of objects ("yellow cubes")."""


def count_question(
    cell: Cell, text: str, confirmed: Scene, planned: Scene
) -> Count | NoSuchThing | None:
    """The count `text` asks for, or None when it is no counting question this cell answers."""
    said = normalize(text).removesuffix(" please")
    if not HOW_MANY.match(said):
        return None
    missing = _not_in_cell(cell, said)
    if missing is not None:
        return NoSuchThing(missing)
    found = _routine_count(cell, said) or _site_count(cell, said) or _supply_count(cell, said)
    if found is None:
        return None
    counter, what = found
    return Count(counter(confirmed), counter(planned), what)


def _not_in_cell(cell: Cell, said: str) -> str | None:
    """The object counted, in the singular, when the cell has none like it ("avocado", "yellow
    cube"); None when the question counts something else or something the cell has."""
    asked = _ASKED.match(said)
    if asked is None or not cell.objects or _kind_named(cell, said) is not None:
        return None
    what = singular(asked.group("what").strip())
    words = what.split()
    if not words or words[0] in _ASKED_TAIL:
        return None
    object_words = {word for name in cell.objects for word in normalize(name).split()}
    if words[-1] in _TOPICS and (words[-1] not in _COUNTED_AS_OBJECTS or len(words) == 1):
        return None
    other_names = {
        normalize(n.replace("_", " "))
        for n in (*cell.sites, *cell.tools, *cell.routines, *cell.poses)
    }
    if what in other_names or not object_words.isdisjoint(words[:-1]):
        return None  # a place or tool; or "red blocks" (a colour the cell has)
    return what


def singular(words: str) -> str:
    last = words.split()[-1]
    for ending, single in (("oes", "o"), ("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("s", "")):
        if last.endswith(ending) and not last.endswith("ss"):
            return words[: len(words) - len(last)] + last[: -len(ending)] + single
    return words


def plural(name: str) -> str:
    if name.endswith(("s", "x", "ch", "sh", "o")):
        return f"{name}es"
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return f"{name[:-1]}ies"
    return f"{name}s"


def _counted(cell: Cell, kind: str, said: str) -> str:
    """How a count of `kind` is spoken: in the operator's word, else in the cell's ("layers of
    tomato" where items are stacked in layers, "red cubes")."""
    if re.search(r"\bslices?\b", said):
        return f"slices of {kind}"
    if kind in cell.items() and cell.zones():
        return f"layers of {kind}"
    return plural(kind)


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
        spoken = where if any(normalize(a) == where for a in cell.zone_aliases) else None
        sites = [site]
        place = f"on the {spoken}" if spoken else f"on {place_said(cell, site)}"

    def counter(scene: Scene) -> int:
        return sum(1 for s in sites for obj in scene.stacks.get(s, ()) if kind in (None, obj))

    return counter, f"{_counted(cell, kind, said) if kind else noun} {place}"


def _supply_count(cell: Cell, said: str) -> tuple[Counter, str] | None:
    """What is left of an item in its supply ("how many slices of bread are left")."""
    kind = _kind_named(cell, said)
    if kind is None or not _REMAINING.search(said):
        return None
    supply = cell.objects[kind].supply
    noun = _counted(cell, kind, said)
    if supply is None:
        sites = [name for name, site in cell.sites.items() if site.kind != "supply"]

        def anywhere(scene: Scene) -> int:
            return sum(obj == kind for site in sites for obj in scene.stacks.get(site, ()))

        return anywhere, f"{noun} in the cell"
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
    return _noun_said(said) or ("layers" if cell.items() else "objects")


def _noun_said(said: str) -> str | None:
    """The counting word the operator used ("cubes", "layers"), if any."""
    return next((n for n in _NOUNS if re.search(rf"\b{n[:-1]}s?\b", said)), None)


def _number(count: int, what: str) -> str:
    """ "1 layer on the left" / "3 layers on the left" / "no layers on the left"."""
    if count != 1:
        return f"{count} {what}" if count else f"no {what}"
    words = what.split()
    counted = next((i for i, word in enumerate(words) if word.endswith("s")), None)
    if counted is not None:
        words[counted] = words[counted][:-1]
    return "1 " + " ".join(words)
