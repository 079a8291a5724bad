"""Example commands for help ("what can I say"), from the cell that is loaded.

The examples must be commands this cell understands: built from its own names first (the
grammar's examples), then its sentence templates, then its packaged phrases, so an
integrator's own cell gets examples of its own too.
"""

from __future__ import annotations

from voiced.interpreter.grammar import Grammar
from voiced.interpreter.phrasebank import PhraseBank
from voiced.interpreter.semantic import examples
from voiced.interpreter.templates import Templates
from voiced.robot.cell import Cell

HELP_EXAMPLES = 2
"""Two are enough to show the shape of a command; more is a lecture."""


def help_examples(cell: Cell, count: int = HELP_EXAMPLES) -> tuple[str, ...]:
    """Up to `count` commands the cell understands, most typical first."""
    found = list(examples(cell))
    if len(found) < count:
        found += Templates(cell, Grammar(cell).vocabulary).examples()
    if len(found) < count:
        found += PhraseBank.packaged(cell).phrases()
    return tuple(dict.fromkeys(found))[:count]
