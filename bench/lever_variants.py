"""The variants `bench.levers` compares: each turns a crop into text."""

from __future__ import annotations

from functools import cache
from typing import Any

from bench.levers import Crop, Judge, Variant


@cache
def _transcriber() -> Any:
    from voiced.audio.whisper import WhisperTranscriber

    return WhisperTranscriber()


@cache
def _bias(cell_name: str) -> Any:
    from voiced.robot.cellfile import load_cell

    from voiced.audioinput import bias_for
    from voiced.config import Config
    from voiced.interpreter.phrasebank import PhraseBank

    cell = load_cell(cell_name)
    return bias_for(cell, PhraseBank.packaged(cell).phrases(), Config())


def _float(crop: Crop) -> Any:
    from voiced.audio.convert import to_float

    return to_float(crop.samples)


def baseline(crop: Crop, judge: Judge) -> str:
    return str(_transcriber()._decode(_float(crop), _bias(crop.cell)).text)


VARIANTS: dict[str, Variant] = {"baseline": baseline}


def _window(crop: Crop, judge: Judge | None, beam: int, hypotheses: int) -> str:
    from dataclasses import replace

    from voiced.audio.whisper_window import decode_window

    transcriber = _transcriber()
    options = replace(transcriber.decode_options(_bias(crop.cell)), window_s=30.0,
                      beam_size=beam, hypotheses=hypotheses)  # fmt: skip

    def choose(texts: Any) -> Any:
        from voiced.audio.transcribe import Choice

        assert judge is not None
        return next((Choice(i) for i, t in enumerate(texts) if judge.accepts(t)), None)

    decoded = decode_window(transcriber.model(), _float(crop), options,
                            choose if judge is not None else None)  # fmt: skip
    assert decoded is not None
    return str(decoded.text)


def window(crop: Crop, judge: Judge) -> str:
    return _window(crop, None, 1, 1)


def beam5(crop: Crop, judge: Judge) -> str:
    return _window(crop, None, 5, 1)


def nbest5(crop: Crop, judge: Judge) -> str:
    return _window(crop, judge, 5, 5)


VARIANTS.update(window=window, beam5=beam5, nbest5=nbest5)


@cache
def _repairer(cell_name: str, judge_id: int) -> Any:
    from voiced.rules.sounds import Sounds

    from voiced.interpreter.repair import Repairer, vocabulary_phrases

    judge = _JUDGES[judge_id]
    return Repairer(vocabulary_phrases(judge.interpreter.grammar.vocabulary), Sounds())


_JUDGES: dict[int, Judge] = {}


def _repaired(text: str, crop: Crop, judge: Judge) -> str | None:
    """`text` repaired (the wake word kept as heard), or None."""
    rest = judge.command(text)
    if rest is None or judge.accepts(text):
        return None
    _JUDGES[id(judge)] = judge
    fixed = _repairer(crop.cell, id(judge)).repair(
        rest, lambda t: judge.interpreter.understands(t, judge.scene, ())
    )
    return None if fixed is None else f"{judge.wake} {fixed.text}"


def repair(crop: Crop, judge: Judge) -> str:
    text = baseline(crop, judge)
    return _repaired(text, crop, judge) or text


def nbest5_repair(crop: Crop, judge: Judge) -> str:
    from dataclasses import replace

    from voiced.audio.whisper_window import decode_window

    transcriber = _transcriber()
    options = replace(transcriber.decode_options(_bias(crop.cell)), window_s=30.0,
                      beam_size=5, hypotheses=5)  # fmt: skip

    def choose(texts: Any) -> Any:
        from voiced.audio.transcribe import Choice

        for i, t in enumerate(texts):
            if judge.accepts(t):
                return Choice(i)
        for i, t in enumerate(texts[:2]):
            fixed = _repaired(t, crop, judge)
            if fixed is not None:
                return Choice(i, fixed)
        return None

    decoded = decode_window(transcriber.model(), _float(crop), options, choose)
    assert decoded is not None
    return str(decoded.repaired or decoded.text)


VARIANTS.update(repair=repair, nbest5_repair=nbest5_repair)


@cache
def _allowed(cell_name: str) -> frozenset[int]:
    """Token ids of every word the cell's grammar, frames and wake word use, in the spellings
    Whisper writes them (leading space or not, capitalised or not), plus punctuation."""
    from voiced.audio.whisper_window import _tokenizer

    from voiced.audioinput import FRAME_WORDS
    from voiced.interpreter.repair import vocabulary_phrases
    from voiced.interpreter.vocabulary import FILLERS

    judge = next(j for j in _JUDGES.values() if j.interpreter.cell.name == cell_name)
    words = {w for p in vocabulary_phrases(judge.interpreter.grammar.vocabulary) for w in p.split()}
    words |= {w for p in FRAME_WORDS for w in p.split()} | {"computer"}
    words |= {w for p in FILLERS for w in str(p).split()} | {str(n) for n in range(100)}
    tokenizer = _tokenizer(_transcriber().model())
    ids: set[int] = set()
    for word in words:
        for form in (word, word.capitalize()):
            for text in (form, " " + form):
                ids.update(tokenizer.encode(text))
    for mark in (".", ",", "?", "!", " -", "'"):
        ids.update(tokenizer.encode(mark))
    return frozenset(ids)


def restricted_nbest5_repair(crop: Crop, judge: Judge) -> str:
    """nbest5_repair with decoding restricted to the cell's tokens."""
    from voiced.audio import whisper_window

    _JUDGES[id(judge)] = judge
    allowed = _allowed(crop.cell)
    original = whisper_window._suppressed

    def suppressed(tokenizer: Any) -> list[int]:
        """Every text token outside the cell's (the ids below end-of-text are text)."""
        outside = {i for i in range(tokenizer.eot) if i not in allowed}
        return sorted(set(original(tokenizer)) | outside)

    whisper_window._suppressed = suppressed
    try:
        return nbest5_repair(crop, judge)
    finally:
        whisper_window._suppressed = original


VARIANTS.update(restricted_nbest5_repair=restricted_nbest5_repair)
