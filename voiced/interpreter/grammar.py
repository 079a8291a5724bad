"""The grammar tier: everyday commands parsed against the live cell's vocabulary, no network.

Text -> tokens (lexer.py) -> clauses (clauses.py) -> composite calls (lowering.py, following the
semantic map in semantic.py). Failures are seed 003's structured objects, so the caller can
speak a precise reason ("I don't have avocado — available ingredients are: ...") or hand the
text to the LLM tier (`Failure.fallback` says which). `interpret` is the offline interpreter:
phrase bank, then grammar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from voiced.interpreter import learning as learn
from voiced.interpreter.clauses import Clause, build, split, verb_index
from voiced.interpreter.confidence import NAMED_LAST, UNKNOWN, grammar_confidence
from voiced.interpreter.levels import as_one_list, in_stack_order
from voiced.interpreter.lexer import SNAP_CUTOFF, Lexed, Lexer, Token
from voiced.interpreter.lowering import lower
from voiced.interpreter.phrasebank import PhraseBank
from voiced.interpreter.places import clause_positions
from voiced.interpreter.result import Interpretation
from voiced.interpreter.semantic import (
    Context,
    Unparsed,
    describe,
    example_hint,
    unknown_failure,
    verb_for_composite,
    verb_phrases,
)
from voiced.interpreter.vocabulary import Entry, Vocabulary
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.negation import NEGATIONS

ErrorType = Literal["lexical_failure", "semantic_failure", "syntax_error"]
Fallback = Literal["resolve_phrase", "interpret", "none"]
_INHERITED = frozenset({"put", "pick", "go", "move", "nudge", "routine", "run", "switch",
                        "attach", "release", "return", "clear", "wait", "speed"})  # fmt: skip
"""Verbs a following clause without a verb borrows ("add bread then cheese")."""
_SAID_TWICE = frozenset({"undo", "restart", "mistake", "finish"})
"""Recovery verbs that said twice in a row mean once ("oops, my mistake")."""
_PUTTING_AWAY = frozenset({"return", "release"})


@dataclass(frozen=True)
class Failure:
    """Seed 003's structured failure object."""

    error_type: ErrorType
    """lexical_failure (a word the cell does not know), semantic_failure (known words, no
    meaning here: unknown item, unsupported action) or syntax_error (known words, no structure)."""
    token: str
    """The problematic word or phrase."""
    position: int
    """Character offset of `token` in `context`."""
    message: str
    """Human-readable: what is wrong ("I don't have avocado")."""
    suggestion: str | None
    """What to say instead, or what is available; never empty from the grammar."""
    context: str
    """The normalised command the position refers to."""
    fallback: Fallback = "interpret"
    """What the LLM tier may do: `resolve_phrase` (seed 003's resolver: map the unknown verb
    phrase to a composite), `interpret` (the whole command, three passes), `none` (final: the
    feedback is the answer — an item the cell does not have cannot be conjured up)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "error_type": self.error_type,
            "token": self.token,
            "position": self.position,
            "message": self.message,
            "suggestion": self.suggestion,
            "context": self.context,
            "fallback": self.fallback,
        }

    @property
    def negates(self) -> bool:
        """The words at fault open with a negation ("don't make me a latte"): a refusal that
        must reach the operator as it is, whatever else could be said about the words."""
        return self.error_type == "semantic_failure" and bool(
            NEGATIONS & set(self.token.split()[:2])
        )

    @property
    def feedback(self) -> str:
        """Seed 000's user_feedback: "I don't have avocado — available ingredients are: ..."."""
        return self.message + (f" — {self.suggestion}" if self.suggestion else "")


@dataclass(frozen=True)
class ParseResult:
    """Seed 003's ParseResult: a sequence on success, a failure object otherwise."""

    success: bool
    """Whether a sequence was found."""
    sequence: tuple[SequenceStep, ...] = ()
    """The composite calls, in order."""
    meaning: str = ""
    """One sentence: what the command was understood to mean."""
    error: Failure | None = None
    """Why not, when success is False."""
    notes: tuple[str, ...] = field(default=())
    """Best-effort readings taken ("both stacks: the two with layers"); each lowers confidence."""
    snaps: tuple[tuple[str, str], ...] = ()
    """(heard, taken as) for each near miss snapped to the vocabulary ("chease", "cheese")."""
    confidence: float = UNKNOWN
    """Calibrated per confidence.py."""
    learning: learn.Learning | None = None
    """Set for a learning directive ("when I say lunch, ..."): the sequence is what to learn."""


