"""A shorter encoder window for short commands (`[stt] window_s` < 30; 15 by default).

faster-whisper pads every input to Whisper's 30 s window, and on this 2-core box the encoder
then takes ~160-200 ms of the ~260-370 ms a command costs, whatever its length. CTranslate2's
encoder accepts fewer frames: a 15 s window encodes in ~35 ms, so a command costs ~130 ms. The
price, measured on 120 espeak commands: 107 exact instead of 110 (bench/audio_latency.py).
Below ~15 s Whisper loops and hallucinates on noise ("go, run, run, run, ..."), so the window
has a floor.

This module runs the encoder on a padded window and decodes with the same bounded temperature
fallback faster-whisper uses (compression ratio and log-probability checks). Segments longer than
the window go through faster-whisper's normal path instead.
"""

from __future__ import annotations

import functools
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog
from voiced.audio.grammar_decode import (
    MAX_GAP,
    Constrained,
    Stepping,
    WordGraph,
    decode_held,
    held_tokens,
    keeps_what_was_heard,
    made_unasked,
    supported,
    worth_holding,
)
from voiced.audio.guards import once
from voiced.audio.judge import Judge, judge_choice
from voiced.audio.stepdecoder import (
    ModelFileError,
    StepDecoder,
    directory_of,
    load_decoder,
    one_thread,
)
from voiced.audio.transcribe import Chooser, HoldsToSentences
from voiced.rules import heard_as

log = structlog.get_logger(__name__)

FRAMES_PER_SECOND = 100
"""Whisper's mel frames per second (hop length 160 at 16 kHz)."""
MAX_LENGTH = 448
"""Whisper's decoder context."""
COMPRESSION_RATIO_LIMIT = 2.4
"""Above this gzip ratio the text is repetitive: try the next temperature (faster-whisper's)."""
TOKENS_PER_SECOND = 8.0
"""More text tokens than anyone says in a second of audio (fast speech is ~4 words, ~5 tokens)."""
TOKENS_SLACK = 12
"""Tokens allowed on top: punctuation, a short segment's whole word."""


def token_budget(seconds: float) -> int:
    """The most tokens a segment this long can hold. Under babble Whisper can loop ("one, two,
    one, two, ..." up to its 448-token context), which costs seconds of decoding and text
    nobody said; a budget by duration ends the loop where speech could not go on."""
    return int(seconds * TOKENS_PER_SECOND) + TOKENS_SLACK


@dataclass(frozen=True)
class Decoded:
    """The decoder's best hypothesis for one window."""

    text: str
    """Decoded text, special tokens included."""
    no_speech_prob: float
    """Probability of the no-speech token at the start."""
    avg_logprob: float
    """Mean log-probability per token."""
    repaired: str | None = None
    """The chooser's repair of `text`, to use instead of it."""
    hypothesis: int = 0
    """Which hypothesis of the beam this is (0 = the best)."""
    chosen: bool = False
    """The chooser kept this hypothesis (False: none was offered or none was kept)."""
    doubt: str | None = None
    """Why `repaired` is not to be acted on unasked (None: it may be): a sentence the audio
    supports, held to from a reading that began as none of them begins."""

    def silent(self, options: DecodeOptions) -> bool:
        """No speech: a likely no-speech token and an unlikely text."""
        return (
            self.no_speech_prob > options.no_speech_threshold
            and self.avg_logprob < options.logprob_threshold
        )


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def _tokenizer(model: Any) -> Any:
    # faster-whisper is slow to import; here, as in voiced.audio.whisper, only once a model runs.
    from faster_whisper.tokenizer import Tokenizer  # type: ignore[import-untyped]

    return Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
    )


def _suppressed(tokenizer: Any) -> list[int]:
    from faster_whisper.transcribe import get_suppressed_tokens  # type: ignore[import-untyped]

    return list(get_suppressed_tokens(tokenizer, [-1]))


@dataclass(frozen=True)
class DecodeOptions:
    """What `decode_window` needs from `SttSettings`, plus the bias text."""

    window_s: float
    """Encoder window in seconds (< 30)."""
    beam_size: int
    """Beam at temperature 0."""
    temperatures: tuple[float, ...]
    """Fallback ladder."""
    logprob_threshold: float
    """Below this average log-probability the next temperature is tried."""
    no_speech_threshold: float
    """With a low log-probability above this: silence, stop falling back."""
    initial_prompt: str | None = None
    """Previous-text prompt (the cell's vocabulary)."""
    hotwords: str | None = None
    """Hotwords prompt."""
    max_new_tokens: int | None = None
    """At most this many tokens after the prompt (None: up to Whisper's context)."""
    hypotheses: int = 1
    """Beam hypotheses returned at temperature 0 for `choose` to pick from (1: the best only)."""


