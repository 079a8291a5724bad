"""`voiced check-config` and `voiced check-cell`: every file a run would read, checked by the
loaders that read it, each problem as `file:line: problem`.

The checks are the loaders' own (config, cell, sentence templates, scene, controller key); this
module only collects their problems and puts a line number on each, so an editor or CI can
jump to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voiced.checks.tomlwhere import line_of_path, line_of_syntax_error
from voiced.config import (
    CONFIG_ENV,
    DEFAULT_CONFIG_PATH,
    Config,
    load_config,
    resolve_config_path,
)
from voiced.errors import CellError, ConfigError, Problem, VoicedError
from voiced.inputs.models import model_problems
from voiced.link.key import controller_key
from voiced.robot.cell import Cell
from voiced.robot.cellfile import cell_path, check_cell, load_cell
from voiced.robot.view import load_scene_file

_SOURCE_LINE = re.compile(r"^(.*):(\d+)$")


@dataclass(frozen=True)
class FileProblem:
    """One problem found in one file."""

    file: str
    """The file, as the configuration or the command line named it."""
    line: int | None
    """1-based line of the file; None when the problem is the whole file (missing, unreadable)."""
    where: str
    """Dotted path inside the file (`composites.add_layer.params`); empty for the whole file."""
    message: str
    """What is wrong and what was expected."""

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}" if self.line else self.file
        return (
            f"{place}: {self.where}: {self.message}" if self.where else f"{place}: {self.message}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "path": self.where, "message": self.message}


@dataclass(frozen=True)
class CheckReport:
    """What a check looked at and what it found."""

    checked: tuple[str, ...]
    """Every file read, in the order checked."""
    problems: tuple[FileProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """The `--json` document (README, "Machine-readable output")."""
        return {
            "ok": self.ok,
            "checked": list(self.checked),
            "problems": [problem.to_dict() for problem in self.problems],
        }


def located(problems: Iterable[Problem]) -> list[FileProblem]:
    """Loader problems with their line: one the loader put in the source (`file:12`), one in
    a syntax error's message, else the line that writes the problem's dotted path."""
    texts: dict[str, str] = {}
    found: list[FileProblem] = []
    for problem in problems:
        file, line = problem.source, None
        given = _SOURCE_LINE.match(file)
        if given is not None:
            file, line = given.group(1), int(given.group(2))
        line = line or line_of_syntax_error(problem.message)
        if line is None and problem.path:
            if file not in texts:
                texts[file] = _text(file)
            line = line_of_path(texts[file], problem.path)
        found.append(FileProblem(file, line, problem.path, problem.message))
    # Each file's problems top to bottom, as an editor walks them (whole-file ones first);
    # the files in the order they were checked.
    order = {file: i for i, file in enumerate(dict.fromkeys(p.file for p in found))}
    return sorted(found, key=lambda p: (order[p.file], p.line or 0))


def check_cell_file(ref: str) -> CheckReport:
    """A cell file alone (a bundled name or a path), its `[sentences]` table included."""
    return CheckReport((str(cell_path(ref)),), tuple(located(_cell_problems(ref))))


NO_CONFIG_FILE = (
    f"no configuration file (none given, ${CONFIG_ENV} not set, {DEFAULT_CONFIG_PATH} absent): "
    "the defaults"
)


def check_config_file(path: str | None, given_by: str = "--config") -> CheckReport:
    """The configuration and every file it names: the cell, the starting scene, the key, the
    keyword models."""
    try:
        config = load_config(path, given_by=given_by)
    except ConfigError as error:
        return _with_its_cell(path, error)
    checked = [config.source or NO_CONFIG_FILE]
    problems: list[Problem] = []
    try:
        controller_key(config)  # a key file that is named must be there and usable
    except VoicedError as exc:
        problems.append(Problem(config.source or "defaults", "controller.key_file", str(exc)))
    problems += _mqtt_problems(config)
    problems += _page_problems(config)
    problems += model_problems(config)
    cell_ref = config_relative(config, config.cell.name, bare_names=True)
    checked.append(str(cell_path(cell_ref)))
    cell_found = _named_cell_problems(cell_ref, config.source or "defaults")
    problems += cell_found
    if config.cell.scene:
        scene_ref = config_relative(config, config.cell.scene)
        checked.append(scene_ref)
        if not cell_found:
            problems += _scene_problems(cell_ref, scene_ref)
    return CheckReport(tuple(checked), tuple(located(problems)))


def _with_its_cell(path: str | None, error: ConfigError) -> CheckReport:
    """A configuration that does not load: its problems, and the cell file it names checked
    too, so that one run of the check names every mistake (not the cell's after the config's
    are fixed). Unless the cell's name is itself a problem, or there is no file to read."""
    checked = [path or ""]
    problems = list(error.problems)
    named = _cell_named(path) if path else None
    if path and named is not None and not any(p.path.startswith("cell") for p in problems):
        cell_ref = named
        if "/" in named or named.endswith(".toml"):
            cell_ref = str(Path(path).parent / Path(named).expanduser())
        checked.append(str(cell_path(cell_ref)))
        problems += _named_cell_problems(cell_ref, path)
    return CheckReport(tuple(checked), tuple(located(problems)))


