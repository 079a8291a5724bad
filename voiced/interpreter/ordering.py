"""Words that say in what order things go, not what they are (issue 16's phrasings).

Stack levels ("bread at the bottom, tomato on top"), the direction a list is read in ("from the
top down"), ranges of numbered positions ("positions one through three"), ordinals ("the first
position") and the words operators use to pace a list ("first bread, then cheese, tomato last").
The vocabulary adds them to every cell's phrase table; `levels.py` and `clauses.py` read them.
"""

from __future__ import annotations

from collections.abc import Mapping

LEVELS: Mapping[str, str] = {
    "bottom": "bottom", "at the bottom": "bottom", "on the bottom": "bottom",
    "at bottom": "bottom", "on bottom": "bottom", "the bottom": "bottom",
    "bottom layer": "bottom", "at the base": "bottom", "underneath": "below",
    "underneath it": "below", "below": "below", "below it": "below", "beneath": "below",
    "beneath it": "below", "under it": "below", "under that": "below", "top": "top",
    "on top": "top", "at the top": "top", "on the top": "top", "the top": "top",
    "top layer": "top", "above": "above", "above it": "above", "on top of it": "above",
    "on top of that": "above", "over it": "above", "middle": "middle",
}  # fmt: skip
"""Where in a stack an object goes. `below`/`above` are relative to what was said before;
`middle` is also a place in some cells and counts as a level only beside another level."""
LEVEL_RANK: Mapping[str, int] = {"bottom": 0, "below": 0, "middle": 1, "top": 2, "above": 2}

ORDERS: Mapping[str, str] = {
    "from the bottom up": "up", "from bottom up": "up", "bottom up": "up",
    "bottom to top": "up", "from bottom to top": "up", "from the bottom to the top": "up",
    "from the bottom": "up", "from the top down": "down", "from top down": "down",
    "top down": "down", "top to bottom": "down", "from top to bottom": "down",
    "from the top to the bottom": "down", "from the top": "down",
}  # fmt: skip
"""How a list of layers is read: `up` (the first said goes lowest) or `down`."""

RANGES = ("through", "thru", "till", "until", "down to")
"""Between two numbered positions: every position from the first to the last."""
RANGE_PREPOSITIONS = frozenset({"to", "up to"})
"""Prepositions that say a range between two positions ("weld 1 to 3"), not a destination."""

ORDINALS: Mapping[str, float] = {"first": 1.0, "second": 2.0, "third": 3.0, "fourth": 4.0}
"""The Nth position; anywhere else an ordinal only paces a list and means nothing."""

PACING = (
    "firstly", "to start", "start with", "to start with", "to begin", "to begin with",
    "begin with", "last", "lastly", "at the end", "finish with", "end with", "goes", "going",
)  # fmt: skip
"""Words that pace a list ("start with bread", "tomato last", "tomato goes on top"): fillers."""

COLLECTIVES = ("the lot", "all of it", "all of that", "everything", "all of them")
"""Words for everything just listed ("cheese then meat, the lot on the left")."""

ITEM_SYNONYMS: Mapping[str, str] = {
    "ham": "meat", "turkey": "meat", "salami": "meat", "beef": "meat", "chicken": "meat",
    "bacon": "meat", "toast": "bread", "salad": "lettuce",
}  # fmt: skip
"""What operators call an item in everyday words ("ham, then cheese"); used only where the cell
has the item. Kept beside the list words: the phrasings that need them are the same."""
