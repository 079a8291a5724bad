"""Hears "stop" in the first pause after it, before the segment ends.

The normal path hears "stop" only after the hangover (300 ms) and a full Whisper decode
(~300 ms). While the arm moves or the daemon speaks, the spotter looks at every short burst of
speech as soon as `stop_gap_ms` of silence follow it, and decodes it with the bundled tiny.en
model in a 5 s encoder window with a few tokens at most (~50 ms here). If the text is a stop
command (the router's global rule decides), the listener yields `Spotted` at once; the full
transcript of the same speech later is not dispatched a second time.

It finds its bursts with a segmenter of its own whose speech margin grows with the spread of
the room's levels (`audio.segmenter.AdaptiveMargin`): in the babble of other people talking the
fixed margin hears one endless segment and never the pause after "stop" (measured on the
development corpus: a burst for 14 % of stops at 10 dB babble, 96 % with the adaptive margin).

The spotter always runs on the local model, whatever `[stt] engine` says, so the fast stop
does not depend on the network. A false stop is safe; it only halts the arm.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import structlog
from voiced.audio.convert import Pcm, to_float
from voiced.audio.segmenter import AdaptiveMargin, PauseWatch, Segment, Segmenter
from voiced.audio.settings import AudioSettings, SttSettings
from voiced.audio.whisper import WhisperTranscriber
from voiced.audio.whisper_window import DecodeOptions, decode_window

log = structlog.get_logger(__name__)

SPOT_OPTIONS = DecodeOptions(
    window_s=5.0,
    beam_size=1,
    temperatures=(0.0,),
    logprob_threshold=-1.0,
    no_speech_threshold=0.6,
    initial_prompt="Stop! Halt! Freeze!",
    max_new_tokens=10,
)
"""A 5 s window encodes in ~15 ms; the prompt leans towards the stop words (all three: with
"Stop!" alone "freeze" was heard 71 times in 130, with all three 110); a short burst needs a few
tokens (and a cap stops the loops short windows fall into)."""


@dataclass(frozen=True)
class Spotted:
    """A stop command heard before its segment ended."""

    text: str
    """What the spotter decoded."""
    start: float
    """Audio clock where the burst of speech started."""
    t: float
    """Audio clock when it was spotted."""
    speech_end: float
    """Audio clock at the end of the last word."""
    seconds: float
    """Decode time."""
    score: float | None = None
    """The keyword model's score (None: heard by Whisper)."""

    @property
    def engine(self) -> str:
        return "whisper" if self.score is None else "keyword"


class StopSpotter:
    """Decides when a pause is worth a look and decodes the burst before it."""

    def __init__(
        self,
        settings: AudioSettings,
        stt: SttSettings,
        is_stop: Callable[[str], bool],
        armed: Callable[[], bool],
    ) -> None:
        self.segmenter = Segmenter(settings, adaptive=AdaptiveMargin())
        """Its own bursts (see the module)."""
        self._watch = PauseWatch(settings.stop_gap_ms, settings.stop_max_ms / 1000)
        self.stt = stt
        self.is_stop = is_stop
        """Whether a text is a stop command (the router's global rule)."""
        self.armed = armed
        """Whether anything is moving or queued; the spotter does nothing otherwise."""
        self._spotted_end: float | None = None

    async def load(self) -> None:
        """Load the spotter's model now, at start: loaded on the first burst instead, the
        first stop would wait for it, and its load's passing peak of memory (about twice the
        model) would come on top of everything the running daemon holds."""
        try:
            await asyncio.to_thread(self._model)
        except Exception:
            # As in check(): the normal path still hears the stop.
            log.exception("stop spotter's model did not load")

    def _model(self) -> Any:
        # Always the bundled tiny.en (loaded once per process; the transcriber's own when it is
        # that too): Whisper base heard "stop" in 43 % of near-word crops (bench/README.md,
        # stop spotting) and in a kitchen's talk (speech-to-intent levers).
        return WhisperTranscriber(replace(self.stt, model="")).model()

    def feed(self, frame: Pcm, echo_floor: float) -> None:
        """One input frame (as the listener hears it, with its echo floor)."""
        self.segmenter.echo_floor = echo_floor
        self.segmenter.feed(frame)

    @property
    def last_stop_end(self) -> float | None:
        """The end of the last burst spotted as a stop (audio clock)."""
        return self._spotted_end

    def spotted(self, segment: Segment) -> bool:
        """Whether a stop was already spotted in `segment` (so its transcript is not another)."""
        end = self._spotted_end
        return end is not None and segment.start - 0.1 <= end <= segment.end

    async def check(self) -> Spotted | None:
        """Spot the open burst if it is due; None when it is not or is no stop."""
        segment = self._watch.due(self.segmenter) if self.armed() else None
        if segment is None:
            return None
        began = time.perf_counter()
        try:
            text = await asyncio.to_thread(self._decode, segment)
        except Exception:
            # The normal path still hears the stop; the spotter must never stop the listening.
            log.exception("stop spotter failed")
            return None
        seconds = time.perf_counter() - began
        log.debug("stop spotter", text=text, seconds=round(seconds, 4))
        if not text or not self.is_stop(text):
            return None
        self._spotted_end = segment.vad.speech_end
        return Spotted(text, segment.start, segment.end, segment.vad.speech_end, round(seconds, 4))

    def _decode(self, segment: Segment) -> str:
        model = self._model()
        audio = to_float(segment.samples).astype(np.float32)
        decoded = decode_window(model, audio, SPOT_OPTIONS)
        return "" if decoded is None or decoded.silent(SPOT_OPTIONS) else decoded.text


