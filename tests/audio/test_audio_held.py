"""Decoding held to the cell's sentences, on real speech (espeak-ng) in noise: where free
decoding writes words no repair reaches, Whisper held to the barista's templates writes the
order; talk is not forced onto an order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from voiced.audio.convert import to_float
from voiced.audio.engines import whole_file_segment
from voiced.audio.grammar_decode import (
    Constrained,
    WordGraph,
    _pieces,
    decode_held,
    like_a_sentence,
    supported,
)
from voiced.audio.judge import Judge
from voiced.audio.settings import SttSettings
from voiced.audio.transcribe import NO_BIAS, Choice, HoldsToSentences
from voiced.audio.whisper import WhisperTranscriber
from voiced.audio.whisper_window import _tokenizer, decode_window

from tests.audio.clips import Clips, samples_of
from tests.interpreter.helpers import cell
from voiced.interpreter.templates import Templates

ORDER = "can i get a small double shot latte"


@pytest.fixture(scope="module")
def noisy_order_file(clips: Clips) -> Path:
    """The order in brown noise 6 dB above it: tiny.en writes "can't help you get a skull
    done or shot at it" (measured), which no template reads and no repair reaches."""
    return clips.mix_at_snr(clips.speech(ORDER, "en-gb-scotland"), "brown", -6)


@pytest.fixture(scope="module")
def noisy_order(noisy_order_file: Path) -> Any:
    return to_float(samples_of(noisy_order_file))


def judge_of(whisper: WhisperTranscriber, audio: Any) -> Judge:
    from faster_whisper.audio import pad_or_trim  # type: ignore[import-untyped]

    model = whisper.model()
    features = model.feature_extractor(audio)
    return Judge(model.model, model.encode(pad_or_trim(features, 1500)), features.shape[-1],
                 _tokenizer(model))  # fmt: skip


def held_of(whisper: WhisperTranscriber, audio: Any, graph: WordGraph) -> Constrained | None:
    judge = judge_of(whisper, audio)
    return decode_held(judge.model, judge.encoded, judge.tokenizer, graph)


def order_of(templates: Templates, text: str) -> dict[str, object]:
    found = templates.match(text)
    assert found is not None, text
    return {"intent": found.step.instruction, **found.step.params}


def test_held_decoding_writes_the_order_free_decoding_lost(
    whisper: WhisperTranscriber, templates: Templates, graph: WordGraph, noisy_order: Any
) -> None:
    held = held_of(whisper, noisy_order, graph)
    assert held is not None
    assert order_of(templates, held.text) == order_of(templates, ORDER)


def test_a_clean_order_held_is_the_order_as_said(
    clips: Clips, whisper: WhisperTranscriber, templates: Templates, graph: WordGraph
) -> None:
    said = "can i get a medium cappuccino with soy milk"
    held = held_of(whisper, to_float(samples_of(clips.speech(said, "en-us"))), graph)
    assert held is not None
    assert order_of(templates, held.text) == order_of(templates, said)


@pytest.mark.parametrize("talk", ["thank you very much", "the old ones are a stop gap at best"])
def test_talk_forced_onto_an_order_is_not_supported(
    clips: Clips, whisper: WhisperTranscriber, graph: WordGraph, talk: str
) -> None:
    audio = to_float(samples_of(clips.speech(talk, "en-us")))
    judge = judge_of(whisper, audio)
    held = decode_held(judge.model, judge.encoded, judge.tokenizer, graph)
    assert held is not None  # the graph always has some sentence...
    free = judge.scores([talk])[0]
    assert not supported(held, free, talk)  # ...but the audio does not say it


class Barista:
    """A chooser over the barista's templates, as `voiced.inputs.hearing.GrammarChooser` is over the
    live cell: it keeps a hypothesis a template reads, and offers the templates to hold to."""

    def __init__(self, templates: Templates, graph: WordGraph | None) -> None:
        self.templates = templates
        self.graph = graph
        self.asked: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> Choice | None:
        self.asked.append(list(texts))
        for i, text in enumerate(texts):
            if self.templates.match(text) is not None:
                return Choice(i)
        return None

    def sentences(self) -> WordGraph | None:
        return self.graph


