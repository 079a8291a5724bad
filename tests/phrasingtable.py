"""The phrasing table (tests/phrasings/*.toml) and how one row is judged.

A row is a phrasing an operator might use and what it must do: the same as a plainer phrasing
(`same_as`), a reply that says certain things (`answer_contains`) or an event of a kind
(`event`). Every row runs through the real daemon in-process, typed text against the simulator on
loopback, so what is judged is what an operator at the cell would get. Sessions are cached: the
plain phrasing and the lines said before are often shared by several rows.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell

from voiced.config import Config, load_config, with_overrides
from voiced.events import EventLog
from voiced.paths import DataDir, ensure_data_dir
from voiced.service.daemon import Daemon, Session

TABLE = Path(__file__).parent / "phrasings"
CELLS = frozenset({"sandwich", "weld", "blocks"})
HALVES = frozenset({"dev", "test"})
EXPECTATIONS = ("same_as", "answer_contains", "event")
WAKE = "computer"
FAST = """
[simulator]
time_scale = 0.001
[controller]
heartbeat_interval = 0.2
heartbeat_timeout = 2.0
"""


class TableError(ValueError):
    """A row of the table that does not follow the format (names the file and the row)."""


@dataclass(frozen=True)
class Case:
    """One row: a phrasing and what it must do."""

    source: str
    """file:row, for messages."""
    cell: str
    form: str
    half: str
    say: str
    before: tuple[str, ...] = ()
    """Said first, from the cell's initial scene; each must be acted on or answered."""
    same_as: str | None = None
    answer_contains: tuple[str, ...] = ()
    event: str | None = None

    @property
    def name(self) -> str:
        return f"{self.cell}/{self.form}: {self.say}"


def load_table(root: Path = TABLE) -> list[Case]:
    """Every row of every file, in file then row order."""
    cases: list[Case] = []
    for path in sorted(root.glob("*.toml")):
        with path.open("rb") as f:
            rows = tomllib.load(f).get("case", [])
        cases += [parse_row(row, f"{path.name}:{i + 1}") for i, row in enumerate(rows)]
    return cases


def parse_row(row: Mapping[str, Any], source: str) -> Case:
    """One `[[case]]` table, checked: a known cell and half, exactly one expectation."""
    unknown = set(row) - {"cell", "form", "half", "say", "before", *EXPECTATIONS}
    given = [key for key in EXPECTATIONS if key in row]
    problem = (
        f"unknown keys {sorted(unknown)}" if unknown
        else f"cell {row.get('cell')!r} is not one of {sorted(CELLS)}"
        if row.get("cell") not in CELLS
        else f"half {row.get('half')!r} is not dev or test" if row.get("half") not in HALVES
        else "no say" if not isinstance(row.get("say"), str) or not row["say"].strip()
        else f"exactly one of {', '.join(EXPECTATIONS)} is needed, not {given}" if len(given) != 1
        else None
    )  # fmt: skip
    if problem is not None:
        raise TableError(f"{source}: {problem}")
    answer = row.get("answer_contains", ())
    return Case(
        source, row["cell"], str(row.get("form", "")), row["half"], row["say"],
        tuple(row.get("before", ())), row.get("same_as"),
        tuple([answer] if isinstance(answer, str) else answer), row.get("event"),
    )  # fmt: skip


@dataclass(frozen=True)
class Said:
    """What the daemon did for one line."""

    acted: bool
    """It was understood: interpreted into steps, or answered as a question."""
    replies: tuple[str, ...]
    """Everything spoken for it."""
    primitives: tuple[str, ...]
    """The motion lines it sent, without their sequence numbers."""
    kinds: frozenset[str]
    """Every event kind emitted from its utterance on."""


@dataclass(frozen=True)
class Outcome:
    """A session: each line's result and the cell's state at the end."""

    lines: tuple[Said, ...]
    final: Mapping[str, Any]


@dataclass(frozen=True)
class Verdict:
    passed: bool
    why: str = ""


