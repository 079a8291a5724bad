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

    from voiced.config import Config
    from voiced.inputs.audio import bias_for
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

    from voiced.interpreter.repair import Repairer, name_words, vocabulary_phrases

    vocabulary = _JUDGES[judge_id].interpreter.grammar.vocabulary
    return Repairer(vocabulary_phrases(vocabulary), Sounds(), name_words(vocabulary))


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
    """What the daemon does: the first of the beam's hypotheses the grammar reads whole, else
    the repair of one of the best two (see voiced.inputs.hearing)."""
    return _nbest5_repair_with(_transcriber(), crop, judge)


def nbest5_repair_w15(crop: Crop, judge: Judge) -> str:
    """As the daemon with `[stt] window_s = 15`: the encoder reads a 15 s window (about
    400 ms less per command on this box; see voiced.audio.whisper_window)."""
    return _nbest5_repair_with(_transcriber(), crop, judge, window_s=15.0)


VARIANTS.update(repair=repair, nbest5_repair=nbest5_repair, nbest5_repair_w15=nbest5_repair_w15)


# Noise-suppression front ends (issue 16): each cleans the crop's 16 kHz int16 samples in its own
# frame size before Whisper hears them; the crop's leading pad (noise only, as the segmenter's
# pre-roll) is where each learns the noise.


def _webrtc_ns(samples: Any) -> Any:
    import numpy as np
    from webrtc_noise_gain import AudioProcessor

    processor = AudioProcessor(0, 2)  # no automatic gain; suppression level 2 of 0..4
    frame = 160  # 10 ms
    whole = len(samples) // frame * frame
    out = [np.frombuffer(processor.Process10ms(samples[i : i + frame].tobytes()).audio, np.int16)
           for i in range(0, whole, frame)]  # fmt: skip
    return np.concatenate([*out, samples[whole:]])


def _speex_ns(samples: Any) -> Any:
    import numpy as np
    import speexdsp_ns

    frame = 160  # 10 ms
    suppressor = speexdsp_ns.NoiseSuppression.create(frame, 16000)
    whole = len(samples) // frame * frame
    out = [np.frombuffer(suppressor.process(samples[i : i + frame].tobytes()), np.int16)
           for i in range(0, whole, frame)]  # fmt: skip
    return np.concatenate([*out, samples[whole:]])


def _rnnoise(samples: Any) -> Any:
    import numpy as np
    from pyrnnoise import RNNoise

    # RNNoise runs at 48 kHz in 10 ms frames; its class resamples both ways.
    denoiser = RNNoise(16000)
    out = [f for _, f in denoiser.denoise_chunk(samples[None, :], partial=True)]
    cleaned = np.concatenate(out, axis=1)[0]
    return np.pad(cleaned, (0, max(0, len(samples) - len(cleaned))))[: len(samples)]


FRONT_ENDS = {"webrtc": _webrtc_ns, "speex": _speex_ns, "rnnoise": _rnnoise}


def _cleaned(crop: Crop, front_end: str) -> Crop:
    from dataclasses import replace

    return replace(crop, samples=FRONT_ENDS[front_end](crop.samples))


def _with_front_end(front_end: str, variant: Variant) -> Variant:
    def cleaned_first(crop: Crop, judge: Judge) -> str:
        return variant(_cleaned(crop, front_end), judge)

    return cleaned_first


for _name in FRONT_ENDS:
    VARIANTS[f"{_name}_nbest5_repair"] = _with_front_end(_name, nbest5_repair)
    VARIANTS[f"{_name}_baseline"] = _with_front_end(_name, baseline)


# A second opinion from Whisper base (issue 16): only when tiny.en's chosen text is still not a
# command the grammar reads, the crop is decoded again by base the same way (N-best + repair) and
# its text taken if the grammar reads it.


@cache
def _base_transcriber() -> Any:
    from voiced.audio.settings import SttSettings
    from voiced.audio.whisper import WhisperTranscriber
    from voiced.audio.whisperbase import base_model_path

    return WhisperTranscriber(SttSettings(model=str(base_model_path())))


def _nbest5_repair_with(
    transcriber: Any,
    crop: Crop,
    judge: Judge,
    temperatures: tuple[float, ...] | None = None,
    window_s: float = 30.0,
) -> str:
    from dataclasses import replace

    from voiced.audio.whisper_window import decode_window

    options = replace(transcriber.decode_options(_bias(crop.cell)), window_s=window_s,
                      beam_size=5, hypotheses=5)  # fmt: skip
    if temperatures is not None:
        options = replace(options, temperatures=temperatures)

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


def base_second_opinion(crop: Crop, judge: Judge) -> str:
    text = nbest5_repair(crop, judge)
    if judge.accepts(text):
        return text
    second = _nbest5_repair_with(_base_transcriber(), crop, judge)
    return second if judge.accepts(second) else text


def base_nbest5_repair(crop: Crop, judge: Judge) -> str:
    """Base alone, for reference (what the second opinion could reach at most)."""
    return _nbest5_repair_with(_base_transcriber(), crop, judge)


def base_second_opinion_t0(crop: Crop, judge: Judge) -> str:
    """As the daemon's `[stt] second_opinion`: base's beam at temperature 0 only (a text from
    its fallback ladder could only be thrown away)."""
    text = nbest5_repair(crop, judge)
    if judge.accepts(text):
        return text
    second = _nbest5_repair_with(_base_transcriber(), crop, judge, (0.0,))
    return second if judge.accepts(second) else text


VARIANTS.update(
    base_second_opinion=base_second_opinion,
    base_second_opinion_t0=base_second_opinion_t0,
    base_nbest5_repair=base_nbest5_repair,
)


@cache
def _allowed(cell_name: str) -> frozenset[int]:
    """Token ids of every word the cell's grammar, frames and wake word use, in the spellings
    Whisper writes them (leading space or not, capitalised or not), plus punctuation."""
    from voiced.audio.whisper_window import _tokenizer

    from voiced.inputs.audio import FRAME_WORDS
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