class Grammar:
    """Parses commands against one cell. Build once per cell: the vocabulary is precompiled."""

    def __init__(
        self, cell: Cell, phrase_bank: PhraseBank | None = None, *,
        snap_cutoff: float = SNAP_CUTOFF,
    ) -> None:  # fmt: skip
        self.cell = cell
        self.vocabulary = Vocabulary.from_cell(cell, verb_phrases(cell))
        self.lexer = Lexer(self.vocabulary, snap_cutoff)
        self.phrase_bank = phrase_bank if phrase_bank is not None else PhraseBank.packaged(cell)

    def with_cell(self, cell: Cell) -> Grammar:
        """The grammar of an updated cell (a composite learned), sharing the phrase bank."""
        self.phrase_bank.cell = cell
        return Grammar(cell, self.phrase_bank, snap_cutoff=self.lexer.snap_cutoff)

    def add_verb(self, phrase: str, instruction: str) -> bool:
        """Seed 003: a verb phrase the LLM resolver mapped to `instruction` (and use confirmed)
        joins the semantic map. False when the grammar has no verb for that composite."""
        sense = verb_for_composite(self.cell, instruction)
        if sense is None:
            return False
        self.lexer.add_phrase(phrase, Entry({"verb": sense}))
        return True

    def parse(
        self, text: str, scene: Scene | None = None,
        last_sequence: Sequence[SequenceStep] = (),
    ) -> ParseResult:  # fmt: skip
        """One command to a sequence (or a failure). `scene` is what the command will run on
        (for "I made a mistake", "both stacks", a tool change); `last_sequence` is the last
        executed sequence ("again", "call that a BLT")."""
        lexed = self.lexer.lex(text)
        directive = learn.match_directive(lexed.said)
        if directive is not None:
            return self._learning(directive, lexed, scene, tuple(last_sequence))
        return self._parse_lexed(lexed, scene, tuple(last_sequence))

    def same_content(self, a: str, b: str) -> bool:
        """Whether two texts name the same cell things and numbers (phrase bank fuzzy guard)."""
        return _content(self.lexer.lex(a)) == _content(self.lexer.lex(b))

    def _parse_lexed(
        self, lexed: Lexed, scene: Scene | None, last: tuple[SequenceStep, ...]
    ) -> ParseResult:
        ctx = Context(self.cell, scene, last)
        try:
            steps = self._steps(lexed, ctx)
        except Unparsed as problem:
            return ParseResult(False, error=_failure(problem, lexed), snaps=lexed.snaps)
        if not steps:  # nothing but fillers and connectives
            error = Failure("syntax_error", lexed.said, 0, "I heard nothing to do",
                            example_hint(self.cell), lexed.said, "none")  # fmt: skip
            return ParseResult(False, error=error, snaps=lexed.snaps)
        steps = _merge(self.cell, steps)
        confidence = grammar_confidence(len(lexed.snaps), len(ctx.guesses))
        return ParseResult(True, tuple(steps), describe(steps), None, tuple(ctx.guesses),
                           lexed.snaps, confidence)  # fmt: skip

    def _steps(self, lexed: Lexed, ctx: Context) -> list[SequenceStep]:
        parts = _coordinate(split(as_one_list(in_stack_order(lexed.tokens))))
        steps: list[SequenceStep] = []
        previous_verb = last_verb = None
        for index, (tokens, link) in enumerate(parts):
            at = verb_index(tokens)
            verb = tokens[at].verb() if at is not None else None
            if verb is None and previous_verb is not None and _borrows(tokens):
                verb = previous_verb
            clause = build(tokens, link, verb, at, dict(self.vocabulary.position_numbers))
            if clause.key in _SAID_TWICE and clause.verb == last_verb:
                continue  # "oops, I made a mistake" is one mistake
            if index == 0 and _is_preface(clause, parts[1:]):
                continue  # "never mind, put it back": what follows is what to do instead
            last_verb = clause.verb
            if clause.unknown:
                raise unknown_failure(clause, self.cell, lexed.said)
            lowered = lower(clause, ctx)
            steps += lowered
            ctx.previous = lowered
            ctx.previous_positions = tuple(clause_positions(clause, ctx))
            if clause.verb is not None and clause.verb.key in _INHERITED:
                previous_verb = clause.verb
        return steps

    def _learning(
        self, directive: learn.Directive, lexed: Lexed, scene: Scene | None,
        last: tuple[SequenceStep, ...],
    ) -> ParseResult:  # fmt: skip
        if directive.body is None and directive.rest is None:
            phrase = directive.phrase or ""
            if not last:
                error = Failure("semantic_failure", phrase, lexed.said.rfind(phrase),
                                "There is nothing to name yet",
                                "Run the sequence first, then say call that ...", lexed.said,
                                "none")  # fmt: skip
                return ParseResult(False, error=error)
            return self._learned(phrase, last, NAMED_LAST, (), lexed)
        candidates = learn.splits(directive.rest) if directive.rest else []
        if directive.body is not None:
            candidates = [(directive.phrase or "", directive.body)]
        for phrase, body in candidates:
            parsed = self._parse_lexed(self.lexer.lex(body), scene, last)
            if parsed.success and phrase:
                return self._learned(phrase, parsed.sequence, parsed.confidence, parsed.notes,
                                     lexed)  # fmt: skip
        error = Failure("semantic_failure", lexed.said, 0, "I could not tell what to learn",
                        "Say: when I say lunch, make bread cheese bread", lexed.said)  # fmt: skip
        return ParseResult(False, error=error, snaps=lexed.snaps)

    def _learned(
        self, phrase: str, sequence: tuple[SequenceStep, ...], confidence: float,
        notes: tuple[str, ...], lexed: Lexed,
    ) -> ParseResult:  # fmt: skip
        name = learn.composite_name(phrase)
        existing = self.cell.composites.get(name)
        if existing is not None and existing.tier == 1:
            error = Failure("semantic_failure", phrase, lexed.said.find(phrase),
                            f"'{name}' is already an instruction", "Choose another name",
                            lexed.said, "none")  # fmt: skip
            return ParseResult(False, error=error)
        learning = learn.Learning(name, phrase, sequence, confidence)
        meaning = f"Learn '{phrase}' as: {describe(list(sequence))}"
        return ParseResult(True, sequence, meaning, None, notes, lexed.snaps, confidence, learning)


