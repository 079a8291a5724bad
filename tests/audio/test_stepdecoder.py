"""The step decoder: Whisper's text decoder in NumPy, read from the CTranslate2 model the
transcriber loaded, scoring as CTranslate2 does (on real speech, espeak-ng), and held decoding
on it finding the orders held decoding on CTranslate2 finds."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from voiced.audio.convert import to_float
from voiced.audio.grammar_decode import (
    MAX_GAP,
    Reading,
    Stepping,
    WordGraph,
    _spellings,
    decode_held,
    held_tokens,
)
from voiced.audio.stepdecoder import (
    ModelFileError,
    directory_of,
    read_decoder,
)
from voiced.audio.whisper import WhisperTranscriber
from voiced.audio.whisper_window import _stepping

from tests.audio.clips import Clips, samples_of
from tests.audio.test_audio_held import ORDER, judge_of, order_of
from voiced.interpreter.templates import Templates

SAID = "can i get a medium cappuccino with soy milk"


@pytest.fixture(scope="module")
def order_audio(clips: Clips) -> Any:
    return to_float(samples_of(clips.speech(SAID, "en-us")))


def stepping_of(whisper: WhisperTranscriber, judge: Any, graph: WordGraph) -> Stepping:
    steps = _stepping(judge, graph, directory_of(whisper.model()))
    assert steps is not None, "the transcriber's model is known and readable"
    return steps


def ctranslate2_rows(judge: Any, tokens: list[int]) -> Any:
    """CTranslate2's log-probabilities after each token of `tokens` (forced)."""
    import ctranslate2  # type: ignore[import-untyped]

    result = judge.model.generate(
        ctranslate2.StorageView.from_array(np.ascontiguousarray(judge.encoded)),
        [judge.start + tokens], beam_size=1, max_length=2 * len(tokens) + 4,
        return_logits_vocab=True, suppress_blank=False, suppress_tokens=[],
    )[0]  # fmt: skip
    return np.asarray([np.asarray(row) for row in result.logits[0]], dtype=np.float64)


def test_the_step_decoder_scores_a_sentence_as_ctranslate2_does(
    whisper: WhisperTranscriber, graph: WordGraph, order_audio: Any
) -> None:
    judge = judge_of(whisper, order_audio)
    steps = stepping_of(whisper, judge, graph)
    tokens = judge.tokenizer.encode(" Can I get a medium cappuccino with soy milk?")
    mine = steps.decoder.run([*judge.start, *tokens]).rows[len(judge.start) - 1 :]
    logits = ctranslate2_rows(judge, tokens)[: len(mine), steps.decoder.tokens]
    theirs = logits - logits.max(1, keepdims=True)
    theirs -= np.log(np.exp(theirs).sum(1, keepdims=True))  # over the same tokens as ours
    index = {int(t): i for i, t in enumerate(steps.decoder.tokens)}
    picked = [index[t] for t in [*tokens, judge.tokenizer.eot]]
    at = np.arange(len(picked))
    ours, reference = mine[at, picked], theirs[at, picked]
    # Float32 here, int8 in CTranslate2: each token within a nat, the sentence within three.
    assert np.abs(ours - reference).max() < 1.0, (ours, reference)
    assert abs(ours.sum() - reference.sum()) < 3.0
    agree = (mine.argmax(1) == theirs.argmax(1)).mean()
    assert agree >= 0.8, agree


def test_a_sequence_run_in_one_pass_is_the_same_as_a_token_at_a_time(
    whisper: WhisperTranscriber, graph: WordGraph, order_audio: Any
) -> None:
    judge = judge_of(whisper, order_audio)
    decoder = stepping_of(whisper, judge, graph).decoder
    tokens = [*judge.start, *judge.tokenizer.encode(" Can I get a latte?")]
    state = decoder.run(tokens[:2])
    for token in tokens[2:]:
        state = decoder.step(state, token)
    whole = decoder.run(tokens)
    assert len(state) == len(whole) == len(tokens)
    assert np.abs(state.rows - whole.rows).max() < 1e-3


def test_held_decoding_on_the_step_decoder_writes_the_order_free_decoding_lost(
    clips: Clips, whisper: WhisperTranscriber, templates: Templates, graph: WordGraph
) -> None:
    noisy = clips.mix_at_snr(clips.speech(ORDER, "en-gb-scotland"), "brown", -6)
    judge = judge_of(whisper, to_float(samples_of(noisy)))
    steps = stepping_of(whisper, judge, graph)
    held = decode_held(judge.model, judge.encoded, judge.tokenizer, graph, steps=steps)
    assert held is not None
    assert order_of(templates, held.text) == order_of(templates, ORDER)
    # Its score is the model's own (CTranslate2's, the end of the text aside), not the step
    # decoder's upper bound.
    assert held.logprob == pytest.approx(judge.scores([held.text])[0], abs=1.5)
    assert held.logprob == pytest.approx(judge.said([held.text])[0] + held.end)


