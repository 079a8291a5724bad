"""The words a cell understands, built from the live cell: items, zones, positions, tools, verbs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from robot.cell import Cell
from rules.normalize import normalize

_POSITION_NUMBER = re.compile(r"^([A-Za-z]+)_(\d+)$")


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("o"):
        return word + "es"
    return word + "s"


@dataclass(frozen=True)
class Vocabulary:
    """Spoken forms -> cell names. Keys are normalised phrases ("tomatoes", "position 1")."""

    items: dict[str, str]
    zones: dict[str, str]
    positions: dict[str, str]
    tools: dict[str, str]
    composites: frozenset[str]

    @classmethod
    def from_cell(cls, cell: Cell) -> Vocabulary:
        items: dict[str, str] = {}
        for name in cell.objects:
            spoken = normalize(name)
            items[spoken] = name
            items[_plural(spoken)] = name
        zones = {normalize(z): z for z in cell.zones()}
        zones.update({normalize(z.replace("_", " ")): z for z in cell.zones()})
        zones.update({normalize(word): z for word, z in cell.zone_aliases.items()})
        positions: dict[str, str] = {}
        for name in cell.poses:
            positions[normalize(name.replace("_", " "))] = name
            found = _POSITION_NUMBER.match(name)
            if found and found.group(1).lower() == "pos":
                positions[f"position {found.group(2)}"] = name
        tools = {normalize(t): t for t in cell.tools}
        return cls(items, zones, positions, tools, frozenset(cell.composites))

    def longest(self, table: dict[str, str], tokens: list[str], start: int) -> tuple[str, int]:
        """The longest phrase of `table` starting at tokens[start]: (cell name, words used)."""
        for size in range(min(4, len(tokens) - start), 0, -1):
            phrase = " ".join(tokens[start : start + size])
            if phrase in table:
                return table[phrase], size
        return "", 0
