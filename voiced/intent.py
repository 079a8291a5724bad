"""The intent router's grammar-first special cases (seed 001): replay by id and "do that again".

Checked before any other interpretation: a replay loads an existing plan from the history
instead of parsing the words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voiced.rules.normalize import words

_RUN_TASK = re.compile(r"\b(?:run|replay|repeat) (?:task|run) ([0-9a-f]{8}(?:-[0-9a-f-]{1,28})?)\b")
_AGAIN = frozenset(
    {
        "do that again", "do it again", "again", "one more time", "repeat", "repeat that",
        "repeat the last one", "repeat the last task", "run the same", "same again",
        "do the same again", "run the latest task again", "do the last one again",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ReplayRequest:
    """A request to run an earlier plan again."""

    run_id: str | None
    """The (possibly shortened) run id named, or None for "the last completed one"."""


def replay_request(text: str) -> ReplayRequest | None:
    """The replay `text` asks for, if it asks for one."""
    lowered = text.lower()
    found = _RUN_TASK.search(lowered.replace(" - ", "-"))
    if found:
        return ReplayRequest(found.group(1))
    if " ".join(words(text)) in _AGAIN:
        return ReplayRequest(None)
    return None