def decode_window(
    model: Any,
    audio: npt.NDArray[np.float32],
    options: DecodeOptions,
    choose: Chooser | None = None,
) -> Decoded | None:
    """Decode `audio` in a window of `options.window_s`; None if it does not fit in it.

    With `hypotheses` > 1 and a `choose`, the beam's hypotheses at temperature 0 are offered
    best first and the one chosen is kept (what the live grammar accepts: see
    `voiced.inputs.audio`); when none is chosen, the fallback ladder goes on as usual."""
    from faster_whisper.audio import pad_or_trim  # type: ignore[import-untyped]

    features = model.feature_extractor(audio)
    frames = round(options.window_s * FRAMES_PER_SECOND)
    if features.shape[-1] > frames:
        return None
    encoded = model.encode(pad_or_trim(features, frames))
    tokenizer = _tokenizer(model)
    previous = tokenizer.encode(" " + options.initial_prompt) if options.initial_prompt else []
    prompt = model.get_prompt(
        tokenizer, previous, without_timestamps=True, hotwords=options.hotwords
    )
    suppress = _suppressed(tokenizer)
    length = MAX_LENGTH
    if options.max_new_tokens is not None:
        length = min(MAX_LENGTH, len(prompt) + options.max_new_tokens)
    best: Decoded | None = None
    for temperature in options.temperatures:
        several = temperature == 0 and options.hypotheses > 1 and choose is not None
        beam = max(options.beam_size, options.hypotheses) if several else options.beam_size
        count = options.hypotheses if several else 1
        result = _generate(model, encoded, prompt, suppress, beam, temperature, length, count)
        decoded = _hypothesis(tokenizer, result, 0)
        if several and choose is not None:
            judge = functools.partial(Judge, model.model, encoded, features.shape[-1], tokenizer)
            kept = _chosen(tokenizer, result, decoded, choose, judge, options,
                           directory_of(model))  # fmt: skip
            if kept is not None:
                return kept
        text, avg = decoded.text, decoded.avg_logprob
        if best is None or decoded.avg_logprob > best.avg_logprob:
            best = decoded
        if decoded.silent(options):
            return decoded
        if compression_ratio(text) <= COMPRESSION_RATIO_LIMIT and avg >= options.logprob_threshold:
            return decoded
    return best


def _chosen(
    tokenizer: Any,
    result: Any,
    decoded: Decoded,
    choose: Chooser,
    judge: Callable[[], Judge],
    options: DecodeOptions,
    directory: Path | None = None,
) -> Decoded | None:
    """The hypothesis the live grammar chose (judged by the audio where it asks), else the
    sentence decoding held to the cell's sentences reads (also where the grammar kept a
    hypothesis only to refuse it, `Choice.refused`: then asked about); None: neither."""
    texts = [_hypothesis(tokenizer, result, i).text for i in range(len(result.scores))]
    chosen = choose(texts)
    if chosen is not None and not chosen.refused:
        kept = _hypothesis(tokenizer, result, chosen.index)
        repaired = chosen.text
        if chosen.judged:
            verdict = judge_choice(judge(), chosen)
            repaired = verdict.text if verdict.changed else repaired
        return replace(kept, repaired=repaired, hypothesis=chosen.index, chosen=True)
    graph = choose.sentences() if isinstance(choose, HoldsToSentences) else None
    best = texts[chosen.index if chosen is not None else 0] if texts else ""
    # A reading the grammar kept only to refuse was judged misheard already (`Choice.refused`).
    if (
        graph is not None
        and not decoded.silent(options)
        and (chosen is not None or worth_holding(graph, best))
    ):
        held = _held(judge(), graph, choose, best, directory)
        if held is not None:
            unasked = chosen is None and made_unasked(graph, best, held)
            doubt = None if unasked else heard_as(once(best).strip())
            return replace(decoded, repaired=held, chosen=True, doubt=doubt)
    if chosen is not None:  # refused, or answered, as heard
        return replace(_hypothesis(tokenizer, result, chosen.index), repaired=chosen.text,
                       hypothesis=chosen.index, chosen=True)  # fmt: skip
    return None