def test_a_reading_that_begins_as_no_order_does_is_held_with_a_doubt(
    whisper: WhisperTranscriber, templates: Templates, graph: WordGraph, noisy_order: Any
) -> None:
    options = replace(whisper.decode_options(NO_BIAS), hypotheses=5, window_s=15.0)
    chooser = Barista(templates, graph)
    assert isinstance(chooser, HoldsToSentences)
    decoded = decode_window(whisper.model(), noisy_order, options, chooser)
    # "can't help you get a skull done on short latte." begins as no order does: held, it
    # reads as the order, but so could a question that names a drink; it is read back first.
    assert decoded is not None and decoded.chosen and decoded.repaired is not None
    assert not like_a_sentence(graph, decoded.text)
    assert order_of(templates, decoded.repaired) == order_of(templates, ORDER)
    assert decoded.doubt == f'heard "{decoded.text}"'

    without = decode_window(whisper.model(), noisy_order, options, Barista(templates, None))
    assert without is not None and not without.chosen and without.doubt is None


def test_a_clean_order_held_or_chosen_carries_no_doubt(
    clips: Clips, whisper: WhisperTranscriber, templates: Templates, graph: WordGraph
) -> None:
    audio = to_float(samples_of(clips.speech("can i get a medium cappuccino with soy milk")))
    options = replace(whisper.decode_options(NO_BIAS), hypotheses=5, window_s=15.0)
    decoded = decode_window(whisper.model(), audio, options, Barista(templates, graph))
    assert decoded is not None and decoded.chosen and decoded.doubt is None


def test_the_transcript_carries_the_doubt_of_a_held_reading(
    templates: Templates, graph: WordGraph, noisy_order_file: Path
) -> None:
    whole = WhisperTranscriber(SttSettings(window_s=15.0))
    segment = whole_file_segment(noisy_order_file)
    transcript = whole.transcribe_sync(segment, NO_BIAS, Barista(templates, graph))
    assert transcript.repaired and transcript.doubt is not None
    assert order_of(templates, transcript.text) == order_of(templates, ORDER)


def test_a_hypothesis_the_chooser_keeps_is_never_held(
    whisper: WhisperTranscriber, templates: Templates, graph: WordGraph, noisy_order: Any
) -> None:
    """A hypothesis kept as heard (a question, or a name the cell lacks, refused aloud) stays
    as heard: held to the sentences, "a hot chocolate" could become a hot coffee."""

    class KeepsTheBest(Barista):
        def __call__(self, texts: Sequence[str]) -> Choice | None:
            self.asked.append(list(texts))
            return Choice(0)

    options = replace(whisper.decode_options(NO_BIAS), hypotheses=5, window_s=15.0)
    chooser = KeepsTheBest(templates, graph)
    decoded = decode_window(whisper.model(), noisy_order, options, chooser)
    assert decoded is not None and decoded.chosen and decoded.repaired is None
    assert len(chooser.asked) == 1  # nothing held was offered after it


class KeepsToRefuse(Barista):
    """Keeps the best hypothesis only to refuse it (a name the cell lacks: "a bit of sweet")."""

    refused = 0
    """Which hypothesis is kept to be refused."""

    def __call__(self, texts: Sequence[str]) -> Choice | None:
        self.asked.append(list(texts))
        if len(self.asked) == 1:
            return Choice(self.refused, refused=True)
        return super().__call__(texts)


