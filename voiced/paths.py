"""Where the daemon keeps its state, what is in there, and how files there are written safely.

The data directory is chosen by `resolve_data_dir` (--data-dir, $VOICED_DATA_DIR, systemd's
$STATE_DIRECTORY, $XDG_DATA_HOME/voiced, ~/.local/share/voiced) and laid out as `DataDir` says.
Every file the daemon rewrites goes through `atomic_write_text`/`atomic_write_json`, so that a
crash, kill -9 or power cut leaves either the old or the new content, never a torn file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voiced.errors import ConfigError, Problem

DATA_DIR_ENV = "VOICED_DATA_DIR"
"""The environment variable naming the data directory."""
STATE_DIRECTORY_ENV = "STATE_DIRECTORY"
"""Set by systemd for a unit with StateDirectory=; may list several paths separated by colons."""
API_KEY_ENV = "ANTHROPIC_API_KEY"
"""Without it the daemon runs offline (no language model)."""
DATA_DIR_MODE = 0o750
"""Mode of a data directory we create: the service's group may read (e.g. to collect traces)."""
NEW_FILE_MODE = 0o640
"""Mode of a file `atomic_write_text` creates; a replaced file keeps its mode."""

HISTORY_DB = "history.sqlite3"
PHRASE_BANK = "phrase_bank.json"
LEARNED_COMPOSITES = "learned_composites.json"
LEARNED_VERBS = "learned_verbs.json"
NOTES_DIR = "notes"
QUEUE_DB = "queue.sqlite3"
TRACES_DIR = "traces"
SCENE_PATTERN = "scene-{cell}.json"


def _env(environ: Mapping[str, str], name: str) -> str | None:
    # An empty variable counts as unset: `Environment=VOICED_DATA_DIR=` must not mean the cwd.
    value = environ.get(name, "")
    return value or None


def resolve_data_dir(cli_value: str | None, environ: Mapping[str, str] = os.environ) -> Path:
    """The data directory: the first of --data-dir, $VOICED_DATA_DIR, $STATE_DIRECTORY (its first
    path), $XDG_DATA_HOME/voiced, ~/.local/share/voiced. Nothing is created (see `ensure_data_dir`).
    """
    if cli_value:
        return Path(cli_value).expanduser()
    explicit = _env(environ, DATA_DIR_ENV)
    if explicit is not None:
        return Path(explicit).expanduser()
    state = _env(environ, STATE_DIRECTORY_ENV)
    first_state = next((part for part in (state or "").split(":") if part), None)
    if first_state is not None:
        return Path(first_state)
    xdg = _env(environ, "XDG_DATA_HOME")
    # The XDG spec says a relative $XDG_DATA_HOME is invalid and must be ignored.
    if xdg is not None and Path(xdg).is_absolute():
        return Path(xdg) / "voiced"
    home = _env(environ, "HOME")
    return (Path(home) if home is not None else Path.home()) / ".local" / "share" / "voiced"


def ensure_data_dir(path: Path) -> Path:
    """Create the data directory if needed (mode 0o750) and check that files can be created in it.

    Raises ConfigError naming the directory when it cannot be created or written to.
    """
    if path.exists() and not path.is_dir():
        raise _data_dir_error(path, "cannot create the data directory: it exists and is not one")
    try:
        path.mkdir(mode=DATA_DIR_MODE, parents=True, exist_ok=True)
    except OSError as error:
        message = f"cannot create the data directory: {_reason(error)}"
        raise _data_dir_error(path, message) from error
    try:
        # Creating a file is what the daemon will do; access() would be wrong for root and ACLs.
        with tempfile.NamedTemporaryFile(dir=path, prefix=".voiced-probe-"):
            pass
    except OSError as error:
        message = f"cannot write to the data directory: {_reason(error)}"
        raise _data_dir_error(path, message) from error
    return path


def _data_dir_error(path: Path, message: str) -> ConfigError:
    return ConfigError([Problem(str(path), "", message)])


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def offline(environ: Mapping[str, str] = os.environ) -> bool:
    """True when no Anthropic API key is configured (unset, empty or only whitespace)."""
    return not environ.get(API_KEY_ENV, "").strip()


@dataclass(frozen=True)
class DataDir:
    """The layout of the data directory. Only names paths; creates nothing."""

    root: Path
    """The data directory itself (see `resolve_data_dir`)."""

    @property
    def history(self) -> Path:
        """SQLite database of past commands and their outcomes."""
        return self.root / HISTORY_DB

    @property
    def phrase_bank(self) -> Path:
        """Learned phrasings (JSON)."""
        return self.root / PHRASE_BANK

    @property
    def learned_composites(self) -> Path:
        """Composites taught by voice (JSON)."""
        return self.root / LEARNED_COMPOSITES

    @property
    def learned_verbs(self) -> Path:
        """Verbs the model resolved and a run confirmed (JSON)."""
        return self.root / LEARNED_VERBS

    @property
    def notes(self) -> Path:
        """Directory of notes."""
        return self.root / NOTES_DIR

    @property
    def queue(self) -> Path:
        """SQLite database of queued work that must survive a restart."""
        return self.root / QUEUE_DB

    @property
    def traces(self) -> Path:
        """Directory of traces."""
        return self.root / TRACES_DIR

    def scene(self, cell: str, controller: str | None = None) -> Path:
        """The last scene of a cell on one controller (the identity it greets with; saved
        state of one controller is never taken for another's). `cell` is a cell name or the
        path of a cell .toml file."""
        name = _cell_slug(cell) if controller is None else f"{_cell_slug(cell)}@{_slug(controller)}"
        return self.root / SCENE_PATTERN.format(cell=name)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
"""What may not be in a file name here."""


def _slug(text: str) -> str:
    return _UNSAFE.sub("_", text)


def _cell_slug(cell: str) -> str:
    # A cell given as a path is keyed by its file name, so that the scene file stays inside root.
    name = Path(cell).name.removesuffix(".toml")
    slug = _slug(name)
    if not slug.strip("._"):
        raise ValueError(f"cannot derive a scene file name from the cell {cell!r}")
    return slug


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Replace the file at `path` with `text` (UTF-8) so that it is never seen half-written.

    The text goes to a temporary file in the same directory (a rename is atomic only within one
    file system), which is flushed and fsynced before it replaces the target; the directory is
    then fsynced so that the rename itself survives a power cut. A writer killed before the rename
    leaves the old file intact and a stray `.<name>.*.tmp` beside it.
    """
    target = Path(path)
    mode = _mode_to_keep(target)
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as stream:
            os.fchmod(stream.fileno(), mode)
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_directory(target.parent)


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int = 2) -> None:
    """`atomic_write_text` of `obj` as JSON. Serialising happens first: a TypeError or ValueError
    (NaN is refused: it is not JSON) leaves the file untouched."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
    atomic_write_text(path, text)


def _mode_to_keep(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        return NEW_FILE_MODE


def fsync_directory(directory: Path) -> None:
    """Make a new or renamed entry in `directory` survive a power cut."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as error:
        # Some file systems cannot fsync a directory; the rename has happened all the same.
        if error.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)
