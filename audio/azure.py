"""Azure Speech backend (the optional `azure` extra: azure-cognitiveservices-speech).

The SDK is imported only when this engine is used. Each segment is pushed as 16 kHz mono PCM
into a push stream and recognised once; the cell's vocabulary goes in as a phrase list. The key
and region come from `[stt]` or $AZURE_SPEECH_KEY / $AZURE_SPEECH_REGION. Azure gives no
no-speech probability, so only the text guards apply.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import structlog
from voiced.audio import guards
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SttSettings
from voiced.audio.transcribe import BiasVocabulary, Chooser, Transcript, TranscriptionError

log = structlog.get_logger(__name__)

KEY_ENV = "AZURE_SPEECH_KEY"
"""Environment variable read when `[stt] azure_key` is empty."""
REGION_ENV = "AZURE_SPEECH_REGION"
"""Environment variable read when `[stt] azure_region` is empty."""
INSTALL_HINT = "pip install 'voiced[azure]' (azure-cognitiveservices-speech)"


def import_sdk() -> Any:
    """The SDK module, or TranscriptionError saying how to install it."""
    try:
        import azure.cognitiveservices.speech as speechsdk
    except ImportError as exc:
        raise TranscriptionError(f"stt engine azure needs the SDK: {INSTALL_HINT} ({exc})") from exc
    return speechsdk


class AzureTranscriber:
    """`Transcriber` on Azure Speech."""

    name = "azure"

    def __init__(self, settings: SttSettings | None = None) -> None:
        self.settings = settings or SttSettings(engine="azure")
        self.key = self.settings.azure_key or os.environ.get(KEY_ENV, "")
        self.region = self.settings.azure_region or os.environ.get(REGION_ENV, "")
        self.language = self.settings.azure_language

    def check(self) -> None:
        """Raise TranscriptionError naming what is missing (SDK, key, region)."""
        import_sdk()
        missing = [
            what
            for what, value in (
                (f"a key ([stt] azure_key or ${KEY_ENV})", self.key),
                (f"a region ([stt] azure_region or ${REGION_ENV})", self.region),
            )
            if not value
        ]
        if missing:
            raise TranscriptionError("stt engine azure needs " + " and ".join(missing))

    async def load(self) -> None:
        self.check()

    def speech_config(self) -> Any:
        """The SDK's SpeechConfig for this key, region and language."""
        self.check()
        sdk = import_sdk()
        config = sdk.SpeechConfig(subscription=self.key, region=self.region)
        config.speech_recognition_language = self.language
        return config

    def recognizer(self, bias: BiasVocabulary) -> tuple[Any, Any]:
        """(recognizer, push stream) with the phrase list applied; nothing is sent yet."""
        sdk = import_sdk()
        fmt = sdk.audio.AudioStreamFormat(samples_per_second=16000, bits_per_sample=16, channels=1)
        stream = sdk.audio.PushAudioInputStream(stream_format=fmt)
        recognizer = sdk.SpeechRecognizer(
            speech_config=self.speech_config(), audio_config=sdk.audio.AudioConfig(stream=stream)
        )
        if bias.terms():
            phrases = sdk.PhraseListGrammar.from_recognizer(recognizer)
            for term in bias.terms():
                phrases.addPhrase(term)
        return recognizer, stream

    def transcribe_sync(
        self, segment: Segment, bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Transcript:
        """Blocking recognition of one segment. Azure's one best text is offered to `choose`
        as the only hypothesis, so the grammar's repair applies to it too."""
        sdk = import_sdk()
        began = time.perf_counter()
        recognizer, stream = self.recognizer(bias)
        stream.write(segment.samples.tobytes())
        stream.close()
        result = recognizer.recognize_once()
        if result.reason == sdk.ResultReason.Canceled:
            details = result.cancellation_details
            raise TranscriptionError(f"azure canceled: {details.reason} {details.error_details}")
        raw = result.text if result.reason == sdk.ResultReason.RecognizedSpeech else ""
        text, reason = guards.judge(raw, 0.0, 0.0)
        chosen = choose([raw]) if choose is not None and reason is None else None
        repaired = chosen is not None and chosen.text is not None
        if chosen is not None and chosen.text is not None:
            text = chosen.text
        return Transcript(
            text=text,
            raw=raw,
            no_speech_prob=0.0,
            avg_logprob=0.0,
            rejected_reason=reason,
            seconds=round(time.perf_counter() - began, 4),
            repaired=repaired,
        )

    async def transcribe(
        self, segment: Segment, bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Transcript:
        return await asyncio.to_thread(self.transcribe_sync, segment, bias, choose)
