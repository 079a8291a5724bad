"""The `voiced` command's one error path: whatever error reaches it becomes a line on stderr
naming what was wrong, and an exit code for its kind (README, "Errors"); the traceback only
when asked for (`--debug`, `VOICED_DEBUG=1`).

Errors are best raised by name where the file or argument is known (`voiced.errors`:
`InputError`, `UsageError`, `StoreError`, `ProblemsError`...); the catch-all for operating-system,
decoding and value errors is the last resort and still names the file when the error knows it.
"""

from __future__ import annotations

import sqlite3
import sys
import traceback
from collections.abc import Iterator

from voiced.errors import ProblemsError, UsageError, VoicedError, describe

EXIT_ERROR = 1
"""Something the command was given or found cannot be used: a file, the config, a cell, the
data directory, the controller. The message names it."""
EXIT_USAGE = 2
"""The command line itself is wrong (as argparse's own errors)."""
EXIT_NOT_DONE = 3
"""The command was read but not carried out: not understood, refused, or a plan that failed
validation (`voiced interpret`); a replay refused or not run to the end (`voiced replay`)."""
EXIT_INTERNAL = 70
"""An error voiced did not expect: a bug (sysexits' EX_SOFTWARE). `--debug` shows where."""
EXIT_INTERRUPTED = 130


def report_error(error: BaseException, debug: bool) -> int:
    """The one error path: a line on stderr naming what was wrong (one per problem of a file),
    the traceback only with `--debug`, and the exit code for the kind of error."""
    if isinstance(error, SystemExit):
        raise error
    if debug:
        traceback.print_exception(error)
    leaves = list(_leaves(error))
    leaf = next((e for e in leaves if isinstance(e, VoicedError)), leaves[0])
    if isinstance(leaf, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(leaf, ProblemsError):
        for problem in _with_lines(leaf):
            _say(problem)
        return EXIT_ERROR
    if isinstance(leaf, VoicedError):
        _say(str(leaf))
        return EXIT_USAGE if isinstance(leaf, UsageError) else EXIT_ERROR
    if isinstance(leaf, (OSError, ValueError, OverflowError, sqlite3.Error)):
        # Not raised by name where it happened: still say which file, if the error knows it.
        where = getattr(leaf, "filename", None)
        _say(f"{where}: {describe(leaf)}" if where else f"{type(leaf).__name__}: {describe(leaf)}")
        return EXIT_ERROR
    hint = "" if debug else " (run with --debug for the traceback)"
    _say(f"internal error: {type(leaf).__name__}: {describe(leaf)}{hint}")
    return EXIT_INTERNAL


def _with_lines(error: ProblemsError) -> list[str]:
    """Each problem with the line of its file, as `voiced check-config` names it."""
    from voiced.checks.files import located

    try:
        return [str(problem) for problem in located(error.problems)]
    except Exception:  # a file gone since: the problems as they are, never a second error
        return [str(problem) for problem in error.problems]


def _leaves(error: BaseException) -> Iterator[BaseException]:
    """The errors a group (a task group's, possibly nested) wraps; the error itself else."""
    if isinstance(error, BaseExceptionGroup) and error.exceptions:
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def _say(message: str) -> None:
    print(f"voiced: {message}", file=sys.stderr)