def _named_cell_problems(cell_ref: str, source: str) -> list[Problem]:
    """The problems of the cell a configuration (`source`) names."""
    found = _cell_problems(cell_ref)
    if found and not Path(cell_path(cell_ref)).exists():
        # No file to point into: the mistake is the config's, at the key that names it.
        found = [Problem(source, "cell.name", f"{p.source}: {p.message}") for p in found]
    return found


def _cell_named(path: str) -> str | None:
    """`[cell] name` as the file writes it, if it can be read at all (None otherwise)."""
    import tomllib

    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    cell = data.get("cell")
    name = cell.get("name") if isinstance(cell, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def _mqtt_problems(config: Config) -> list[Problem]:
    """The broker's credentials and certificate files must be there and readable."""
    from voiced.mqtt.connect import broker_for

    try:
        broker_for(config.mqtt, config)
    except VoicedError as exc:
        return [Problem(config.source or "defaults", "mqtt", str(exc))]
    return []


def _page_problems(config: Config) -> list[Problem]:
    """The STOP token file, read as the daemon reads it when the page is on."""
    from voiced.page.server import read_token

    if not config.page.enabled:
        return []
    try:
        read_token(config.page, lambda path: resolve_config_path(config, path))
    except ConfigError as error:
        source = config.source or "defaults"
        return [Problem(source, p.path, f"{p.source}: {p.message}") for p in error.problems]
    return []


def _cell_problems(ref: str) -> list[Problem]:
    """The loader's problems, then templates a stop word takes (the stop rule hears it first)."""
    from voiced.interpreter.templates import stop_words_in

    try:
        problems = check_cell(ref)
    except UnicodeDecodeError as error:
        # The loader reads the text before it can name the file in a problem: named here.
        return [Problem(str(cell_path(ref)), "", f"not UTF-8 text (byte {error.start}): "
                        "a cell file is TOML text")]  # fmt: skip
    if problems:
        return problems
    cell = load_cell(ref)
    return stop_words_in(cell) + examples_not_understood(cell)


def examples_not_understood(cell: Cell) -> list[Problem]:
    """`[cell] examples` the cell's own grammar and templates do not read: "what can I say"
    and "Try: ..." would teach the operator a command that is refused. An example written as
    a question ("how many cups are left?") is answered, not read, and is left alone."""
    from voiced.interpreter.grammar import Grammar
    from voiced.interpreter.templates import Templates

    grammar = Grammar(cell)
    templates = Templates(cell, grammar.vocabulary)
    problems = []
    for i, example in enumerate(cell.examples):
        if templates.match(example) is not None or example.rstrip().endswith("?"):
            continue
        parsed = grammar.parse(example, cell.initial_scene)
        if parsed.success and not parsed.snaps:
            continue
        why = parsed.error.message if parsed.error is not None else "read only by guessing"
        said = f"{example!r} is not a command this cell reads: {why}"
        problems.append(Problem(cell.source, f"cell.examples[{i}]", said))
    return problems


def _scene_problems(cell_ref: str, scene_ref: str) -> list[Problem]:
    try:
        load_scene_file(load_cell(cell_ref), scene_ref)
    except CellError as error:
        return list(error.problems)
    except UnicodeDecodeError as error:
        return [Problem(scene_ref, "", f"not UTF-8 text (byte {error.start})")]
    return []


def config_relative(config: Config, value: str, bare_names: bool = False) -> str:
    """A path from the config: relative to the config file's directory; with `bare_names`, a
    bare name (no `/`, no `.toml`) is a bundled cell's and stays as it is."""
    if bare_names and "/" not in value and not value.endswith(".toml"):
        return value
    return str(resolve_config_path(config, value))


def _text(file: str) -> str:
    try:
        return Path(file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
