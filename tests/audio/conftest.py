"""Fixtures for the audio tests: generated clips, the Whisper model (loaded once), the bias."""

from __future__ import annotations

from pathlib import Path

import pytest
from voiced.audio.transcribe import BiasVocabulary
from voiced.audio.whisper import WhisperTranscriber

from tests.audio.clips import HAVE_TOOLS, SANDWICH_PHRASES, SANDWICH_WORDS, Clips


@pytest.fixture(scope="session")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Clips:
    if not HAVE_TOOLS:
        pytest.skip("espeak-ng and sox are needed to make test audio (Debian: espeak-ng sox)")
    root: Path = tmp_path_factory.mktemp("audio-clips")
    return Clips(root)


@pytest.fixture(scope="session")
def whisper() -> WhisperTranscriber:
    """The bundled tiny.en model, loaded once per session (the module caches the model)."""
    transcriber = WhisperTranscriber()
    transcriber.load_sync()
    return transcriber


@pytest.fixture(scope="session")
def sandwich_bias() -> BiasVocabulary:
    return BiasVocabulary.build(SANDWICH_WORDS, SANDWICH_PHRASES)


@pytest.fixture(scope="session")
def session(clips: Clips) -> Path:
    """A command, a pause, "stop" in another voice, a pause."""
    return clips.concat(
        [
            clips.silence(0.5),
            clips.speech("computer add bread"),
            clips.silence(0.8),
            clips.speech("stop", "en-gb"),
            clips.silence(0.8),
        ]
    )
