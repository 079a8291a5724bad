"""Which of a query's parts are the pieces of one command, to be heard again as one stretch of
audio (`QueryFrame._heard_whole`), and which words around them are left out of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from voiced.frames.services import Services
from voiced.rules import words
from voiced.rules.negation import NEGATIONS, takes_back

FAR_TALK_DB = 10.0
"""How much quieter at the microphone (loudest 30 ms against loudest 30 ms) speech must be than
the command it follows to be someone else's: a voice about three times as far away. One
speaker's phrases differ by a few dB; the talk of a room behind the operator is further down."""
CLOCK_EPSILON = 1e-6
"""Timers compare float clock readings: 1.4 - 1.0 is a hair under 0.4."""


@dataclass(frozen=True)
class Part:
    """One utterance a query gathered, as heard."""

    text: str
    start: float | None
    """When its speech began on the input clock (None: not known, as for typed words)."""
    end: float
    level_db: float | None
    doubt: str | None


@dataclass(frozen=True)
class Stretch:
    """The pieces to hear again together, and the words around them left out (quoted in the
    question about what is heard)."""

    pieces: tuple[Part, ...]
    before: str = ""
    """Words before a pause as long as the silence timer: not the pieces' own."""
    after: str = ""
    """A quiet end, another voice's talk ("All right.")."""

    @property
    def said(self) -> str:
        return " ".join(part.text for part in self.pieces)

    @property
    def start(self) -> float:
        start = self.pieces[0].start
        assert start is not None  # `stretch_of` never keeps a piece without one
        return start

    @property
    def end(self) -> float:
        return self.pieces[-1].end

    @property
    def level_db(self) -> float | None:
        """How loud the loudest piece was: the question about them is answered at it."""
        return _loudest(self.pieces)

    @property
    def doubts(self) -> list[str]:
        """What made a piece unsure (a held reading, words quoted around it)."""
        return [part.doubt for part in self.pieces if part.doubt is not None]


def stretch_of(
    parts: Sequence[Part],
    services: Services,
    silence: float,
    corrects: Callable[[str], bool],
    *,
    alone: bool = False,
    end_cut: bool = True,
) -> Stretch | None:
    """The stretch of `parts` to hear again: all of them, or, where they cannot all be one
    speaker's command, those after the last pause as long as `silence` (the query stayed open
    only through speech that made no words, a noisy room: "No, I don't know." ... "May I have
    a?" ... "Dark roast." ...) and before a quiet end (`end_cut`). None where no stretch is
    one speaker's command without a "no" or a take-back in it, or it is one part (unless
    `alone`: heard on past it). `corrects`: whether words are a correction with a command of
    its own ("no, go home")."""
    need = 1 if alone else 2
    found = _pieces(parts, services, corrects, need, end_cut)
    if found is not None or alone:
        return found
    first = _after_pause(parts, silence)
    if first == 0:
        return None
    before, rest = parts[:first], parts[first:]
    said = [" ".join(p.text for p in before[:i]) for i in range(1, first + 1)]
    if any(services.is_complete(s) and not services.asks(s) for s in said):
        return None  # a whole command before the pause: it is not left out unsaid
    if any(p.doubt is not None and "words before" in p.doubt for p in rest):
        return None  # the question quotes one "words before": the earlier stays
    found = _pieces(rest, services, corrects, need, end_cut)
    if found is None or _far_below(found.level_db, _loudest(before)):
        return None  # the louder voice before the pause is the operator's
    return Stretch(found.pieces, said[-1], found.after)


def _pieces(
    parts: Sequence[Part],
    services: Services,
    corrects: Callable[[str], bool],
    need: int,
    end_cut: bool,
) -> Stretch | None:
    kept = _operators(parts, services, corrects)
    if kept is None or (kept < len(parts) and not end_cut):
        return None  # another voice among them, or after them where more is looked for
    pieces = tuple(parts[:kept])
    said = " ".join(p.text for p in pieces)
    if (
        len(pieces) < need
        or any(p.start is None for p in pieces)
        or NEGATIONS & set(words(said))
        or takes_back(said)
    ):
        return None
    return Stretch(pieces, after=" ".join(p.text for p in parts[kept:]))


def _operators(
    parts: Sequence[Part], services: Services, corrects: Callable[[str], bool]
) -> int | None:
    """How many of `parts` are the operator's, to be heard again together: all of them, or
    all but a quiet end that is another voice's talk ("I want a triple shot." ... "Large ice
    mocha." ... "With almond milk and brown sugar." ... the kitchen's "All right.", 10 dB
    below them), which names none of the cell's things and holds no command of its own. None
    where a voice `FAR_TALK_DB` apart is among them (a far voice's question after the
    operator's opening is not the operator's order)."""
    loudest = _loudest(parts)
    kept = len(parts)
    while kept > 0 and _far_below(parts[kept - 1].level_db, loudest):
        kept -= 1
    if any(_far_below(p.level_db, loudest) for p in parts[:kept]):
        return None
    talk = " ".join(p.text for p in parts[kept:])
    if kept < len(parts) and (services.about_the_cell(talk) or corrects(talk)):
        return None  # quiet, but about the order ("and sugar"): refused with it
    return kept


def _loudest(parts: Sequence[Part]) -> float | None:
    """The level of the loudest of `parts` (None: none measured, as for typed words)."""
    return max((p.level_db for p in parts if p.level_db is not None), default=None)


def _far_below(level: float | None, loudest: float | None) -> bool:
    """Whether `level` is `FAR_TALK_DB` or more below `loudest` (False if either is unknown)."""
    return level is not None and loudest is not None and level <= loudest - FAR_TALK_DB


def _after_pause(parts: Sequence[Part], silence: float) -> int:
    """The first of `parts` after the last pause between two of them as long as `silence`."""
    first = 0
    for i in range(1, len(parts)):
        start = parts[i].start
        if start is not None and start - parts[i - 1].end >= silence - CLOCK_EPSILON:
            first = i
    return first
