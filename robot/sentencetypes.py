"""A cell's sentence templates as data: what `robot.sentences` reads from the cell file and
`voiced.interpreter.templates` matches utterances against (docs/CELLS.md)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from voiced.errors import Problem

SlotValue = str | float
"""A slot's value as a composite parameter takes it: a cell name or a number."""


@dataclass(frozen=True)
class TemplateBlock:
    """Sentences that all mean one composite call."""

    intent: str
    """The composite the sentences call."""
    sentences: tuple[str, ...]
    """Templates in hassil syntax."""
    slots: Mapping[str, SlotValue] = field(default_factory=dict)
    """Parameters these sentences fix ("run a weld at {position}": routine = tack_weld)."""


@dataclass(frozen=True)
class TemplateList:
    """A list of the integrator's own: spoken words -> a value the cell knows."""

    values: tuple[tuple[str, SlotValue], ...] = ()
    """(words as said, value) pairs."""
    range: tuple[int, int, int] | None = None
    """(from, to, step) for a list of numbers."""


@dataclass(frozen=True)
class CellSentences:
    """A cell's sentence templates, checked against the cell."""

    source: str
    """The cell file they come from."""
    blocks: tuple[TemplateBlock, ...] = ()
    """Every block, in file order, with the sentences that are right (see `problems`)."""
    lists: Mapping[str, TemplateList] = field(default_factory=dict)
    expansion_rules: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    """What is wrong, each naming the file and line: a sentence with a problem is left out (a
    list value the cell does not know is left out of its list, a block with a wrong fixed slot
    value is left out whole); the rest is used."""
    closed: bool = False
    """The templates are every command the cell takes (`[sentences] closed`): recognition may
    hold its decoding to them."""

    def sentences(self) -> Iterator[str]:
        for block in self.blocks:
            yield from block.sentences


NO_SENTENCES = CellSentences(source="")
"""A cell without templates."""
