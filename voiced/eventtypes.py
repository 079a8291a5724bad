"""What the event stream can carry: one frozen dataclass per kind of event.

A record on the stream (`voiced run --events`) is a JSON object: the envelope (`event`, the
kind; `t`; `correlation_id` when it belongs to an utterance) and the event's own fields, flat.
`Record` is one such line, typed; `Record.from_dict` reads one back and refuses what is not a
known kind with its fields. The fields are documented one by one in docs/EVENTS.md.

The kinds `llm` and `error` have variants told apart by their `kind` field (`tokens` /
`resolve`; `validation`, `controller`, `link`, ...). An error of a kind not listed here (the
name of the exception that failed a command, `internal`) is a `Failure`.

The frames' stack changes (`frame`) are typed where they happen, in frames/router.py, which
knows nothing of the daemon; they are registered here with the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Self, TypeVar

from voiced.errors import VoicedError
from voiced.frames.router import StackChange

T = TypeVar("T")
OMIT_IF_NONE = "omit_if_none"
ENVELOPE = ("event", "t", "correlation_id")


class EventError(VoicedError):
    """A record that is not one of the known events (names the kind and the field)."""


def optional() -> Any:
    """A field left out of the record when it is None (as the stream has always done)."""
    return field(default=None, metadata={OMIT_IF_NONE: True})


class Event:
    """The base of every kind: `KIND` is the record's `event`; `VARIANT` its `kind`, if any."""

    KIND: ClassVar[str]
    VARIANT: ClassVar[str | None] = None
    ORDER: ClassVar[tuple[str, ...]] = ()
    """The record's field order where it is not the declaration's (a dataclass declares the
    fields with defaults last; the stream keeps the order it has always had)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.VARIANT is None else {"kind": self.VARIANT}
        for spec in fields(self):  # type: ignore[arg-type]
            value = getattr(self, spec.name)
            if value is None and spec.metadata.get(OMIT_IF_NONE):
                continue
            out[spec.name] = value
        if self.ORDER:
            out = {name: out[name] for name in self.ORDER if name in out}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return _build(cls, data)


def _build(cls: type[T], data: Mapping[str, Any]) -> T:
    """`cls` from a record's fields: every required field present, nothing unknown."""
    kind = getattr(cls, "KIND", cls.__name__)
    specs = fields(cls)  # type: ignore[arg-type]
    names = {spec.name for spec in specs}
    allowed = names | set(ENVELOPE) | ({"kind"} if getattr(cls, "VARIANT", None) else set())
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise EventError(f"event {kind!r}: unknown field {', '.join(map(repr, unknown))}")
    missing = [
        spec.name
        for spec in specs
        if spec.name not in data and spec.default is MISSING and spec.default_factory is MISSING
    ]
    if missing:
        raise EventError(f"event {kind!r}: missing field {', '.join(map(repr, missing))}")
    return cls(**{name: data[name] for name in names if name in data})


# -- hearing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Utterance(Event):
    """What entered the frames: typed, heard, queued or replayed."""

    KIND = "utterance"
    text: str
    raw: str | None = optional()
    audio_t: float | None = optional()
    speech_end: float | None = optional()
    decoded_at: float | None = optional()
    transcribe_s: float | None = optional()
    hypothesis: int | None = optional()
    repaired: bool | None = optional()
    spotted: bool | None = optional()
    level_db: float | None = optional()
    doubt: str | None = optional()
    queued: int | None = optional()
    replay: str | None = optional()


@dataclass(frozen=True)
class Spotted(Event):
    """A stop heard in the pause after it, before its segment ended."""

    KIND = "spotted"
    text: str
    audio_t: float
    speech_end: float
    decode_s: float
    score: float | None = optional()
    engine: str | None = optional()


@dataclass(frozen=True)
class Keyword(Event):
    """A keyword model heard its phrase (the wake word or a stop word), acted on or not."""

    KIND = "keyword"
    phrase: str
    role: str
    score: float
    audio_t: float
    acted: bool


@dataclass(frozen=True)
class Rejected(Event):
    """Audio that produced nothing, and why."""

    KIND = "rejected"
    reason: str
    raw: str
    audio_t: float


@dataclass(frozen=True)
class Ignored(Event):
    """Input that cannot be an utterance (too long, not UTF-8): said so, never dispatched or
    stored."""

    KIND = "ignored"
    reason: str
    length: int
    head: str


@dataclass(frozen=True)
class RemoteSaid(Event):
    """Words from outside the input (the cell page, MQTT), taken as said; an `utterance` follows."""

    KIND = "remote"
    text: str
    source: str


@dataclass(frozen=True)
class BargeIn(Event):
    """The operator spoke over a reply; `cut` are the phrases cut off."""

    KIND = "barge_in"
    audio_t: float
    cut: list[str]