@dataclass
class Runner:
    """Runs sessions in-process, each once (the cache is keyed by cell and lines)."""

    workdir: Path
    sessions: dict[tuple[str, tuple[str, ...]], Outcome] = field(default_factory=dict)
    config: Config | None = None
    cells: dict[str, Cell] = field(default_factory=dict)
    """Loaded once: reading the settings and a cell file is a good part of a short session."""

    def outcome(self, cell: str, lines: tuple[str, ...]) -> Outcome:
        key = (cell, lines)
        if key not in self.sessions:
            self.sessions[key] = asyncio.run(self._session(cell, lines, len(self.sessions)))
        return self.sessions[key]

    def judge(self, case: Case) -> Verdict:
        before = self.outcome(case.cell, case.before)
        failed = [line for line, said in zip(case.before, before.lines, strict=True)
                  if not said.acted]  # fmt: skip
        if failed:
            return Verdict(False, f"a line said before was not acted on: {failed}")
        said = self.outcome(case.cell, (*case.before, case.say))
        mine = said.lines[-1]
        if case.answer_contains:
            reply = " ".join(mine.replies).lower()
            missing = [part for part in case.answer_contains if part.lower() not in reply]
            return Verdict(not missing, f"reply {reply!r} lacks {missing}")
        if case.event is not None:
            return Verdict(case.event in mine.kinds, f"no {case.event} event: {sorted(mine.kinds)}")
        assert case.same_as is not None
        plain = self.outcome(case.cell, (*case.before, case.same_as))
        return same_as(mine, said.final, plain.lines[-1], plain.final, before.final)

    def _config(self) -> Config:
        if self.config is None:
            path = self.workdir / "config.toml"
            path.write_text(FAST, encoding="utf-8")
            config = load_config(str(path), environ={})
            self.config = with_overrides(config, {"controller": {"address": "sim"}})
        return self.config

    def _cell(self, name: str) -> Cell:
        if name not in self.cells:
            self.cells[name] = load_cell(name)
        return self.cells[name]

    async def _session(self, cell_name: str, lines: tuple[str, ...], number: int) -> Outcome:
        run = self.workdir / f"s{number}"
        run.mkdir(parents=True)
        text = run / "session.txt"
        # A blank line after each is a pause: the query frame submits the line on its own.
        text.write_text("".join(f"{WAKE} {line}\n\n" for line in lines), encoding="utf-8")
        config, cell = self._config(), self._cell(cell_name)
        out = io.StringIO()
        session = Session(config, cell, cell.initial_scene, DataDir(ensure_data_dir(run / "data")),
                          text=str(text), events=EventLog(out))  # fmt: skip
        if await Daemon(session).run() != 0:
            raise RuntimeError(f"the daemon failed on {lines}")
        return _outcome([json.loads(line) for line in out.getvalue().splitlines()], len(lines))


def same_as(
    mine: Said, final: Mapping[str, Any], plain: Said, plain_final: Mapping[str, Any],
    start: Mapping[str, Any],
) -> Verdict:  # fmt: skip
    """The phrasing left the cell as the plain one did and changed it; when the plain one
    changes nothing the state can show, it moved the arm the same way, or else said the same."""
    if not plain.acted:
        return Verdict(False, "the plain phrasing itself was not acted on (a bad row)")
    if not mine.acted:
        return Verdict(False, f"not understood: {' '.join(mine.replies)!r}")
    if plain_final != start:
        if final == start:
            return Verdict(False, "it changed nothing")
        return Verdict(final == plain_final, f"ended in {final}, not {plain_final}")
    if plain.primitives:
        return Verdict(mine.primitives == plain.primitives, "it moved differently")
    return Verdict(
        final == start and mine.replies == plain.replies,
        f"it said {mine.replies}, not {plain.replies}",
    )


def _outcome(records: list[dict[str, Any]], count: int) -> Outcome:
    ids = [r["correlation_id"] for r in records if r["event"] == "utterance"]
    if len(ids) != count:
        raise RuntimeError(f"{count} lines said, {len(ids)} heard")
    first = {cid: next(i for i, r in enumerate(records) if r.get("correlation_id") == cid)
             for cid in ids}  # fmt: skip
    lines = []
    for n, cid in enumerate(ids):
        end = first[ids[n + 1]] if n + 1 < len(ids) else len(records)
        own = [r for r in records if r.get("correlation_id") == cid]
        after = [r for r in records[first[cid] : end] if r.get("correlation_id") in (cid, None)]
        lines.append(Said(
            acted=_acted(own),
            replies=tuple(r["text"] for r in own if r["event"] == "feedback"),
            primitives=tuple(r["line"].split(" ", 1)[1] for r in own if r["event"] == "primitive"),
            kinds=frozenset(r["event"] for r in after) | frozenset(r["event"] for r in own),
        ))  # fmt: skip
    final = next(r["state"] for r in reversed(records) if r["event"] == "final_state")
    return Outcome(tuple(lines), final)


_NEUTRAL = frozenset({"utterance", "feedback", "interpretation", "submit", "frame", "target",
                      "error", "rejected", "llm", "dropped"})  # fmt: skip
"""Event kinds every line may cause, understood or not."""


def _acted(own: list[dict[str, Any]]) -> bool:
    """Understood: interpreted into steps, answered, or acted on some other way (a behaviour's
    own event, "paused" say) without being refused."""
    kinds = {r["event"] for r in own}
    if any(r["event"] == "interpretation" and r["sequence"] for r in own) or "answer" in kinds:
        return True
    refused = any(r["event"] == "interpretation" for r in own)
    return not refused and bool(kinds - _NEUTRAL)


@contextmanager
def quiet_logs() -> Iterator[None]:
    """Hundreds of sessions log thousands of lines nobody reads: drop them, then restore."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    try:
        yield
    finally:
        structlog.configure(**saved)


def run_table(cases: list[Case]) -> dict[str, Verdict]:
    """Judge every case (keyed by `Case.source`)."""
    # On tmpfs the history's and the scene store's fsyncs cost nothing: most of a session's time
    # on a disk.
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as tmp, quiet_logs():
        runner = Runner(Path(tmp))
        return {case.source: _judged(runner, case) for case in cases}


def _judged(runner: Runner, case: Case) -> Verdict:
    """A session that goes wrong fails its own row, not the table."""
    try:
        return runner.judge(case)
    except RuntimeError as error:
        return Verdict(False, f"the session failed: {error}")
