"""Arrangement commands (seed 004): speech -> a validated target_structure for the planner.

Two kinds of command. A *structure* replaces the whole arrangement: "build a tower: red, green,
blue" (listed bottom to top), "make a pyramid with green and red on the bottom and blue on top",
"line them up red green blue" (left to right; "front to back" for a row away from the operator).
A *placement* changes the current arrangement and keeps the rest: "stack the blue cube on the
red cube", "put red on the left and green on the right", "put the blue cube in front of the
green one". Where a placement displaces an object ("put red on the left" with green there), the
displaced object comes off the arrangement, and the meaning says so. The result is checked by
`validate_target_structure_payload`; the planner (voiced.robot.rearrange) finds the moves.

`parse_arrangement` returns None quickly for anything else (no arrangement area in the cell, or
no arrangement words), so the grammar can go first or second. Failures are the grammar's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from voiced.interpreter.grammar import ErrorType, Failure, Fallback
from voiced.interpreter.vocabulary import COLOUR_NOUNS, HEARD_AS
from voiced.robot.arrangement import ARRANGEMENT_SITES
from voiced.robot.cell import Cell
from voiced.robot.rearrange.targets import TargetError, structure_from_stacks
from voiced.robot.rearrange.targets import validate_target_structure_payload as validate
from voiced.robot.scene import Scene

STRUCTURES = {"pyramid": "pyramid", "tower": "tower", "row": "row", "line": "row"}
"""Words that name a whole structure."""
NOUNS = frozenset({*COLOUR_NOUNS, "one", "ones", "piece", "brick"})
"""Words that may follow a colour: "the red cube", "the green one"."""
COLOURS = frozenset({"red", "green", "blue", "yellow", "orange", "purple", "pink", "white",
                     "black", "brown", "grey", "gray", "violet", "cyan", "magenta"})  # fmt: skip
"""Colour words: one the cell has no cube of is an unknown object, not a filler."""
PLACES = {"left": "left", "right": "right", "middle": "center", "center": "center",
          "centre": "center", "front": "front", "back": "back", "top": "top"}  # fmt: skip
"""Placement words -> site (`top`: on top of the stack)."""
PREPOSITIONS = frozenset({"on", "to", "at", "in", "onto", "into"})
ROLE_WORDS = {"bottom": "bottom", "base": "bottom", "middle": "middle", "center": "middle",
              "top": "top", "left": "left", "right": "right", "underneath": "bottom",
              "below": "bottom", "beneath": "bottom"}  # fmt: skip
RELATIONS = {"on top of": "on", "on": "on", "onto": "on", "atop": "on", "under": "under",
             "below": "under", "underneath": "under", "beneath": "under", "behind": "behind",
             "in front of": "front_of", "front of": "front_of", "in back of": "behind",
             "left of": "left_of", "right of": "right_of", "next to": "beside",
             "beside": "beside"}  # fmt: skip
"""Relational phrases; each must be followed by an object ("on the red cube")."""
_SPLIT = re.compile(r"[^a-z0-9,;:]+")
_PUNCT = re.compile(r"([,;:])")
DOWNWARD = ("from top to bottom", "top to bottom", "from the top", "top down")
"""A tower listed from its top."""
UPWARD = ("from the bottom up", "from bottom to top", "bottom to top", "from the bottom",
          "bottom up")  # fmt: skip
"""A tower listed from its bottom, as towers are anyway (the words are not level markers)."""
LEVELS = frozenset({"bottom", "top", "underneath", "below", "beneath", "base"})
"""Level words: with two cubes or more named, the command describes a tower."""
BUILDING = frozenset({"build", "make", "stack", "pile", "assemble"})
"""Verbs that, with cubes listed and no relation, build a tower of them."""
COLLECTIVE = frozenset({"all", "both", "everything", "lot"})
"""A list's one destination ("red, then green, all in the center": a tower there)."""
_SEPARATORS = frozenset({",", ";", ":", "then"})


