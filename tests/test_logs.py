"""Logging set-up: output formats, level filtering, stdlib routing and correlation ids."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from voiced.logs import (
    bind_correlation_id,
    clear_correlation_id,
    configure_logging,
    correlation,
    is_journal,
)


class TtyStringIO(io.StringIO):
    """A stream that claims to be a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Leave structlog, the root logger and the context as we found them."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    structlog.contextvars.clear_contextvars()
    yield
    structlog.contextvars.clear_contextvars()
    structlog.reset_defaults()
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)


def json_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_when_not_a_tty() -> None:
    out = io.StringIO()
    configure_logging(stream=out)
    structlog.get_logger("t").info("hello", answer=42)
    (entry,) = json_lines(out)
    assert entry["event"] == "hello"
    assert entry["level"] == "info"
    assert entry["answer"] == 42
    assert entry["timestamp"].endswith("Z")  # ISO 8601 in UTC
    assert "correlation_id" not in entry


def test_json_includes_bound_correlation_id() -> None:
    out = io.StringIO()
    configure_logging(stream=out)
    with correlation("utt-1"):
        structlog.get_logger().info("heard")
    structlog.get_logger().info("idle")
    first, second = json_lines(out)
    assert first["correlation_id"] == "utt-1"
    assert "correlation_id" not in second


def test_json_renders_exceptions_as_text() -> None:
    out = io.StringIO()
    configure_logging(stream=out)
    try:
        raise RuntimeError("gripper jammed")
    except RuntimeError:
        structlog.get_logger().exception("move_failed")
    (entry,) = json_lines(out)
    assert entry["level"] == "error"
    assert "RuntimeError: gripper jammed" in entry["exception"]


def test_console_when_a_tty() -> None:
    out = TtyStringIO()
    configure_logging(stream=out)
    structlog.get_logger().info("hello", answer=42)
    text = out.getvalue()
    assert "hello" in text
    assert "answer" in text
    assert "\x1b[" in text  # colours, since a person is watching
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_explicit_formats_override_auto() -> None:
    tty = TtyStringIO()
    configure_logging(fmt="json", stream=tty)
    structlog.get_logger().info("as_json")
    assert json_lines(tty)[0]["event"] == "as_json"

    pipe = io.StringIO()
    configure_logging(fmt="console", stream=pipe)
    structlog.get_logger().info("as_console")
    text = pipe.getvalue()
    assert "as_console" in text
    assert "\x1b[" not in text  # no colours into a file or pipe
    assert not text.lstrip().startswith("{")


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("debug", ["d", "i", "w", "e"]),
        ("info", ["i", "w", "e"]),
        ("WARNING", ["w", "e"]),
        ("error", ["e"]),
        ("critical", []),
    ],
)
def test_level_filtering(level: str, expected: list[str]) -> None:
    out = io.StringIO()
    configure_logging(level=level, stream=out)
    log = structlog.get_logger()
    log.debug("d")
    log.info("i")
    log.warning("w")
    log.error("e")
    assert [entry["event"] for entry in json_lines(out)] == expected


@pytest.mark.parametrize(("level", "fmt"), [("verbose", "auto"), ("info", "xml")])
def test_rejects_unknown_level_or_format(level: str, fmt: str) -> None:
    with pytest.raises(ValueError, match="unknown log"):
        configure_logging(level=level, fmt=fmt, stream=io.StringIO())


def test_stdlib_warnings_reach_the_stream() -> None:
    out = io.StringIO()
    configure_logging(level="debug", stream=out)
    library = logging.getLogger("anthropic._base_client")
    library.info("retrying request")  # below WARNING: libraries are noisy at INFO
    with correlation("utt-7"):
        library.warning("rate limited, retry in %d s", 3)
    (entry,) = json_lines(out)
    assert entry["event"] == "rate limited, retry in 3 s"
    assert entry["level"] == "warning"
    assert entry["logger"] == "anthropic._base_client"
    assert entry["correlation_id"] == "utt-7"
    assert entry["timestamp"].endswith("Z")


def test_stdlib_exceptions_are_rendered() -> None:
    out = io.StringIO()
    configure_logging(stream=out)
    try:
        raise OSError("device busy")
    except OSError:
        logging.getLogger("asyncio").exception("Task exception was never retrieved")
    (entry,) = json_lines(out)
    assert entry["level"] == "error"
    assert "OSError: device busy" in entry["exception"]


def test_stdlib_respects_a_stricter_level() -> None:
    out = io.StringIO()
    configure_logging(level="error", stream=out)
    logging.getLogger("faster_whisper").warning("dropped")
    logging.getLogger("faster_whisper").error("kept")
    assert [entry["event"] for entry in json_lines(out)] == ["kept"]


def test_reconfiguring_replaces_the_previous_setup() -> None:
    log = structlog.get_logger("early")  # taken before configuration, like module loggers
    root = logging.getLogger()
    before = len(root.handlers)
    first, second = io.StringIO(), io.StringIO()
    configure_logging(stream=first)
    configure_logging(level="warning", stream=second)
    configure_logging(level="warning", stream=second)

    assert len(root.handlers) == before + 1
    log.info("filtered")
    log.warning("ours")
    logging.getLogger("lib").warning("theirs")
    assert first.getvalue() == ""
    assert [entry["event"] for entry in json_lines(second)] == ["ours", "theirs"]


