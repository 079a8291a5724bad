"""Secondary / learning commands (seed 000) and the memory writer.

"when I say lunch, make bread cheese bread", "call that a BLT", "remember this as the usual":
the grammar recognises the directive (`match_directive`) and produces a `Learning`; the daemon
asks the operator to confirm, then `MemoryWriter.save` writes the tier-2 composite to
`learned_composites.json` and the alias to `phrase_bank.json`'s `learned_aliases`, atomically,
only at confidence >= the threshold and never for creative results. `MemoryWriter.load` applies
the saved composites at start-up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import structlog

from voiced.errors import CellError, Problem, VoicedError
from voiced.interpreter.confidence import LEARN_THRESHOLD
from voiced.interpreter.phrasebank import LEARNED_KEY
from voiced.interpreter.result import Interpretation
from voiced.paths import DataDir, atomic_write_json
from voiced.robot.cell import Cell
from voiced.robot.cellsteps import with_learned
from voiced.robot.sequence import SequenceStep, steps_to_json

log = structlog.get_logger(__name__)

LEARNING_FEEDBACK = "Mapping/composite noted — will be saved to memory system"
"""Seed 000's user_feedback for a learning directive."""
COMPOSITES_KEY = "learned_composites"
"""learned_composites.json: {"learned_composites": {cell: {name: {description, sequence,
phrase}}}} (seed 000's instruction_set.json tier-2 entries, per cell)."""
FORMAT_VERSION = 1

_ARTICLES = ("a ", "an ", "the ")
_CALL = re.compile(
    r"^(?:lets |please )?(?:call|name) (?:that|this|it)(?: as| to be)? (?P<phrase>.+)$"
)
_REMEMBER = re.compile(r"^(?:remember|save|store) (?:that|this|it) as (?P<phrase>.+)$")
_REMEMBER_BODY = re.compile(r"^(?:remember|save) (?P<body>.+?) as (?P<phrase>.+)$")
_WHEN = re.compile(r"^(?:when|whenever|if) i say (?P<rest>.+)$")
_MEANS = re.compile(r"^(?:from now on )?(?P<phrase>.+?) (?:means|should mean) (?P<body>.+)$")
BODY_INTROS = ("i mean", "it means", "that means", "you should", "i want you to", "i want",
               "you", "please", "then", "it is", "thats", "that is")  # fmt: skip
"""Words between the phrase and the action ("when I say lunch, I mean bread cheese bread")."""


class LearningRefused(VoicedError):
    """The memory writer will not save this (confidence too low, a creative result)."""


@dataclass(frozen=True)
class Learning:
    """A learning directive, ready to confirm and save."""

    name: str
    """The tier-2 composite's name (snake_case, from the phrase)."""
    phrase: str
    """The spoken alias (normalised)."""
    sequence: tuple[SequenceStep, ...]
    """What it runs (seed 000 steps of existing composites)."""
    confidence: float
    """How sure the interpretation of the action was."""
    is_creative: bool = False
    """Creative results are never learned (seed 000)."""

    @property
    def description(self) -> str:
        steps = ", ".join(_step_text(s) for s in self.sequence)
        return f"Learned by voice as '{self.phrase}': {steps}"

    @classmethod
    def from_interpretation(cls, result: Interpretation) -> Learning:
        """The directive behind a result with `composite_name` set (grammar or LLM tier)."""
        if result.composite_name is None:
            raise ValueError("not a learning result: composite_name is not set")
        phrase = result.composite_name.replace("_", " ")
        return cls(result.composite_name, phrase, result.sequence, result.confidence,
                   result.is_creative)  # fmt: skip


@dataclass(frozen=True)
class Directive:
    """A learning command's parts, before the action is parsed."""

    phrase: str | None
    """The alias, when the pattern fixes it ("call that X", "X means Y")."""
    body: str | None
    """The action's words; None when the directive names the last sequence."""
    rest: str | None = None
    """"when I say ..." : phrase and action run together, split by the grammar."""


def match_directive(said: str) -> Directive | None:
    """The learning directive in normalised text, if it is one."""
    for pattern in (_CALL, _REMEMBER):
        found = pattern.match(said)
        if found:
            return Directive(clean_phrase(found["phrase"]), None)
    found = _WHEN.match(said)
    if found:
        return Directive(None, None, found["rest"])
    for pattern in (_REMEMBER_BODY, _MEANS):
        found = pattern.match(said)
        if found:
            return Directive(clean_phrase(found["phrase"]), strip_intro(found["body"]))
    return None


def clean_phrase(phrase: str) -> str:
    phrase = phrase.strip()
    for article in _ARTICLES:
        if phrase.startswith(article):
            return phrase[len(article) :].strip()
    return phrase


def strip_intro(body: str) -> str:
    for intro in BODY_INTROS:
        if body.startswith(intro + " "):
            return body[len(intro) + 1 :]
    return body


def splits(rest: str) -> list[tuple[str, str]]:
    """(phrase, action) candidates for "when I say <rest>", shortest phrase first."""
    words = rest.split()
    return [
        (clean_phrase(" ".join(words[:k])), strip_intro(" ".join(words[k:])))
        for k in range(1, len(words))
    ]