@dataclass(frozen=True)
class ArrangementParse:
    """What an arrangement command means."""

    target: dict[str, Any] | None
    """The seed's target_structure (new format), validated; None on failure."""
    failure: Failure | None = None
    """Why not (the grammar's structured failure)."""
    meaning: str = ""
    """One sentence: the arrangement understood, and what comes off to make room."""
    notes: tuple[str, ...] = field(default=())
    """Objects displaced by a placement ("the green cube comes off the left")."""


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    obj: str | None = None
    """The object this word (with its noun) names."""
    unknown: str | None = None
    """An object-like phrase the cell has no object for ("pink cube")."""


class _Fail(Exception):
    def __init__(
        self,
        kind: ErrorType,
        token: str,
        message: str,
        suggestion: str,
        fallback: Fallback = "none",
    ) -> None:
        super().__init__(message)
        self.kind, self.token, self.message = kind, token, message
        self.suggestion, self.fallback = suggestion, fallback


def _lex(text: str, cell: Cell) -> tuple[str, list[_Word]]:
    """Normalised text, and its words with object mentions merged ("the red cube" -> one)."""
    names = {tuple(n.split()[:-1]): n for n in cell.objects if len(n.split()) > 1}
    spaced = _PUNCT.sub(r" \1 ", _SPLIT.sub(" ", text.lower()))
    raw = [HEARD_AS.get(w, w) for w in spaced.split()]
    starts = [sum(len(w) + 1 for w in raw[:i]) for i in range(len(raw))]
    words: list[_Word] = []
    i = 0
    while i < len(raw):
        size = next((k for k in (2, 1) if tuple(raw[i : i + k]) in names), 0)
        obj = names.get(tuple(raw[i : i + size])) if size else None
        size = size or int(raw[i] in COLOURS)
        if size:
            size += i + size < len(raw) and raw[i + size] in NOUNS
            phrase = " ".join(raw[i : i + size])
            words.append(_Word(phrase, starts[i], obj, None if obj else phrase))
        else:
            words.append(_Word(raw[i], starts[i]))
        i += size or 1
    return " ".join(raw), words


def _kind(words: Sequence[_Word]) -> str | None:
    """structure name, "place" or None (not an arrangement command)."""
    texts = [w.text for w in words]
    for word, name in STRUCTURES.items():
        if word in texts and (word != "line" or "up" in texts or "them" in texts):
            return name
    mentions = [w for w in words if w.obj or w.unknown]
    if "arrange" in texts:
        return "place" if mentions else "vague"
    if set(texts) & {"stack", "pile"} and not mentions:
        return "tower" if set(texts) & {"them", "cubes", "blocks", "everything"} else None
    if not mentions:
        return None
    if len(mentions) >= 2 and not _relations(words) and _describes_tower(texts):
        return "tower"
    if set(texts) & {"stack", "pile"}:
        return "place" if _relations(words) else "tower"
    return "place" if _relations(words) or _places(words) else None


def _describes_tower(texts: list[str]) -> bool:
    """Two cubes or more, and level words ("red at the bottom, blue on top"), a building verb
    ("build red green blue") or one destination for all of them in the center."""
    central = any(PLACES.get(t) == "center" for t in texts)
    return bool(LEVELS.intersection(texts) or BUILDING.intersection(texts)
                or (central and COLLECTIVE.intersection(texts)))  # fmt: skip


def _relations(words: Sequence[_Word]) -> list[tuple[int, str]]:
    """(index, relation) for each relational phrase followed by [the] object."""
    texts = [w.text for w in words]
    out = []
    for i in range(len(words)):
        for phrase, relation in RELATIONS.items():
            size = len(phrase.split())
            if texts[i : i + size] == phrase.split():
                j = i + size + (texts[i + size : i + size + 1] == ["the"])
                if j < len(words) and (words[j].obj or words[j].unknown):
                    out.append((i, relation))
                    break
    return out


def _places(words: Sequence[_Word]) -> list[tuple[int, str]]:
    """(index, site) for each "on the left" / "to the back" / "on top" not followed by "of"."""
    out = []
    texts = [w.text for w in words]
    for i, word in enumerate(texts):
        if word not in PLACES or (i + 1 < len(texts) and texts[i + 1] == "of"):
            continue
        before = texts[max(0, i - 2) : i]
        if any(p in PREPOSITIONS for p in before):
            out.append((i, PLACES[word]))
    return out


