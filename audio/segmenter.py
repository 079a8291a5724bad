"""Cuts the sample stream into speech segments with webrtcvad.

A segment starts when k of the last n frames are voiced and ends after `hangover_ms` of
unvoiced frames. A frame quieter than the RMS gate never counts as voiced. The segmenter is
synchronous and deterministic: the same samples give the same segments however they are
chunked and however fast they arrive. Times are on the audio clock (sample index / 16000).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import structlog
import webrtcvad  # type: ignore[import-untyped]
from voiced.audio.convert import Pcm, rms
from voiced.audio.ringbuffer import RingBuffer
from voiced.audio.settings import SAMPLE_RATE, AudioSettings

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class VadStats:
    """What the voice activity detector saw in a segment."""

    voiced_frames: int
    """Frames counted as voiced between the start and the end of the segment."""
    total_frames: int
    """Frames in the live part (pre-roll excluded)."""
    trigger_time: float
    """Audio clock when k of n frames were voiced (the segment was recognised as speech)."""
    speech_end: float
    """Audio clock at the end of the last voiced frame: the end of the last word."""
    rms: float
    """RMS of the live part, int16 units."""
    silero_prob: float | None = None
    """Silero speech probability, when the Silero gate ran."""


@dataclass(frozen=True)
class Segment:
    """One stretch of speech, pre-roll included."""

    samples: Pcm
    """16 kHz mono int16: `preroll` samples of history, then the live part."""
    preroll: int
    """How many leading samples are pre-roll (the splice point is samples[preroll])."""
    start: float
    """Audio clock of the first live sample (samples[preroll])."""
    end: float
    """Audio clock one past the last sample (speech end plus the hangover)."""
    vad: VadStats
    """Voice activity statistics."""
    closed_by: str = "silence"
    """Why it ended: "silence", "max_length", "end_of_stream", "open" (not ended yet), or
    "recorded" (a stretch read back from what was heard, `Segmenter.recorded`)."""

    @property
    def duration(self) -> float:
        """Seconds of audio, pre-roll included."""
        return len(self.samples) / SAMPLE_RATE

    @property
    def first_sample(self) -> int:
        """Audio-clock index of samples[0]."""
        return round(self.start * SAMPLE_RATE) - self.preroll

    def with_silero(self, prob: float) -> Segment:
        """The same segment with the Silero gate's probability recorded."""
        return replace(self, vad=replace(self.vad, silero_prob=prob))


@dataclass(frozen=True)
class Activity:
    """Voice activity changed (for silence timers)."""

    t: float
    """Audio clock of the change."""
    voiced: bool
    """True when speech started, False when it ended."""


@dataclass(frozen=True)
class Dropped:
    """Speech-like audio the segmenter did not turn into a segment."""

    t: float
    """Audio clock when it was dropped."""
    reason: str
    """Why, e.g. "too short (90 ms)" or "muted"."""


@dataclass(frozen=True)
class Pause:
    """A silence inside the open segment, before the hangover ends it."""

    start: float
    """Audio clock of the segment's first live sample."""
    speech_end: float
    """Audio clock at the end of the last voiced frame."""
    silence_ms: int
    """How long the silence has lasted."""
    long_enough: bool
    """The speech so far is at least `min_segment_ms` (it would not be dropped)."""


SegmenterEvent = Segment | Activity | Dropped
VoicedTest = Callable[[Pcm], bool]
"""Decides whether one frame is voiced."""


class NoiseFloor:
    """The room's noise level: a low percentile of recent frame levels. The gaps between words
    keep it at the noise while someone talks, and it follows a machine starting or stopping
    within a fraction of the window."""

    PERCENTILE = 10.0
    """Which percentile of the window's frame levels counts as the floor."""

    def __init__(self, window_frames: int) -> None:
        self._levels: deque[float] = deque(maxlen=max(1, window_frames))
        self.level: float | None = None
        """The estimate (int16 RMS units); None until a non-silent frame was seen."""
        self.spread_db = 0.0
        """Median over floor, in dB: small for steady noise, large for talk in the room."""

    @property
    def frames(self) -> int:
        """Frame levels in the window."""
        return len(self._levels)

    def update(self, frame_rms: float) -> float | None:
        """Take one frame's RMS; returns the floor before it (what the frame is judged by)."""
        before = self.level
        # Digital silence (muted input, padded files) says nothing about the room's noise.
        if frame_rms > 0:
            self._levels.append(frame_rms)
            floor, median = np.percentile(self._levels, [self.PERCENTILE, 50.0])
            self.level = float(floor)
            self.spread_db = float(20 * np.log10(median / floor)) if floor > 0 else 0.0
        return before


