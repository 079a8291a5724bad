"""Hallucination guards, one short test per case (pure functions, no model)."""

from __future__ import annotations

import pytest
from voiced.audio import guards


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("[BLANK_AUDIO]", ""),
        (" Add bread. [BLANK_AUDIO]", "Add bread."),
        ("(upbeat music) go home", "go home"),
        ("[Music] ♪ ♪", ""),
        ("<|nospeech|>stop", "stop"),
        ("*sigh* yes", "yes"),
        ("  put   cheese\non the left stack ", "put cheese on the left stack"),
    ],
)
def test_special_tokens_are_stripped(raw: str, text: str) -> None:
    assert guards.strip_special(raw) == text


@pytest.mark.parametrize(
    "raw",
    ["[BLANK_AUDIO]", "", "   ", "(music)", "...", "[ Silence ]", "♪"],
)
def test_blank_transcripts_are_rejected(raw: str) -> None:
    text, reason = guards.judge(raw, 0.1, -0.2)
    assert reason is not None and reason.startswith("blank")
    assert text == guards.strip_special(raw)


@pytest.mark.parametrize(
    "raw",
    [
        "Thanks for watching!",
        "Thank you.",
        "you",
        " You",
        "Thank you for watching and see you next time.",
        "Please subscribe.",
        "Bye.",
        "Subtitles by the Amara.org community",
    ],
)
def test_known_non_speech_phrases_are_rejected(raw: str) -> None:
    _, reason = guards.judge(raw, 0.1, -0.2)
    assert reason is not None and reason.startswith("non-speech phrase")


@pytest.mark.parametrize(
    "raw",
    [
        "thank you, add bread",
        "you can go home",
        "Computer, add bread.",
        "stop",
        "yes",
        "go to position 2",
    ],
)
def test_commands_pass(raw: str) -> None:
    assert guards.judge(raw, 0.1, -0.3)[1] is None


@pytest.mark.parametrize(
    ("no_speech", "logprob", "rejected"),
    [
        (0.93, -1.26, True),  # white noise heard as "Go home." (measured)
        (0.61, -1.01, True),
        (0.6, -1.5, False),  # both must hold: p > 0.6 ...
        (0.8, -1.0, False),  # ... and logprob < -1.0 ...
        (0.91, -0.99, True),  # ... unless p > 0.85: brown noise heard as the prompt's "Go home."
        (0.84, -0.3, False),  # Whisper is sure of the words: keep
        (0.1, -2.5, False),  # speech, badly recognised: the text rules decide
    ],
)
def test_no_speech_verdict(no_speech: float, logprob: float, rejected: bool) -> None:
    _, reason = guards.judge("Go home.", no_speech, logprob)
    assert (reason is not None) == rejected


@pytest.mark.parametrize(
    "raw",
    [
        "zero zero zero",
        "zero zero zero zero zero zero zero zero",  # a dictated code: digits are exempt
        "0 0 0 0 0 0 0",
        "add bread add bread add bread",
        "no no no no no",
        "one two one two one two one two one two one two",
    ],
)
def test_repetition_people_say_survives(raw: str) -> None:
    assert guards.loop_reason(raw) is None


@pytest.mark.parametrize(
    ("raw", "unit"),
    [
        ("add bread add bread add bread add bread add bread add bread", "add bread"),
        ("the the the the the the the the", "the"),
        ("Go home. " + "And then, " * 7, "and then"),
        ("put cheese on the " + "left stack " * 9, "left stack"),
    ],
)
def test_decoding_loops_are_rejected(raw: str, unit: str) -> None:
    reason = guards.loop_reason(raw)
    assert reason is not None and f'"{unit}"' in reason
    assert guards.judge(raw, 0.1, -0.2)[1] == reason


def test_a_sentence_written_over_and_over_is_kept_once() -> None:
    from voiced.audio.guards import once

    order = "Can I get a medium roast latte with a bit of soy milk?"
    assert once(f"{order} {order} Can I get a medium roast") == order
    assert once(f"{order} {order}") == order
    assert once("put the cheese on the left, then the meat") == (
        "put the cheese on the left, then the meat"
    )
    assert once("go left, go left, go left") == "go left, go left, go left"  # people do