def parse_arrangement(text: str, cell: Cell, scene: Scene) -> ArrangementParse | None:
    """The target an arrangement command describes, a structured failure, or None when `text`
    is not an arrangement command (or the cell has no arrangement area)."""
    if any(site not in cell.sites for site in ARRANGEMENT_SITES):
        return None
    said, words = _lex(text, cell)
    kind = _kind(words)
    if kind is None:
        return None
    try:
        _check_objects(cell, scene, words)
        current = {s: list(scene.stacks.get(s, ())) for s in ARRANGEMENT_SITES}
        stacks, notes = _build(kind, words, current, scene, cell)
        structure = validate(structure_from_stacks(stacks).to_dict())
    except _Fail as fail:
        at = max(0, said.find(fail.token), said.find(fail.token.split()[0]))
        error = Failure(
            fail.kind, fail.token, at, fail.message, fail.suggestion, said, fail.fallback
        )
        return ArrangementParse(None, error, f"Could not arrange: {said}")
    except TargetError as error:  # a layout the cell cannot hold
        failure = Failure("semantic_failure", said, 0, str(error), "Say it another way", said)
        return ArrangementParse(None, failure, f"Could not arrange: {said}")
    shown = ", ".join(f"{p.position} {p.object}" if p.position else p.object
                      for p in structure.placements) or "nothing"  # fmt: skip
    meaning = f"Arrange {structure.relationship.replace('_', ' ')}: {shown}"
    meaning += "".join(f"; {n}" for n in notes)
    return ArrangementParse(structure.to_dict(), None, meaning, tuple(notes))


def _present(cell: Cell, scene: Scene) -> list[str]:
    on_sites = {o for objs in scene.stacks.values() for o in objs}
    return [o for o in cell.objects if o in on_sites or o == scene.holding]


def _check_objects(cell: Cell, scene: Scene, words: Sequence[_Word]) -> None:
    here = _present(cell, scene)
    for word in words:
        if word.unknown is not None:
            name = word.unknown if word.unknown.split()[-1] in NOUNS else f"{word.unknown} cube"
            raise _Fail("semantic_failure", word.text, f"I don't have a {name}",
                        f"available cubes are: {', '.join(here)}")  # fmt: skip
        if word.obj is not None and word.obj not in here:
            raise _Fail("semantic_failure", word.text, f"The {word.obj} is not in the cell",
                        f"cubes here: {', '.join(here)}")  # fmt: skip


def _objects(words: Sequence[_Word]) -> list[str]:
    return [w.obj for w in words if w.obj]


def _build(
    kind: str, words: list[_Word], current: dict[str, list[str]], scene: Scene, cell: Cell
) -> tuple[dict[str, list[str]], list[str]]:
    if kind == "place":
        return _placements(words, current)
    if kind == "vague":
        raise _Fail("syntax_error", " ".join(w.text for w in words), "Which arrangement?",
                    "Say: build a tower red, green, blue", "interpret")  # fmt: skip
    named = _objects(words)
    if len(set(named)) != len(named):
        twice = next(o for o in named if named.count(o) > 1)
        raise _Fail("semantic_failure", twice, f"The {twice} is named twice", "Name each cube once")
    stacks: dict[str, list[str]] = {s: [] for s in ARRANGEMENT_SITES}
    if kind == "pyramid":
        left, right, top = _pyramid(words, _present(cell, scene))
        stacks.update(pyramid_left=[left], pyramid_right=[right], pyramid_top=[top])
    elif kind == "row":
        _row(words, named, stacks)
    else:
        stacks["center"] = _tower(words, named)
    gone = [
        o for objs in current.values() for o in objs if not any(o in s for s in stacks.values())
    ]
    return stacks, [f"the {o} comes off the arrangement" for o in gone]