def interpret(
    grammar: Grammar, text: str, correlation_id: str | None = None, scene: Scene | None = None,
    last_sequence: Sequence[SequenceStep] = (),
) -> Interpretation:  # fmt: skip
    """The offline interpreter as seed 000's result: an exact phrase bank hit, else a clean
    grammar parse, else a fuzzy phrase bank hit, else the grammar's snapped parse or failure."""
    bank = grammar.phrase_bank
    hit = bank.exact(text)
    if hit is not None:
        return bank.interpret(hit, correlation_id)
    result = grammar.parse(text, scene, last_sequence)
    if not (result.success and not result.snaps and not result.notes):
        hit = bank.fuzzy(text, grammar.same_content)
        if hit is not None:
            return bank.interpret(hit, correlation_id)
    return from_parse(result, text, correlation_id)


def from_parse(result: ParseResult, text: str, correlation_id: str | None) -> Interpretation:
    """A ParseResult as seed 000's result (source "grammar")."""
    if not result.success:
        assert result.error is not None
        error = result.error
        return Interpretation(
            interpretation=f"Could not act on: {text}",
            confidence=UNKNOWN,
            user_feedback=error.feedback,
            validation_issues=(f"{error.error_type}: {error.message}",),
            source="grammar",
            correlation_id=correlation_id,
        )
    heard = "".join(f" (heard '{h}' as '{s}')" for h, s in result.snaps)
    learning = result.learning
    return Interpretation(
        interpretation=result.meaning + heard,
        sequence=result.sequence,
        pass1_sequence=result.sequence,
        composite_name=learning.name if learning is not None else None,
        confidence=result.confidence,
        validated=True,
        user_feedback=learn.LEARNING_FEEDBACK if learning is not None else None,
        source="grammar",
        correlation_id=correlation_id,
    )


