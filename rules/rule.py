"""The rule protocol and its results."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from voiced.rules.normalize import normalize

SENDERS = {"page": "the cell's page", "mqtt": "MQTT"}
"""How a source of words from outside is named in a reason."""


_WORDS_AROUND = '{} it: "{}"'
_WORDS_AROUND_FOUND = [
    re.compile(rf'(?:^|; ){where} it: "(.*?)"(?=; |$)') for where in ("words before", "words after")
]


def words_after(said: str) -> str:
    """The doubt of a whole command sent without the words heard after it that made it none
    (`voiced.frames.query.QueryFrame`); its question quotes them (`words_around`)."""
    return _WORDS_AROUND.format("words after", _unquoted(said))


def words_before(said: str) -> str:
    """The doubt of a whole command heard apart from the words before it, which were no
    command and may take it back ("No, I don't have that one." ... "Can I have a latte?");
    its question quotes them (`words_around`)."""
    return _WORDS_AROUND.format("words before", _unquoted(said))


def heard_as(said: str) -> str:
    """The doubt of a sentence held to the cell's sentences from a free reading `said`: the
    command is said back before it runs (`heard_in` reads `said` back)."""
    return f'heard "{_unquoted(said)}"'


def heard_in(doubt: str | None) -> str | None:
    """The free reading a `heard_as` doubt names (the first, if doubts were joined)."""
    found = _HEARD_FOUND.search(doubt or "")
    return None if found is None else found.group(1)


_HEARD_FOUND = re.compile(r'(?:^|; )heard "(.*?)"(?=; |$)')


def _unquoted(said: str) -> str:
    # The doubt quotes the words in double quotes (and doubts are joined with "; "): a
    # transcript's own double quotes become single ones, so the quote reads back whole.
    return said.replace('"', "'")


def words_around(doubt: str | None) -> tuple[str | None, str | None]:
    """The words a `words_before` and a `words_after` doubt name (the last of each, if doubts
    were joined with "; "); None where there is none."""
    found = []
    for pattern in _WORDS_AROUND_FOUND:
        matches = pattern.findall(doubt or "")
        found.append(matches[-1] if matches else None)
    return found[0], found[1]


@dataclass(frozen=True)
class Utterance:
    """One thing the operator said (or typed), as it enters the frame router."""

    text: str
    """The transcript as heard."""
    t: float = 0.0
    """When the utterance ended, on the input clock (seconds)."""
    correlation_id: str | None = None
    """The id bound to everything this utterance causes."""
    source: str = ""
    """Who sent it from outside ("page", "mqtt"); "": the operator, spoken or typed."""
    level_db: float | None = field(default=None, compare=False)
    """How loud the speech was at the microphone (its loudest 30 ms, dBFS); None if typed."""
    doubt: str | None = field(default=None, compare=False)
    """Why the recogniser is not sure of `text` (a command made of it is read back first)."""
    normalized: str = field(default="", compare=False)
    """`text` normalised (lower case, no punctuation, digits); filled in automatically."""
    start: float | None = field(default=None, compare=False)
    """When its speech began on the input clock (the segment's first live sample); None:
    typed, or not known (the rest of a segment after its wake word)."""

    def __post_init__(self) -> None:
        if not self.normalized:
            object.__setattr__(self, "normalized", normalize(self.text))

    @property
    def said_by(self) -> str:
        """Who said it, as a stop's or a pause's reason reads: 'operator said "stop"', or
        'the cell's page sent "stop"'."""
        if not self.source:
            return f'operator said "{self.text}"'
        return f'{SENDERS.get(self.source, self.source)} sent "{self.text}"'


@dataclass(frozen=True)
class Match:
    """What matched and why, for the logs and the action."""

    rule: str
    """The rule's name."""
    matched: str
    """The phrase or pattern that matched."""
    why: str
    """A short explanation, e.g. `exact "cancel"` or `fuzzy "computers"~"computer" 93`."""
    args: Mapping[str, str] = field(default_factory=dict)
    """Captured arguments, e.g. the rest of the utterance after a wake word."""
    score: float = 100.0
    """Similarity 0..100 (100 for exact matches)."""


Action: TypeAlias = Callable[[Any, Utterance, Match], Awaitable[None] | None]
"""What a handled rule does: called with the router context, the utterance and the match."""


@dataclass(frozen=True)
class Handled:
    """The rule matched: run `action`; dispatch stops here."""

    match: Match
    action: Action


@dataclass(frozen=True)
class NoMatch:
    """The rule did not match: try the next rule of the same frame."""


@dataclass(frozen=True)
class CheckParent:
    """Hand the utterance to the next frame down the stack."""


NO_MATCH = NoMatch()
CHECK_PARENT = CheckParent()

RuleResult = Handled | NoMatch | CheckParent


class Rule(Protocol):
    """A rule: a name and a synchronous, side-effect-free match."""

    @property
    def name(self) -> str: ...

    def match(self, utterance: Utterance) -> RuleResult: ...


@dataclass(frozen=True)
class _CheckParentRule:
    """The explicit fallthrough: wherever it stands in a frame's rule list, the frame below gets
    first refusal of everything the rules above it did not handle."""

    name: str = "check_parent"

    def match(self, utterance: Utterance) -> RuleResult:
        return CHECK_PARENT


check_parent: Rule = _CheckParentRule()
