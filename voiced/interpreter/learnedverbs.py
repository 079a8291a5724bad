"""Verbs the model resolved and a run confirmed ("slap" read as add_layer), kept across restarts.

The resolver (seed 003) maps a verb the grammar does not know onto a composite; once a command
with it has run, the verb joins the grammar and is saved here, so that after a restart, offline,
"slap bread" still works. One JSON file in the data directory,
`{"version": 1, "learned_verbs": {cell: {phrase: composite}}}`, rewritten whole and atomically
(temp file, fsync, rename) for every new verb, after reading it again: another daemon sharing
the data directory keeps its verbs too.

A file that is not that is never overwritten: at start-up it is moved aside
(`learned_verbs.json.corrupt-<UTC time>`, named in `problem`) and the daemon runs without the
verbs it held; verbs learned afterwards start a new file. A file that cannot be read at all
(permissions) stays where it is, and nothing is saved this run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from voiced.paths import atomic_write_json, fsync_directory

log = structlog.get_logger(__name__)

VERBS_KEY = "learned_verbs"
FORMAT_VERSION = 1
CORRUPT_SUFFIX = ".corrupt-"
"""Before the UTC time in the name of a file moved aside."""

Verbs = dict[str, dict[str, str]]
"""Per cell name, phrase -> composite."""


class LearnedVerbs:
    """The learned-verbs file of one data directory, for one cell."""

    def __init__(self, path: Path, cell_name: str) -> None:
        self.path = path
        self.cell_name = cell_name
        self.problem: str | None = None
        """Why the saved verbs are not used this run (the file moved aside or unreadable);
        None when they are."""
        self._writable = True

    def load(self) -> dict[str, str]:
        """This cell's verbs, phrase -> composite; empty when there are none or they cannot be
        used (then `problem` says why and where the file is)."""
        self.problem = None
        try:
            verbs = _read(self.path)
        except OSError as error:
            self._writable = False
            self.problem = f"cannot read {self.path}: {error}; learned verbs not used or saved"
        except ValueError as error:
            self.problem = self._set_aside(error)
        else:
            return dict(verbs.get(self.cell_name, {}))
        log.error("learned verbs not used", problem=self.problem)
        return {}

    def save(self, phrase: str, composite: str) -> None:
        """Add one verb to the file. Raises OSError (a full disk, an unreadable file) or
        ValueError (the file was spoiled since start-up: it is left as it is)."""
        if not self._writable:
            raise OSError(f"{self.path} could not be read at start-up; not overwriting it")
        verbs = _read(self.path)
        verbs.setdefault(self.cell_name, {})[phrase] = composite
        atomic_write_json(self.path, {"version": FORMAT_VERSION, VERBS_KEY: verbs})
        log.info("learned verb saved", phrase=phrase, composite=composite, path=str(self.path))

    def _set_aside(self, error: ValueError) -> str:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        aside = self.path.with_name(f"{self.path.name}{CORRUPT_SUFFIX}{stamp}")
        try:
            self.path.rename(aside)
            fsync_directory(self.path.parent)
        except OSError as rename_error:
            self._writable = False
            return (
                f"{self.path} is not a learned-verbs file ({error}) and could not be moved "
                f"aside ({rename_error}); learned verbs not used or saved"
            )
        return (
            f"{self.path} is not a learned-verbs file ({error}); kept as {aside.name}, "
            "running without the verbs it held"
        )


def _read(path: Path) -> Verbs:
    """The file's verbs; empty when there is no file. ValueError names what is malformed."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"not JSON: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get(VERBS_KEY), dict):
        raise ValueError(f'expected an object with "{VERBS_KEY}"')
    return {str(cell): _cell_verbs(cell, verbs) for cell, verbs in data[VERBS_KEY].items()}


def _cell_verbs(cell: str, verbs: Any) -> dict[str, str]:
    if not isinstance(verbs, Mapping) or not all(
        isinstance(phrase, str) and isinstance(composite, str)
        for phrase, composite in verbs.items()
    ):
        raise ValueError(f"{VERBS_KEY}.{cell}: expected phrases mapped to composite names")
    return dict(verbs)
