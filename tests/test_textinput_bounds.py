"""`--text` input at its edges: lines of any length from a real pipe, text that is not UTF-8,
files that cannot be read, and inputs epoll cannot watch (a regular file, /dev/null)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from voiced.audio.source import StdinPcmSource, pollable

from voiced.errors import InputError
from voiced.inputs.typed import LINE_STEP, Line, Pause, TextEvent, TextInput, Unusable


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    os.close(read)


def feed(write: int, data: bytes) -> threading.Thread:
    """Write `data` into the pipe from a thread (a pipe holds only 64 KiB), then close it."""

    def run() -> None:
        with os.fdopen(write, "wb") as out:
            out.write(data)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


async def read_all(text: TextInput) -> list[TextEvent]:
    return [event async for event in text.events()]


async def test_a_10_mb_line_from_a_pipe_is_unusable_and_the_next_line_is_read(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    writer = feed(write, b"add bread\n" + b"x" * 10_000_000 + b"\ngo home\n")
    events = await read_all(TextInput("-", pause=1.6, max_chars=2000, stdin=read))
    writer.join()
    assert events == [
        Line("add bread", LINE_STEP),
        Unusable("longer than 2000 characters", 10_000_000, "x" * 80, 2 * LINE_STEP),
        Line("go home", 3 * LINE_STEP),
    ]


async def test_a_line_at_the_limit_is_kept_whole(pipe: tuple[int, int]) -> None:
    read, write = pipe
    word = "é" * 2000  # two bytes each: the limit counts characters, not bytes
    writer = feed(write, (word + "\n" + word + "e").encode())
    events = await read_all(TextInput("-", pause=1.6, max_chars=2000, stdin=read))
    writer.join()
    assert events[0] == Line(word, LINE_STEP)
    assert isinstance(events[1], Unusable) and events[1].length == 2001


async def test_a_line_from_a_pipe_that_is_not_utf8_is_unusable(pipe: tuple[int, int]) -> None:
    read, write = pipe
    writer = feed(write, b"add \xffbread\ngo home\n")
    events = await read_all(TextInput("-", pause=1.6, stdin=read))
    writer.join()
    assert events[0] == Unusable("not UTF-8 (byte 0xff at offset 4)", 10, "add \ufffdbread", 0.05)
    assert events[1] == Line("go home", 2 * LINE_STEP)


def test_a_file_is_read_before_the_session_and_named_when_it_cannot_be(tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"computer add bread\ncaf\xe9\n")
    cases = {
        str(tmp_path / "missing.txt"): "No such file or directory",
        str(tmp_path): "Is a directory",
        str(latin): "not UTF-8 (byte 0xe9 at offset 22)",
    }
    for path, reason in cases.items():
        with pytest.raises(InputError) as raised:
            TextInput(path, pause=1.6)
        assert str(raised.value) == f"--text {path}: {reason}"


async def test_stdin_from_dev_null_or_a_file_is_read_at_once(tmp_path: Path) -> None:
    session = tmp_path / "session.txt"
    session.write_text("go home\n", encoding="utf-8")
    with open(os.devnull, "rb") as null, open(session, "rb") as file:
        assert not pollable(null.fileno()) and not pollable(file.fileno())
        assert await read_all(TextInput("-", pause=1.6, stdin=null.fileno())) == []
        assert await read_all(TextInput("-", pause=1.6, stdin=file.fileno())) == [
            Line("go home", LINE_STEP)
        ]


async def test_audio_from_dev_null_ends_at_once() -> None:
    with open(os.devnull, "rb") as null:
        assert [chunk async for chunk in StdinPcmSource(fd=null.fileno()).chunks()] == []


def test_a_pipe_can_be_waited_on(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.close(write)
    assert pollable(read)


async def test_a_line_typed_live_is_followed_by_the_pause_after_the_short_wait(
    pipe: tuple[int, int],
) -> None:
    """Enter sends: a typed line that nothing follows waits `sends_after`, not the silence
    timer, and the clock then moves on by a whole pause (every timer of the frames ends)."""
    read, write = pipe
    text = TextInput("-", pause=600.0, stdin=read, sends_after=0.05)
    os.write(write, b"computer add bread\n")  # the pipe stays open: the person is still there
    events = text.events()
    try:
        assert await asyncio.wait_for(anext(events), 30) == Line("computer add bread", LINE_STEP)
        pause = await asyncio.wait_for(anext(events), 30)  # not 600 s
        assert isinstance(pause, Pause) and pause.t == LINE_STEP + 600.0
    finally:
        os.close(write)  # the person leaves: the input ends
    assert [event async for event in events] == []
