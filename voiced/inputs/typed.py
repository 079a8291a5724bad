"""`--text PATH|-`: typed lines enter the frame router exactly as transcripts would.

Time on this input is virtual, so a session gives the same result however fast it is fed: each
line moves the clock on by a few milliseconds, a blank line by more than the query frame's silence
timer (it stands for a pause), and the end of input by more than every timer.

Typed live (a terminal, or a pipe whose lines come over time), a line followed by nothing for as
long as that pause is followed by the pause, as speech would be: Enter sends, and lines typed
seconds apart are separate commands. A file, or a pipe that delivers its lines at once, gives the
same events however fast it is read.

A file (or a file redirected to stdin, or /dev/null) is read whole before the daemon starts, so a
missing file, a directory or text that is not UTF-8 is refused at once, naming it. A pipe is read
as it comes: a line longer than the utterance limit, or one that is not UTF-8, is handed over as
`Unusable` (the daemon says so and goes on), and no more than the limit of it is ever held.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import stat
import sys
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from voiced.audio.source import pollable
from voiced.errors import InputError, describe

LINE_STEP = 0.05
"""Seconds of input clock between two lines typed one after the other."""

MAX_UTTERANCE_CHARS = 2000
"""The default longest line that is taken as an utterance (`[daemon] max_utterance_chars`)."""

MAX_FILE_BYTES = 64 * 1024 * 1024
"""A text session longer than this is no session (a wrong file, or /dev/zero)."""

_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Line:
    """One typed utterance at input time `t`."""

    text: str
    t: float


@dataclass(frozen=True)
class Pause:
    """A blank line: silence until input time `t`."""

    t: float


@dataclass(frozen=True)
class Unusable:
    """A line that cannot be an utterance: longer than the limit, or not UTF-8 text."""

    reason: str
    """What is wrong with it, e.g. "longer than 2000 characters"."""
    length: int
    """Its length in characters (in bytes when it is not UTF-8)."""
    head: str
    """Its first few characters, to recognise it by."""
    t: float


TextEvent = Line | Pause | Unusable


class TextInput:
    """Reads lines from a file or stdin and turns them into timed events."""

    def __init__(
        self,
        source: str,
        pause: float,
        max_chars: int = MAX_UTTERANCE_CHARS,
        stdin: int | None = None,
        sends_after: float | None = None,
    ) -> None:
        self.source = source
        self.pause = pause
        self.sends_after = pause if sends_after is None else sends_after
        """Seconds a line typed live waits for the next before the pause follows it: Enter
        sends, so the short wait of a whole spoken command, not the silence timer."""
        self.max_chars = max_chars
        self.clock = 0.0
        self._whole: list[str] = []
        """The lines of a file, read before the session starts."""
        self._stream: int | None = None
        """The descriptor read as lines come (a pipe, a terminal); None: `_whole` is all."""
        if source != "-" and not is_stream(source):
            self._whole = read_text_file(source)
            return
        if source != "-":
            # A named pipe or `<(...)`: read as lines come, like standard input (reading it
            # whole first would wait for its writer to finish, or find it already drained).
            stdin = open_text(source)
        fd = sys.stdin.fileno() if stdin is None else stdin  # a test may give another
        if pollable(fd):
            self._stream = fd
        else:  # epoll cannot watch a regular file or /dev/null: read it whole, now.
            self._whole = read_text_fd(fd, "--text -")

    async def events(self) -> AsyncGenerator[TextEvent, None]:
        async with contextlib.aclosing(self._lines()) as lines:
            async for line in lines:
                yield self._timed(line)

    def _timed(self, line: str | Unusable) -> TextEvent:
        if isinstance(line, str) and len(line) > self.max_chars:
            line = too_long(line, len(line), self.max_chars)
        if isinstance(line, Unusable):
            self.clock += LINE_STEP
            return Unusable(line.reason, line.length, line.head, self.clock)
        text = line.strip()
        if text:
            self.clock += LINE_STEP
            return Line(text, self.clock)
        self.clock += self.pause
        return Pause(self.clock)

    async def _lines(self) -> AsyncGenerator[str | Unusable, None]:
        for whole in self._whole:
            yield whole
        if self._stream is None:
            return
        # Closed when the reader stops, so stdin's pipe transport closes then, not at exit.
        async with contextlib.aclosing(_stream_lines(self._stream, self.max_chars)) as lines:
            async for line in _with_pauses(lines, self.sends_after):
                yield line


async def _with_pauses(
    lines: AsyncGenerator[str | Unusable, None], pause: float
) -> AsyncGenerator[str | Unusable, None]:
    """`lines`, with a blank line wherever a line is followed by nothing for `pause` seconds
    (one blank line: the clock then moves on by a pause that ends any command)."""
    waiting: asyncio.Future[str | Unusable] | None = None
    typed = False
    try:
        while True:
            if waiting is None:
                waiting = asyncio.ensure_future(anext(lines))
            done, _ = await asyncio.wait({waiting}, timeout=pause if typed else None)
            if not done:
                typed = False
                yield ""
                continue
            try:
                line = waiting.result()
            except StopAsyncIteration:
                return
            waiting = None
            typed = isinstance(line, str) and bool(line.strip())
            yield line
    finally:
        if waiting is not None and not waiting.done():
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await waiting


def too_long(head: str, length: int, limit: int) -> Unusable:
    return Unusable(f"longer than {limit} characters", length, head[:80], 0.0)


def is_stream(path: str) -> bool:
    """Whether `--text PATH` names a pipe (a FIFO, `<(...)`'s /dev/fd/N) rather than a file."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def open_text(path: str) -> int:
    """A descriptor on `--text PATH`; InputError names the file and what is wrong with it."""
    try:
        return os.open(path, os.O_RDONLY)
    except OSError as error:
        raise InputError(f"--text {path}", describe(error)) from None


def read_text_file(path: str) -> list[str]:
    """The lines of `--text PATH`; InputError names the file and what is wrong with it."""
    what = f"--text {path}"
    fd = open_text(path)
    try:
        return read_text_fd(fd, what)
    finally:
        os.close(fd)


def read_text_fd(fd: int, what: str) -> list[str]:
    """Every line readable from `fd` to its end, which must be UTF-8 text of a sane size."""
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise InputError(what, f"more than {MAX_FILE_BYTES // 2**20} MiB of text")
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(what, describe(error)) from None


class _LineBuffer:
    """One line being read from a stream: at most `keep` bytes of it are held, all of it is
    counted (in characters, as UTF-8)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._start()

    def _start(self) -> None:
        self.kept = bytearray()
        self.size = 0
        self.chars = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def add(self, piece: bytes) -> None:
        if len(self.kept) < self.keep:
            self.kept += piece[: self.keep - len(self.kept)]
        self.size += len(piece)
        self.chars += len(self.decoder.decode(piece))

    def feed(self, chunk: bytes, limit: int) -> list[str | Unusable]:
        """The lines `chunk` completes; the rest of it stays here."""
        done: list[str | Unusable] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self.add(chunk[start:end])
            done.append(self.take(limit))
            start = end + 1
        self.add(chunk[start:])
        return done

    def take(self, limit: int) -> str | Unusable:
        self.chars += len(self.decoder.decode(b"", final=True))
        kept, size, chars = bytes(self.kept), self.size, self.chars
        self._start()
        if size > len(kept) or chars > limit:
            return too_long(kept.decode("utf-8", "replace"), chars, limit)
        try:
            return kept.decode("utf-8")
        except UnicodeDecodeError as error:
            return Unusable(describe(error), size, kept.decode("utf-8", "replace")[:80], 0.0)


async def _stream_lines(fd: int, limit: int) -> AsyncGenerator[str | Unusable, None]:
    """Lines from a pipe or terminal (stdin) without a blocking thread (so SIGTERM never waits on
    a read that cannot be cancelled). A line of any length is read through; only `limit`
    characters of it are kept."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(fd), "rb")
    )
    buffer = _LineBuffer(keep=4 * limit + 4)  # UTF-8: at most 4 bytes a character
    try:
        while chunk := await reader.read(_CHUNK):
            for line in buffer.feed(chunk, limit):
                yield line
        if buffer.size:
            yield buffer.take(limit)
    finally:
        transport.close()
