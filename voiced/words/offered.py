"""What the cell has to offer, asked for by name: "do you have oat milk?", "what drinks do you
have?". Answered from the cell's own lists (its sentence templates' lists of words, and its
objects), never from what a model might guess.

A customer who asks whether there is something before ordering it must hear a plain yes or
no: "I don't know the word 'have decaf'" leaves them guessing whether the cell misheard.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hassil.parse_expression import parse_sentence
from hassil.sample import sample_expression

from voiced.interpreter.vocabulary import spoken
from voiced.robot.cell import Cell
from voiced.rules.normalize import normalize
from voiced.words.counting import plural, singular

HAVE = re.compile(
    r"^(?:and )?(?:do you (?:have|sell|make|serve|carry|stock)|have you got)"
    r"(?: any| some| an| a| the)?\b(?P<what>.*?)(?: (?:please|here|today|now|left))*$"
)
"""A question whether the cell has a thing ("do you have any oat milk here?")."""


@dataclass(frozen=True)
class Kind:
    """Things of one kind the cell offers."""

    noun: str
    """Plural, one word ("drinks", "milks", "ingredients")."""
    names: tuple[str, ...]
    """Each as spoken, in the cell file's order."""
    forms: tuple[frozenset[str], ...]
    """Every way each name may be said (normalised; "8 ounce" and "eight ounce")."""

    def named(self, what: str) -> str | None:
        """The name `what` is (in the singular or the plural), if it is one of these."""
        said = {what, singular(what)}
        return next(
            (n for n, forms in zip(self.names, self.forms, strict=True) if forms & said), None
        )

    def ending_in(self, noun: str) -> tuple[str, ...]:
        """The names of several words that end in `noun` ("cup": "small cup", ...)."""
        return tuple(n for n in self.names if " " in n and n.split()[-1] == singular(noun))


def kinds(cell: Cell) -> tuple[Kind, ...]:
    """The cell's lists of words for things (not amounts or numbers), then its objects."""
    found: list[Kind] = []
    for list_name, spec in cell.sentences.lists.items():
        things = [(said, value) for said, value in spec.values if isinstance(value, str)]
        if spec.range is not None or not things:
            continue
        names = tuple(spoken(_first_way(said)) for said, _ in things)
        forms = tuple(frozenset(_said(way) for way in _ways(said)) for said, _ in things)
        noun = list_name.split("_")[-1]
        found.append(Kind(noun if noun.endswith("s") else plural(noun), names, forms))
    for noun, named in (("ingredients" if cell.items() else "objects", cell.objects),
                        ("tools", cell.tools)):  # fmt: skip
        names = tuple(spoken(name) for name in named)
        if names:
            found.append(Kind(noun, names, tuple(frozenset({_said(n)}) for n in names)))
    return tuple(found)


def _said(name: str) -> str:
    """A name as it is asked for: normalised, without "the" ("the second seam")."""
    return normalize(name).removeprefix("the ")


def head_nouns(cell: Cell) -> frozenset[str]:
    """The last words of the names of several words ("milk" of "soy milk", "cup" of "small
    cup"): what the thing is, the words before it which one."""
    return frozenset(n.split()[-1] for kind in kinds(cell) for n in kind.names if " " in n)


def asked_for(said: str) -> str | None:
    """What "do you have X?" asks for (X, normalised), or None when `said` asks no such thing."""
    asked = HAVE.match(said)
    what = asked.group("what").strip() if asked is not None else ""
    return what or None


def kind_named(every: Sequence[Kind], said: str) -> Kind | None:
    """The kind `said` names by its noun ("what drinks do you have", "which milks")."""
    words = set(said.split())
    return next((k for k in every if k.noun in words or singular(k.noun) in words), None)


def _ways(template: str) -> list[str]:
    """Every way a list value's words may be said ("(eight|8) ounce": two), by hassil, which
    reads the templates."""
    sentence = parse_sentence(template)
    return [" ".join(way.split()) for way in sample_expression(sentence.expression)]


def _first_way(template: str) -> str:
    return _ways(template)[0]
