"""Real test audio made at test time with espeak-ng and sox, cached by content hash.

Nothing here is mocked: clips are what a microphone in front of a speaker would deliver (minus
the room). Each file's name is a hash of the command that made it, so a session makes each clip
once however many tests use it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from voiced.audio.convert import Pcm, read_audio

HAVE_TOOLS = shutil.which("espeak-ng") is not None and shutil.which("sox") is not None
"""Debian espeak-ng and sox are installed (the bootstrap installs them)."""

VOICES = ("en-us", "en-gb", "en+f3")
"""Three clearly different espeak-ng voices (American male, British male, female variant)."""

SANDWICH_WORDS = (
    "computer", "bread", "meat", "cheese", "lettuce", "tomato", "stack", "left", "right",
    "assembly fixture", "assembly left", "assembly right", "position", "home", "add", "put",
    "pick up", "add layer", "go home", "clear assembly", "return to stack", "go", "cancel",
    "stop", "yes", "no", "read back", "switch voice", "start dictation", "end dictation",
)  # fmt: skip
"""Roughly what the daemon passes for the sandwich cell: items, zones, composites, frame words."""
SANDWICH_PHRASES = (
    "computer, add meat",
    "put lettuce on the right stack",
    "go to position one",
    "take the tomato",
    "go home",
)
"""Example commands (a phrase bank). None of them is a test utterance."""


@dataclass
class Clips:
    """Makes and caches WAV files under `root`."""

    root: Path

    def _path(self, kind: str, *key: object) -> Path:
        digest = hashlib.sha1(repr((kind, *key)).encode()).hexdigest()[:16]
        return self.root / f"{kind}-{digest}.wav"

    def _make(self, path: Path, cmd: Sequence[str]) -> Path:
        """Run `cmd` with "{out}" standing for the file, unless the file exists already."""
        if not path.exists():
            tmp = path.with_name(path.stem + ".part.wav")
            args = [str(tmp) if arg == "{out}" else arg for arg in cmd]
            subprocess.run(args, check=True, capture_output=True, timeout=60)
            tmp.rename(path)
        return path

    def speech(self, text: str, voice: str = "en-us", rate: int = 160) -> Path:
        """espeak-ng saying `text` (22.05 kHz mono, espeak's own short lead-in and tail)."""
        path = self._path("speech", text, voice, rate)
        return self._make(path, ["espeak-ng", "-v", voice, "-s", str(rate), "-w", "{out}", text])

    def silence(self, seconds: float) -> Path:
        """Digital silence at 16 kHz."""
        path = self._path("silence", seconds)
        return self._make(path, _sox_synth(seconds, "sine", "440", "vol", "0"))

    def noise(self, color: str, seconds: float, volume: float = 0.2) -> Path:
        """white / pink / brown noise at 16 kHz; `volume` is sox's linear gain."""
        path = self._path("noise", color, seconds, volume)
        return self._make(path, _sox_synth(seconds, f"{color}noise", "vol", str(volume)))

    def tone_bursts(self, parts: Sequence[tuple[float, float]]) -> Path:
        """(seconds, frequency) pieces; frequency 0 is silence. 16 kHz, half full scale."""
        path = self._path("bursts", tuple(parts))
        effects: list[str] = []
        for i, (seconds, freq) in enumerate(parts):
            effects += [":"] if i else []
            volume = "0.5" if freq else "0"
            effects += ["synth", str(seconds), "sine", str(freq or 440), "vol", volume]
        return self._make(path, [*SOX_16K, "{out}", *effects])

    def concat(self, parts: Sequence[Path]) -> Path:
        """The files one after the other, converted to 16 kHz mono."""
        path = self._path("concat", tuple(str(p) for p in parts))
        # sox only joins files of one rate, so every part is brought to 16 kHz mono first.
        same = [str(self.convert(p, 16000, 1)) for p in parts]
        return self._make(path, ["sox", "-R", *same, "{out}"])

    def mix_at_snr(self, speech: Path, noise_color: str, snr_db: float) -> Path:
        """`speech` with noise added at `snr_db` (speech RMS over its loud frames)."""
        path = self._path("snr", str(speech), noise_color, snr_db)
        if path.exists():
            return path
        clean = read_audio(speech).astype(np.float64)
        noise = read_audio(self.noise(noise_color, len(clean) / 16000 + 1)).astype(np.float64)
        noise = noise[: len(clean)]
        active = clean[np.abs(clean) > 300]
        speech_rms = float(np.sqrt(np.mean(active**2)))
        noise *= speech_rms / float(np.sqrt(np.mean(noise**2))) / 10 ** (snr_db / 20)
        write_wav(path, np.clip(clean + noise, -32768, 32767).astype(np.int16))
        return path

    def convert(self, source: Path, rate: int, channels: int) -> Path:
        """`source` resampled by sox to `rate` Hz with `channels` channels."""
        path = self._path("convert", str(source), rate, channels)
        return self._make(
            path, ["sox", "-R", str(source), "-r", str(rate), "-c", str(channels), "{out}"]
        )


SOX_16K = ("sox", "-R", "-n", "-r", "16000", "-c", "1", "-b", "16")
"""sox generating 16 kHz mono 16-bit; the output file and the effects follow. -R (repeatable):
its noise and dither are seeded, so a clip is the same in every run."""


def _sox_synth(seconds: float, *effect: str) -> list[str]:
    return [*SOX_16K, "{out}", "synth", str(seconds), *effect]


def write_wav(path: Path, samples: Pcm, rate: int = 16000) -> Path:
    """Write 16-bit mono PCM."""
    import wave

    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(samples.astype("<i2").tobytes())
    return path


def samples_of(path: Path) -> Pcm:
    """16 kHz mono int16 of any clip."""
    return read_audio(path)
