"""The vocabulary bias: how the cell's words become a Whisper prompt."""

from __future__ import annotations

from voiced.audio.transcribe import NO_BIAS, BiasVocabulary
from voiced.audio.whisper import PROMPT_TOKENS, WhisperTranscriber


def test_build_cleans_and_deduplicates_keeping_order() -> None:
    bias = BiasVocabulary.build(
        ["bread", "assembly_left", "Bread", " cheese ", "", "go  home"], ["go home", "Go home"]
    )
    assert bias.words == ("bread", "assembly left", "cheese", "go home")
    assert bias.phrases == ("go home",)


def test_prompt_is_sentences_then_the_word_list() -> None:
    bias = BiasVocabulary.build(["bread", "cheese"], ["computer, add meat", "go home."])
    assert bias.prompt() == "Computer, add meat. Go home. Bread, cheese."
    assert bias.prompt(max_phrases=1) == "Computer, add meat. Bread, cheese."
    assert bias.hotwords() == "bread, cheese, computer, add meat, go home."


def test_empty_bias_adds_no_prompt(whisper: WhisperTranscriber) -> None:
    assert NO_BIAS.empty
    options = whisper.options(NO_BIAS)
    assert "initial_prompt" not in options and "hotwords" not in options


def test_prompt_is_trimmed_by_whole_phrases_to_the_token_budget(
    whisper: WhisperTranscriber,
) -> None:
    phrases = [f"put item number {i} on the left stack" for i in range(80)]
    bias = BiasVocabulary.build(["bread", "cheese", "stack"], phrases)
    prompt = whisper.prompt_for(bias)
    assert whisper.prompt_tokens(prompt) <= PROMPT_TOKENS
    assert prompt.endswith("Bread, cheese, stack.")  # the words always survive
    assert prompt.startswith("Put item number 0 on the left stack.")


def test_options_follow_the_short_command_settings(whisper: WhisperTranscriber) -> None:
    options = whisper.options(BiasVocabulary.build(["bread"]))
    assert options["beam_size"] == 1
    assert options["temperature"] == [0.0, 0.2]
    assert options["condition_on_previous_text"] is False
    assert options["without_timestamps"] is True
    assert options["initial_prompt"] == "Bread."
