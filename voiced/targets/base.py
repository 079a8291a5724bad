"""What every dispatch target is: the `SubmitTarget` protocol and the `TargetResult` it returns.

A target takes the text a frame accumulated and puts it somewhere: a note, the deferred queue, a
task list, a local model. A failure the operator can cause or the world can (a server down, a
disk full) is a `TargetResult` with ok=False and a short, speakable message naming what failed
and where; only programming errors raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

NOTE = "note"
"""Appends the text to the notes store."""
QUEUE = "queue"
"""Saves the text in the deferred queue, for `voiced queue run`."""
TASK_API = "task_api"
"""POSTs the text to the task list."""
LOCAL_MODEL = "local_model"
"""Has a local language model tidy the text up, and saves both as notes."""
DEFAULT_SOURCE = "voiced"
"""The `source` a submission records when the caller does not name the frame it came from."""


ASKS_FOR_MORE = "asks_for_more"
"""A robot command's `TargetResult.detail` key: refused with a question for what it left out
("Put what?"), so the operator's next words may answer it."""


@dataclass(frozen=True)
class TargetResult:
    """What became of one submission."""

    ok: bool
    """True when the text is where the target puts it (saved, queued, accepted by the server)."""
    message: str
    """What to tell the operator: one short sentence that can be spoken."""
    detail: Mapping[str, Any] = field(default_factory=dict)
    """Plain JSON-able data for the event log (paths, ids, URL, HTTP status, attempts)."""


class SubmitTarget(Protocol):
    """A place submitted text can go."""

    @property
    def name(self) -> str:
        """The target's name as the configuration spells it ("note", "task_api", ...)."""
        ...

    async def submit(
        self, text: str, correlation_id: str | None, *, source: str = DEFAULT_SOURCE
    ) -> TargetResult:
        """Put `text` where this target puts it.

        `source` names the frame that submitted it ("query", "dictation"); targets that store
        text keep it. Never raises for expected failures (see the module docstring).
        """
        ...


def failed(message: str, **detail: Any) -> TargetResult:
    """A failed submission with its operator message and detail."""
    return TargetResult(False, message, dict(detail))


def succeeded(message: str, **detail: Any) -> TargetResult:
    """A successful submission with its operator message and detail."""
    return TargetResult(True, message, dict(detail))


def os_reason(error: OSError) -> str:
    """An OSError as a short phrase ("No space left on device"), without the errno noise."""
    return error.strerror or str(error) or type(error).__name__


def nothing_to_submit(text: str) -> TargetResult | None:
    """The result for text with no words in it (nothing is stored or sent), else None."""
    return None if text.strip() else failed("There was nothing to save.")
