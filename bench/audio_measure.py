"""Measurements behind `bench.audio_latency`: clips, transcription time, accuracy, the
segmenter's end-of-speech delay and the front end's CPU cost."""

from __future__ import annotations

import hashlib
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from voiced.audio import silero
from voiced.audio.convert import Pcm, read_audio
from voiced.audio.segmenter import Segment, Segmenter
from voiced.audio.settings import AudioSettings, SttSettings
from voiced.audio.transcribe import NO_BIAS, BiasVocabulary
from voiced.audio.whisper import WhisperTranscriber, load_model
from voiced.rules.normalize import normalize

WORDS = (
    "computer", "bread", "meat", "cheese", "lettuce", "tomato", "stack", "left", "right",
    "assembly fixture", "assembly left", "assembly right", "position", "home", "add", "put",
    "pick up", "add layer", "go home", "clear assembly", "return to stack", "go", "cancel",
    "stop", "yes", "no", "read back", "switch voice", "start dictation", "end dictation",
)  # fmt: skip
"""What the daemon would pass for the sandwich cell (items, zones, composites, frame words)."""
PHRASES = (
    "computer, add meat",
    "put lettuce on the right stack",
    "go to position one",
    "take the tomato",
    "go home",
)
"""Example commands; none is a measured utterance word for word except "go home"."""

BIAS_MODES: dict[str, tuple[str, BiasVocabulary]] = {
    "none": ("none", NO_BIAS),
    "prompt: words": ("prompt", BiasVocabulary.build(WORDS)),
    "prompt: phrases + words": ("prompt", BiasVocabulary.build(WORDS, PHRASES)),
    "hotwords": ("hotwords", BiasVocabulary.build(WORDS, PHRASES)),
}
DEFAULT_BIAS = "prompt: phrases + words"


@dataclass(frozen=True)
class Utterance:
    """One generated clip and where its speech really ends."""

    text: str
    voice: str
    rate: int
    samples: Pcm
    speech_end: float
    """Seconds: the last sample louder than -44 dBFS (the end of the last word)."""


@dataclass
class Trial:
    """One configuration over every utterance."""

    name: str
    seconds: list[float] = field(default_factory=list)
    """Transcription wall time per segment."""
    rtf: list[float] = field(default_factory=list)
    """Transcription time / segment duration."""
    exact: int = 0
    heard: list[str] = field(default_factory=list)
    eos_delay: list[float] = field(default_factory=list)
    """Segment close minus the end of the last word."""
    ready: list[float] = field(default_factory=list)
    """End of the last word to the last transcript ready (delay + transcription)."""

    def summary(self) -> dict[str, Any]:
        return {
            "utterances": len(self.heard),
            "exact": self.exact,
            "transcribe_p50_ms": _ms(self.seconds, 50),
            "transcribe_p95_ms": _ms(self.seconds, 95),
            "rtf_p50": round(_pct(self.rtf, 50), 3) if self.rtf else None,
            "eos_delay_p50_ms": _ms(self.eos_delay, 50),
            "ready_p50_ms": _ms(self.ready, 50),
            "ready_p95_ms": _ms(self.ready, 95),
        }


def _pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def _ms(values: Sequence[float], p: float) -> float | None:
    return round(1000 * _pct(values, p), 1) if values else None


def _run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


def make_utterance(root: Path, text: str, voice: str, rate: int) -> Utterance:
    """espeak-ng clip with 0.5 s of silence before and 1.0 s after, at 16 kHz."""
    key = hashlib.sha1(f"{text}|{voice}|{rate}".encode()).hexdigest()[:12]
    raw, path = root / f"{key}-raw.wav", root / f"{key}.wav"
    if not path.exists():
        _run(["espeak-ng", "-v", voice, "-s", str(rate), "-w", str(raw), text])
        _run(["sox", str(raw), "-r", "16000", "-c", "1", str(path), "pad", "0.5", "1.0"])
    samples = read_audio(path)
    loud = np.nonzero(np.abs(samples.astype(np.int32)) > 200)[0]
    return Utterance(text, voice, rate, samples, (loud[-1] + 1) / 16000)


def with_noise(utterance: Utterance, snr_db: float, seed: int = 1) -> Utterance:
    """Low-passed white noise (a stand-in for steady machine noise) at `snr_db`."""
    rng = np.random.default_rng(seed)
    white = rng.standard_normal(len(utterance.samples))
    pink = np.convolve(white, np.ones(8) / 8, mode="same")
    clean = utterance.samples.astype(np.float64)
    speech_rms = float(np.sqrt(np.mean(clean[np.abs(clean) > 300] ** 2)))
    pink *= speech_rms / float(np.sqrt(np.mean(pink**2))) / 10 ** (snr_db / 20)
    noisy = np.clip(clean + pink, -32768, 32767).astype(np.int16)
    return replace(utterance, samples=noisy)


