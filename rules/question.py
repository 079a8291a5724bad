"""Whether what was said is a question (answered from the cell, the scene and the history,
never acted on), by its words alone: the frames, the recogniser and the pipeline ask it."""

from __future__ import annotations

import re

from voiced.rules.normalize import normalize

QUESTION_START = re.compile(
    r"^(what|whats|where|wheres|which|who|how many|how much|show me|list|tell me|give me|"
    r"is there|are there|do you have|have you|did you|what about|and the)\b"
)


def is_question(text: str) -> bool:
    """Grammar-first classification: question words, or a trailing question mark on something
    that is not a polite request ("can you weld at 2?" is an action)."""
    said = normalize(text)
    if QUESTION_START.match(said):
        return True
    polite = re.match(r"^(can|could|would|will) you\b|^please\b", said)
    return text.rstrip().endswith("?") and polite is None
