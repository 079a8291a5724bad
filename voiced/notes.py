"""The notes store: dictated and saved text, one JSON object per line in `notes/notes.jsonl`.

A note is appended with a single write of one whole line through O_APPEND, then fsynced, so a
saved note survives kill -9 and a power cut, and appends from several processes never interleave.
A crash in the middle of a write (or a disk filling up) can still leave a partial last line: the
reader skips any unreadable line with a warning, and the next append first ends such a line so
that it cannot swallow the note written after it. Text is kept verbatim: dictation means exactly
what was said, "zero zero zero" and command words included.
"""

from __future__ import annotations

import builtins
import json
import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from voiced.paths import DATA_DIR_MODE, NEW_FILE_MODE, fsync_directory

log = structlog.get_logger(__name__)

NOTES_FILE = "notes.jsonl"
"""The file inside the notes directory (`DataDir.notes`)."""


@dataclass(frozen=True)
class Note:
    """One saved note."""

    id: str
    """8 hex digits, random, stored with the note (so it stays valid whatever else is read)."""
    t: str
    """When it was saved: ISO 8601 in UTC, to the millisecond."""
    source: str
    """What saved it: the frame ("dictation", "query") or a target ("local_model")."""
    text: str
    """Exactly the text submitted."""
    correlation_id: str | None
    """The correlation id of the utterance that ended the submission; links related notes."""

    def to_json(self) -> dict[str, Any]:
        """The note as the JSON object written on its line."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Note:
        """A note from its JSON object; ValueError when the object is not one."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        strings = ("id", "t", "source", "text")
        if not all(isinstance(data.get(key), str) for key in strings):
            raise ValueError(f"missing or non-string {', '.join(strings)}")
        cid = data.get("correlation_id")
        if cid is not None and not isinstance(cid, str):
            raise ValueError("correlation_id is not a string")
        return cls(data["id"], data["t"], data["source"], data["text"], cid)


def utc_now() -> datetime:
    """The current time in UTC (the store's default clock)."""
    return datetime.now(UTC)


class NoteStore:
    """Appends notes to, and reads them back from, `<directory>/notes.jsonl`."""

    def __init__(self, directory: Path, clock: Callable[[], datetime] = utc_now) -> None:
        self.directory = directory
        self.clock = clock

    @property
    def path(self) -> Path:
        """The JSON-lines file."""
        return self.directory / NOTES_FILE

    def append(self, text: str, source: str, correlation_id: str | None) -> Note:
        """Save a note and return it once it is on disk. Raises OSError (disk full, ...)."""
        note = Note(
            id=secrets.token_hex(4),
            t=self.clock().astimezone(UTC).isoformat(timespec="milliseconds"),
            source=source,
            text=text,
            correlation_id=correlation_id,
        )
        line = json.dumps(note.to_json(), ensure_ascii=False) + "\n"
        self._append_line(line.encode("utf-8"))
        return note

    def list(self) -> builtins.list[Note]:
        """Every readable note, oldest first; unreadable lines are skipped with a warning."""
        return builtins.list(self._read())

    def get(self, note_id: str) -> Note | None:
        """The note with this id, or None."""
        return next((note for note in self._read() if note.id == note_id), None)

    def _append_line(self, data: bytes) -> None:
        self.directory.mkdir(mode=DATA_DIR_MODE, parents=True, exist_ok=True)
        created = not self.path.exists()
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = os.open(self.path, flags, NEW_FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # A crash left a partial line: end it, or it would swallow this note.
                data = b"\n" + data
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_directory(self.directory)

    def _read(self) -> Iterator[Note]:
        try:
            stream = self.path.open("rb")
        except FileNotFoundError:
            return
        with stream:
            for number, raw in enumerate(stream, start=1):
                if not raw.strip():
                    continue
                note = self._parse(raw, number)
                if note is not None:
                    yield note

    def _parse(self, raw: bytes, number: int) -> Note | None:
        try:
            return Note.from_json(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as error:
            torn = not raw.endswith(b"\n")
            log.warning(
                "skipped an unreadable note line",
                path=str(self.path),
                line=number,
                torn=torn,
                error=str(error),
            )
            return None


def _write_all(fd: int, data: bytes) -> None:
    # One write() for a regular file writes it all unless the disk fills; loop for the rest.
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