@dataclass(frozen=True)
class AdaptiveMargin:
    """A speech margin over the noise floor that grows with the spread of the room's levels:
    `factor` x (median - floor) in dB, between `low_db` and `high_db`. Steady noise has a
    narrow spread and keeps the low margin; background talk (babble) a wide one, and the larger
    margin brings back the gaps between the operator's words that webrtcvad hears as speech."""

    factor: float = 2.5
    low_db: float = 6.0
    high_db: float = 12.0
    min_frames: int = 10
    """Frames of history before it applies (until then: `low_db`)."""

    def margin_db(self, noise: NoiseFloor, frames: int) -> float:
        """The margin for the next frame."""
        if frames < self.min_frames:
            return self.low_db
        return min(self.high_db, max(self.low_db, self.factor * noise.spread_db))


class Segmenter:
    """Feed samples in, get segments and activity changes out."""

    def __init__(
        self,
        settings: AudioSettings,
        is_voiced: VoicedTest | None = None,
        adaptive: AdaptiveMargin | None = None,
    ) -> None:
        self.settings = settings
        self.frame = SAMPLE_RATE * settings.frame_ms // 1000
        self.preroll = SAMPLE_RATE * settings.preroll_ms // 1000
        self._hangover = -(-settings.hangover_ms // settings.frame_ms)
        self._max = SAMPLE_RATE * settings.max_segment_ms // 1000
        self._min = SAMPLE_RATE * settings.min_segment_ms // 1000
        self._vad = webrtcvad.Vad(settings.vad_aggressiveness)
        self._is_voiced = is_voiced or self._webrtc_voiced
        self._margin = 10 ** (settings.noise_margin_db / 20)
        self._adaptive = adaptive
        self.noise = NoiseFloor(round(settings.noise_window_s * 1000 / settings.frame_ms))
        # Room for a whole segment plus its pre-roll plus the start window.
        capacity = self.preroll + self._max + self.frame * (settings.start_window + 2)
        self.ring = RingBuffer(capacity)
        self._pending = np.zeros(0, dtype=np.int16)
        self._window: deque[tuple[int, bool]] = deque(maxlen=settings.start_window)
        self._open: _Open | None = None
        self.echo_floor = 0.0
        """The next frame must be louder than this (int16 RMS) to be voiced: the daemon's own
        voice as it arrives at the microphone (see `voiced.audio.duplex.EchoGate`)."""

    @property
    def active(self) -> bool:
        """A segment is open (speech in progress)."""
        return self._open is not None

    def feed(self, samples: Pcm) -> list[SegmenterEvent]:
        """Process samples; whole frames are consumed, the remainder waits for more."""
        data = np.concatenate([self._pending, samples]) if len(self._pending) else samples
        events: list[SegmenterEvent] = []
        usable = len(data) - len(data) % self.frame
        for offset in range(0, usable, self.frame):
            events.extend(self._frame(data[offset : offset + self.frame]))
        self._pending = data[usable:].copy()
        return events

    def finish(self) -> list[SegmenterEvent]:
        """End of stream: close the open segment, if any."""
        if self._open is None:
            return []
        return self._close("end_of_stream")

    def abort(self, reason: str) -> list[SegmenterEvent]:
        """Discard the open segment (input muted) and forget the start window."""
        self._window.clear()
        if self._open is None:
            return []
        self._open = None
        t = self.ring.end / SAMPLE_RATE
        return [Activity(t, False), Dropped(t, reason)]

    def _webrtc_voiced(self, frame: Pcm) -> bool:
        level = rms(frame)
        margin = self._margin
        if self._adaptive is not None:
            margin = 10 ** (self._adaptive.margin_db(self.noise, self.noise.frames) / 20)
        floor = self.noise.update(level)
        if level < self.settings.rms_gate or level < self.echo_floor:
            return False
        if floor is not None and self.settings.noise_margin_db > 0 and level < floor * margin:
            return False
        return bool(self._vad.is_speech(frame.tobytes(), SAMPLE_RATE))

    def _frame(self, frame: Pcm) -> list[SegmenterEvent]:
        first = self.ring.end
        self.ring.write(frame)
        voiced = self._is_voiced(frame)
        current = self._open
        if current is None:
            self._window.append((first, voiced))
            if sum(v for _, v in self._window) < self.settings.start_frames:
                return []
            start = next(i for i, v in self._window if v)
            self._open = _Open(start, self.ring.end, self._window)
            self._window.clear()
            return [Activity(start / SAMPLE_RATE, True)]
        current.frames += 1
        if voiced:
            current.voiced += 1
            current.silent_run = 0
            current.speech_end = self.ring.end
        else:
            current.silent_run += 1
        if self.ring.end - current.start >= self._max:
            return self._close("max_length")
        if current.silent_run >= self._hangover:
            return self._close("silence")
        return []

    @property
    def stirring(self) -> bool:
        """Speech may be starting: a segment is open, or a recent frame was voiced."""
        return self._open is not None or any(v for _, v in list(self._window)[-2:])

    def speech_so_far(self) -> tuple[float, float] | None:
        """The open segment's (start, seconds of speech up to its last voiced frame)."""
        current = self._open
        if current is None:
            return None
        return current.start / SAMPLE_RATE, (current.speech_end - current.start) / SAMPLE_RATE

    def pause(self) -> Pause | None:
        """The open segment when its last frame was unvoiced: where its speech started and
        ended, and how long the silence since has lasted (shorter than the hangover)."""
        current = self._open
        if current is None or current.silent_run == 0:
            return None
        return Pause(
            current.start / SAMPLE_RATE,
            current.speech_end / SAMPLE_RATE,
            current.silent_run * self.settings.frame_ms,
            current.speech_end - current.start >= self._min,
        )

    def so_far(self) -> Segment | None:
        """The open segment as it would close now (closed_by "open"), for work that starts
        before the hangover ends."""
        return None if self._open is None else self._segment(self._open, "open")

    def recorded(self, start: float, end: float) -> Segment | None:
        """The input from `start` to `end` on the audio clock as one segment, pre-roll and a
        hangover's silence included, for hearing again as a whole what was heard in pieces;
        None when part of it is no longer held (about `max_segment_ms` are; the pre-roll may be
        cut short) or not yet read."""
        begin = round(start * SAMPLE_RATE)
        first = max(self.ring.start, begin - self.preroll)
        last = min(self.ring.end, round(end * SAMPLE_RATE) + self._hangover * self.frame)
        if begin < self.ring.start or last <= begin:
            return None
        samples = self.ring.read(first, last)
        live = samples[begin - first :]
        frames = len(live) // self.frame
        stats = VadStats(frames, frames, start, end, round(rms(live), 1))
        return Segment(samples, begin - first, start, last / SAMPLE_RATE, stats, "recorded")

    def _close(self, closed_by: str) -> list[SegmenterEvent]:
        current = self._open
        assert current is not None
        self._open = None
        t = self.ring.end / SAMPLE_RATE
        ended = Activity(t, False)
        speech = current.speech_end - current.start
        if speech < self._min:
            return [ended, Dropped(t, f"too short ({speech * 1000 // SAMPLE_RATE} ms)")]
        return [ended, self._segment(current, closed_by)]

    def _segment(self, current: _Open, closed_by: str) -> Segment:
        first = max(self.ring.start, current.start - self.preroll)
        samples = self.ring.read(first, self.ring.end)
        live = samples[current.start - first :]
        stats = VadStats(
            voiced_frames=current.voiced,
            total_frames=current.frames,
            trigger_time=current.trigger / SAMPLE_RATE,
            speech_end=current.speech_end / SAMPLE_RATE,
            rms=round(rms(live), 1),
        )
        return Segment(
            samples=samples,
            preroll=current.start - first,
            start=current.start / SAMPLE_RATE,
            end=self.ring.end / SAMPLE_RATE,
            vad=stats,
            closed_by=closed_by,
        )


class PauseWatch:
    """Hands out the open segment once per pause of at least `ms` (a pause is known by where its
    speech started and ended), for work that starts before the hangover ends it."""

    def __init__(self, ms: int, max_speech_s: float = float("inf")) -> None:
        self.ms = ms
        self.max_speech_s = max_speech_s
        """Speech longer than this before the pause is left alone."""
        self._seen: tuple[float, float] | None = None

    def due(self, segmenter: Segmenter) -> Segment | None:
        pause = segmenter.pause()
        if pause is None or pause.silence_ms < self.ms or not pause.long_enough:
            return None
        key = (pause.start, pause.speech_end)
        if key == self._seen or pause.speech_end - pause.start > self.max_speech_s:
            return None
        self._seen = key
        return segmenter.so_far()


class _Open:
    """Bookkeeping of the segment in progress (absolute sample indices)."""

    def __init__(self, start: int, trigger: int, window: deque[tuple[int, bool]]) -> None:
        self.start = start
        self.trigger = trigger
        in_segment = [(i, v) for i, v in window if i >= start]
        self.frames = len(in_segment)
        self.voiced = sum(v for _, v in in_segment)
        self.speech_end = trigger
        self.silent_run = 0
