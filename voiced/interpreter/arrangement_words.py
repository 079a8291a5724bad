"""The words of arrangement commands: the vocabulary, lexing ("the red cube" is one word) and
what kind of command the words make. voiced.interpreter.arrangement reads structures with them,
voiced.interpreter.placing placements."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from voiced.interpreter.grammar import ErrorType, Fallback
from voiced.interpreter.vocabulary import COLOUR_NOUNS, HEARD_AS
from voiced.robot.cell import Cell

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
SEPARATORS = frozenset({",", ";", ":", "then"})


@dataclass(frozen=True)
class Word:
    """A word of the command, or an object mention ("the red cube") merged into one."""

    text: str
    start: int
    obj: str | None = None
    """The object this word (with its noun) names."""
    unknown: str | None = None
    """An object-like phrase the cell has no object for ("pink cube")."""


class Refusal(Exception):
    """Why an arrangement command cannot be read: becomes the grammar's Failure."""

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


def lex(text: str, cell: Cell) -> tuple[str, list[Word]]:
    """Normalised text, and its words with object mentions merged ("the red cube" -> one)."""
    names = {tuple(n.split()[:-1]): n for n in cell.objects if len(n.split()) > 1}
    spaced = _PUNCT.sub(r" \1 ", _SPLIT.sub(" ", text.lower()))
    raw = [HEARD_AS.get(w, w) for w in spaced.split()]
    starts = [sum(len(w) + 1 for w in raw[:i]) for i in range(len(raw))]
    words: list[Word] = []
    i = 0
    while i < len(raw):
        size = next((k for k in (2, 1) if tuple(raw[i : i + k]) in names), 0)
        obj = names.get(tuple(raw[i : i + size])) if size else None
        size = size or int(raw[i] in COLOURS)
        if size:
            size += i + size < len(raw) and raw[i + size] in NOUNS
            phrase = " ".join(raw[i : i + size])
            words.append(Word(phrase, starts[i], obj, None if obj else phrase))
        else:
            words.append(Word(raw[i], starts[i]))
        i += size or 1
    return " ".join(raw), words


def command_kind(words: Sequence[Word]) -> str | None:
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
    if len(mentions) >= 2 and not find_relations(words) and _describes_tower(texts):
        return "tower"
    if set(texts) & {"stack", "pile"}:
        return "place" if find_relations(words) else "tower"
    return "place" if find_relations(words) or find_places(words) else None


def _describes_tower(texts: list[str]) -> bool:
    """Two cubes or more, and level words ("red at the bottom, blue on top"), a building verb
    ("build red green blue") or one destination for all of them in the center."""
    central = any(PLACES.get(t) == "center" for t in texts)
    return bool(LEVELS.intersection(texts) or BUILDING.intersection(texts)
                or (central and COLLECTIVE.intersection(texts)))  # fmt: skip


def find_relations(words: Sequence[Word]) -> list[tuple[int, str]]:
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


def find_places(words: Sequence[Word]) -> list[tuple[int, str]]:
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
