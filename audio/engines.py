"""The speech-to-text engine `[stt] engine` names, and transcribing a whole file with it.

`voiced.audio.transcribe` holds only the `Transcriber` seam; the backends (`voiced.audio.whisper`,
`voiced.audio.azure`, `voiced.audio.wyomingstt`) build on it, and this module, beside them
rather than inside the seam, picks one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from voiced.audio.azure import AzureTranscriber
from voiced.audio.convert import read_audio, rms
from voiced.audio.segmenter import Segment, VadStats
from voiced.audio.settings import SAMPLE_RATE, SttSettings
from voiced.audio.transcribe import NO_BIAS, BiasVocabulary, Transcriber, Transcript
from voiced.audio.whisper import WhisperTranscriber
from voiced.audio.wyomingstt import SwitchSink, WyomingTranscriber


def make_transcriber(settings: SttSettings, on_switch: SwitchSink | None = None) -> Transcriber:
    """The engine `[stt] engine` names. `on_switch` hears when a Wyoming speech server is given
    up for the local model, or used again."""
    if settings.engine == "azure":
        return AzureTranscriber(settings)
    if settings.engine == "wyoming":
        return WyomingTranscriber(settings, WhisperTranscriber(settings), on_switch)
    return WhisperTranscriber(settings)


def whole_file_segment(path: str | Path) -> Segment:
    """A whole audio file as one segment (no VAD): what `voiced transcribe FILE` hears."""
    samples = read_audio(path)
    seconds = len(samples) / SAMPLE_RATE
    stats = VadStats(0, 0, 0.0, seconds, round(rms(samples), 1))
    return Segment(samples, 0, 0.0, seconds, stats, closed_by="end_of_stream")


async def transcribe_file(
    path: str | Path, bias: BiasVocabulary = NO_BIAS, settings: SttSettings | None = None
) -> Transcript:
    """Transcribe a whole file with the configured engine (for `voiced transcribe FILE`)."""
    segment = await asyncio.to_thread(whole_file_segment, path)
    transcriber = make_transcriber(settings or SttSettings())
    return await transcriber.transcribe(segment, bias)