def _roles(words: Sequence[_Word]) -> tuple[dict[str, list[str]], list[str]]:
    """Objects by role word ("green and red on the bottom", "top: blue"), and the unmarked. A
    role word after objects marks those said since the last comma or "then" ("red at the
    bottom, then green, then blue on top": only blue is on top). "center" and "middle" are
    levels only beside "bottom" or "top"; otherwise they say where the structure goes."""
    texts = {w.text for w in words}
    levels = bool(texts & {"bottom", "top", "base", "underneath", "below", "beneath"})
    roles: dict[str, list[str]] = {}
    unmarked: list[str] = []
    group: list[str] = []
    prefix: str | None = None
    for i, word in enumerate(words):
        if word.obj is not None:
            (roles.setdefault(prefix, []) if prefix else group).append(word.obj)
        elif word.text in ROLE_WORDS and (levels or ROLE_WORDS[word.text] != "middle"):
            role = ROLE_WORDS[word.text]
            if role in ("left", "right") and i and words[i - 1].text == "bottom":
                roles.pop("bottom", None)
            if group:
                roles.setdefault(role, []).extend(group)
                group, prefix = [], None
            elif not (word.text == "center" and prefix):
                prefix = role
        elif word.text in _SEPARATORS:
            unmarked, group, prefix = unmarked + group, [], None
    return roles, unmarked + group


def _pyramid(words: Sequence[_Word], present: Sequence[str]) -> tuple[str, str, str]:
    roles, rest = _roles(words)
    bottom = roles.get("left", []) + roles.get("bottom", []) + roles.get("right", [])
    top = roles.get("top", [])
    for obj in rest:  # unmarked: the bottom fills first ("a pyramid: green, red, blue")
        (bottom if len(bottom) < 2 else top).append(obj)
    spare = [o for o in present if o not in bottom + top]
    if not top and len(bottom) == 2 and len(spare) == 1:
        top = spare
    if not bottom and len(top) == 1 and len(spare) == 2:
        bottom = spare
    if len(bottom) != 2 or len(top) != 1:
        raise _Fail("syntax_error", "pyramid",
                    "A pyramid needs two cubes at the bottom and one on top",
                    "Say: make a pyramid with green and red on the bottom and blue on top",
                    "interpret")  # fmt: skip
    return bottom[0], bottom[1], top[0]


def _tower(words: Sequence[_Word], named: list[str]) -> list[str]:
    texts = " ".join(w.text for w in words)
    downward = next((d for d in DOWNWARD if d in texts), None)
    direction = downward or next((u for u in UPWARD if u in texts), None)
    if direction is not None:  # the direction's own words are not level markers
        start = len(texts[: texts.index(direction)].split())
        words = [*words[:start], *words[start + len(direction.split()) :]]
    roles, rest = _roles(words)
    rest = rest[::-1] if downward else rest
    if not 2 <= len(named) <= 3:
        raise _Fail("semantic_failure", texts, "A tower here holds two or three cubes",
                    "Say: build a tower red, green, blue",
                    "none" if named else "interpret")  # fmt: skip
    levels: list[str | None] = [None] * len(named)
    for role, index in (("bottom", 0), ("middle", 1), ("top", len(named) - 1)):
        for obj in roles.get(role, [])[:1]:
            levels[index] = obj
    fill = iter(o for o in rest + [o for r in roles.values() for o in r] if o not in levels)
    return [lvl if lvl is not None else next(fill) for lvl in levels]


def _row(words: Sequence[_Word], named: list[str], stacks: dict[str, list[str]]) -> None:
    texts = " ".join(w.text for w in words)
    deep = "front to back" in texts or "back to front" in texts or "away from" in texts
    order = named[::-1] if "right to left" in texts or "back to front" in texts else named
    if not 2 <= len(order) <= 3:
        raise _Fail("semantic_failure", texts, "A row here holds two or three cubes",
                    "Say: line them up red green blue",
                    "none" if named else "interpret")  # fmt: skip
    sites = ("front", "center", "back") if deep else ("left", "center", "right")
    chosen = sites if len(order) == 3 else (sites[0], sites[2])
    for site, obj in zip(chosen, order, strict=True):
        stacks[site] = [obj]


def _placements(
    words: list[_Word], stacks: dict[str, list[str]]
) -> tuple[dict[str, list[str]], list[str]]:
    notes: list[str] = []
    for clause in _clauses(words):
        _place_clause(clause, stacks, notes)
    if stacks["pyramid_top"] and not (stacks["pyramid_left"] and stacks["pyramid_right"]):
        notes.append(f"the {stacks['pyramid_top'][0]} comes off the pyramid")
        stacks["pyramid_top"] = []
    return stacks, notes


