"""The grammar tier: everyday commands parsed against the cell's vocabulary, no network.

Failures are seed 003's structured objects, so the caller can speak a precise reason ("I don't
have avocado ...") or hand the text to the LLM tier.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from robot.cell import Cell
from rules.normalize import normalize
from voiced.interpreter.result import Interpretation, SequenceStep
from voiced.interpreter.vocabulary import Vocabulary

ErrorType = Literal["lexical_failure", "semantic_failure", "syntax_error"]

_FILLERS = frozenset(
    [
        "please",
        "the",
        "a",
        "an",
        "some",
        "then",
        "now",
        "can",
        "could",
        "would",
        "you",
        "robot",
        "just",
        "for",
        "me",
        "and",
        "also",
    ]
)
_ADD_VERBS = frozenset({"add", "put", "place", "stack", "layer"})
_HOME = ("go home", "home", "return home", "go back home", "go to home", "return to home")
_CLEAR = ("clear assembly", "clear the assembly", "start over", "clear everything", "clear it")
_UNDO = ("put it back", "undo", "undo that", "take it back", "return it")


@dataclass(frozen=True)
class Failure:
    """Seed 003's structured failure object."""

    error_type: ErrorType
    token: str
    position: int
    message: str
    suggestion: str | None
    context: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "error_type": self.error_type,
            "token": self.token,
            "position": self.position,
            "message": self.message,
            "suggestion": self.suggestion,
            "context": self.context,
        }


@dataclass(frozen=True)
class ParseResult:
    """Seed 003's ParseResult: a sequence on success, a failure object otherwise."""

    success: bool
    sequence: tuple[SequenceStep, ...] = ()
    meaning: str = ""
    error: Failure | None = None
    notes: tuple[str, ...] = field(default=())


class Grammar:
    """Parses one command against a cell."""

    def __init__(self, cell: Cell) -> None:
        self.cell = cell
        self.vocab = Vocabulary.from_cell(cell)

    def parse(self, text: str) -> ParseResult:
        said = normalize(text)
        if said in _HOME and "go_home" in self.vocab.composites:
            return ParseResult(True, (SequenceStep("go_home"),), "Go to the home position.")
        if said in _CLEAR and "clear_assembly" in self.vocab.composites:
            seq = (SequenceStep("clear_assembly"), SequenceStep("go_home"))
            return ParseResult(True, seq, "Clear the assembly and go home.")
        if said in _UNDO and "return_to_stack" in self.vocab.composites:
            return ParseResult(True, (SequenceStep("return_to_stack"),), "Put the held item back.")
        tokens = said.split()
        if tokens and tokens[0] in _ADD_VERBS and "add_layer" in self.vocab.composites:
            return self._parse_add(said, tokens)
        if (
            tokens[:2] in (["go", "to"], ["move", "to"])
            and "move_to_position" in self.vocab.composites
        ):
            return self._parse_move(said, tokens)
        return self._unknown_verb(said, tokens)

    def _parse_add(self, said: str, tokens: list[str]) -> ParseResult:
        items: list[str] = []
        zone: str | None = None
        i = 1
        while i < len(tokens):
            item, used = self.vocab.longest(self.vocab.items, tokens, i)
            if used:
                items.append(item)
                i += used
                continue
            if tokens[i] in ("on", "to", "onto", "at", "in"):
                zone, used = self.vocab.longest(self.vocab.zones, _drop_fillers(tokens[i + 1 :]), 0)
                if zone:
                    break
            if tokens[i] in _FILLERS or tokens[i] in ("on", "to", "onto", "at", "in", "top", "of"):
                i += 1
                continue
            return ParseResult(False, error=self._unknown_item(said, tokens[i], tokens))
        if not items:
            error = Failure("syntax_error", tokens[0], 0, "Add what?", self._items_hint(), said)
            return ParseResult(False, error=error)
        seq = [SequenceStep("set_active_zone", {"zone": zone})] if zone else []
        seq += [SequenceStep("add_layer", {"item": item}) for item in items]
        where = f" on {zone}" if zone else ""
        return ParseResult(True, tuple(seq), f"Add {_join(items)}{where}.")

    def _parse_move(self, said: str, tokens: list[str]) -> ParseResult:
        rest = _drop_fillers(tokens[2:])
        position, used = self.vocab.longest(self.vocab.positions, rest, 0)
        if not used or used != len(rest):
            token = " ".join(rest) or "(nothing)"
            names = ", ".join(self.cell.poses)
            message = f"Unknown position '{token}'"
            error = Failure("semantic_failure", token, said.find(token), message,
                            f"Available positions: {names}", said)  # fmt: skip
            return ParseResult(False, error=error)
        seq = (SequenceStep("move_to_position", {"position": position}),)
        return ParseResult(True, seq, f"Move to {position}.")

    def _unknown_item(self, said: str, token: str, tokens: list[str]) -> Failure:
        message = f"I don't have {token}"
        return Failure("semantic_failure", token, said.find(token), message,
                       self._items_hint(), said)  # fmt: skip

    def _items_hint(self) -> str:
        return f"available ingredients are: {_join(list(self.cell.objects), 'and')}"

    def _unknown_verb(self, said: str, tokens: list[str]) -> ParseResult:
        token = tokens[0] if tokens else ""
        hint = "Try: " + ", ".join(f'"{p}"' for p in self._examples())
        error = Failure("lexical_failure", token, 0, f"Unknown command '{said}'", hint, said)
        return ParseResult(False, error=error)

    def _examples(self) -> list[str]:
        examples = []
        if "add_layer" in self.vocab.composites and self.cell.objects:
            examples.append(f"add {next(iter(self.cell.objects))}")
        if "move_to_position" in self.vocab.composites:
            examples.append("go to position 1")
        if "go_home" in self.vocab.composites:
            examples.append("go home")
        return examples


def interpret(grammar: Grammar, text: str, correlation_id: str | None = None) -> Interpretation:
    """The grammar tier as an Interpretation (seed 000's result)."""
    result = grammar.parse(text)
    if result.success:
        return Interpretation(
            interpretation=result.meaning,
            sequence=result.sequence,
            pass1_sequence=result.sequence,
            confidence=0.95,
            validated=True,
            source="grammar",
            correlation_id=correlation_id,
        )
    assert result.error is not None
    error = result.error
    feedback = error.message + (f" — {error.suggestion}" if error.suggestion else "")
    return Interpretation(
        interpretation=f"Could not act on: {text}",
        confidence=0.1,
        user_feedback=feedback,
        validation_issues=(f"{error.error_type}: {error.message}",),
        source="grammar",
        correlation_id=correlation_id,
    )


def _drop_fillers(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t not in _FILLERS]


def _join(names: list[str], last: str = "and") -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + f" {last} " + names[-1]
