"""The listener's knowledge of the daemon's own voice: full duplex instead of a muted input.

While the daemon speaks the listener keeps listening. For every input frame it knows the
samples being played at that moment (`voiced.audio.playback`), so it can

- (file sessions) put the loudspeaker's echo into the input (`voiced.audio.room`), as a cell would;
- take the echo out again with an echo canceller fed the played samples as reference;
- judge whether a frame is louder than its own voice arrives at the microphone (`EchoGate`):
  webrtcvad hears speech in an echo however faint, so only a frame clearly above the echo may
  count as the operator's;
- tell whether a segment was heard while it spoke, and which of its words were its own
  (`voiced.audio.ownvoice`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from voiced.audio.convert import Pcm, rms
from voiced.audio.ownvoice import OwnVoice, echo_window, said_during, separate
from voiced.audio.playback import Phrase, Playback
from voiced.audio.room import RoomEcho


class EchoCanceller(Protocol):
    """Removes the echo of `reference` from `mic` (both 16 kHz int16, the same length)."""

    def process(self, mic: Pcm, reference: Pcm) -> Pcm: ...


@dataclass
class EchoGate:
    """How loud the daemon's own voice arrives at the microphone (after the canceller), learned
    while it speaks and nobody else does, and the level a frame must beat to be the operator's.

    The echo of a played sample arrives after the room's delay and lingers in its reverberation,
    so the prediction uses the loudest reference frame of the last `window_ms`. The coupling is
    the median of recent input/reference ratios while no speech was under way: the operator's
    first words over a reply are among them (they are what the gate is deciding about), and the
    median does not follow such a minority. Until enough are seen it is `initial` (strict: a
    loud speaker may well be louder at the microphone than the operator).

    A canceller that has heard little of the daemon's voice has not converged and can let the
    echo through at full level for a moment (seen here in the first seconds after start-up), so
    until `settle_s` of reference has passed the gate assumes nothing is cancelled. `settled`
    is the level a frame must beat assuming the canceller has converged: the stop spotter uses
    that one, so "stop" over the first replies is still heard."""

    margin_db: float = 6.0
    """How far above the predicted echo a frame must be."""
    window_ms: int = 300
    """Reference frames looked back over (room delay plus reverberation)."""
    initial: float = 4.0
    """Coupling assumed before any is learned (+12 dB)."""
    learn_frames: int = 150
    """Ratios kept (about 4.5 s of 30 ms frames)."""
    min_learned: int = 10
    """Ratios needed before the learned coupling replaces `initial`."""
    percentile: float = 50.0
    residual_db: float = -30.0
    """The echo is taken to be at least this loud relative to the reference (the canceller
    leaks at transients, however quiet it sounds between them)."""
    settle_s: float = 3.0
    """Seconds of the daemon's voice the canceller must have heard before it is trusted."""
    heard_s: float = 0.0
    """Seconds of reference heard so far."""
    settled: float = 0.0
    """The last frame's floor assuming a converged canceller."""
    _reference: deque[float] = field(default_factory=lambda: deque(maxlen=10))
    _ratios: deque[float] = field(default_factory=lambda: deque(maxlen=150))

    def __post_init__(self) -> None:
        self._ratios = deque(maxlen=self.learn_frames)

    def floor(self, reference: Pcm, frame_ms: int) -> float:
        """The level (int16 RMS) the input frame played over `reference` must beat; 0 when
        the daemon's voice cannot be in it."""
        frames = max(1, self.window_ms // frame_ms)
        if self._reference.maxlen != frames:
            self._reference = deque(self._reference, maxlen=frames)
        level = rms(reference)
        self._reference.append(level)
        if level >= 1.0:
            self.heard_s += frame_ms / 1000
        loudest = max(self._reference)
        if loudest < 1.0:
            self.settled = 0.0
            return 0.0
        margin = 10 ** (self.margin_db / 20)
        self.settled = loudest * self.coupling * margin
        young = self.heard_s < self.settle_s
        return loudest * max(self.coupling, 1.0) * margin if young else self.settled

    @property
    def coupling(self) -> float:
        """Echo level at the microphone per unit of reference level."""
        if len(self._ratios) < self.min_learned:
            return self.initial
        learned = float(np.percentile(self._ratios, self.percentile))
        return max(learned, 10 ** (self.residual_db / 20))

    def learn(self, frame_level: float) -> None:
        """The frame just judged was the daemon alone (no operator speech open)."""
        loudest = max(self._reference, default=0.0)
        if loudest >= 100.0:  # too quiet a reference says nothing about the room
            self._ratios.append(frame_level / loudest)


@dataclass
class Audibility:
    """Whether the daemon's voice reaches the microphone at all: the input's median level
    while it speaks against its median level while it is silent, before any cancelling. With
    no loudspeaker near the microphone (a headset, a recording) its words cannot be in what
    the operator is heard to say, and none is taken out of a transcript as the daemon's own."""

    rise_db: float = 3.0
    """How much louder the input must be while the daemon speaks for its voice to count as
    heard."""
    frames: int = 300
    """Frames of each kind kept (about 9 s of 30 ms frames)."""
    min_frames: int = 30
    """Frames of each kind needed before judging; until then the voice counts as heard."""
    _speaking: deque[float] = field(default_factory=deque)
    _silent: deque[float] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self._speaking = deque(maxlen=self.frames)
        self._silent = deque(maxlen=self.frames)

    def hear(self, level: float, speaking: bool) -> None:
        (self._speaking if speaking else self._silent).append(level)

    @property
    def heard(self) -> bool:
        if min(len(self._speaking), len(self._silent)) < self.min_frames:
            return True
        speaking = float(np.median(self._speaking))
        silent = float(np.median(self._silent))
        return speaking >= 1.0 and speaking >= silent * 10 ** (self.rise_db / 20)


@dataclass
class Duplex:
    """What the listener needs to hear past the daemon's own speech."""

    playback: Playback
    """The timeline of everything said."""
    tail_s: float = 0.3
    """After a phrase ends its echo may still be heard this long (room, device latency)."""
    room: RoomEcho | None = None
    """Simulated loudspeaker echo (file sessions only)."""
    canceller: EchoCanceller | None = None
    """Acoustic echo cancellation, fed the played samples."""
    gate: EchoGate = field(default_factory=EchoGate)
    audibility: Audibility = field(default_factory=Audibility)

    def input(self, frame: Pcm, start: int, frame_ms: int) -> tuple[Pcm, float]:
        """The input frame at `start` as the rest of the listener should hear it, and the level
        it must beat to count as the operator's speech (0: the daemon is not audible)."""
        reference = self.playback.render(start, len(frame))
        if self.room is not None:
            frame = self.room.mix(frame, reference)
        floor = self.gate.floor(reference, frame_ms)
        self.audibility.hear(rms(frame), speaking=floor > 0)
        if self.canceller is not None:
            frame = self.canceller.process(frame, reference)
        return frame, floor

    def speaking(self, start: int, end: int | None = None) -> list[Phrase]:
        """The phrases whose sound (echo tail included) reaches [start, end)."""
        tail = echo_window(self.tail_s)
        return self.playback.during(start - tail, (start + 1 if end is None else end))

    def own_words(self, transcript: str, start: int, end: int) -> OwnVoice:
        """`transcript`, heard between `start` and `end`, without the daemon's own words."""
        phrases = self.speaking(start, end)
        if not phrases or not self.audibility.heard:
            return OwnVoice(transcript, ())
        return separate(transcript, said_during(phrases, start - echo_window(self.tail_s), end))

    def says_word(self, phrase: str, start: int, end: int) -> bool:
        """Whether a word of the reply playing between `start` and `end` begins with `phrase`
        ("stopped" for "stop"): a keyword model may take the reply's own word for the
        operator's."""
        phrases = self.speaking(start, end)
        if not phrases or not self.audibility.heard:
            return False
        said = said_during(phrases, start - echo_window(self.tail_s), end)
        return any(word.lower().startswith(phrase.lower()) for word in said)