def _clauses(words: list[_Word]) -> list[list[_Word]]:
    """Split at "and" / "then" / commas; a part with no place joins the next one."""
    parts: list[list[_Word]] = [[]]
    for word in words:
        if word.text in ("and", "then", ",", ";"):
            parts.append([])
        else:
            parts[-1].append(word)
    out: list[list[_Word]] = []
    carry: list[_Word] = []
    for part in parts:
        if _relations(part) or _places(part):
            out.append(carry + part)
            carry = []
        else:
            carry += part
    if carry and out:
        out[-1] += carry
    return out


def _place_clause(clause: list[_Word], stacks: dict[str, list[str]], notes: list[str]) -> None:
    relations, places = _relations(clause), _places(clause)
    index, what = min(relations + places)
    before = [w.obj for w in clause[:index] if w.obj]
    after = [w.obj for w in clause[index + 1 :] if w.obj]
    if (index, what) in relations:
        movers, reference = before, after[0]
    else:
        movers, reference = before or after, None
    if len(movers) != 1:
        extra = [w.text for w in clause if w.obj == movers[-1]] if movers else []
        said = extra[-1] if len(movers) > 1 else clause[index].text
        raise _Fail("syntax_error", said,
                    "Which cube goes there?" if not movers else "One cube per place, please",
                    "Say: put the red cube on the left",
                    "interpret" if not movers else "none")  # fmt: skip
    mover = movers[0]
    if reference is None:
        _put(mover, what, stacks, notes)
    elif mover == reference:
        raise _Fail("semantic_failure", mover,
                    f"The {mover} cannot go {what.replace('_', ' ')} itself",
                    "Name two different cubes")  # fmt: skip
    else:
        _relate(what, mover, reference, stacks, notes)


def _site_of(stacks: dict[str, list[str]], obj: str) -> str | None:
    return next((site for site, objs in stacks.items() if obj in objs), None)


def _take(stacks: dict[str, list[str]], obj: str) -> None:
    for objs in stacks.values():
        if obj in objs:
            objs.remove(obj)


def _clear(stacks: dict[str, list[str]], site: str, notes: list[str]) -> None:
    notes += [f"the {o} comes off the {site}" for o in stacks[site]]
    stacks[site] = []


def _put(obj: str, site: str, stacks: dict[str, list[str]], notes: list[str]) -> None:
    _take(stacks, obj)
    if site == "top":
        stacks["center"].append(obj)
        _check_height(stacks)
        return
    _clear(stacks, site, notes)
    stacks[site] = [obj]


def _check_height(stacks: dict[str, list[str]]) -> None:
    if len(stacks["center"]) > 3:
        raise _Fail("semantic_failure", stacks["center"][-1],
                    "The stack holds at most three cubes",
                    "Take one off first, or build a new tower")  # fmt: skip


_SIDES = {
    "front_of": ("front", "back", ("center", "back")),
    "behind": ("back", "front", ("center", "front")),
    "left_of": ("left", "right", ("center", "right")),
    "right_of": ("right", "left", ("center", "left")),
}
"""Relation -> (site for the mover, site for the reference if it must move, reference sites
from which the mover's site already is on the right side: the cell's rows cross at center)."""


def _relate(rel: str, x: str, y: str, stacks: dict[str, list[str]], notes: list[str]) -> None:
    if rel == "beside":
        raise _Fail("syntax_error", y, f"Left or right of the {y}?",
                    f"Say: put the {x} to the left of the {y}")  # fmt: skip
    if rel in _SIDES:
        mine, theirs, fine = _SIDES[rel]
        if _site_of(stacks, y) not in fine:
            _put(y, theirs, stacks, notes)
        _put(x, mine, stacks, notes)
        return
    _take(stacks, x)
    center = stacks["center"]
    if _site_of(stacks, y) == "center":
        at = center.index(y)
        if rel == "on":
            notes += [f"the {o} comes off the stack" for o in center[at + 1 :]]
            stacks["center"] = [*center[: at + 1], x]
        else:
            stacks["center"] = [*center[:at], x, *center[at:]]
    else:
        _take(stacks, y)
        _clear(stacks, "center", notes)
        stacks["center"] = [y, x] if rel == "on" else [x, y]
    _check_height(stacks)