def composite_name(phrase: str) -> str:
    """A snake_case identifier: "my usual" -> my_usual, "2 breads" -> learned_2_breads."""
    name = re.sub(r"[^a-z0-9]+", "_", phrase.lower()).strip("_") or "learned"
    return f"learned_{name}" if name[0].isdigit() else name


def _step_text(step: SequenceStep) -> str:
    args = ", ".join(str(v) for v in step.params.values())
    return f"{step.instruction}({args})"


class MemoryWriter:
    """Persists learned composites and aliases in the data directory."""

    def __init__(self, data_dir: DataDir, threshold: float = LEARN_THRESHOLD) -> None:
        self.data_dir = data_dir
        self.threshold = threshold
        self.last_error: CellError | None = None
        """What the last `load` skipped, or None."""

    def save(self, learning: Learning, cell: Cell) -> Cell:
        """Write the composite and the alias (each file atomically) and return the cell with the
        composite. Raises LearningRefused (creative, below the threshold) or CellError (the
        sequence does not fit the cell, or the name is a built-in composite)."""
        if learning.is_creative:
            raise LearningRefused("creative results are never learned")
        if learning.confidence < self.threshold:
            raise LearningRefused(
                f"confidence {learning.confidence:.2f} is below the learning threshold "
                f"{self.threshold:.2f}"
            )
        learned = _with_learned(cell, learning)
        steps = steps_to_json(learning.sequence)
        # Both files are read (and checked) before either is written.
        composites = _read_object(self.data_dir.learned_composites)
        bank = _read_object(self.data_dir.phrase_bank)
        entry = {"description": learning.description, "sequence": steps, "phrase": learning.phrase}
        _section(composites, COMPOSITES_KEY, cell.name)[learning.name] = entry
        alias = {"composite": learning.name, "sequence": steps}
        _section(bank, LEARNED_KEY, cell.name)[learning.phrase] = alias
        composites["version"] = bank["version"] = FORMAT_VERSION
        atomic_write_json(self.data_dir.learned_composites, composites)
        atomic_write_json(self.data_dir.phrase_bank, bank)
        log.info("learned", name=learning.name, phrase=learning.phrase, steps=len(steps))
        return learned

    def load(self, cell: Cell) -> Cell:
        """`cell` with every saved learned composite of its name applied (start-up). A malformed
        file or entry is skipped, logged and kept in `last_error` (a CellError naming the file
        and the path inside it); it never stops the daemon."""
        path = self.data_dir.learned_composites
        problems: list[Problem] = []
        self.last_error = None
        if not path.exists():
            return cell
        entries = _entries(path, cell.name, problems)
        for name, entry in entries.items():
            where = f"{COMPOSITES_KEY}.{cell.name}.{name}"
            cell = _apply(cell, path, where, name, entry, problems)
        if problems:
            self.last_error = CellError(problems)
            log.warning("learned composites skipped", problems=[str(p) for p in problems])
        return cell


def _with_learned(cell: Cell, learning: Learning) -> Cell:
    existing = cell.composites.get(learning.name)
    if existing is not None and existing.tier == 2:
        # Re-teaching a learned name replaces it.
        cell = replace(cell, composites={k: v for k, v in cell.composites.items()
                                         if k != learning.name})  # fmt: skip
    return with_learned(cell, learning.name, learning.description,
                        steps_to_json(learning.sequence))  # fmt: skip


def _entries(path: Path, cell_name: str, problems: list[Problem]) -> Mapping[str, Any]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        problems.append(Problem(str(path), "", f"cannot read learned composites: {error}"))
        return {}
    section = data.get(COMPOSITES_KEY) if isinstance(data, dict) else None
    if not isinstance(section, dict):
        problems.append(Problem(str(path), COMPOSITES_KEY, "expected an object of cells"))
        return {}
    entries = section.get(cell_name, {})
    if not isinstance(entries, dict):
        problems.append(Problem(str(path), f"{COMPOSITES_KEY}.{cell_name}", "expected an object"))
        return {}
    return entries


def _apply(
    cell: Cell, path: Path, where: str, name: str, entry: object, problems: list[Problem]
) -> Cell:
    if not isinstance(entry, dict) or not isinstance(entry.get("sequence"), list):
        problems.append(Problem(str(path), where, 'expected {"description", "sequence": [...]}'))
        return cell
    description = entry.get("description")
    try:
        return with_learned(cell, name, str(description or name), entry["sequence"])
    except CellError as error:
        problems += [Problem(str(path), f"{where}.{p.path}", p.message) for p in error.problems]
        return cell


def _read_object(path: Path) -> dict[str, Any]:
    """The JSON object in `path`, or a new one when it is missing. A malformed file is not
    overwritten blindly: the error is raised (CellError) so nothing learned is lost."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CellError([Problem(str(path), "", f"cannot update: {error}")]) from error
    if not isinstance(data, dict):
        raise CellError([Problem(str(path), "", "expected a JSON object")])
    return data


def _section(data: dict[str, Any], key: str, cell_name: str) -> dict[str, Any]:
    section = data.setdefault(key, {})
    if not isinstance(section, dict):
        section = data[key] = {}
    cell_part = section.setdefault(cell_name, {})
    if not isinstance(cell_part, dict):
        cell_part = section[cell_name] = {}
    return cell_part