KEYWORD_WORD_S = 0.6
"""How long before a keyword detection the word is taken to have started (for the own-voice
check and for finding its segment)."""


class KeywordStopSpotter:
    """Acts on the stop words the keyword models hear (`voiced.audio.keywords`): the same part
    in the listener as `StopSpotter`, without a decode. A hit counts while `armed()`; the
    segment it falls in is the stop's (its transcript is not dispatched again).

    With `whisper` (stop_engine "keyword+whisper") Whisper's spotter still looks at each burst
    in its first pause: it hears the pause words ("hold on") and any stop the models missed,
    and a stop it hears in a burst a model already stopped for is not sent twice."""

    def __init__(self, armed: Callable[[], bool], whisper: StopSpotter | None = None) -> None:
        self.armed = armed
        self.whisper = whisper
        self._pending: Spotted | None = None
        self._spotted_end: float | None = None

    def hear(self, phrase: str, score: float, t: float) -> bool:
        """A stop word heard at `t`; True when it is acted on (something is armed)."""
        if not self.armed():
            log.info("stop word heard, nothing to stop", phrase=phrase, score=score, t=t)
            return False
        sent = self.whisper.last_stop_end if self.whisper is not None else None
        if sent is not None and t - KEYWORD_WORD_S <= sent <= t + 0.2:
            log.info("stop already sent for this word", phrase=phrase, score=score, t=t)
            return True
        self._pending = Spotted(phrase, t - KEYWORD_WORD_S, t, t, 0.0, score)
        self._spotted_end = t
        return True

    async def load(self) -> None:
        if self.whisper is not None:
            await self.whisper.load()

    def feed(self, frame: Pcm, echo_floor: float) -> None:
        """The keywords are fed once for all (see `voiced.audio.keywords`); Whisper's spotter
        gets every frame."""
        if self.whisper is not None:
            self.whisper.feed(frame, echo_floor)

    def spotted(self, segment: Segment) -> bool:
        end = self._spotted_end
        mine = end is not None and segment.start - 0.1 <= end <= segment.end + 0.2
        return mine or (self.whisper is not None and self.whisper.spotted(segment))

    async def check(self) -> Spotted | None:
        pending, self._pending = self._pending, None
        if pending is not None or self.whisper is None:
            return pending
        heard = await self.whisper.check()
        end = self._spotted_end
        if heard is not None and end is not None and heard.start - 0.1 <= end <= heard.t + 0.2:
            log.info("stop already sent for this word", text=heard.text, t=heard.t)
            return None
        return heard