def _held(
    judge: Judge, graph: WordGraph, choose: Chooser, best: str, directory: Path | None = None
) -> str | None:
    """What the cell's sentences make of a segment none of whose hypotheses the grammar read
    (or read only to refuse): the likeliest sentence decoding held to `graph` gives that the
    audio supports about as well as the free reading `best` (else it is talk the grammar would
    be forced onto) and that keeps what was heard plainly, if the chooser keeps it; None
    otherwise (and on any failure: the free reading stands). Decoded on the step decoder
    where the model's `directory` is known and its decoder readable, else by CTranslate2."""
    began = time.perf_counter()
    try:
        # A reading written over and over scores as the sentence once: the sum over the loop
        # would make any held sentence look supported.
        free = judge.scores([once(best)])[0] if best.strip() else -np.inf

        def fits(held: Constrained) -> bool:
            fit = supported(held, free, best) and keeps_what_was_heard(held, best, graph)
            if not fit:
                log.info("held reading not supported", heard=best, held=held.text,
                         score=round(held.logprob, 2), free=round(free, 2))  # fmt: skip
            return fit

        def decode(steps: Stepping | None) -> Constrained | None:
            return decode_held(judge.model, judge.encoded, judge.tokenizer, graph, keep=fits,
                               floor=free - MAX_GAP, steps=steps)  # fmt: skip

        held, steps = None, None
        with one_thread():
            try:
                steps = _stepping(judge, graph, directory)
                if steps is not None:
                    held = decode(steps)
            except Exception as exc:  # the step decoder's (a file replaced meanwhile, ...)
                assert directory is not None
                _unusable.add(directory)
                log.error("held decoding on the step decoder failed: CTranslate2 decodes",
                          path=str(directory), error=repr(exc))  # fmt: skip
                steps = None
        if steps is None:
            held = decode(None)
    except Exception as exc:  # CTranslate2's errors have no common type of their own
        log.error("decoding held to the cell's sentences failed", error=repr(exc))
        return None
    if held is None:
        log.info("held decoding found no sentence the audio supports", heard=best,
                 seconds=round(time.perf_counter() - began, 3))  # fmt: skip
        return None
    chosen = choose([held.text])
    if chosen is None:
        return None
    log.info("transcript held to the cell's sentences", heard=best, held=held.text,
             score=round(held.logprob, 2), free=round(free, 2), calls=held.calls,
             seconds=round(time.perf_counter() - began, 3))  # fmt: skip
    return chosen.text or held.text


def _stepping(judge: Judge, graph: WordGraph, directory: Path | None) -> Stepping | None:
    """Held decoding on the step decoder for this segment (None: the model's decoder is not
    known or not readable: CTranslate2 decodes, as before)."""
    if directory is None or directory in _unusable:
        return None
    try:
        weights = load_decoder(directory)
    except (OSError, ModelFileError, KeyError, ValueError) as exc:
        _unusable.add(directory)  # not read again for every segment
        log.warning("the model's decoder could not be read: held decoding calls CTranslate2",
                    path=str(directory), error=repr(exc))  # fmt: skip
        return None
    tokens = held_tokens(graph, judge.tokenizer)
    return Stepping(StepDecoder(weights, tokens, judge.encoded), judge.said)


_unusable: set[Path] = set()
"""Models whose decoder failed on the step decoder once: held decoding calls CTranslate2."""


def _hypothesis(tokenizer: Any, result: Any, index: int) -> Decoded:
    tokens = result.sequences_ids[index]
    avg = float(result.scores[index]) * len(tokens) / (len(tokens) + 1)
    return Decoded(tokenizer.decode(tokens).strip(), float(result.no_speech_prob), avg)


def _generate(
    model: Any,
    encoded: Any,
    prompt: list[int],
    suppress: list[int],
    beam: int,
    temperature: float,
    max_length: int,
    hypotheses: int = 1,
) -> Any:
    sampling: dict[str, Any] = (
        {"beam_size": beam}
        if temperature == 0
        else {"beam_size": 1, "sampling_topk": 0, "sampling_temperature": temperature}
    )
    return model.model.generate(
        encoded,
        [prompt],
        max_length=max_length,
        return_scores=True,
        return_no_speech_prob=True,
        suppress_blank=True,
        suppress_tokens=suppress,
        num_hypotheses=hypotheses,
        **sampling,
    )[0]
