"""Seed 000's sequence interpreter: the LLM tier's three passes, for one spoken command.

Pass 1 generates (max 900 tokens); pass 2 is the deterministic validator (`voiced.llm.validate`,
plus the creative checker for creative commands, plus an optional LLM validator whose fixes are
re-checked); pass 3 regenerates with a CORRECTION REQUIRED section when pass 2 found issues, up
to three times (seed 001's retry limit), each round with the validator's findings; a plan that
fails every round is refused with the reason, and nothing runs. A model that cannot be reached
for a correction leaves pass 2's fixed plan, unvalidated (it is read back and needs a yes).
Nothing raises: a model that cannot be reached, or answers with something that is not JSON,
gives an Interpretation with an empty sequence, confidence 0.0 and spoken feedback (a creative
command gets the offline generator's build instead).
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import structlog

from voiced.errors import LlmError
from voiced.eventtypes import CorrectionRound, Event
from voiced.eventtypes import LlmUsage as UsageEvent
from voiced.interpreter.result import Interpretation
from voiced.llm import prompts
from voiced.llm.client import LlmClient, LlmReply, PromptBlock
from voiced.llm.context import sequence_schema, validator_schema
from voiced.llm.creative import CreativeAssignment, check
from voiced.llm.creative_gen import offline_interpretation
from voiced.llm.jsonparse import JsonParseError, parse_json_object
from voiced.llm.settings import LlmSettings
from voiced.llm.validate import Checked, steps_of, validate_steps
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep

log = structlog.get_logger(__name__)

CORRECTIONS = 3
"""Seed 001's retry limit: a plan the validator refuses goes back to the model at most this many
times, each time with what was found, before the command is refused."""
MAX_TOKENS = 900
"""Passes 1 and 3 (seed 000)."""
VALIDATOR_MAX_TOKENS = 700
"""The optional LLM validation pass (seed 000)."""
SOURCE = "llm"
P3_TAG = "[P3 fixed]"
_SNAKE = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class LlmUsage:
    """Tokens one command used, over all its calls."""

    calls: int = 0
    """Successful model calls."""
    input_tokens: int = 0
    """Uncached input tokens."""
    output_tokens: int = 0
    """Output tokens."""
    cache_read_tokens: int = 0
    """Input tokens read from the prompt cache."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache."""

    @classmethod
    def of(cls, replies: Sequence[LlmReply]) -> LlmUsage:
        return cls(
            len(replies),
            sum(r.input_tokens for r in replies),
            sum(r.output_tokens for r in replies),
            sum(r.cache_read_tokens for r in replies),
            sum(r.cache_write_tokens for r in replies),
        )


def usage_event(reply: LlmReply | None, error: str | None) -> UsageEvent:
    """The `llm` event of one call: its tokens (none without a reply), and its error if any."""
    return UsageEvent(**asdict(LlmUsage.of([reply] if reply is not None else [])), error=error)


@dataclass(frozen=True)
class LlmOutcome:
    """What the LLM tier made of one command."""

    interpretation: Interpretation
    """Seed 000's result (source "llm", or "creative" for the offline generator)."""
    usage: LlmUsage
    """Token use for this command."""
    calls: tuple[LlmReply, ...] = ()
    """Each successful call, in order (pass1, pass2, pass3)."""
    error: str | None = None
    """Why the model could not be used, when it could not (spoken in user_feedback too)."""


@dataclass(frozen=True)
class _Draft:
    """A model's pass-1 (or pass-3) answer, read leniently."""

    interpretation: str
    """The model's one sentence ("" when it gave none)."""
    raw_sequence: Any
    """The "sequence" value exactly as given (validated later, never trusted)."""
    composite_name: str | None
    """Snake-cased, or None."""
    confidence: float
    """Clamped to 0..1; 0.5 when missing or not a number."""
    user_feedback: str | None
    """Text to speak, if any."""
    creative_reasoning: str | None
    """The model's axis explanation, if any."""

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> _Draft:
        raw_confidence = data.get("confidence")
        confidence = 0.5  # unstated: a best guess
        if isinstance(raw_confidence, int | float) and not isinstance(raw_confidence, bool):
            confidence = min(1.0, max(0.0, float(raw_confidence)))
        return cls(
            _text(data.get("interpretation")) or "",
            data.get("sequence", []),
            _snake(data.get("composite_name")),
            confidence,
            _text(data.get("user_feedback")),
            _text(data.get("creative_reasoning")),
        )


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _snake(value: object) -> str | None:
    name = _SNAKE.sub("_", value.lower()).strip("_") if isinstance(value, str) else ""
    return name or None