def segments_of(samples: Pcm, settings: AudioSettings) -> list[Segment]:
    segmenter = Segmenter(settings)
    events = segmenter.feed(samples) + segmenter.finish()
    return [e for e in events if isinstance(e, Segment)]


def run_trial(
    name: str,
    utterances: Sequence[Utterance],
    transcriber: WhisperTranscriber,
    bias: BiasVocabulary,
    settings: AudioSettings,
) -> Trial:
    """Segment each utterance as the listener would and transcribe every segment."""
    trial = Trial(name)
    for utterance in utterances:
        texts: list[str] = []
        last_close, last_seconds = 0.0, 0.0
        for segment in segments_of(utterance.samples, settings):
            if settings.silero_gate:
                prob = silero.speech_probability(segment.samples)
                if prob < settings.silero_threshold:
                    continue
            transcript = transcriber.transcribe_sync(segment, bias)
            trial.seconds.append(transcript.seconds)
            trial.rtf.append(transcript.seconds / segment.duration)
            if transcript.accepted:
                texts.append(transcript.text)
            last_close, last_seconds = segment.end, transcript.seconds
        heard = " ".join(texts)
        trial.heard.append(heard)
        trial.exact += normalize(heard) == normalize(utterance.text)
        if last_close:
            trial.eos_delay.append(last_close - utterance.speech_end)
            trial.ready.append(last_close - utterance.speech_end + last_seconds)
    return trial


def noise_only(seconds: float, seed: int = 2) -> dict[str, Pcm]:
    """Steady noises as a microphone in a loud cell might hear them, at about -20 dBFS."""
    rng = np.random.default_rng(seed)
    white = rng.standard_normal(round(seconds * 16000))
    brown = np.cumsum(white)
    brown -= np.convolve(brown, np.ones(1600) / 1600, mode="same")  # no DC drift
    low = np.convolve(white, np.ones(8) / 8, mode="same")
    out = {}
    for name, noise in (("white", white), ("low-passed", low), ("brown", brown)):
        scaled = noise / float(np.sqrt(np.mean(noise**2))) * 3000
        out[name] = np.clip(scaled, -32768, 32767).astype(np.int16)
    return out


def hallucinations(
    noises: dict[str, Pcm], transcriber: WhisperTranscriber, bias: BiasVocabulary
) -> dict[str, Any]:
    """Segments webrtcvad cuts from noise with the Silero gate OFF, and how many of them the
    transcriber's guards would still let through (each one would be dispatched)."""
    settings = AudioSettings(silero_gate=False)
    segments = accepted = 0
    texts: list[str] = []
    for samples in noises.values():
        for segment in segments_of(samples, settings):
            segments += 1
            transcript = transcriber.transcribe_sync(segment, bias)
            if transcript.accepted:
                accepted += 1
                texts.append(transcript.text)
    return {"segments": segments, "accepted": accepted, "accepted_texts": texts[:5]}


def model_load_seconds(stt: SttSettings) -> float:
    """Load the model the first time in this process (the OS file cache may be warm)."""
    transcriber = WhisperTranscriber(stt)
    return load_model(transcriber.model_path, stt.compute_type, stt.cpu_threads).seconds


@dataclass(frozen=True)
class FrontEnd:
    """CPU cost of everything before the transcriber."""

    segmenter_rtf: float
    """Segmenter (webrtcvad + gates) seconds per second of audio."""
    silero_ms_per_s: float
    """Silero gate milliseconds per second of segment audio."""

    def to_dict(self) -> dict[str, float]:
        return {"segmenter_rtf": self.segmenter_rtf, "silero_ms_per_s": self.silero_ms_per_s}


def front_end_cost(utterances: Sequence[Utterance], settings: AudioSettings) -> FrontEnd:
    audio = np.concatenate([u.samples for u in utterances])
    began = time.perf_counter()
    segments = segments_of(audio, settings)
    segmenter_rtf = (time.perf_counter() - began) / (len(audio) / 16000)
    silero.warm_up()
    began = time.perf_counter()
    for segment in segments:
        silero.speech_probability(segment.samples)
    total = sum(s.duration for s in segments) or 1.0
    silero_ms = 1000 * (time.perf_counter() - began) / total
    return FrontEnd(round(segmenter_rtf, 5), round(silero_ms, 2))


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0
