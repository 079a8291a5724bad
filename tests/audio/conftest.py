"""Fixtures for the audio tests: generated clips, the Whisper model (loaded once), the bias."""

from __future__ import annotations

from pathlib import Path

import pytest
from voiced.audio.grammar_decode import WordGraph
from voiced.audio.transcribe import BiasVocabulary
from voiced.audio.whisper import WhisperTranscriber

from tests.audio.clips import HAVE_TOOLS, SANDWICH_PHRASES, SANDWICH_WORDS, Clips
from tests.interpreter.helpers import cell, grammar
from voiced.interpreter.templategraph import word_graph
from voiced.interpreter.templates import Templates


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
def templates() -> Templates:
    """The barista cell's sentence templates (held decoding's tests)."""
    return Templates(cell("barista"), grammar("barista").vocabulary)


@pytest.fixture(scope="session")
def graph(templates: Templates) -> WordGraph:
    """The barista's sentences as the word graph held decoding follows."""
    return word_graph(templates)


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
