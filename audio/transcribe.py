"""Speech-to-text: the `Transcriber` seam, its result, and the vocabulary that biases it.

Backends live one per file: `voiced.audio.whisper` (local faster-whisper, the default) and
`voiced.audio.azure` (Azure Speech, an optional extra). Both run their blocking calls off the event
loop and apply the same hallucination guards (`voiced.audio.guards`). They build on this module;
`voiced.audio.engines` picks the one `[stt] engine` names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from voiced.audio.segmenter import Segment

from voiced.errors import VoicedError

if TYPE_CHECKING:
    from voiced.audio.grammar_decode import WordGraph


class TranscriptionError(VoicedError):
    """The engine could not transcribe (unreachable service, bad key, model failure). The
    listener logs it and rejects the segment; the daemon keeps listening."""


@dataclass(frozen=True)
class Transcript:
    """What a transcriber made of one segment."""

    text: str
    """Cleaned text: special tokens stripped; empty when rejected for being blank."""
    raw: str
    """The engine's text as produced, special tokens included (for the cell's page)."""
    no_speech_prob: float
    """Whisper's probability that the window holds no speech (0 for engines without one)."""
    avg_logprob: float
    """Mean token log-probability (0 for engines without one)."""
    rejected_reason: str | None
    """Why the text must not be dispatched, or None when it may."""
    seconds: float
    """Wall-clock seconds the transcription took."""
    hypothesis: int = 0
    """Which of the engine's hypotheses this is (0 = its best; see `Chooser`)."""
    repaired: bool = False
    """`text` is a repair of the hypothesis (`raw`), not the hypothesis itself."""
    doubt: str | None = None
    """Why the repair is only a guess, to be read back before anything moves (None: the
    text may be acted on as it is)."""

    @property
    def accepted(self) -> bool:
        """The text may be dispatched."""
        return self.rejected_reason is None


@dataclass(frozen=True)
class BiasVocabulary:
    """Words and example phrases of the live cell that steer recognition.

    Whisper follows a prompt that looks like earlier transcript text best: on the espeak test
    clips, example commands followed by the word list came out exact far more often than a
    bare word list (bench/audio_latency.py measures it)."""

    words: tuple[str, ...] = ()
    """Single terms: items, zones, positions, tools, composites, frame keywords, wake word."""
    phrases: tuple[str, ...] = ()
    """Example utterances: phrase bank entries, learned aliases, typical commands."""

    @classmethod
    def build(cls, words: Iterable[str] = (), phrases: Iterable[str] = ()) -> BiasVocabulary:
        """Clean and de-duplicate: "assembly_left" -> "assembly left", order kept."""
        return cls(_unique(words), _unique(phrases))

    @property
    def empty(self) -> bool:
        """Nothing to bias with."""
        return not self.words and not self.phrases

    def prompt(self, max_phrases: int | None = None) -> str:
        """Initial-prompt text: phrases as sentences, then the words as a list."""
        phrases = self.phrases if max_phrases is None else self.phrases[:max_phrases]
        parts = [_sentence(p) for p in phrases]
        if self.words:
            parts.append(_sentence(", ".join(self.words)))
        return " ".join(parts)

    def hotwords(self) -> str:
        """Hotwords text: every word and phrase, comma separated."""
        return ", ".join((*self.words, *self.phrases))

    def terms(self) -> tuple[str, ...]:
        """Everything, for engines that take a phrase list (Azure)."""
        return _unique((*self.words, *self.phrases))


NO_BIAS = BiasVocabulary()
"""Transcribe without any biasing."""


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        text = " ".join(item.replace("_", " ").split())
        if text and text.lower() not in {s.lower() for s in seen}:
            seen[text] = None
    return tuple(seen)


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".,;!?")
    return f"{text[:1].upper()}{text[1:]}." if text else ""


@dataclass(frozen=True)
class Slot:
    """A span of a chosen text that the grammar reads as well with another value in it (a
    template's list: "twelve ounce" among the sizes)."""

    start: int
    """First character of the span in `Choice.form`."""
    end: int
    """One past its last character."""
    values: tuple[str, ...]
    """The other values the span may hold, as said."""


@dataclass(frozen=True)
class Choice:
    """The hypothesis a `Chooser` keeps."""

    index: int
    """Which hypothesis (0 = the recogniser's best)."""
    text: str | None = None
    """A repaired version of it to use instead (None: its own text)."""
    form: str | None = None
    """The kept reading as the grammar reads it (its words, lower case): what the acoustic
    judge (`voiced.audio.judge`) compares with `rivals` and the values of `slots`."""
    rivals: tuple[str, ...] = ()
    """Other readings the grammar accepts whole (lower hypotheses it also reads), in the same
    form; the judge keeps whichever the audio supports best."""
    slots: tuple[Slot, ...] = ()
    """Spans of `form` that could hold another value of their list, without overlaps."""
    refused: bool = False
    """Kept only to be refused or answered as heard (it names what the cell lacks, "a bit of
    sweet", or asks in words an order begins with, "give me ... and water"): a sentence the
    recogniser holds to the cell's sentences from the audio may be asked about instead."""

    @property
    def judged(self) -> bool:
        """Readings are offered to the acoustic judge."""
        return self.form is not None and bool(self.rivals or self.slots)


Chooser = Callable[[Sequence[str]], Choice | None]
"""Given the recogniser's hypotheses best first, the one the listener's owner can act on
(None: keep the best). Called on a worker thread, so it only reads what it is given."""


@runtime_checkable
class HoldsToSentences(Protocol):
    """A `Chooser` that also names the sentences the recogniser may hold its decoding to when
    it reads none of the hypotheses (`voiced.audio.grammar_decode`)."""

    def __call__(self, texts: Sequence[str]) -> Choice | None: ...

    def sentences(self) -> WordGraph | None:
        """The word graph of what may be said now (None: nothing to hold to, decode freely)."""
        ...


class Transcriber(Protocol):
    """Turns a segment into text, off the event loop."""

    name: str
    """Engine name for logs and the cell's page."""

    async def load(self) -> None:
        """Load the model / open the connection now rather than on the first segment."""
        ...

    async def transcribe(
        self, segment: Segment, bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Transcript:
        """The transcript of `segment`, with the guards' verdict in `rejected_reason`;
        `choose` picks among hypotheses (or repairs one) where the engine gives several."""
        ...
