"""The listener: source -> (echo) -> ring buffer + segmenter -> (wake gate) -> Silero gate ->
transcriber.

It yields events on the audio clock. Audio is processed one VAD frame at a time and nothing
else advances while the consumer handles an event, so the same audio gives the same events at
real-time pace and as fast as possible, including the effect of the `hold` calls the consumer
makes in response (a phrase to say is placed on the playback timeline before another input
frame is processed). Transcription is one segment at a time; while it runs, the source buffers
(the microphone's queue is bounded and drops its oldest audio, with a warning).

The listener never stops listening while the daemon speaks (`audio.duplex`): speech that starts
during a reply yields `BargeIn` (the reply is cut off by whoever listens), and words that are
the reply's own echo are taken out of what is heard, or the segment is rejected as "own voice".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, replace

import numpy as np
import structlog
from voiced.audio import silero
from voiced.audio.convert import Pcm, rms
from voiced.audio.duplex import Duplex
from voiced.audio.keywords import KeywordHit, Keywords
from voiced.audio.ownvoice import OwnVoice
from voiced.audio.segmenter import Activity, Dropped, PauseWatch, Segment, Segmenter, SegmenterEvent
from voiced.audio.settings import SAMPLE_RATE, AudioSettings
from voiced.audio.source import AudioSource, LiveSource
from voiced.audio.stopspot import KEYWORD_WORD_S, KeywordStopSpotter, Spotted, StopSpotter
from voiced.audio.transcribe import (
    NO_BIAS,
    BiasVocabulary,
    Chooser,
    Transcriber,
    Transcript,
    TranscriptionError,
)
from voiced.audio.wake import WakeGate

log = structlog.get_logger(__name__)

TICK_S = 0.1
"""Ticks come at least this often on the audio clock."""
MAX_YIELD_S = 1.5
"""A reply waits at most this long for a stirring of speech to become speech or die away (in
steady voiced noise it would wait for ever)."""
REHEAR_MAX_S = 10.0
"""The longest stretch heard again as one (`Listener.rehear`): the input waits while it is
decoded, and a microphone's queue holds `[audio] queue_seconds` (10 s) before it drops audio;
a spoken order with its pauses is 3-8 s."""
HOLD_TIMEOUT_S = 60.0
"""A hold never released (a speaker that hung) stops blocking the input after this long."""


@dataclass(frozen=True)
class Heard:
    """A transcribed utterance to dispatch."""

    text: str
    """Cleaned text (with the router's wake word in front when a wake detector opened it)."""
    raw: str
    """The engine's raw text, special tokens included."""
    t: float
    """Audio clock at the end of the segment."""
    segment: Segment
    """The audio."""
    transcript: Transcript
    """The full transcription result."""
    decoded_at: float = 0.0
    """Audio clock at the end of the audio that was transcribed: before `t` when the
    transcription started early, in a pause (see `[audio] early_transcribe_ms`)."""
    spotted: bool = False
    """The stop spotter already heard a stop in this segment (see `voiced.audio.stopspot`)."""


@dataclass(frozen=True)
class Judged:
    """What the Silero gate and the transcriber made of a segment."""

    silero_prob: float | None
    """The gate's probability, when it ran."""
    transcript: Transcript | None
    """None if it was never transcribed (or the transcriber failed)."""
    rejected: str | None
    """Why nothing is dispatched; None when the transcript is to be heard."""
    decoded_at: float
    """Audio clock at the end of the audio judged."""


@dataclass(frozen=True)
class Tick:
    """Audio time passed (for silence and confirm timers)."""

    t: float
    """Audio clock now."""


@dataclass(frozen=True)
class BargeIn:
    """The operator started speaking while the daemon spoke."""

    t: float
    """Audio clock where the speech started."""
    position: int
    """Input sample position to cut the reply at (the newest sample played)."""
    phrase: str
    """The reply being said."""


@dataclass(frozen=True)
class Rejected:
    """Audio that produced nothing to dispatch, and why."""

    t: float
    """Audio clock when it was rejected."""
    reason: str
    """e.g. "too short (90 ms)", "not speech (silero 0.08)", "no wake word", a guard's reason."""
    raw: str = ""
    """The engine's raw text when there was a transcription."""


@dataclass(frozen=True)
class KeywordHeard:
    """A keyword model heard its phrase (`voiced.audio.keywords`)."""

    hit: KeywordHit
    acted: bool
    """Whether it was acted on: a wake word while one is needed, a stop while something
    moves or the daemon speaks (a stop acted on is also yielded as `Spotted`)."""


ListenerEvent = Heard | Activity | Tick | Rejected | Spotted | BargeIn | KeywordHeard
SegmentSink = Callable[[Segment, Transcript | None, str | None], None]
"""Receives every segment with its transcript (None if never transcribed) and the rejection
reason (None if heard); the cell page's `Exchanges.publish` fits."""


class SpeechHold:
    """Keeps the listener from processing audio until released (see `Listener.hold`)."""

    def __init__(self, listener: Listener, position: int) -> None:
        self.position = position
        """Input sample position where the phrase is to start playing."""
        self._listener = listener

    @property
    def t0(self) -> float:
        """Audio clock where the phrase is to start."""
        return self.position / SAMPLE_RATE

    def release(self) -> None:
        """The phrase is on the timeline (or will not be said): listen on."""
        self._listener._release(self)


class Listener:
    """Turns an audio source into `ListenerEvent`s."""

    def __init__(
        self,
        source: AudioSource,
        transcriber: Transcriber,
        settings: AudioSettings | None = None,
        *,
        bias: BiasVocabulary = NO_BIAS,
        wake_gate: WakeGate | None = None,
        wake_required: Callable[[], bool] = lambda: False,
        sink: SegmentSink | None = None,
        spotter: StopSpotter | KeywordStopSpotter | None = None,
        keywords: Keywords | None = None,
        duplex: Duplex | None = None,
        barge_in_ms: int | None = 150,
    ) -> None:
        self.source = source
        self.transcriber = transcriber
        self.settings = settings or AudioSettings()
        self.bias = bias
        """The vocabulary passed to the transcriber; replace it when the cell changes."""
        self.choose: Chooser | None = None
        """Picks among the transcriber's hypotheses (the owner's grammar); None: the best."""
        self.wake_gate = wake_gate
        self.wake_required = wake_required
        self.sink = sink
        self.spotter = spotter
        self.keywords = keywords
        """The keyword models (wake word, stop words), fed every frame; None: none."""
        self.duplex = duplex
        """What the daemon is saying; None when it says nothing (text sessions, tests)."""
        self.barge_in_ms = barge_in_ms
        """Speech over a reply after which it yields `BargeIn`; None: never."""
        self._early: tuple[tuple[float, float], Judged] | None = None
        early_ms = self.settings.early_transcribe_ms
        self._early_watch = PauseWatch(early_ms) if early_ms > 0 else None
        self.segmenter = Segmenter(self.settings)
        self._frame = self.segmenter.frame
        self._tick_frames = max(1, round(TICK_S * SAMPLE_RATE) // self._frame)
        self._position = 0
        self._barged: float | None = None
        """Start of the segment that last cut a reply off (one barge-in per segment)."""
        self._holds: set[SpeechHold] = set()
        self._released = asyncio.Event()

    @property
    def now(self) -> float:
        """Audio clock: seconds of audio processed so far."""
        return self._position / SAMPLE_RATE

    @property
    def play_position(self) -> int:
        """The input sample position that is playing now: where the listener is for a file;
        the newest captured sample for the microphone, which the listener may lag behind by a
        transcription (a satellite's likewise)."""
        if isinstance(self.source, LiveSource):
            return max(self._position, self.source.head_samples)
        return self._position

    def hold(self) -> SpeechHold:
        """Stop processing input until the returned hold is released, once the phrase is on the
        playback timeline. Take it synchronously when speech is decided, so the phrase starts
        at the audio-clock position of that decision, whatever the pace of the input."""
        held = SpeechHold(self, self.play_position)
        self._holds.add(held)
        return held

    def _release(self, held: SpeechHold) -> None:
        self._holds.discard(held)
        self._released.set()

    async def _wait_for_holds(self) -> None:
        while self._holds:
            self._released.clear()
            try:
                await asyncio.wait_for(self._released.wait(), HOLD_TIMEOUT_S)
            except TimeoutError:
                log.warning("speech hold never released; listening again", holds=len(self._holds))
                self._holds.clear()

    async def events(self) -> AsyncGenerator[ListenerEvent, None]:
        """Events until the source ends (a microphone never does). Closing this closes the
        source at once (the microphone's stream, stdin's pipe)."""
        pending: Pcm = np.zeros(0, dtype=np.int16)
        async with contextlib.aclosing(self.source.chunks()) as chunks:
            async for chunk in chunks:
                pending = (
                    np.concatenate([pending, chunk.samples]) if len(pending) else chunk.samples
                )
                while len(pending) >= self._frame:
                    frame, pending = pending[: self._frame], pending[self._frame :]
                    await self._wait_for_holds()
                    async for event in self._process(frame):
                        yield event
        for segmenter_event in self.segmenter.finish():
            async for event in self._handle(segmenter_event):
                yield event
        yield Tick(self.now)

    async def _process(self, frame: Pcm) -> AsyncIterator[ListenerEvent]:
        start = self._position
        if self.duplex is not None:
            frame, self.segmenter.echo_floor = self.duplex.input(
                frame, start, self.settings.frame_ms
            )
        if self.wake_gate is not None:
            self.wake_gate.feed(frame, start, listening=self.wake_required())
        # A keyword must beat the daemon's own voice as the stop spotter's speech does.
        settled = self.duplex.gate.settled if self.duplex is not None else 0.0
        hits = self.keywords.feed(frame, start, settled) if self.keywords is not None else []
        self._position += len(frame)
        for hit in hits:
            yield self._keyword(hit)
        for segmenter_event in self.segmenter.feed(frame):
            async for event in self._handle(segmenter_event):
                yield event
        if self.duplex is not None and self.segmenter.echo_floor > 0 and not self.segmenter.active:
            self.duplex.gate.learn(rms(frame))
        if (barge := self._barge_in()) is not None:
            yield barge
        else:
            self._yield_floor()
        if self.spotter is not None:
            self.spotter.feed(frame, settled)
        if self.spotter is not None and (spotted := await self.spotter.check()):
            if self._own(spotted.text, spotted.start, spotted.speech_end).all_own:
                log.info("own voice: not a stop", text=spotted.text, t=spotted.t)
            else:
                log.warning("stop spotted", text=spotted.text, t=spotted.t, seconds=spotted.seconds)
                yield spotted
        await self._transcribe_early()
        if (self._position // self._frame) % self._tick_frames == 0:
            yield Tick(self.now)

    def _stop_armed(self) -> bool:
        """Whether the stop spotter listens now (something moves or the daemon speaks)."""
        return self.spotter is not None and self.spotter.armed()

    def _keyword(self, hit: KeywordHit) -> KeywordHeard:
        """Hand a keyword hit to the wake gate or the stop spotter."""
        if hit.role == "wake":
            listening = self.wake_required()
            if self.wake_gate is not None:
                self.wake_gate.arm(hit.t, listening, hit.score)
            return KeywordHeard(hit, self.wake_gate is not None and listening)
        if not isinstance(self.spotter, KeywordStopSpotter):
            return KeywordHeard(hit, False)
        start, end = round((hit.t - KEYWORD_WORD_S) * SAMPLE_RATE), round(hit.t * SAMPLE_RATE)
        if self.duplex is not None and self.duplex.says_word(hit.phrase, start, end):
            log.info("own voice: not a stop", text=hit.phrase, t=hit.t)
            return KeywordHeard(hit, False)
        return KeywordHeard(hit, self.spotter.hear(hit.phrase, hit.score, hit.t))

    async def _handle(self, event: SegmenterEvent) -> AsyncIterator[ListenerEvent]:
        if isinstance(event, Activity):
            yield event
        elif isinstance(event, Dropped):
            yield Rejected(event.t, event.reason)
        else:
            yield await self._segment(event)

    async def _segment(self, segment: Segment) -> Heard | Rejected:
        gate = self.wake_gate if self.wake_required() else None
        if gate is not None:
            detected_at = gate.admit(segment)
            if detected_at is None and (gate.text_too or self._stop_armed()):
                # Transcribed as it is: the router finds the wake word in it, or a stop word
                # (while something moves a stop must be heard whatever the wake gate says).
                gate = None
        if gate is not None:
            if detected_at is None:
                return self._reject(segment, None, "no wake word")
            rest = gate.after_wake_phrase(segment, detected_at, self.settings.min_segment_ms / 1000)
            if rest is None:  # the wake phrase and nothing after it: nothing to transcribe
                alone = Transcript(gate.wake_word, "", 0.0, 0.0, None, 0.0)
                self._publish(segment, alone, None)
                log.info("heard wake word alone", t=segment.end)
                return Heard(gate.wake_word, "", segment.end, segment, alone)
            segment = rest
        judged = self._take_early(segment) or await self._judge(segment)
        if judged.silero_prob is not None:
            segment = segment.with_silero(judged.silero_prob)
        transcript = judged.transcript
        if judged.rejected is not None or transcript is None:
            return self._reject(segment, transcript, judged.rejected or "not transcribed")
        text = gate.deliver(transcript.text) if gate is not None else transcript.text
        own = self._own(text, segment.start, segment.end)
        if own.all_own:
            return self._reject(segment, transcript, f"own voice ({' '.join(own.removed)})")
        if own.removed:
            log.info("own words removed", heard=text, kept=own.text, removed=own.removed)
            text = own.text
        self._publish(segment, transcript, None)
        log.info("heard", text=text, t=segment.end, seconds=transcript.seconds)
        spotted = self.spotter is not None and self.spotter.spotted(segment)
        return Heard(
            text, transcript.raw, segment.end, segment, transcript, judged.decoded_at, spotted
        )

    async def _judge(self, segment: Segment, gate: bool = True) -> Judged:
        prob: float | None = None
        if gate and self.settings.silero_gate:
            prob = await asyncio.to_thread(silero.speech_probability, segment.samples)
            if prob < self.settings.silero_threshold:
                return Judged(prob, None, f"not speech (silero {prob:.2f})", segment.end)
        try:
            transcript = await self.transcriber.transcribe(segment, self.bias, self.choose)
        except TranscriptionError as exc:
            log.error("transcription failed", engine=self.transcriber.name, error=str(exc))
            return Judged(prob, None, f"transcription failed: {exc}", segment.end)
        except Exception as exc:
            # One bad segment (a model or runtime error) must not stop the operator being
            # heard; the traceback goes to the log.
            log.exception("transcriber crashed", engine=self.transcriber.name)
            return Judged(prob, None, f"transcription failed: {exc!r}", segment.end)
        return Judged(prob, transcript, transcript.rejected_reason, segment.end)

    async def rehear(self, start: float, end: float) -> Transcript | None:
        """What the input from `start` to `end` (audio clock) reads as one segment: an order
        said in pieces ("May I have a," ... "dark roast." ... "8 ounce, iced coffee ...") is
        heard by the recogniser whole, with the context each piece lacked alone. Transcribed
        as a segment is, the daemon's own words taken out; None when the audio is no longer
        held or longer than `REHEAR_MAX_S`, or the transcript is rejected or only the daemon's
        own voice."""
        if end - start > REHEAR_MAX_S:
            log.info("not heard again: too long a stretch", start=start, end=end)
            return None
        segment = self.segmenter.recorded(start, end)
        if segment is None:
            log.info("not heard again: no longer held", start=start, end=end)
            return None
        judged = await self._judge(segment, gate=False)
        transcript = judged.transcript
        if transcript is None or judged.rejected is not None:
            log.info("heard again, rejected", reason=judged.rejected, start=start, end=end)
            return None
        own = self._own(transcript.text, segment.start, segment.end)
        if own.all_own:
            return None
        log.info("heard again whole", text=own.text, start=start, end=end,
                 seconds=transcript.seconds)  # fmt: skip
        return replace(transcript, text=own.text)

    async def _transcribe_early(self) -> None:
        """In a pause of `early_transcribe_ms`, judge the open segment now; `_segment` uses the
        result if the segment then ends with no more speech. Not with a wake detector, which
        cuts the segment only when it closes."""
        if self._early_watch is None or (self.wake_gate is not None and self.wake_required()):
            return
        segment = self._early_watch.due(self.segmenter)
        if segment is not None:
            self._early = ((segment.start, segment.vad.speech_end), await self._judge(segment))

    def _take_early(self, segment: Segment) -> Judged | None:
        early, self._early = self._early, None
        if early is not None and early[0] == (segment.start, segment.vad.speech_end):
            return early[1]
        return None

    def _own(self, text: str, start: float, end: float) -> OwnVoice:
        """`text` heard between `start` and `end` without the daemon's own words."""
        if self.duplex is None:
            return OwnVoice(text, ())
        return self.duplex.own_words(text, round(start * SAMPLE_RATE), round(end * SAMPLE_RATE))

    def _barge_in(self) -> BargeIn | None:
        """Speech while a reply plays, or is about to start, once there is `barge_in_ms` of
        it: the operator is talking over it, or still has the floor (a reply due in the next
        frame is dropped before a sample of it plays)."""
        if self.barge_in_ms is None or self.duplex is None:
            return None
        speech = self.segmenter.speech_so_far()
        if speech is None or speech[0] == self._barged:
            return None
        start, seconds = speech
        if seconds * 1000 < self.barge_in_ms:
            return None
        position = self.play_position
        due = self.duplex.playback.during(position, position + self._frame)
        if not due:
            return None
        phrase = due[0]
        self._barged = start
        log.info("barge-in", t=start, phrase=phrase.text)
        return BargeIn(start, position, phrase.text)

    def _yield_floor(self) -> None:
        """A reply due to start while speech may be starting waits a frame: the operator keeps
        the floor, and if it becomes speech the reply is dropped before a sample of it plays."""
        if self.barge_in_ms is None or self.duplex is None or not self.segmenter.stirring:
            return
        position = self.play_position
        for phrase in self.duplex.playback.during(position, position + self._frame):
            waited = phrase.start - phrase.decided
            if phrase.start >= position and waited < MAX_YIELD_S * SAMPLE_RATE:
                self.duplex.playback.postpone(phrase, self._frame)
                return

    def _reject(self, segment: Segment, transcript: Transcript | None, reason: str) -> Rejected:
        self._publish(segment, transcript, reason)
        raw = transcript.raw if transcript else ""
        log.info("segment rejected", reason=reason, raw=raw, t=segment.end)
        return Rejected(segment.end, reason, raw)

    def _publish(self, segment: Segment, transcript: Transcript | None, reason: str | None) -> None:
        if self.sink is None:
            return
        try:
            self.sink(segment, transcript, reason)
        except Exception as exc:
            # The page is a window on the cell; it must never stop the operator being heard.
            log.warning("segment sink failed", error=str(exc))
