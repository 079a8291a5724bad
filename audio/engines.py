"""The speech-to-text engine `[stt] engine` names, and transcribing a file with it (whole, or
cut into utterances as the daemon's listener cuts them).

`voiced.audio.transcribe` holds only the `Transcriber` seam; the backends (`voiced.audio.whisper`,
`voiced.audio.azure`, `voiced.audio.wyomingstt`) build on it, and this module, beside them
rather than inside the seam, picks one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from voiced.audio.azure import AzureTranscriber
from voiced.audio.convert import read_audio, rms
from voiced.audio.listener import Heard, Listener, Rejected
from voiced.audio.segmenter import Segment, VadStats
from voiced.audio.settings import SAMPLE_RATE, AudioSettings, SttSettings
from voiced.audio.source import WavSource
from voiced.audio.transcribe import (
    NO_BIAS,
    BiasVocabulary,
    Choice,
    Transcriber,
    Transcript,
)
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


class KeepsBest:
    """A `Chooser` that keeps the recogniser's best hypothesis and remembers the others.

    With a chooser the transcriber decodes a command's segment as the daemon does (a window cut
    to the segment, several hypotheses); without one it decodes Whisper's own 30 s window, which
    reads some segments differently ("Cheese and tomato." where the daemon heard "And cheese and
    tomato."). The daemon's chooser may still take a lower hypothesis its cell reads."""

    def __init__(self) -> None:
        self.others: dict[str, tuple[str, ...]] = {}
        """Best hypothesis -> the lower ones (called on a worker thread: only assigned)."""

    def __call__(self, texts: Sequence[str]) -> Choice | None:
        if texts:
            self.others[texts[0].strip()] = tuple(t.strip() for t in texts[1:])
        return Choice(0)


async def transcribe_segments(
    path: str | Path,
    bias: BiasVocabulary = NO_BIAS,
    settings: SttSettings | None = None,
    audio: AudioSettings | None = None,
    choose: KeepsBest | None = None,
) -> AsyncGenerator[Heard | Rejected, None]:
    """A file cut into utterances as the daemon's listener cuts the microphone (voice
    activity, the noise floor, Silero's check), each transcribed on its own with `bias` and
    decoded as the daemon decodes (`choose`, a fresh `KeepsBest` by default): what `voiced
    transcribe FILE` shows. Audio that gives nothing is yielded as `Rejected`."""
    transcriber = make_transcriber(settings or SttSettings())
    listener = Listener(WavSource(path, realtime=False), transcriber, audio, bias=bias)
    listener.choose = choose if choose is not None else KeepsBest()
    async with contextlib.aclosing(listener.events()) as heard:
        async for event in heard:
            if isinstance(event, Heard | Rejected):
                yield event
