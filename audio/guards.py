"""Hallucination guards: pure functions that decide whether a transcript is speech.

Whisper invents text on silence and noise ("thanks for watching", faster-whisper#826), emits
special tokens (`[BLANK_AUDIO]`, "(music)") and can loop ("add bread add bread add bread ...").
Each guard returns a reason string when it rejects, None when the text may pass.
"""

from __future__ import annotations

import re

from voiced.rules.normalize import words

# Sound descriptions and special tokens, never words the operator said: [BLANK_AUDIO], [Music],
# (upbeat music), <|nospeech|>, *sigh*, and musical notes.
_SPECIAL = re.compile(r"\[[^\]]*\]|\([^)]*\)|<\|[^|]*\|>|\*[^*]+\*|[♪♫]+")
_SPACES = re.compile(r"\s+")

NON_SPEECH_PHRASES = frozenset(
    {
        "you",
        "thank you",
        "thanks",
        "thank you very much",
        "thank you so much",
        "thanks for watching",
        "thank you for watching",
        "thanks for watching and see you next time",
        "thank you for watching and see you next time",
        "please subscribe",
        "like and subscribe",
        "subscribe to my channel",
        "see you next time",
        "see you in the next video",
        "bye",
        "bye bye",
        "subtitles by the amara org community",
        "transcribed by",
        "music",
        "blank audio",
        "silence",
    }
)
"""Normalised texts Whisper produces from non-speech; a transcript that is only one of these is
rejected. A real "thank you" is lost, which costs nothing: no command says it."""

LOOP_REPEATS = 6
"""A phrase said this many times in a row is a decoding loop. Dictation of "zero zero zero"
(three) must survive, so the bar is well above what people say."""
LOOP_MAX_WORDS = 4
"""Longest phrase (in words) the loop check looks for."""
_NUMBER_WORDS = frozenset(
    ["zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
)


def strip_special(raw: str) -> str:
    """The text without special tokens and sound descriptions, whitespace collapsed."""
    return _SPACES.sub(" ", _SPECIAL.sub(" ", raw)).strip()


def plain_words(text: str) -> list[str]:
    """Lower-case words without punctuation (for comparisons only). Unlike the rules' form,
    apostrophes stay (the own-voice check hands these words back as the operator's: "what's")
    and every dot is a break (a repeated "2.5" reads as digits, which the loop check allows)."""
    return words(text, apostrophes="keep", decimals=False)


REPEAT_MIN_WORDS = 5
"""Shortest sentence `once` takes for a repetition: a short phrase said twice ("go left, go
left") is what people do; a whole order written twice is what Whisper does."""


def once(text: str) -> str:
    """A text that is one sentence written over and over ("Give me a latte with sugar. Give me
    a latte with sugar. Give me a"), as the sentence once. Whisper does this to a short segment
    in a long window; the grammar cannot read the repetition, though it reads the sentence."""
    tokens = text.split()
    said = [" ".join(plain_words(t)) for t in tokens]
    for period in range(REPEAT_MIN_WORDS, len(tokens)):
        again = len(tokens) - period
        if again < max(REPEAT_MIN_WORDS, period // 2):
            break  # the words after the sentence are too few to be it again
        if all(said[i] == said[i + period] for i in range(again)):
            return " ".join(tokens[:period])
    return text


def blank_reason(text: str, raw: str) -> str | None:
    """Nothing left once special tokens are gone."""
    if plain_words(text):
        return None
    return f"blank ({raw.strip()})" if raw.strip() else "blank"


def non_speech_reason(text: str) -> str | None:
    """The whole text is a known non-speech hallucination."""
    phrase = " ".join(plain_words(text))
    return f'non-speech phrase "{phrase}"' if phrase in NON_SPEECH_PHRASES else None


SURE_NO_SPEECH = 0.85
"""no_speech_prob above which a transcript is rejected whatever its log-probability. With a
vocabulary prompt, Whisper writes the prompt's own phrases into brown noise ("Go home." at
p=0.88-0.95, logprob -0.94..-1.08), just inside the usual -1.0 bound. Real commands measured
here, clean and in 5-10 dB SNR noise, stayed at p <= 0.44."""


def silence_reason(
    no_speech_prob: float,
    avg_logprob: float,
    no_speech: float = 0.6,
    logprob: float = -1.0,
    sure: float = SURE_NO_SPEECH,
) -> str | None:
    """Whisper's own verdict: probably no speech and not confident about the words, or all but
    certainly no speech."""
    if (no_speech_prob > no_speech and avg_logprob < logprob) or no_speech_prob > sure:
        return f"no speech (p={no_speech_prob:.2f}, logprob={avg_logprob:.2f})"
    return None


def loop_reason(text: str) -> str | None:
    """A phrase of 1..4 words repeated LOOP_REPEATS times or more in a row (numbers exempt:
    a dictated code may repeat a digit)."""
    words = plain_words(text)
    for size in range(1, LOOP_MAX_WORDS + 1):
        for start in range(len(words) - size * LOOP_REPEATS + 1):
            unit = words[start : start + size]
            if all(w in _NUMBER_WORDS or w.isdigit() for w in unit):
                continue
            repeats = 1
            pos = start + size
            while words[pos : pos + size] == unit:
                repeats += 1
                pos += size
            if repeats >= LOOP_REPEATS:
                return f'repetition loop ("{" ".join(unit)}" x{repeats})'
    return None


def judge(
    raw: str,
    no_speech_prob: float,
    avg_logprob: float,
    no_speech: float = 0.6,
    logprob: float = -1.0,
) -> tuple[str, str | None]:
    """(cleaned text, rejection reason or None) after every guard, cheapest first."""
    text = strip_special(raw)
    reason = (
        blank_reason(text, raw)
        or silence_reason(no_speech_prob, avg_logprob, no_speech, logprob)
        or non_speech_reason(text)
        or loop_reason(text)
    )
    return text, reason