def test_bind_and_clear_correlation_id() -> None:
    generated = bind_correlation_id()
    assert uuid.UUID(generated).version == 4
    assert structlog.contextvars.get_contextvars() == {"correlation_id": generated}

    assert bind_correlation_id("utt-2") == "utt-2"
    assert structlog.contextvars.get_contextvars() == {"correlation_id": "utt-2"}

    clear_correlation_id()
    assert structlog.contextvars.get_contextvars() == {}
    clear_correlation_id()  # clearing twice is harmless


def test_correlation_restores_previous_value() -> None:
    with correlation() as outer:
        assert uuid.UUID(outer).version == 4
        with correlation("inner") as inner:
            assert inner == "inner"
            assert structlog.contextvars.get_contextvars()["correlation_id"] == "inner"
        assert structlog.contextvars.get_contextvars()["correlation_id"] == outer
    assert "correlation_id" not in structlog.contextvars.get_contextvars()

    bind_correlation_id("session")
    with pytest.raises(KeyError), correlation("failing"):
        raise KeyError("restored even when the block raises")
    assert structlog.contextvars.get_contextvars()["correlation_id"] == "session"


async def test_tasks_inherit_but_do_not_leak_correlation() -> None:
    seen: dict[str, str | None] = {}

    async def child() -> None:
        seen["inherited"] = structlog.contextvars.get_contextvars().get("correlation_id")
        bind_correlation_id("child")
        seen["own"] = structlog.contextvars.get_contextvars().get("correlation_id")

    with correlation("parent"):
        await asyncio.create_task(child())
        # The task ran in a copy of our context: its binding stayed there.
        assert structlog.contextvars.get_contextvars()["correlation_id"] == "parent"
    assert seen == {"inherited": "parent", "own": "child"}


async def test_concurrent_tasks_log_their_own_ids() -> None:
    out = io.StringIO()
    configure_logging(stream=out)
    log = structlog.get_logger()

    async def handle(cid: str) -> None:
        with correlation(cid):
            for step in range(3):
                log.info("step", step=step)
                await asyncio.sleep(0)  # interleave with the other task

    await asyncio.gather(handle("a"), handle("b"))
    entries = json_lines(out)
    assert len(entries) == 6
    assert {entry["correlation_id"] for entry in entries} == {"a", "b"}
    for cid in ("a", "b"):
        steps = [entry["step"] for entry in entries if entry["correlation_id"] == cid]
        assert steps == [0, 1, 2]
    # Interleaved, so a shared context would have mixed the ids up.
    assert [entry["correlation_id"] for entry in entries] != ["a"] * 3 + ["b"] * 3


# --- syslog priority ---------------------------------------------------------------------


def test_json_lines_carry_the_syslog_priority() -> None:
    stream = io.StringIO()
    configure_logging("debug", "json", stream, prefix="never")
    log = structlog.get_logger("t")
    log.debug("d")
    log.info("i")
    log.warning("w")
    log.error("e")
    log.critical("c")
    logging.getLogger("library").error("from a library")
    assert [(line["event"], line["priority"]) for line in json_lines(stream)] == [
        ("d", 7), ("i", 6), ("w", 4), ("e", 3), ("c", 2), ("from a library", 3),
    ]  # fmt: skip


def test_every_line_starts_with_its_priority_when_asked() -> None:
    stream = io.StringIO()
    configure_logging("info", "json", stream, prefix="always")
    structlog.get_logger("t").warning("careful", n=1)
    logging.getLogger("library").warning("from a library")
    lines = stream.getvalue().splitlines()
    assert [line[:3] for line in lines] == ["<4>", "<4>"]
    assert json.loads(lines[0][3:]) == {**json.loads(lines[0][3:]), "event": "careful", "n": 1}


def test_console_lines_get_the_prefix_but_no_field() -> None:
    stream = TtyStringIO()
    configure_logging("info", "console", stream, prefix="always")
    structlog.get_logger("t").error("bad")
    line = stream.getvalue()
    assert line.startswith("<3>") and "bad" in line and "priority" not in line


def test_auto_prefix_only_when_stderr_is_the_journal(tmp_path: Path) -> None:
    with open(tmp_path / "journal", "w", encoding="utf-8") as journal:
        found = os.fstat(journal.fileno())
        stream_id = f"{found.st_dev}:{found.st_ino}"
        assert is_journal(journal, stream_id)
        assert not is_journal(journal, "")
        assert not is_journal(journal, f"{found.st_dev}:{found.st_ino + 1}")
        assert not is_journal(io.StringIO(), stream_id)  # no file behind it


def test_auto_prefix_follows_journal_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open(tmp_path / "journal", "w", encoding="utf-8") as journal:
        found = os.fstat(journal.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{found.st_dev}:{found.st_ino}")
        configure_logging("info", "json", journal)
        structlog.get_logger("t").info("hello")
        monkeypatch.delenv("JOURNAL_STREAM")
        configure_logging("info", "json", journal)
        structlog.get_logger("t").info("again")
    first, second = (tmp_path / "journal").read_text(encoding="utf-8").splitlines()
    assert first.startswith('<6>{"') and second.startswith('{"')


def test_rejects_an_unknown_priority_prefix() -> None:
    with pytest.raises(ValueError, match="priority prefix"):
        configure_logging("info", "json", io.StringIO(), prefix="sometimes")