@dataclass(frozen=True)
class _Rounds:
    """How the correction rounds went."""

    fixed: tuple[_Draft, Checked] | None
    """The answer that passed the validator (or said the command cannot be done), if one did."""
    found: tuple[str, ...]
    """Everything the validator found, over every round, in order."""
    exhausted: bool
    """True when every round was answered and none passed: the command is refused."""
    last: tuple[str, ...] = ()
    """What the validator found in the last answer (why it is refused)."""


_STEP_PREFIX = re.compile(r"^step \d+ \([a-z_0-9]+\): ")
_FIX_NOTE = re.compile(r" \((removed|dropped)\)$")


def _plain(issue: str) -> str:
    """A validator finding as the operator hears it: without the step number and the note of
    what the validator did with the step."""
    return _FIX_NOTE.sub("", _STEP_PREFIX.sub("", issue))


def _found(earlier: Sequence[tuple[str, ...]], current: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(issue for found in (*earlier, current) for issue in found)


class SequenceInterpreter:
    """The LLM tier. One instance per daemon; `interpret` is safe to call concurrently."""

    def __init__(
        self,
        client: LlmClient,
        settings: LlmSettings,
        *,
        rng: random.Random | None = None,
        emit: Callable[[Event], None] | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.rng = rng or random.Random()
        self.emit = emit or (lambda event: None)
        """Where each correction round is reported (the daemon's event log)."""

    async def interpret(
        self,
        text: str,
        cell: Cell,
        scene: Scene,
        correlation_id: str | None = None,
        *,
        creative: CreativeAssignment | None = None,
    ) -> LlmOutcome:
        """Seed 000's three passes for `text`. Never raises for a model or network failure."""
        run = _Run(self, text, cell, scene, correlation_id, creative)
        result = await run.go()
        usage = LlmUsage.of(run.replies)
        log.info(
            "llm interpretation",
            calls=usage.calls,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            validated=result.validated,
            issues=len(result.validation_issues),
            error=run.error,
        )
        return LlmOutcome(result, usage, tuple(run.replies), run.error)


class _Run:
    """One command's passes, with the calls they made."""

    def __init__(
        self,
        owner: SequenceInterpreter,
        text: str,
        cell: Cell,
        scene: Scene,
        correlation_id: str | None,
        creative: CreativeAssignment | None,
    ) -> None:
        self.owner, self.client, self.settings = owner, owner.client, owner.settings
        self.emit = owner.emit
        self.text, self.cell, self.scene = text, cell, scene
        self.correlation_id, self.creative = correlation_id, creative
        self.replies: list[LlmReply] = []
        self.error: str | None = None
        self.deadline = asyncio.get_running_loop().time() + owner.settings.command_budget

    async def go(self) -> Interpretation:
        try:
            reply = await self._call(self._pass1_system(None), "pass1", self._temperature())
        except LlmError as error:
            return self._unreachable(str(error))
        try:
            draft = _Draft.of(parse_json_object(reply.text).data)
        except JsonParseError as error:
            return self._unreadable(error.raw)
        if draft.raw_sequence == [] or draft.raw_sequence is None:
            return self._without_sequence(draft)
        return await self._validate_and_fix(draft)

    # -- model calls -------------------------------------------------------------------------

    def _temperature(self) -> float:
        return 1.0 if self.creative is not None else 0.0

    def _pass1_system(self, correction: prompts.Correction | None) -> list[PromptBlock]:
        return prompts.pass1_system(
            self.cell, self.scene, creative=self.creative, correction=correction
        )

    async def _call(
        self,
        system: list[PromptBlock],
        purpose: str,
        temperature: float,
        *,
        user: str | None = None,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int = MAX_TOKENS,
    ) -> LlmReply:
        """One call within the command's budget; a blown budget is an LlmError too."""
        try:
            async with asyncio.timeout_at(self.deadline):
                reply = await self.client.complete(
                    system,
                    prompts.pass1_user(self.text) if user is None else user,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    json_schema=sequence_schema(self.cell) if schema is None else schema,
                    purpose=purpose,
                )
        except TimeoutError:
            budget = self.settings.command_budget
            raise LlmError(f"it took longer than {budget:g} seconds") from None
        self.replies.append(reply)
        return reply

    # -- pass 2 and pass 3 -------------------------------------------------------------------

    def _check(self, raw_sequence: object) -> Checked:
        """The deterministic validator, plus the creative checker for creative commands."""
        checked = validate_steps(self.cell, self.scene, raw_sequence)
        if self.creative is None:
            return checked
        axes, named = self.creative.axes, self.creative.named_items
        start = self.scene.active_zone or "<active zone>"
        problems = check(axes, checked.sequence, named, start_zone=start)
        creative = tuple(f"creative: {problem}" for problem in problems)
        return Checked(checked.sequence, checked.issues + creative, checked.compiles)

    async def _validate_and_fix(self, draft: _Draft) -> Interpretation:
        checked = self._check(draft.raw_sequence)
        issues, notes = list(checked.issues), []
        sequence = checked.sequence
        if self.settings.llm_validation:
            found, more_notes, adopted = await self._llm_validate(draft)
            issues += found
            notes += more_notes
            sequence = adopted or sequence
        if not issues:
            return self._result(draft, sequence, True, tuple(notes))
        rounds = await self._correct(draft, issues)
        if rounds.fixed is not None:
            fixed, fixed_check = rounds.fixed
            tagged = tuple(f"{P3_TAG} {issue}" for issue in rounds.found) + tuple(notes)
            return self._result(fixed, fixed_check.sequence, True, tagged, pass1=draft)
        if self.creative is not None:
            note = "the model's creative build failed the checker; used the offline generator"
            return self._offline([*issues, *notes, note])
        if rounds.exhausted:
            return self._refused(draft, rounds)
        # The model could not be asked again: the validator's own fixes stand, unconfirmed (a
        # plan that is not validated is read back and needs a spoken yes).
        return self._result(draft, sequence, False, (*issues, *notes))

    async def _correct(self, draft: _Draft, issues: Sequence[str]) -> _Rounds:
        """Pass 3, repeated: the plan goes back with what the validator found, up to
        CORRECTIONS times (seed 001's retry limit), each round with the previous round's
        findings and the ones before. Stops early when the model cannot be reached. A creative
        build gets one round: the offline generator is the better second try."""
        limit = 1 if self.creative is not None else CORRECTIONS
        previous: object = draft.raw_sequence
        current = tuple(issues)
        earlier: list[tuple[str, ...]] = []
        for number in range(1, limit + 1):
            self.emit(CorrectionRound(number, limit, list(current)))
            shown = tuple(previous) if isinstance(previous, list) else ()
            correction = prompts.Correction(current, shown, number, limit, tuple(earlier))
            try:
                reply = await self._call(self._pass1_system(correction), "pass3", 0.0)
            except LlmError as error:
                log.info("correction failed", round=number, reason=str(error))
                return _Rounds(None, _found(earlier, current), exhausted=False)
            earlier.append(current)
            try:
                fixed = _Draft.of(parse_json_object(reply.text).data)
            except JsonParseError:
                current = ("the answer was not a JSON object in the OUTPUT FORMAT",)
                continue
            if fixed.raw_sequence == []:
                if self.creative is not None:  # no creative build: the offline generator's
                    return _Rounds(None, _found(earlier, ()), exhausted=False)
                # The model says it cannot be done: its reason is the answer.
                return _Rounds((fixed, self._check([])), _found(earlier, ()), exhausted=False)
            checked = self._check(fixed.raw_sequence)
            if checked.clean and checked.sequence:
                return _Rounds((fixed, checked), _found(earlier, ()), exhausted=False)
            log.info("the correction did not pass the validator", round=number,
                     issues=list(checked.issues))  # fmt: skip
            previous, current = fixed.raw_sequence, checked.issues or ("it has no steps",)
        return _Rounds(None, _found(earlier, current), exhausted=True, last=current)

    async def _llm_validate(
        self, draft: _Draft
    ) -> tuple[list[str], list[str], tuple[SequenceStep, ...] | None]:
        """Seed 000's LLM validation pass: (issues, notes, adopted sequence or None). Its
        corrected sequence is adopted only if the deterministic validator passes it."""
        system = [PromptBlock(prompts.validator_static(self.cell), cache=True)]
        user = prompts.validator_user(self.text, draft.interpretation, draft.raw_sequence)
        try:
            reply = await self._call(
                system,
                "pass2",
                0.0,
                user=user,
                schema=validator_schema(self.cell),
                max_tokens=VALIDATOR_MAX_TOKENS,
            )
            data = parse_json_object(reply.text).data
        except LlmError as error:
            return [], [f"[LLM validator] API error: {error}"], None
        except JsonParseError:
            return [], ["[LLM validator] unparseable answer"], None
        found = [f"[LLM validator] {i}" for i in data.get("issues") or [] if isinstance(i, str)]
        proposed = data.get("sequence")
        if not isinstance(proposed, list) or proposed == draft.raw_sequence:
            return found, [], None
        rechecked = self._check(proposed)
        if rechecked.clean and rechecked.sequence:
            return (
                found,
                ["[LLM validator] correction adopted after the deterministic check"],
                (rechecked.sequence),
            )
        rejected = "; ".join(rechecked.issues) or "it removed every step"
        return found, [f"[LLM validator] correction rejected: {rejected}"], None

    # -- results -----------------------------------------------------------------------------

    def _result(
        self,
        draft: _Draft,
        sequence: Sequence[SequenceStep],
        validated: bool,
        issues: Sequence[str],
        *,
        pass1: _Draft | None = None,
    ) -> Interpretation:
        first = pass1 or draft
        confidence = draft.confidence if validated else min(draft.confidence, 0.5)
        feedback = draft.user_feedback
        if not validated and feedback is None and issues:
            feedback = f"I'm not sure that is right: {issues[0]}"
        return Interpretation(
            interpretation=draft.interpretation or f"Interpreted: {self.text}",
            sequence=tuple(sequence),
            pass1_sequence=steps_of(first.raw_sequence),
            composite_name=None if self.creative is not None else draft.composite_name,
            confidence=confidence,
            validated=validated,
            validation_issues=tuple(issues),
            user_feedback=feedback,
            is_creative=self.creative is not None,
            creative_reasoning=self._reasoning(draft),
            source=SOURCE,
            correlation_id=self.correlation_id,
        )

    def _reasoning(self, draft: _Draft) -> str | None:
        if self.creative is None:
            return None
        text = draft.creative_reasoning or draft.interpretation or "no explanation given"
        if text.startswith("Axis 1:"):
            return text
        return self.creative.axes.reasoning(text)

    def _without_sequence(self, draft: _Draft) -> Interpretation:
        """An empty sequence: an impossible command (seed: confidence 0.1 and feedback)."""
        if self.creative is not None:
            return self._offline(["the model proposed no creative build"])
        return self._result(draft, (), False, ())

    def _refused(self, draft: _Draft, rounds: _Rounds) -> Interpretation:
        """Every correction failed the validator: nothing runs, and the operator hears why."""
        last = rounds.last or ("it did not pass my checks",)
        reason = "; ".join(dict.fromkeys(_plain(issue) for issue in last[:2]))
        feedback = (
            f"I could not make a plan that passes my checks, even after {CORRECTIONS} "
            f"corrections: {reason}. Nothing was moved; please say it differently."
        )
        return Interpretation(
            interpretation=draft.interpretation or f"Could not plan: {self.text}",
            pass1_sequence=steps_of(draft.raw_sequence),
            confidence=0.0,
            validation_issues=rounds.found,
            user_feedback=feedback,
            source=SOURCE,
            correlation_id=self.correlation_id,
        )

    def _offline(self, issues: Sequence[str]) -> Interpretation:
        assert self.creative is not None
        result = offline_interpretation(
            self.text, self.cell, self.scene, self.creative, self.owner.rng, self.correlation_id
        )
        return result.with_changes(validation_issues=tuple(issues) + result.validation_issues)

    def _unreachable(self, reason: str) -> Interpretation:
        self.error = reason
        if self.creative is not None:
            return self._offline([f"language model unavailable ({reason}); built offline"])
        return Interpretation(
            interpretation=f"Could not interpret: {self.text}",
            confidence=0.0,
            user_feedback=f"I couldn't reach the language model ({reason}); try a simpler command",
            source=SOURCE,
            correlation_id=self.correlation_id,
        )

    def _unreadable(self, raw: str) -> Interpretation:
        """Seed: the raw text is kept, confidence 0.0, empty sequence."""
        self.error = "the answer was not JSON"
        if self.creative is not None:
            result = self._offline(["the model's answer was not JSON; built offline"])
            return result.with_changes(raw_response=raw)
        return Interpretation(
            interpretation=f"Could not interpret: {self.text}",
            confidence=0.0,
            user_feedback="I couldn't make sense of the language model's answer; please say "
            "it differently",
            raw_response=raw,
            source=SOURCE,
            correlation_id=self.correlation_id,
        )
