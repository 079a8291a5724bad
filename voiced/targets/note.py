"""The note target: appends the submitted text, verbatim, to the notes store."""

from __future__ import annotations

import asyncio

import structlog

from voiced.notes import NoteStore
from voiced.targets.base import (
    DEFAULT_SOURCE,
    NOTE,
    TargetResult,
    failed,
    nothing_to_submit,
    os_reason,
    succeeded,
)

log = structlog.get_logger(__name__)

SAVED = "Note saved."
"""What the operator hears when the note is on disk."""


class NoteTarget:
    """Saves each submission as a note."""

    def __init__(self, store: NoteStore) -> None:
        self.store = store

    @property
    def name(self) -> str:
        return NOTE

    async def submit(
        self, text: str, correlation_id: str | None, *, source: str = DEFAULT_SOURCE
    ) -> TargetResult:
        empty = nothing_to_submit(text)
        if empty is not None:
            return empty
        return await save_note(self.store, text, source, correlation_id, SAVED)


async def save_note(
    store: NoteStore, text: str, source: str, correlation_id: str | None, message: str
) -> TargetResult:
    """Append a note off the event loop (fsync may take a while); OSError becomes a failure."""
    try:
        note = await asyncio.to_thread(store.append, text, source, correlation_id)
    except OSError as error:
        log.error("note not saved", path=str(store.path), error=str(error))
        return failed(
            f"Could not save the note in {store.path}: {os_reason(error)}.",
            path=str(store.path),
            error=str(error),
        )
    return succeeded(message, note_id=note.id, path=str(store.path))
