"""The error hierarchy. Every error a user can cause names what was wrong and where.

This module imports nothing from the project so that every package (robot, audio, frames, rules)
can raise these without depending on the daemon.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class VoicedError(Exception):
    """Root of every error voiced raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a file: where it is and what was expected."""

    source: str
    """The file (or other input) the problem is in."""
    path: str
    """Dotted path inside the source, e.g. `composites.add_layer.params.item`."""
    message: str
    """What is wrong and what was expected."""

    def __str__(self) -> str:
        where = f"{self.source}: {self.path}" if self.path else self.source
        return f"{where}: {self.message}"


class ProblemsError(VoicedError):
    """An error carrying every problem found, so a user can fix them all in one go."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("ProblemsError needs at least one problem")
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class ConfigError(ProblemsError):
    """The configuration file is malformed: unknown key, wrong type or out-of-range value."""


class CellError(ProblemsError):
    """A cell file (or scene file) is malformed or inconsistent."""


class ProtocolError(VoicedError):
    """A line on the controller link does not follow the wire protocol."""

    def __init__(self, message: str, line: str | bytes | None = None) -> None:
        self.line = line
        super().__init__(f"{message}: {line!r}" if line is not None else message)


class ControllerConnectionError(VoicedError):
    """The controller link could not be opened or was lost."""


class ControllerAuthError(ControllerConnectionError):
    """The handshake failed: the controller refused this client, or offered no challenge to a
    daemon that has a key."""


class AudioError(VoicedError):
    """The audio input (a microphone, a file) could not be opened or read."""


class LlmError(VoicedError):
    """The language model could not be reached or answered unusably."""


class InputError(VoicedError):
    """A file, stream or value given to voiced cannot be used. `what` names it as the user gave
    it (`--text /tmp/x`, `--events /tmp`), `reason` says what is wrong with it."""

    def __init__(self, what: str, reason: str) -> None:
        self.what = what
        self.reason = reason
        super().__init__(f"{what}: {reason}")


class UsageError(InputError):
    """The command line itself is wrong: options that cannot go together, a value out of range."""


class StoreError(VoicedError):
    """A file voiced keeps its own data in (the history, the queue) cannot be read. The file is
    never deleted or overwritten on the user's behalf: `advice` says what to do with it."""

    def __init__(self, path: str, reason: str, advice: str) -> None:
        self.path = path
        self.reason = reason
        self.advice = advice
        super().__init__(f"{path}: {reason}; {advice}")


def describe(error: BaseException) -> str:
    """What went wrong in a few words, for a message that already names the file: the system's
    wording for an OS error, the offending byte for text that is not UTF-8."""
    if isinstance(error, UnicodeDecodeError):
        byte = error.object[error.start : error.start + 1].hex()
        return f"not {error.encoding.upper()} (byte 0x{byte} at offset {error.start})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def nearest(name: str, known: Iterable[str]) -> str | None:
    """The known name nearest to `name` (a misspelling of it), or None when none is near."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """'; did you mean X?' with the known name nearest to `name`; '' when none is near."""
    near = nearest(name, known)
    return f"; did you mean {near}?" if near else ""


def unknown_name(what: str, name: str, known: Sequence[str], plural: str = "") -> str:
    """A name the file does not define, what there is, and the nearest: "unknown supply site
    'supply_chese' (supply sites: ...); did you mean supply_cheese?"."""
    listed = ", ".join(known) or "none"
    return f"unknown {what} '{name}' ({plural or what + 's'}: {listed}){did_you_mean(name, known)}"
