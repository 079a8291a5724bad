"""The notes store and the note target: real files, real threads, a real process killed mid-loop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from tests.killing import run_and_kill as kill_writer
from voiced.notes import NOTES_FILE, Note, NoteStore
from voiced.targets.note import SAVED, NoteTarget

VERBATIM = [
    "zero zero zero",
    "zero zero zero zero zero",
    "add bread",
    "go",
    "cancel",
    "end dictation please",
    "  leading and trailing spaces  ",
    'a "quoted" word and a back\\slash',
    "Müller – 3½ kg, naïve café",
    "first line\nsecond line",
    "tab\there",
]


def warnings_of(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["log_level"] == "warning"]


def test_append_and_list_round_trip(tmp_path: Path) -> None:
    store = NoteStore(tmp_path / "notes")
    saved = [
        store.append("first", "dictation", "cid-1"),
        store.append("second", "query", None),
        store.append("third", "local_model", "cid-1"),
    ]

    assert store.path == tmp_path / "notes" / NOTES_FILE
    assert store.list() == saved
    assert NoteStore(tmp_path / "notes").list() == saved  # a fresh reader sees the same
    assert store.get(saved[1].id) == saved[1]
    assert store.get("00000000") is None
    for note in saved:
        assert len(note.id) == 8
        int(note.id, 16)
        when = datetime.fromisoformat(note.t)
        offset = when.utcoffset()
        assert offset is not None and offset.total_seconds() == 0
        assert abs((datetime.now(UTC) - when).total_seconds()) < 60
    assert len({note.id for note in saved}) == 3


def test_each_note_is_one_json_line(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)
    note = store.append("line one\nline two", "dictation", "cid")
    raw = store.path.read_bytes()
    assert raw.count(b"\n") == 1 and raw.endswith(b"\n")
    assert json.loads(raw) == note.to_json()


def test_text_is_kept_verbatim(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)
    for text in VERBATIM:
        store.append(text, "dictation", None)
    assert [note.text for note in store.list()] == VERBATIM


def test_missing_file_lists_nothing(tmp_path: Path) -> None:
    store = NoteStore(tmp_path / "never")
    assert store.list() == []
    assert store.get("abc") is None
    assert not (tmp_path / "never").exists()


def test_concurrent_appends_from_threads(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)

    def write_many(worker: int) -> None:
        for index in range(50):
            store.append(f"worker {worker} note {index} " + "x" * (index * 37), "t", None)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write_many, range(8)))

    with capture_logs() as logs:
        notes = store.list()
    assert warnings_of(logs) == []
    assert len(notes) == 400
    texts = {note.text for note in notes}
    for worker in range(8):
        for index in range(50):
            assert f"worker {worker} note {index} " + "x" * (index * 37) in texts
    # Each thread's notes are in the order it wrote them.
    for worker in range(8):
        mine = [n.text for n in notes if n.text.startswith(f"worker {worker} ")]
        assert [int(text.split()[3]) for text in mine] == list(range(50))


async def test_concurrent_submits_through_the_target(tmp_path: Path) -> None:
    target = NoteTarget(NoteStore(tmp_path))
    results = await asyncio.gather(
        *(target.submit(f"item {i}", f"cid-{i}", source="dictation") for i in range(40))
    )
    assert all(result.ok and result.message == SAVED for result in results)
    notes = target.store.list()
    assert sorted(note.text for note in notes) == sorted(f"item {i}" for i in range(40))
    assert {note.source for note in notes} == {"dictation"}
    assert {r.detail["note_id"] for r in results} == {note.id for note in notes}


def test_torn_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)
    first = store.append("one", "dictation", None)
    second = store.append("two", "dictation", None)
    with store.path.open("ab") as stream:
        stream.write(b'{"id": "deadbeef", "t": "2024-01-01T00:00:00.000+00:00", "sour')

    with capture_logs() as logs:
        assert store.list() == [first, second]
    [warning] = warnings_of(logs)
    assert warning["event"] == "skipped an unreadable note line"
    assert warning["line"] == 3
    assert warning["torn"] is True
    assert warning["path"] == str(store.path)


def test_append_after_a_torn_line_is_not_swallowed(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)
    first = store.append("one", "dictation", None)
    with store.path.open("ab") as stream:
        stream.write(b'{"id": "dead')
    third = store.append("three", "dictation", None)

    with capture_logs() as logs:
        assert store.list() == [first, third]
    [warning] = warnings_of(logs)
    assert warning["line"] == 2
    assert warning["torn"] is False  # ended by the append that followed it


def test_any_unreadable_line_is_skipped(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)
    first = store.append("one", "dictation", None)
    with store.path.open("ab") as stream:
        stream.write(b"\xff\xfe not utf-8\n")
        stream.write(b"[1, 2, 3]\n")
        stream.write(b'{"id": "x", "t": "t", "source": "s"}\n')
        stream.write(b'{"id": 1, "t": "t", "source": "s", "text": "x"}\n')
        stream.write(b"\n   \n")
    last = store.append("last", "dictation", None)

    with capture_logs() as logs:
        assert store.list() == [first, last]
    assert [w["line"] for w in warnings_of(logs)] == [2, 3, 4, 5]


async def test_disk_full_is_a_clear_failure(tmp_path: Path) -> None:
    directory = tmp_path / "notes"
    directory.mkdir()
    (directory / NOTES_FILE).symlink_to("/dev/full")  # every write fails with ENOSPC
    result = await NoteTarget(NoteStore(directory)).submit("keep me", None)

    assert not result.ok
    assert result.message == (
        f"Could not save the note in {directory / NOTES_FILE}: No space left on device."
    )
    assert result.detail["path"] == str(directory / NOTES_FILE)


async def test_unwritable_directory_is_a_clear_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "notes"
    blocker.write_text("a file where the directory should be")
    result = await NoteTarget(NoteStore(blocker)).submit("keep me", None)
    assert not result.ok
    assert result.message == f"Could not save the note in {blocker / NOTES_FILE}: File exists."


async def test_blank_text_is_not_saved(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)
    result = await NoteTarget(store).submit(" \n ", None)
    assert not result.ok
    assert result.message == "There was nothing to save."
    assert store.list() == []


def test_note_from_json_round_trip() -> None:
    note = Note("0123abcd", "2024-05-01T10:00:00.000+00:00", "dictation", "zero zero", None)
    assert Note.from_json(json.loads(json.dumps(note.to_json()))) == note


# --- kill -9 ------------------------------------------------------------------------------------

WRITER = """
import sys
from pathlib import Path
from voiced.notes import NoteStore

