"""The spoken benchmark corpus: command sessions per cell, rendered by espeak-ng in several voices
and rates, mixed with noise at a chosen SNR, each with its ground truth in a JSON file next to the
WAV. Files are cached by a hash of everything that went into them, under bench/results/tmp/
(ignored by git), so a second run renders nothing.

The sessions (text, one utterance per line, blank line = pause) live in `bench/sessions.py`.
"""

from __future__ import annotations

import hashlib
import json
import wave
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import noise
from bench.sessions import PROSE, Session
from bench.spoken import RATE, render_session

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / "results" / "tmp" / "corpus"
VOICES = ("en-us", "en-gb", "en-gb-x-rp", "en+f3", "en+m3", "en-us+Alex")
DEV_VOICES = ("en-us-nyc", "en-gb-x-gbcwmd", "en-gb-x-gbclan", "en+f2", "en+m5", "en-us+Storm")
"""Voices for tuning (`--dev` runs): never the voices figures are reported on."""
RATES = (140, 160, 180)
NOISES = ("white", "pink", "brown", "babble")
SNRS = (20, 10, 5)
FEEDBACK_PAUSE_S = 7.0
"""Extra silence after a command the daemon answers aloud: it mutes its input while it speaks
(the avocado sentence is about 5 s at the default rate, plus the tail)."""


@dataclass(frozen=True)
class Condition:
    """How one session is spoken: voice, rate, and the noise it is mixed with (None = clean)."""

    voice: str = "en-us"
    rate: int = 160
    noise: str | None = None
    snr_db: float | None = None

    @property
    def label(self) -> str:
        noise_part = f"{self.noise}@{self.snr_db:g}dB" if self.noise else "clean"
        return f"{self.voice}/{self.rate}/{noise_part}"


@dataclass(frozen=True)
class Item:
    """One rendered corpus file and its ground truth."""

    session: Session
    condition: Condition
    wav: Path
    truth: dict[str, Any]


def key(*parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def render(session: Session, condition: Condition, expected: dict[str, Any] | None) -> Item:
    """The session's WAV under `condition` (from the cache when it is there) and its truth."""
    digest = key("v1", session.lines, condition, session.pause_s)
    wav = CACHE / f"{session.cell}-{session.name}-{digest}.wav"
    meta = wav.with_suffix(".json")
    if wav.exists() and meta.exists():
        truth = json.loads(meta.read_text(encoding="utf-8"))
    else:
        truth = _render_fresh(session, condition, wav)
    truth["expected_state"] = expected
    meta.write_text(json.dumps(truth, indent=1), encoding="utf-8")
    return Item(session, condition, wav, truth)


def _render_fresh(session: Session, condition: Condition, wav: Path) -> dict[str, Any]:
    clean = wav.with_name(wav.stem + "-clean.wav")
    spoken = render_session(session.lines, clean, voice=condition.voice, rate=condition.rate,
                            pause_s=session.pause_s)  # fmt: skip
    speech = read_wav(clean)
    if condition.noise is not None and condition.snr_db is not None:
        mixed = noise.mix(speech, condition.noise, condition.snr_db, seed=int(key(wav.name), 16))
        write_wav(wav, mixed)
        clean.unlink()
    else:
        clean.replace(wav)
    return {
        "cell": session.cell,
        "session": session.name,
        "kind": session.kind,
        "condition": asdict(condition),
        "seconds": round(len(speech) / RATE, 3),
        "utterances": [
            {"text": s.text, "start": round(s.start, 3), "speech_end": round(s.speech_end, 3)}
            for s in spoken
        ],
    }


def render_filler(name: str, seconds: float, condition: Condition, text: str = PROSE) -> Path:
    """Non-command audio: espeak-ng reading unrelated `text` (or nothing, for
    `condition.voice` == "silence") mixed with noise; for false activations and idle CPU."""
    version = ("v1",) if text == PROSE else ("v1", text)
    wav = CACHE / f"filler-{name}-{key(*version, name, seconds, condition)}.wav"
    if wav.exists():
        return wav
    if condition.voice == "silence":
        base = np.zeros(round(seconds * RATE), dtype=np.int16)
    else:
        base = noise.prose(seconds, condition.voice, condition.rate, text)
    if condition.noise is not None and condition.snr_db is not None:
        base = noise.mix(base, condition.noise, condition.snr_db, seed=int(key(name), 16))
    write_wav(wav, base)
    return wav


def read_wav(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as reader:
        return np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2").copy()


def write_wav(path: Path, samples: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(RATE)
        writer.writeframes(np.clip(samples, -32768, 32767).astype("<i2").tobytes())