@pytest.mark.parametrize(
    "talk",
    ["thank you very much", "the old ones are a stop gap at best",
     "i already had a mocha with whole milk"],
)  # fmt: skip
def test_talk_held_on_the_step_decoder_is_far_less_likely_than_heard(
    clips: Clips, whisper: WhisperTranscriber, graph: WordGraph, talk: str
) -> None:
    judge = judge_of(whisper, to_float(samples_of(clips.speech(talk, "en-us"))))
    steps = stepping_of(whisper, judge, graph)
    held = decode_held(judge.model, judge.encoded, judge.tokenizer, graph, steps=steps)
    # No sentence, or one scored far below the free reading: by the score, not the words'
    # likeness alone.
    assert held is None or held.logprob < judge.scores([talk])[0] - MAX_GAP, held


def test_every_word_of_the_sentences_can_be_written_in_the_held_tokens(
    whisper: WhisperTranscriber, graph: WordGraph, order_audio: Any
) -> None:
    tokenizer = judge_of(whisper, order_audio).tokenizer
    allowed = set(held_tokens(graph, tokenizer))
    assert tokenizer.eot in allowed
    for word in sorted(graph.words):
        # " iced" is a bare space and "iced" to the tokenizer, " Iced" is " I" "ced".
        spellings = [set(tokenizer.encode(" " + w)) for w in (word, word.capitalize())]
        assert any(tokens <= allowed for tokens in spellings), word
    for tokens in _spellings(tokenizer, Reading(graph.start), graph):  # the openings
        assert set(tokens) <= allowed
    # No hyphen: it would join words the sentences say apart.
    assert not any("-" in tokenizer.decode([t]) for t in allowed if t != tokenizer.eot)


def test_a_file_that_is_no_whisper_model_is_refused_by_name(tmp_path: Path) -> None:
    other = tmp_path / "model.bin"
    name = b"TransformerSpec"
    other.write_bytes(struct.pack("I", 6) + struct.pack("H", len(name) + 1) + name + b"\0")
    with pytest.raises(ModelFileError, match="TransformerSpec, not a Whisper model"):
        read_decoder(other)
    other.write_bytes(struct.pack("I", 6)[:3])
    with pytest.raises(ModelFileError, match="ends early"):
        read_decoder(other)


def test_an_unreadable_decoder_leaves_held_decoding_to_ctranslate2(
    whisper: WhisperTranscriber, graph: WordGraph, order_audio: Any, tmp_path: Path
) -> None:
    from structlog.testing import capture_logs

    judge = judge_of(whisper, order_audio)
    (tmp_path / "model.bin").write_bytes(b"\0\0")
    with capture_logs() as logs:
        assert _stepping(judge, graph, tmp_path) is None
        assert _stepping(judge, graph, tmp_path) is None  # not read again, not said again
    said = [e for e in logs if "decoder could not be read" in e["event"]]
    assert len(said) == 1 and said[0]["path"] == str(tmp_path) and "ends early" in said[0]["error"]
    assert _stepping(judge, graph, None) is None
    held = decode_held(judge.model, judge.encoded, judge.tokenizer, graph,
                       steps=_stepping(judge, graph, tmp_path))  # fmt: skip
    assert held is not None and "cappuccino" in held.text.lower()


def model_file(path: Path, variables: dict[str, np.ndarray]) -> Path:
    """A CTranslate2 `model.bin` holding `variables` (ModelSpec._serialize's format)."""

    def string(text: str) -> bytes:
        return struct.pack("H", len(text) + 1) + text.encode() + b"\0"

    kinds = {np.dtype(np.float32): 0, np.dtype(np.int8): 1, np.dtype(np.float16): 4}
    data = struct.pack("I", 6) + string("WhisperSpec") + struct.pack("II", 3, len(variables))
    for name, value in variables.items():
        data += string(name) + struct.pack("B", value.ndim)
        data += b"".join(struct.pack("I", dim) for dim in value.shape)
        data += struct.pack("<BI", kinds[value.dtype], value.nbytes) + value.tobytes()
    path.write_bytes(data + struct.pack("I", 0))
    return path


def test_a_quantized_decoder_is_refused_not_read_as_numbers_without_their_scale(
    tmp_path: Path,
) -> None:
    weight = np.ones((4, 4), dtype=np.int8)
    path = model_file(tmp_path / "model.bin", {"decoder/layer_0/ffn/linear_0/weight": weight})
    with pytest.raises(ModelFileError, match="linear_0/weight is quantized"):
        read_decoder(path)
    embeddings = np.ones((8, 4), dtype=np.float16)
    read = read_decoder(model_file(path, {"decoder/embeddings/weight": embeddings}))
    assert read["decoder/embeddings/weight"][[3, 5]].shape == (2, 4)
