"""The acoustic judge: readings the grammar accepts, scored by tiny.en on real speech
(espeak-ng), the one the audio supports kept."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from voiced.audio.convert import to_float
from voiced.audio.judge import Judge, judge_choice, substituted
from voiced.audio.settings import SttSettings
from voiced.audio.transcribe import Choice, Slot
from voiced.audio.whisper import WhisperTranscriber
from voiced.audio.whisper_window import _tokenizer, decode_window

from tests.audio.clips import Clips, samples_of

ORDER = "can i get a twelve ounce latte with some soy milk"


def judge_of(whisper: WhisperTranscriber, audio: Any) -> Judge:
    from faster_whisper.audio import pad_or_trim  # type: ignore[import-untyped]

    model = whisper.model()
    features = model.feature_extractor(audio)
    encoded = model.encode(pad_or_trim(features, 1500))
    return Judge(model.model, encoded, features.shape[-1], _tokenizer(model))


@pytest.fixture(scope="module")
def order(clips: Clips, whisper: WhisperTranscriber) -> Judge:
    return judge_of(whisper, to_float(samples_of(clips.speech(ORDER, "en-gb"))))


def test_what_was_said_scores_above_the_readings_one_word_off(order: Judge) -> None:
    said, *others = order.scores([
        ORDER,
        "can i get a twenty ounce latte with some soy milk",
        "can i get a twelve ounce mocha with some soy milk",
        "can i get a twelve ounce latte with some almond milk",
    ])  # fmt: skip
    assert all(said > other for other in others), (said, others)


def test_a_reading_that_stops_short_scores_below_the_whole_one(order: Judge) -> None:
    whole, short = order.scores([ORDER, "can i get a twelve ounce latte"])
    assert whole > short


def test_scores_do_not_depend_on_how_the_readings_are_batched(order: Judge) -> None:
    texts = [ORDER, "can i get a latte", "brew an espresso"] * 9  # more than one batch
    one_by_one = [order.scores([t])[0] for t in texts[:3]]
    together = order.scores(texts)
    assert together[:3] == pytest.approx(one_by_one, abs=0.05)
    assert together[3:6] == pytest.approx(one_by_one, abs=0.05)


def slot(form: str, heard: str, *values: str) -> Slot:
    start = form.index(heard)
    return Slot(start, start + len(heard), values)


def test_wrong_values_in_two_slots_are_put_right_together(order: Judge) -> None:
    heard = "can i get a twenty ounce latte with some almond milk"
    choice = Choice(0, form=heard, slots=(
        slot(heard, "twenty ounce", "small", "twelve ounce", "sixteen ounce"),
        slot(heard, "latte", "mocha", "americano"),
        slot(heard, "almond milk", "milk", "soy milk", "whole milk"),
    ))  # fmt: skip
    verdict = judge_choice(order, choice)
    assert verdict.text == ORDER
    assert verdict.changed and verdict.score > verdict.chosen_score
    assert verdict.tried == 1 + 3 + 2 + 3 + 1  # the form, each value, the winners together


def test_the_heard_reading_stays_when_no_other_is_better(order: Judge) -> None:
    choice = Choice(0, form=ORDER, slots=(slot(ORDER, "latte", "mocha", "espresso"),),
                    rivals=("can i get a twelve ounce latte",))  # fmt: skip
    verdict = judge_choice(order, choice)
    assert verdict.text == ORDER and not verdict.changed


def test_a_rival_hypothesis_wins_when_the_audio_says_it(order: Judge) -> None:
    choice = Choice(1, form="can i get a twelve ounce latte", rivals=(ORDER,))
    assert judge_choice(order, choice).text == ORDER


def test_substituted_replaces_only_the_span() -> None:
    form = "brew a small latte"
    assert substituted(form, slot(form, "small", "large"), "large") == "brew a large latte"


def test_the_decoder_hands_the_judged_reading_on_as_the_repair(
    clips: Clips, whisper: WhisperTranscriber
) -> None:
    audio = to_float(samples_of(clips.speech(ORDER, "en-gb")))
    options = replace(whisper.decode_options(whisper_bias()), hypotheses=3, window_s=15.0)
    wrong = "can i get a twenty ounce latte with some soy milk"

    def chooser(texts: list[str]) -> Choice:
        # A grammar that read the best hypothesis with the wrong size in it.
        return Choice(0, form=wrong, slots=(slot(wrong, "twenty ounce", "twelve ounce"),))

    decoded = decode_window(whisper.model(), audio, options, chooser)
    assert decoded is not None and decoded.chosen
    assert decoded.repaired == ORDER


def whisper_bias() -> Any:
    from voiced.audio.transcribe import BiasVocabulary

    return BiasVocabulary.build(["latte", "soy milk", "twelve ounce"])


def test_the_judge_is_off_by_default() -> None:
    # It changed no development result and doubles the decoding time (bench/README.md).
    assert SttSettings().judge is False
