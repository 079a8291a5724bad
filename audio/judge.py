"""Choosing among the readings the grammar accepts by what the audio supports.

Free decoding writes what it hears and the grammar repairs the text afterwards; in noise that
goes wrong in a way the grammar cannot see: "twenty ounce" for "twelve ounce" reads as well as
the truth. Closed-set recognisers (Picovoice Rhino) win there because they decide which of the
context's sentences was said. This is that decision, made by Whisper itself: every reading the
chooser offers (`Choice.form`, its `rivals`, and `form` with another value in one of its
`slots`) is scored by the model's own log-probability of its tokens and of the end of the text
after them, given the segment's encoded audio, and the best is kept.

Only readings the grammar already accepts are compared, so talk that is not a command stays
talk: the judge never turns free text into a command, it only picks among commands.

Scoring uses CTranslate2's `Whisper.generate` with the reading as a forced prefix: the logits of
every forced step come back (`return_logits_vocab`), and one step after them gives the
probability of the end-of-text token (`Whisper.align` returns token probabilities too, but
masks the end token, which is what tells "a twelve ounce coffee" from "a twelve ounce").
The start is the bare start-of-transcript sequence without the vocabulary prompt: the prompt
would cost a long prefix on every reading and it speaks for the cell's words, which every
reading here already holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from voiced.audio.grammar_decode import log_softmax
from voiced.audio.transcribe import Choice, Slot

BATCH = 24
"""Readings scored in one decoder call (memory grows with it; speed hardly does)."""
MAX_VALUES = 40
"""Most values tried in one slot: a long list costs ~20 ms a value on this 2-core box."""
TAIL_FRAMES = 50
"""Encoder frames (20 ms each) kept after the end of the audio: the decoder attends to the
encoded window, and the padding after the speech only costs time (scores move < 1 %)."""
MARGIN = 0.0
"""How much better (nats) a reading must score than the chosen one to replace it."""


@dataclass(frozen=True)
class Verdict:
    """What the judge kept."""

    text: str
    """The reading the audio supports best."""
    score: float
    """Its log-probability (nats)."""
    chosen_score: float
    """The chooser's own reading's log-probability."""
    tried: int
    """Readings scored."""

    @property
    def changed(self) -> bool:
        """Another reading than the chooser's won."""
        return self.score > self.chosen_score


class Judge:
    """Scores texts against one segment: log P(tokens, end | audio) under the model."""

    def __init__(self, model: Any, encoded: Any, audio_frames: int, tokenizer: Any) -> None:
        keep = audio_frames // 2 + TAIL_FRAMES
        self.encoded: npt.NDArray[np.float32] = np.ascontiguousarray(np.array(encoded)[:, :keep])
        self.model = model
        self.frames = audio_frames
        self.tokenizer = tokenizer
        self.start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]

    def said(self, texts: Sequence[str]) -> list[float]:
        """Each text's tokens' log-probability, the end of the text not counted, by one pass of
        CTranslate2's `Whisper.align` over all of them (a tenth of `scores`'s time: `generate`
        runs a forced prefix a token at a time). `align` weighs each token among the text
        tokens only (the end and the special tokens left out): within 0.1 nats of `scores`'s
        tokens on development orders, a little above where the text could end."""
        import ctranslate2  # type: ignore[import-untyped]

        if not texts:
            return []
        tokens = [self.tokenizer.encode(" " + t.strip()) for t in texts]
        features = ctranslate2.StorageView.from_array(
            np.ascontiguousarray(np.repeat(self.encoded, len(texts), axis=0))
        )
        # `align` writes <|notimestamps|> after the start itself: the bare start sequence.
        start = list(self.tokenizer.sot_sequence)
        results = self.model.align(features, start, tokens, [self.frames] * len(texts))
        return [float(np.log(np.maximum(np.asarray(r.text_token_probs), 1e-30)).sum())
                for r in results]  # fmt: skip

    def scores(self, texts: Sequence[str]) -> list[float]:
        """Each text's log-probability, in order."""
        found: list[float] = []
        for at in range(0, len(texts), BATCH):
            found += self._batch(texts[at : at + BATCH])
        return found

    def _batch(self, texts: Sequence[str]) -> list[float]:
        import ctranslate2

        tokens = [self.tokenizer.encode(" " + t.strip()) for t in texts]
        features = ctranslate2.StorageView.from_array(
            np.ascontiguousarray(np.repeat(self.encoded, len(texts), axis=0))
        )
        longest = max(len(t) for t in tokens)
        results = self.model.generate(
            features,
            [self.start + t for t in tokens],
            beam_size=1,
            # The forced prefix counts twice against max_length in CTranslate2's Whisper
            # (measured: a length of 2n returns n steps); one step more gives the end token.
            max_length=min(448, 2 * (longest + 1) + 2),
            return_logits_vocab=True,
            suppress_blank=False,
            suppress_tokens=[],
        )
        return [self._logprob(r, t) for r, t in zip(results, tokens, strict=True)]

    def _logprob(self, result: Any, tokens: list[int]) -> float:
        logits = np.asarray(result.logits[0], dtype=np.float64)
        if len(logits) <= len(tokens):
            return -np.inf  # too long to score: never preferred
        logp = log_softmax(logits[: len(tokens) + 1])
        said = logp[np.arange(len(tokens)), tokens].sum()
        return float(said + logp[len(tokens), self.tokenizer.eot])


def substituted(form: str, slot: Slot, value: str) -> str:
    return f"{form[: slot.start]}{value}{form[slot.end :]}"


def judge_choice(judge: Judge, choice: Choice) -> Verdict:
    """The reading of `choice` the audio supports best: its own form, a rival, or the form
    with the best value in each slot (each slot tried with the others as heard, then the
    winners together)."""
    assert choice.form is not None
    form = choice.form
    singles = [(slot, v) for slot in choice.slots for v in slot.values[:MAX_VALUES]]
    texts = [form, *choice.rivals, *(substituted(form, s, v) for s, v in singles)]
    scores = judge.scores(texts)
    base = scores[0]
    winners: dict[Slot, tuple[str, float]] = {}
    offset = 1 + len(choice.rivals)
    for (slot, value), score in zip(singles, scores[offset:], strict=True):
        if score > winners.get(slot, ("", base))[1]:
            winners[slot] = (value, score)
    if len(winners) > 1:
        combined = form
        for slot in sorted(winners, key=lambda s: s.start, reverse=True):
            combined = substituted(combined, slot, winners[slot][0])
        texts.append(combined)
        scores += judge.scores([combined])
    best = int(np.argmax(scores))
    if scores[best] <= base + MARGIN:
        best = 0
    return Verdict(texts[best], scores[best], base, len(texts))