store = NoteStore(Path(sys.argv[1]))
round_ = sys.argv[2]
index = 0
while True:
    store.append(f"round {round_} note {index} " + "z" * (index % 500), "dictation", None)
    if index == 0:
        print("ready", flush=True)
    index += 1
"""


def run_and_kill(directory: Path, round_: int, after: float) -> None:
    kill_writer(WRITER, [str(directory), str(round_)], after)


def test_sigkill_in_a_tight_append_loop_never_corrupts_a_saved_note(tmp_path: Path) -> None:
    store = NoteStore(tmp_path)
    for round_, after in enumerate((0.3, 0.05, 0.2)):
        run_and_kill(tmp_path, round_, after)

    with capture_logs() as logs:
        notes = store.list()
    raw_lines = [line for line in store.path.read_bytes().split(b"\n") if line.strip()]
    # Every line but (at worst) one torn by each kill is a whole note.
    assert len(warnings_of(logs)) <= 3
    assert len(notes) >= len(raw_lines) - 3
    for round_ in range(3):
        indexes = [int(n.text.split()[3]) for n in notes if n.text.startswith(f"round {round_} ")]
        assert indexes, f"round {round_} saved nothing"
        # Notes of a round are consecutive from 0: none lost or torn before the kill.
        assert indexes == list(range(len(indexes)))
        for note in notes:
            if note.text.startswith(f"round {round_} "):
                index = int(note.text.split()[3])
                assert note.text == f"round {round_} note {index} " + "z" * (index % 500)