def remember(grammar: Grammar, writer: learn.MemoryWriter, learning: learn.Learning) -> Grammar:
    """After the operator confirmed a learning directive: save it (atomically, refused below the
    threshold or for creative results: LearningRefused, CellError) and return the grammar of the
    updated cell, whose phrase bank already knows the phrase (it works on the next utterance)."""
    cell = writer.save(learning, grammar.cell)
    updated = grammar.with_cell(cell)
    updated.phrase_bank.add_alias(learning.phrase, (SequenceStep(learning.name),))
    return updated


def is_learning(result: Interpretation) -> bool:
    """A learning directive: confirm, then save (MemoryWriter) — do not run its sequence."""
    return result.composite_name is not None and result.user_feedback == learn.LEARNING_FEEDBACK


def _failure(problem: Unparsed, lexed: Lexed) -> Failure:
    token = problem.token
    return Failure(
        problem.error_type,  # type: ignore[arg-type]
        problem.text if problem.text is not None else lexed.said,
        token.start if token is not None else 0,
        problem.message,
        problem.suggestion or "Say it another way",
        lexed.said,
        problem.fallback,  # type: ignore[arg-type]
    )


def _coordinate(parts: list[tuple[list[Token], str]]) -> list[tuple[list[Token], str]]:
    """Seed 001: "weld and inspect position 1" -> both verbs at position 1 (a verb alone, joined
    by "and" to the next action, shares that action's arguments)."""
    out: list[tuple[list[Token], str]] = []
    for i, (tokens, link) in enumerate(parts):
        nxt = parts[i + 1] if i + 1 < len(parts) else None
        if len(tokens) == 1 and tokens[0].verb() is not None and nxt and nxt[1] == "weak":
            at = verb_index(nxt[0])
            sense = tokens[0].verb()
            if at is not None and sense is not None and sense.key == "go":
                continue  # "go and grab the welder": going is how, not what
            if at is not None:
                tokens = tokens + [t for j, t in enumerate(nxt[0]) if j != at]
        out.append((tokens, link))
    return out


def _is_preface(clause: Clause, rest: list[tuple[list[Token], str]]) -> bool:
    """A verb said alone before other actions that introduces them: "never mind, put it
    back", "we are done, put it away and go home" (finishing, when what follows puts away)."""
    if not rest or not all(t is clause.verb_token or t.has("conn") for t in clause.tokens):
        return False
    puts_away = any(_puts_away(t) for tokens, _ in rest for t in tokens)
    return clause.key == "restart" or (clause.key == "finish" and puts_away)


def _puts_away(token: Token) -> bool:
    sense = token.verb()
    return (sense is not None and sense.key in _PUTTING_AWAY) or token.text in ("away", "back")


def _borrows(tokens: list[Token]) -> bool:
    return not any(t.has("home") or t.has("again") or t.has("learned") for t in tokens)


def _merge(cell: Cell, steps: list[SequenceStep]) -> list[SequenceStep]:
    """release_tool then go_home is the cell's release_tool_and_home (which also does not fail
    when no tool is attached)."""
    if cell.composite("release_tool_and_home") is None:
        return steps
    out: list[SequenceStep] = []
    for s in steps:
        if s.instruction == "go_home" and out and out[-1].instruction == "release_tool":
            out[-1] = SequenceStep("release_tool_and_home")
        else:
            out.append(s)
    return out


_CONTENT_KINDS = ("item", "zone", "site", "position", "tool", "routine", "learned", "number",
                  "direction", "home")  # fmt: skip


def _content(lexed: Lexed) -> list[tuple[str, str]]:
    return [
        (kind, str(token.readings[kind]))
        for token in lexed.tokens
        for kind in _CONTENT_KINDS
        if kind in token.readings
    ]