@dataclass(frozen=True)
class PageUp(Event):
    """The cell's page is served at `url`."""

    KIND = "page"
    url: str


@dataclass(frozen=True)
class SpeechServer(Event):
    """The Wyoming speech server was given up for the local model (`up` false), or
    transcribes again (`up` true)."""

    KIND = "speech_server"
    up: bool
    uri: str
    reason: str | None = optional()


@dataclass(frozen=True)
class SatelliteLink(Event):
    """The link to a Wyoming satellite (`--audio wyoming://`) came up, or was lost."""

    KIND = "satellite"
    connected: bool
    uri: str
    reason: str | None = optional()
    name: str | None = optional()


# -- frames and dispatch -----------------------------------------------------------------------


@dataclass(frozen=True)
class Submitted(Event):
    """A frame handed text to a target."""

    KIND = "submit"
    target: str
    text: str
    source: str


@dataclass(frozen=True)
class TargetDone(Event):
    """A non-robot target's result."""

    KIND = "target"
    target: str
    source: str
    ok: bool
    message: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class VoicePicked(Event):
    KIND = "voice"
    voice: str


# -- understanding and planning ----------------------------------------------------------------


@dataclass(frozen=True)
class Interpreted(Event):
    """The interpretation of one command (`Interpretation.to_dict`, field for field)."""

    KIND = "interpretation"
    interpretation: str
    sequence: list[dict[str, Any]]
    pass1_sequence: list[dict[str, Any]]
    composite_name: str | None
    confidence: float
    validated: bool
    validation_issues: list[str]
    user_feedback: str | None
    is_creative: bool
    creative_reasoning: str | None
    raw_response: str | None
    source: str
    correlation_id: str | None


@dataclass(frozen=True)
class Planned(Event):
    """The rearrangement planner's action plan (`ActionPlan.to_dict`)."""

    KIND = "plan"
    ORDER = ("status", "plan", "final_expected", "reason", "final_state", "source", "optimal",
             "moves", "notes")  # fmt: skip
    status: str
    plan: list[dict[str, Any]]
    final_expected: dict[str, Any] | None
    source: str
    optimal: bool
    moves: int
    reason: str | None = optional()
    final_state: dict[str, Any] | None = optional()
    notes: list[str] | None = optional()


@dataclass(frozen=True)
class LlmUsage(Event):
    """One model call's token counts (or its error)."""

    KIND = "llm"
    VARIANT = "tokens"
    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    error: str | None


@dataclass(frozen=True)
class LlmResolution(Event):
    """The model's reading of an unknown verb."""

    KIND = "llm"
    VARIANT = "resolve"
    original_phrase: str
    resolved: str
    reasoning: str


@dataclass(frozen=True)
class CorrectionRound(Event):
    """A plan the deterministic validator refused, sent back to the model with the findings."""

    KIND = "correction"
    round: int
    """This round, from 1."""
    of: int
    """How many rounds there are at most before the command is refused."""
    issues: list[str]
    """What the validator found, as sent to the model."""


@dataclass(frozen=True)
class Answered(Event):
    """A question answered without motion."""

    KIND = "answer"
    question: str
    brief: str
    full: str
    topic: str


@dataclass(frozen=True)
class Confirmation(Event):
    """A yes/no question settled (`answer`: yes, no, timeout...)."""

    KIND = "confirmation"
    question: str
    answer: str


@dataclass(frozen=True)
class Revision(Event):
    KIND = "revision"
    question: str
    feedback: str


@dataclass(frozen=True)
class Learned(Event):
    KIND = "learned"
    name: str | None
    phrase: str
    sequence: list[dict[str, Any]]


@dataclass(frozen=True)
class Feedback(Event):
    """Everything said to the operator."""

    KIND = "feedback"
    text: str


# -- the controller ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Primitive(Event):
    """A numbered line sent on the motion channel."""

    KIND = "primitive"
    seq: int
    line: str


@dataclass(frozen=True)
class ControllerLine(Event):
    """Every other line on the link, both ways, except the heartbeat."""

    KIND = "controller"
    direction: str
    channel: str
    line: str


@dataclass(frozen=True)
class Reconciled(Event):
    """The controller's report corrected (or confirmed) the scene."""

    KIND = "reconciled"
    why: str
    changes: list[str]
    status: str
    halt_reason: str | None
    last_done: int | None
    holding: str | None
    tool: str | None
    not_done: list[str]


@dataclass(frozen=True)
class Stopped(Event):
    """A stop (spoken, or `shutdown`); `silenced`: the speech it cut off."""

    KIND = "stopped"
    reason: str
    dropped_commands: int
    dropped: list[str]
    silenced: list[str] | None = optional()


@dataclass(frozen=True)
class Paused(Event):
    """A pause: the arm halted, what was said before it held until "continue" (or a stop)."""

    KIND = "paused"
    reason: str
    moving: bool
    """Whether a command was running (and was halted part-way)."""
    held: list[str]
    """The commands held, oldest first (the one halted part-way among them)."""
    silenced: list[str] | None = optional()


