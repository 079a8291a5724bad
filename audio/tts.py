"""Spoken feedback: the `Speaker` seam and its implementations.

A speaker only turns text into 16 kHz PCM; `voiced.audio.feedback` puts that PCM on the playback
timeline (`voiced.audio.playback`), from which the loudspeaker plays it and the listener learns what
it is hearing of itself. So every engine is timed by its samples on the audio clock, the same
at real-time pace and `--fast`, and a phrase can be cut off at any sample.

- `EspeakSpeaker`: espeak-ng, a subprocess per phrase (about 30 ms here), cached. pyttsx3 drove
  the same espeak-ng before, but its espeak driver plays through a blocking `aplay` that cannot
  be interrupted and prints on stdout when it writes a file; full duplex needs the samples.
- `NullSpeaker`: no engine; feedback is only logged (a warning once), and takes no time.

Voices are espeak-ng variants with names an operator can say ("Alex", "Annie", ...), applied to
a language: "en-us+Alex".
"""

from __future__ import annotations

import io
import shutil
import subprocess
import wave
from collections import OrderedDict
from typing import Protocol

import numpy as np
import structlog
from voiced.audio.convert import Pcm, Resampler
from voiced.audio.settings import TtsSettings

log = structlog.get_logger(__name__)

ESPEAK = "espeak-ng"
CACHE_PHRASES = 64
"""Synthesised phrases kept (replies repeat: "Stopped.", "Cancelled.", read-backs)."""


class Speaker(Protocol):
    """Turns feedback into the samples the daemon plays."""

    @property
    def audible(self) -> bool:
        """Whether its samples should come out of a loudspeaker (False: timed only)."""
        ...

    def synthesize(self, text: str) -> Pcm:
        """16 kHz mono int16 saying `text` (blocking; empty for no sound)."""
        ...

    def voices(self) -> list[str]:
        """Voice names the operator can pick."""
        ...

    def set_voice(self, name: str) -> None:
        """Switch voice; ValueError for a name not in `voices()`."""
        ...


def espeak_voice(language: str, name: str) -> str:
    """The espeak-ng voice id of variant `name` on `language`: "en-us+Alex"."""
    return f"{language}+{name}"


class _Voices:
    """Voice bookkeeping shared by the speakers."""

    def __init__(self, settings: TtsSettings) -> None:
        self.settings = settings
        self.voice = settings.voice

    def voices(self) -> list[str]:
        return list(self.settings.voices)

    def set_voice(self, name: str) -> None:
        match = [v for v in self.settings.voices if v.lower() == name.strip().lower()]
        if not match:
            raise ValueError(f"unknown voice {name!r}; expected one of {self.voices()}")
        self.voice = match[0]

    @property
    def voice_id(self) -> str:
        return espeak_voice(self.settings.language, self.voice)


class NullSpeaker(_Voices):
    """No speech engine: feedback goes to the log only."""

    audible = False

    def __init__(self, settings: TtsSettings | None = None, reason: str = "engine null") -> None:
        super().__init__(settings or TtsSettings())
        self.reason = reason
        self._warned = False

    def synthesize(self, text: str) -> Pcm:
        if not self._warned:
            self._warned = True
            log.warning("no speech output; feedback is only logged", reason=self.reason)
        return np.zeros(0, dtype=np.int16)


def synthesize_wav(text: str, voice_id: str, rate: int) -> bytes:
    """espeak-ng's WAV for `text` (blocking)."""
    proc = subprocess.run(
        [ESPEAK, "-v", voice_id, "-s", str(rate), "--stdout", text],
        capture_output=True,
        timeout=30,
        check=False,
    )
    if proc.returncode != 0 or not proc.stdout:
        raise RuntimeError(f"espeak-ng failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def wav_pcm(data: bytes) -> Pcm:
    """A mono 16-bit WAV held in memory as 16 kHz PCM. espeak-ng writes a streaming header
    (sizes unset) to stdout, so the samples are the bytes after the 44-byte header."""
    with wave.open(io.BytesIO(data)) as wav:
        rate, channels = wav.getframerate(), wav.getnchannels()
    samples = np.frombuffer(data[44 : 44 + (len(data) - 44) // 2 * 2], dtype="<i2")
    resampler = Resampler(rate, channels)
    return np.concatenate([resampler.convert(samples.astype(np.int16)), resampler.flush()])


class EspeakSpeaker(_Voices):
    """espeak-ng; `audible=False` for a file or a pipe, whose speech is only timed."""

    def __init__(self, settings: TtsSettings | None = None, *, audible: bool = True) -> None:
        super().__init__(settings or TtsSettings())
        self.audible = audible
        self._cache: OrderedDict[tuple[str, int, str], Pcm] = OrderedDict()

    def synthesize(self, text: str) -> Pcm:
        key = (self.voice_id, self.settings.rate, text)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        pcm = wav_pcm(synthesize_wav(text, self.voice_id, self.settings.rate))
        self._cache[key] = pcm
        if len(self._cache) > CACHE_PHRASES:
            self._cache.popitem(last=False)
        return pcm

    def duration(self, text: str) -> float:
        """Seconds espeak-ng takes to say `text` with the current voice."""
        return len(self.synthesize(text)) / 16000


def make_speaker(settings: TtsSettings, *, audible: bool = True) -> EspeakSpeaker | NullSpeaker:
    """The speaker `[tts] engine` names; NullSpeaker when that engine is not available.
    `audible=False` when nothing is to be played (the input is a file or a pipe)."""
    if settings.engine == "null":
        return NullSpeaker(settings)
    if shutil.which(ESPEAK) is None:
        return NullSpeaker(settings, reason="espeak-ng not installed")
    return EspeakSpeaker(settings, audible=audible and settings.engine != "file")
