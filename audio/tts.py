"""Spoken feedback: the `Speaker` seam and its three implementations.

- `Pyttsx3Speaker`: espeak-ng through pyttsx3, on one worker thread for the whole process
  (pyttsx3's espeak driver is a process-wide singleton and `runAndWait` is not thread-safe).
  On Linux pyttsx3 plays through `aplay` (Debian alsa-utils).
- `FileSpeaker`: for file sessions; synthesises with espeak-ng only to learn how long the
  phrase would take, so the audio clock can mute input for that long. Plays nothing.
- `NullSpeaker`: when no engine exists; feedback is only logged (a warning once).

Voices are espeak-ng variants with names an operator can say ("Alex", "Annie", ...), applied to
a language: "en-us+Alex".
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import importlib.util
import io
import shutil
import subprocess
import time
import wave
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import structlog

from audio.settings import TtsSettings

log = structlog.get_logger(__name__)

ESPEAK = "espeak-ng"


class Speaker(Protocol):
    """Speaks feedback to the operator."""

    @property
    def speaking(self) -> bool:
        """True while sound is (or would be) coming out."""
        ...

    async def speak(self, text: str) -> float:
        """Say `text`; returns the seconds it took (or would take) to say."""
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

    def __init__(self, settings: TtsSettings | None = None, reason: str = "engine null") -> None:
        super().__init__(settings or TtsSettings())
        self.reason = reason
        self._warned = False
        self.spoken: list[str] = []
        """Everything it was asked to say (for tests and logs)."""

    @property
    def speaking(self) -> bool:
        return False

    async def speak(self, text: str) -> float:
        if not self._warned:
            self._warned = True
            log.warning("no speech output; feedback is only logged", reason=self.reason)
        log.info("feedback not spoken", text=text)
        self.spoken.append(text)
        return 0.0


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


def wav_seconds(data: bytes) -> float:
    """Duration of a WAV held in memory. espeak-ng writes a streaming header (sizes unset) to
    stdout, so the length is taken from the bytes after the header instead."""
    with wave.open(io.BytesIO(data)) as wav:
        rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
    payload = len(data) - 44
    return float(max(0, payload) / (rate * width * channels))


class FileSpeaker(_Voices):
    """Measures what it would say (espeak-ng), says nothing; for `voiced run --audio FILE`."""

    def __init__(self, settings: TtsSettings | None = None) -> None:
        super().__init__(settings or TtsSettings())
        self._durations: dict[tuple[str, int, str], float] = {}
        self.spoken: list[tuple[str, float]] = []
        """(text, seconds) of everything said."""

    @property
    def speaking(self) -> bool:
        # Nothing is played; the listener's hold covers the phrase on the audio clock.
        return False

    def duration(self, text: str) -> float:
        """Seconds espeak-ng takes to say `text` with the current voice (cached)."""
        key = (self.voice_id, self.settings.rate, text)
        if key not in self._durations:
            data = synthesize_wav(text, self.voice_id, self.settings.rate)
            self._durations[key] = round(wav_seconds(data), 3)
        return self._durations[key]

    async def speak(self, text: str) -> float:
        seconds = await asyncio.to_thread(self.duration, text)
        self.spoken.append((text, seconds))
        return seconds


_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pyttsx3")
"""The one thread pyttsx3 ever runs on."""
_engine: Any = None


def _engine_on_worker() -> Any:
    global _engine
    if _engine is None:
        import pyttsx3  # type: ignore[import-untyped]

        _engine = pyttsx3.init("espeak")
        atexit.register(_drop_engine)
    return _engine


def _drop_engine() -> None:
    # pyttsx3's finaliser fails if it runs during interpreter teardown (its module globals are
    # gone by then), so the engine is released while the interpreter is still whole.
    global _engine
    _engine = None
    gc.collect()


class Pyttsx3Speaker(_Voices):
    """espeak-ng through pyttsx3; phrases are spoken one at a time."""

    def __init__(self, settings: TtsSettings | None = None) -> None:
        super().__init__(settings or TtsSettings())
        self._speaking = False
        self._lock = asyncio.Lock()
        if shutil.which("aplay") is None:
            log.warning("aplay not found (Debian alsa-utils); pyttsx3 will synthesise silently")

    @property
    def speaking(self) -> bool:
        return self._speaking

    async def load(self) -> None:
        """Initialise the engine now (fails here, not on the first phrase, if espeak is missing)."""
        await asyncio.get_running_loop().run_in_executor(_WORKER, _engine_on_worker)

    def _say(self, text: str, voice_id: str, rate: int) -> float:
        engine = _engine_on_worker()
        engine.setProperty("voice", voice_id)
        engine.setProperty("rate", rate)
        began = time.perf_counter()
        engine.say(text)
        engine.runAndWait()
        return time.perf_counter() - began

    async def speak(self, text: str) -> float:
        async with self._lock:
            self._speaking = True
            try:
                loop = asyncio.get_running_loop()
                seconds: float = await loop.run_in_executor(
                    _WORKER, self._say, text, self.voice_id, self.settings.rate
                )
                return seconds
            finally:
                self._speaking = False


def make_speaker(settings: TtsSettings) -> Pyttsx3Speaker | FileSpeaker | NullSpeaker:
    """The speaker `[tts] engine` names; NullSpeaker when that engine is not available."""
    if settings.engine == "null":
        return NullSpeaker(settings)
    if shutil.which(ESPEAK) is None:
        return NullSpeaker(settings, reason="espeak-ng not installed")
    if settings.engine == "file":
        return FileSpeaker(settings)
    if importlib.util.find_spec("pyttsx3") is None:
        return NullSpeaker(settings, reason="pyttsx3 not installed")
    return Pyttsx3Speaker(settings)