@dataclass(frozen=True)
class Resumed(Event):
    """The operator confirmed "continue" after a pause: the rest, re-planned, is queued."""

    KIND = "resumed"
    held: list[str]
    """The commands that were held."""
    steps: list[str]
    """What runs now, as read back (re-planned from the controller's report)."""


@dataclass(frozen=True)
class Dropped(Event):
    """One command withdrawn before it ran."""

    KIND = "dropped"
    text: str
    reason: str


@dataclass(frozen=True)
class RunChanged(Event):
    """A command's row in the history changed: recorded, running, and how it ended."""

    KIND = "run"
    run_id: str
    status: str
    """The history's status (planned, running, completed, stopped, dropped, ...)."""
    said: str | None = optional()
    """What the operator said; left out when the row is one carried by another ("continue")."""
    feedback: str | None = optional()


# -- problems ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationFailed(Event):
    KIND = "error"
    VARIANT = "validation"
    issues: list[str]


@dataclass(frozen=True)
class IntentUnreadable(Event):
    """The model's intent classification could not be used; the words are taken as unknown."""

    KIND = "error"
    VARIANT = "intent"
    text: str
    """What was said."""
    error: str
    """What was wrong with the answer, or why the model could not be asked."""


@dataclass(frozen=True)
class ControllerRefused(Event):
    """The controller refused a line: the run report (`RunReport.to_dict`)."""

    KIND = "error"
    VARIANT = "controller"
    run: int
    session: str
    completed: list[int]
    interrupted: int | None
    not_run: list[int]
    unknown: list[int]
    error: dict[str, Any] | None
    stopped: bool
    lost: bool
    lost_reason: str | None


@dataclass(frozen=True)
class LinkLost(Event):
    KIND = "error"
    VARIANT = "link"
    reason: str | None


@dataclass(frozen=True)
class AuthRefused(Event):
    KIND = "error"
    VARIANT = "auth"
    reason: str


@dataclass(frozen=True)
class PersistFailed(Event):
    """The scene could not be saved."""

    KIND = "error"
    VARIANT = "persist"
    path: str
    error: str


@dataclass(frozen=True)
class Failure(Event):
    """Any other error: `kind` names it (`learned`, `internal`, an exception's type)."""

    KIND = "error"
    kind: str
    error: str


# -- the end -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueWorkedOff(Event):
    KIND = "queue"
    worked_off: int
    ok: int


@dataclass(frozen=True)
class Replayed(Event):
    KIND = "replay"
    run_id: str
    ok: bool
    message: str


@dataclass(frozen=True)
class FinalState(Event):
    """Once, at exit: the cell's state in its own vocabulary."""

    KIND = "final_state"
    state: dict[str, Any]


AnyEvent = Event | StackChange


def _kinds() -> Iterator[type[Event]]:
    pending = list(Event.__subclasses__())
    while pending:
        kind = pending.pop()
        pending.extend(kind.__subclasses__())
        yield kind


KINDS: dict[tuple[str, str | None], type[AnyEvent]] = {
    (kind.KIND, kind.VARIANT): kind for kind in _kinds()
}
KINDS[(StackChange.KIND, None)] = StackChange
WITH_VARIANTS = {kind for kind, variant in KINDS if variant is not None}


def event_from_dict(record: Mapping[str, Any]) -> AnyEvent:
    """The typed event of one record (the envelope is ignored); EventError if unknown."""
    kind = record.get("event")
    if not isinstance(kind, str):
        raise EventError(f"a record needs an 'event' string, got {kind!r}")
    variant = record.get("kind") if kind in WITH_VARIANTS else None
    found = KINDS.get((kind, variant if isinstance(variant, str) else None))
    if found is None and kind == Failure.KIND:
        found = Failure
    if found is None:
        what = kind if variant is None else f"{kind}/{variant}"
        raise EventError(f"unknown event {what!r}")
    try:
        return found.from_dict(record)
    except (ValueError, TypeError) as exc:  # StackChange's own check; a field of the wrong shape
        raise EventError(str(exc)) from exc


@dataclass(frozen=True)
class Record:
    """One line of the stream: the event and its envelope."""

    event: AnyEvent
    t: float
    correlation_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.event.KIND, "t": self.t}
        if self.correlation_id is not None:
            out["correlation_id"] = self.correlation_id
        out.update(self.event.to_dict())
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Record:
        t = data.get("t")
        if not isinstance(t, int | float) or isinstance(t, bool):
            raise EventError(f"event {data.get('event')!r}: 't' must be a number, got {t!r}")
        cid = data.get("correlation_id")
        return cls(event_from_dict(data), float(t), cid if isinstance(cid, str) else None)