def test_a_hypothesis_kept_only_to_be_refused_is_held_and_asked_about(
    whisper: WhisperTranscriber, templates: Templates, graph: WordGraph, noisy_order: Any
) -> None:
    """ "I want a large ... iced coffee with a bit of sweet." was refused ("sweet" is nothing
    the cell has); held, it is the order, but "a hot chocolate" could become a hot coffee
    the same way: so it is only ever said back as a question."""
    options = replace(whisper.decode_options(NO_BIAS), hypotheses=5, window_s=15.0)
    decoded = decode_window(whisper.model(), noisy_order, options, KeepsToRefuse(templates, graph))
    assert decoded is not None and decoded.chosen and decoded.repaired is not None
    assert order_of(templates, decoded.repaired) == order_of(templates, ORDER)
    assert decoded.doubt == f'heard "{decoded.text}"'

    # The question quotes the hypothesis that was refused, not the best one.
    second = KeepsToRefuse(templates, graph)
    second.refused = 1
    decoded = decode_window(whisper.model(), noisy_order, options, second)
    assert decoded is not None and decoded.repaired is not None
    assert decoded.doubt == f'heard "{second.asked[0][1]}"'


def test_a_refusal_stands_where_the_audio_supports_no_sentence(
    clips: Clips, whisper: WhisperTranscriber, templates: Templates, graph: WordGraph
) -> None:
    audio = to_float(samples_of(clips.speech("thank you very much, see you tomorrow")))
    options = replace(whisper.decode_options(NO_BIAS), hypotheses=5, window_s=15.0)
    decoded = decode_window(whisper.model(), audio, options, KeepsToRefuse(templates, graph))
    assert decoded is not None and decoded.chosen
    assert decoded.repaired is None and decoded.doubt is None  # refused as heard


def test_words_that_take_the_order_back_are_held_only_to_be_asked_about(
    clips: Clips, whisper: WhisperTranscriber, templates: Templates, graph: WordGraph
) -> None:
    """ "I want a large latte. Oops, wrong one." is no sentence of the cell; held, it is the
    large latte, and it had been made unasked (its opening is an order's). It carries the
    words heard, which its question quotes (`Asking.check_hearing`)."""
    audio = to_float(samples_of(clips.speech("I want a large latte. Oops, wrong one.")))
    options = replace(whisper.decode_options(NO_BIAS), hypotheses=5, window_s=15.0)
    decoded = decode_window(whisper.model(), audio, options, Barista(templates, graph))
    assert decoded is not None and "wrong" in decoded.text.lower(), decoded
    assert not decoded.chosen or decoded.doubt == f'heard "{decoded.text}"'


def test_the_token_texts_are_worked_out_once_per_model(whisper: WhisperTranscriber) -> None:
    model = whisper.model()
    # faster-whisper's tokenizer wrapper is made anew for every segment.
    assert _pieces(_tokenizer(model)) is _pieces(_tokenizer(model))


def test_held_decoding_is_on_by_default() -> None:
    assert SttSettings().held is True


@pytest.mark.parametrize(("talk", "voice"), [("I already had a mocha with whole milk", "en-us"),
                                             ("was that a large cappuccino", "en-us"),
                                             ("did you want a small mocha", "en-gb")])  # fmt: skip
def test_talk_that_names_a_drink_is_never_made_unasked(
    clips: Clips,
    whisper: WhisperTranscriber,
    templates: Templates,
    graph: WordGraph,
    talk: str,
    voice: str,
) -> None:
    """Held to the sentences, each of these becomes an order the audio supports (espeak-ng,
    measured: "I want a large cappuccino.", 11 nats below the free reading); what is made of
    talk is only ever said back as a question."""
    from voiced.config import Config
    from voiced.inputs.audio import bias_for
    from voiced.interpreter.phrasebank import PhraseBank

    barista = cell("barista")
    bias = bias_for(barista, PhraseBank.packaged(barista).phrases(), Config())  # the daemon's
    audio = to_float(samples_of(clips.speech(talk, voice)))
    options = replace(whisper.decode_options(bias), hypotheses=5, window_s=15.0)
    decoded = decode_window(whisper.model(), audio, options, Barista(templates, graph))
    assert decoded is not None
    if decoded.chosen:
        assert decoded.repaired is not None and decoded.doubt is not None, decoded
