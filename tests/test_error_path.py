"""The CLI's one error path, table-driven: which line and which exit code each kind of error
reaching it gets (the e2e tests in tests/e2e/test_cli_errors.py feed the real bad inputs)."""

from __future__ import annotations

import sqlite3

import pytest

from voiced.errorpath import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    report_error,
)
from voiced.errors import CellError, InputError, Problem, StoreError, UsageError

CASES = [
    (InputError("--text /tmp/x", "Is a directory"), EXIT_ERROR, ["--text /tmp/x: Is a directory"]),
    (UsageError("--room-echo", "needs --audio"), EXIT_USAGE, ["--room-echo: needs --audio"]),
    (StoreError("h.sqlite3", "broken", "move it"), EXIT_ERROR, ["h.sqlite3: broken; move it"]),
    (
        CellError([Problem("c.toml", "a", "bad"), Problem("c.toml", "b", "worse")]),
        EXIT_ERROR,
        ["c.toml: a: bad", "c.toml: b: worse"],
    ),
    # Not named where it happened: the catch-all still names the file when the error knows it.
    (
        FileNotFoundError(2, "No such file or directory", "/x"),
        EXIT_ERROR,
        ["/x: No such file or directory"],
    ),
    (
        UnicodeDecodeError("utf-8", b"ab\xff", 2, 3, "invalid start byte"),
        EXIT_ERROR,
        ["UnicodeDecodeError: not UTF-8 (byte 0xff at offset 2)"],
    ),
    (
        sqlite3.DatabaseError("file is not a database"),
        EXIT_ERROR,
        ["DatabaseError: file is not a database"],
    ),
    # A task group's errors: the named one is reported, however deep.
    (
        ExceptionGroup(
            "g", [ValueError("v"), ExceptionGroup("h", [InputError("--events d", "x")])]
        ),
        EXIT_ERROR,
        ["--events d: x"],
    ),
    (
        ExceptionGroup("g", [OSError(28, "No space left on device", "/d/f")]),
        EXIT_ERROR,
        ["/d/f: No space left on device"],
    ),
    (
        RuntimeError("bug"),
        EXIT_INTERNAL,
        ["internal error: RuntimeError: bug (run with --debug for the traceback)"],
    ),
    (KeyboardInterrupt(), EXIT_INTERRUPTED, []),
]


@pytest.mark.parametrize(("error", "code", "lines"), CASES)
def test_each_error_gets_its_line_and_exit_code(
    error: BaseException, code: int, lines: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert report_error(error, debug=False) == code
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"voiced: {line}" for line in lines]


def test_debug_prints_the_traceback_first(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        raise InputError("--text x", "gone")
    except InputError as error:
        assert report_error(error, debug=True) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and err.endswith("voiced: --text x: gone\n")


def test_a_system_exit_is_not_an_error() -> None:
    with pytest.raises(SystemExit):
        report_error(SystemExit(0), debug=False)
