"""Spoken sessions: a text session (one utterance per line, a blank line for a pause) rendered as
a 16 kHz mono WAV with espeak-ng and sox, plus its ground truth (when each utterance's last word
ends). Used for the bundled demo, the spoken acceptance tests and the benchmark corpus.

    python -m bench.spoken SESSION.txt OUT.wav [--voice en-us] [--rate 160]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RATE = 16000
GAP_S = 0.5
"""Silence between the lines of one command: longer than the segmenter's hangover (0.3 s), so
each line is its own utterance, and shorter than the query frame's silence timer (1.5 s)."""
PAUSE_S = 2.5
"""A blank line: longer than the silence timer, so the command is submitted."""
SPEECH_LEVEL = 300
"""int16 amplitude above which a sample counts as speech when finding the last word's end."""


@dataclass(frozen=True)
class Spoken:
    """One rendered utterance."""

    text: str
    start: float
    """Seconds into the session where the clip starts."""
    speech_end: float
    """Seconds into the session where the last word ends."""


def render_session(
    lines: Sequence[str],
    out: Path,
    *,
    voice: str = "en-us",
    rate: int = 160,
    gap_s: float = GAP_S,
    pause_s: float = PAUSE_S,
    lead_s: float = 0.5,
) -> list[Spoken]:
    """Write the session's WAV to `out`; returns each utterance with its timing."""
    pieces: list[np.ndarray] = [_silence(lead_s)]
    spoken: list[Spoken] = []
    at = lead_s
    for line in lines:
        if not line.strip():
            pieces.append(_silence(pause_s))
            at += pause_s
            continue
        clip = speak(line.strip(), voice, rate)
        spoken.append(Spoken(line.strip(), at, at + _last_sound(clip)))
        pieces += [clip, _silence(gap_s)]
        at += len(clip) / RATE + gap_s
    pieces.append(_silence(pause_s))
    _write(out, np.concatenate(pieces))
    return spoken


def speak(text: str, voice: str, rate: int) -> np.ndarray:
    """espeak-ng saying `text`, resampled by sox to 16 kHz mono int16."""
    with tempfile.TemporaryDirectory() as tmp:
        raw, wav = Path(tmp) / "raw.wav", Path(tmp) / "16k.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-w", str(raw), text],
                       check=True, capture_output=True, timeout=60)  # fmt: skip
        # -R: sox dithers when it narrows to 16 bits; repeatable mode seeds the dither, so the
        # same text, voice and rate always make the same samples (a test's audio is its input).
        subprocess.run(["sox", "-R", str(raw), "-r", str(RATE), "-c", "1", "-b", "16", str(wav)],
                       check=True, capture_output=True, timeout=60)  # fmt: skip
        with wave.open(str(wav), "rb") as reader:
            return np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2").copy()


def trimmed(clip: np.ndarray) -> np.ndarray:
    """`clip` without the silence espeak-ng leaves after the last word."""
    return clip[: round(_last_sound(clip) * RATE)]


def _last_sound(clip: np.ndarray) -> float:
    loud = np.flatnonzero(np.abs(clip.astype(np.int32)) > SPEECH_LEVEL)
    return (int(loud[-1]) + 1) / RATE if len(loud) else 0.0


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * RATE), dtype=np.int16)


def _write(path: Path, samples: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(RATE)
        writer.writeframes(samples.astype("<i2").tobytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("session", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--voice", default="en-us")
    parser.add_argument("--rate", type=int, default=160)
    args = parser.parse_args()
    lines = args.session.read_text(encoding="utf-8").splitlines()
    spoken = render_session(lines, args.out, voice=args.voice, rate=args.rate)
    print(json.dumps([s.__dict__ for s in spoken], indent=2))


if __name__ == "__main__":
    main()
