"""Decoding held to a word graph, against a hand-written model whose preferences are known: which
tokens are kept, where the graph corrects the free path, how many decoder calls that takes, and
that the score is the log-probability of exactly the tokens written and the end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from voiced.audio.grammar_decode import (
    MAX_CALLS,
    Constrained,
    Reading,
    WordGraph,
    _spellings,
    decode_held,
    keeps_what_was_heard,
    like_a_sentence,
    made_unasked,
    supported,
    worth_holding,
)

PIECES = (" can", " i", " get", " a", " latte", " mocha", " hot", " chocolate", ".", " lat", "te")
EOT = len(PIECES)
SOT, NO_TIMESTAMPS = EOT + 1, EOT + 2


def ids(*pieces: str) -> list[int]:
    return [PIECES.index(p) for p in pieces]


class Vocabulary:
    """The model's own tokenizer (what faster-whisper's wrapper holds as `.tokenizer`); it
    spells no word with a piece in `apart`."""

    def __init__(self, apart: frozenset[str] = frozenset()) -> None:
        self.apart = apart

    def decode(self, tokens: list[int]) -> str:
        return "".join(PIECES[t] for t in tokens if t < EOT)

    def encode(self, text: str, add_special_tokens: bool = False) -> Any:
        found, rest = [], text
        while rest:  # longest piece first, as a BPE would end up
            fits = [p for p in PIECES if rest.startswith(p) and p not in self.apart]
            piece = max(fits, key=len, default=None)
            if piece is None:
                return _Encoded([])
            found.append(PIECES.index(piece))
            rest = rest[len(piece) :]
        return _Encoded(found)


@dataclass
class _Encoded:
    ids: list[int]


class Tokenizer:
    """faster-whisper's `Tokenizer` wrapper, as much of it as decoding uses."""

    eot = EOT
    sot_sequence = (SOT,)
    no_timestamps = NO_TIMESTAMPS

    def __init__(self, vocabulary: Vocabulary | None = None) -> None:
        self.tokenizer = vocabulary or Vocabulary()

    def decode(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens)


@dataclass
class _Result:
    sequences_ids: list[list[int]]
    logits: list[list[np.ndarray]]


class Hears:
    """A model that hears `heard` (token ids), position by position whatever came before, with
    `second` as its second guess at some positions; it ends the text after `heard`."""

    def __init__(self, heard: list[int], second: dict[int, int] | None = None) -> None:
        self.heard = heard
        self.second = second or {}
        self.calls: list[list[int]] = []
        self.batches: list[int] = []

    def row(self, at: int) -> np.ndarray:
        row = np.zeros(NO_TIMESTAMPS + 1)
        row[PIECES.index(".")] = -3.0  # a full stop mid-sentence is unlikely, as in Whisper
        row[self.heard[at] if at < len(self.heard) else EOT] = 5.0
        if at in self.second:
            row[self.second[at]] = 3.0
        return row

    def generate(self, features: Any, prompts: list[list[int]], **options: Any) -> list[_Result]:
        assert features.shape[0] == len(prompts)  # the audio once for each prompt of a batch
        self.batches.append(len(prompts))
        results = []
        for prompt in prompts:
            prefix = prompt[2:]  # after the start of transcript and no-timestamps tokens
            self.calls.append(list(prefix))
            tokens = list(prefix)
            while len(tokens) < 40 and int(np.argmax(self.row(len(tokens)))) != EOT:
                tokens.append(int(np.argmax(self.row(len(tokens)))))
            results.append(_Result([tokens], [[self.row(at) for at in range(len(tokens) + 1)]]))
        return results

    def logp(self, at: int, token: int) -> float:
        row = self.row(at)
        return float(row[token] - np.log(np.exp(row).sum()))


def graph_of(*sentences: str) -> WordGraph:
    graph = WordGraph()
    end = graph.state()
    graph.final.add(end)
    for sentence in sentences:
        at = 0
        words = sentence.split()
        for i, word in enumerate(words):
            following = end if i == len(words) - 1 else graph.state()
            graph.word(at, word, following)
            at = following
    return graph


ORDERS = graph_of("can i get a latte", "can i get a mocha")
ENCODED = np.zeros((1, 4, 2), dtype=np.float32)


def test_a_sentence_of_the_graph_heard_whole_costs_one_call_and_scores_its_tokens() -> None:
    heard = ids(" can", " i", " get", " a", " latte")
    model = Hears(heard)
    held = decode_held(model, ENCODED, Tokenizer(), ORDERS)
    assert held is not None and held.text == "can i get a latte" and held.calls == 1
    expected = sum(model.logp(at, t) for at, t in enumerate(heard)) + model.logp(5, EOT)
    assert held.logprob == pytest.approx(expected)


def test_where_the_free_path_leaves_the_graph_the_best_word_it_allows_is_taken() -> None:
    heard = ids(" can", " i", " get", " a", " hot", " chocolate")
    model = Hears(heard, second={4: PIECES.index(" mocha")})
    held = decode_held(model, ENCODED, Tokenizer(), ORDERS)
    assert held is not None and held.text == "can i get a mocha"
    # Past the opening, the best way is taken: one call more.
    assert held.calls == 2 and model.calls[1] == ids(" can", " i", " get", " a", " mocha")
    said = ids(" can", " i", " get", " a", " mocha")
    expected = sum(model.logp(at, t) for at, t in enumerate(said)) + model.logp(5, EOT)
    assert held.logprob == pytest.approx(expected)


def test_where_the_free_path_first_leaves_the_graph_the_likeliest_sentence_wins() -> None:
    # The opening misheard ("hot" for "can"): the graph's likeliest first word (" i", the
    # model's second guess there) begins a sentence the rest of the audio does not support;
    # " can", less likely alone, begins the one it does.
    heard = ids(" hot", " i", " get", " a", " latte")
    model = Hears(heard, second={0: PIECES.index(" i")})
    graph = graph_of("i get a latte", "can i get a latte")
    held = decode_held(model, ENCODED, Tokenizer(), graph)
    assert held is not None and held.text == "can i get a latte"
    greedy = decode_held(Hears(heard, second={0: PIECES.index(" i")}), ENCODED, Tokenizer(),
                         graph, branches=1)  # fmt: skip
    assert greedy is not None and greedy.text == "i get a latte"
    assert held.logprob > greedy.logprob
    # A likelier sentence the caller does not keep (nothing like what was heard) does not
    # hide the one it keeps.
    kept = decode_held(Hears(heard, second={0: PIECES.index(" i")}), ENCODED, Tokenizer(),
                       graph, keep=lambda c: c.text.startswith("i "))  # fmt: skip
    assert kept is not None and kept.text == "i get a latte"
    assert decode_held(Hears(heard), ENCODED, Tokenizer(), graph, keep=lambda c: False) is None


def test_a_way_that_falls_below_the_floor_is_given_up_before_its_end() -> None:
    """Each token only lowers a way's log-probability: a way below the floor (the least
    support the caller would accept) cannot end above it, so it is dropped where it falls,
    without the calls to its end; a way above it ends as it would have."""
    heard = ids(" can", " i", " get", " a", " hot", " chocolate")
    mocha = {4: PIECES.index(" mocha")}
    whole = decode_held(Hears(heard, second=mocha), ENCODED, Tokenizer(), ORDERS)
    assert whole is not None and whole.text == "can i get a mocha" and whole.calls == 2
    above = decode_held(Hears(heard, second=mocha), ENCODED, Tokenizer(), ORDERS,
                        floor=whole.logprob - 0.01)  # fmt: skip
    assert above == whole
    # Below the floor once " mocha" is taken for " hot": no second call to its end.
    model = Hears(heard, second=mocha)
    said = ids(" can", " i", " get", " a", " mocha")
    taken = sum(model.logp(at, t) for at, t in enumerate(said))
    assert decode_held(model, ENCODED, Tokenizer(), ORDERS, floor=taken + 0.01) is None
    assert len(model.calls) == 1


def test_a_way_less_likely_than_a_sentence_already_kept_is_not_decoded_to_its_end() -> None:
    # The opening misheard ("hot" for "can"): " can" is the model's second guess there and
    # leads to the sentence heard; " i", the third, begins a sentence that cannot be likelier
    # once "can i get a latte" is kept, and is given up there (it had taken three calls more).
    heard = ids(" hot", " i", " get", " a", " latte")
    graph = graph_of("i get a latte", "can i get a latte")
    model = Hears(heard, second={0: PIECES.index(" can")})
    held = decode_held(model, ENCODED, Tokenizer(), graph)
    assert held is not None and held.text == "can i get a latte"
    # Both ways are decoded side by side (one batched call); " i" is dropped after it.
    assert [prefix[:1] for prefix in model.calls] == [[], ids(" can"), ids(" i")]
    assert model.batches == [1, 2]
    # A way kept is not given up for one the caller does not keep.
    model = Hears(heard, second={0: PIECES.index(" can")})
    kept = decode_held(model, ENCODED, Tokenizer(), graph, keep=lambda c: c.text.startswith("i"))
    assert kept is not None and kept.text == "i get a latte"


def test_a_sentence_mark_is_written_only_where_a_sentence_may_end() -> None:
    """ "Can I?" or "Make." mid-order had sent the free decoding after them astray (a decoder
    call each); a comma or a hyphen may end any word, quotes and brackets none."""
    start = Reading(ORDERS.start)

    def read(*pieces: str) -> Reading | None:
        reading: Reading | None = start
        for piece in pieces:
            reading = reading.then(ORDERS, piece) if reading is not None else None
        return reading

    assert read(" can", " i", "?") is None
    assert read(" can", " i", ".") is None
    assert read(" can", " i", ",", " get") is not None
    assert read(" can", " i", " get", " a", " latte", ".") is not None
    assert read(" can", " i", " get", " a", " latte", "?") is not None
    assert read(" can", ' "', " i") is None and read(" can", " (i") is None
    joined = read(" can", "-")
    assert joined is not None and joined.joined and not read(" can", "-", "i").joined


def test_an_apostrophe_is_written_only_inside_a_contraction() -> None:
    """The sentences' words are spelt without apostrophes ("id" for "I'd"): "ice'd" read as
    "iced" and "Brew 'a" as "brew a" while the model scored words nobody says."""
    graph = graph_of("id like an iced latte", "brew a latte")

    def read(*pieces: str) -> Reading | None:
        reading: Reading | None = Reading(graph.start)
        for piece in pieces:
            reading = reading.then(graph, piece) if reading is not None else None
        return reading

    assert read(" I", "'d", " like", " an", " iced") is not None
    assert read(" I", "'d", " like", " an", " ice", "'d") is None
    assert read(" brew", " 'a") is None and read(" brew", " a") is not None


class ByCharacter:
    """A vocabulary that spells text a character a token (the character's code)."""

    def encode(self, text: str, add_special_tokens: bool = False) -> Any:
        return _Encoded([ord(char) for char in text])


def test_after_a_hyphen_the_next_word_is_spelt_on_without_a_space() -> None:
    tokenizer = Tokenizer(ByCharacter())  # type: ignore[arg-type]
    after_a: Reading | None = Reading(ORDERS.start)
    for piece in (" can", " i", " get", " a"):
        after_a = after_a.then(ORDERS, piece) if after_a is not None else None
    assert after_a is not None
    joined = after_a.then(ORDERS, "-")
    assert joined is not None and joined.joined

    def spelt(text: str) -> list[int]:
        return [ord(char) for char in text]

    assert spelt("latte") in _spellings(tokenizer, joined, ORDERS)
    assert spelt(" latte") not in _spellings(tokenizer, joined, ORDERS)
    assert spelt(" latte") in _spellings(tokenizer, after_a, ORDERS)


def test_a_word_spelt_in_two_tokens_is_scored_once_for_each() -> None:
    """Where the graph corrects to a word the tokenizer spells in two tokens (" lat" "te"),
    the second token's log-probability comes from the next call, and only once."""
    heard = ids(" can", " i", " get", " a", " hot")
    model = Hears(heard, second={4: PIECES.index(" lat")})
    split = Tokenizer(Vocabulary(apart=frozenset({" latte"})))
    held = decode_held(model, ENCODED, split, graph_of("can i get a latte"))
    assert held is not None and held.text == "can i get a latte"
    said = ids(" can", " i", " get", " a", " lat", "te")
    expected = sum(model.logp(at, t) for at, t in enumerate(said)) + model.logp(6, EOT)
    assert held.logprob == pytest.approx(expected)


def test_a_graph_the_model_gives_no_way_into_gives_nothing_and_stops() -> None:
    model = Hears(ids(" hot", " chocolate"))
    assert decode_held(model, ENCODED, Tokenizer(), graph_of("make me a tea")) is None
    assert len(model.calls) <= MAX_CALLS


def test_a_free_reading_written_over_and_over_is_compared_as_the_sentence_once() -> None:
    held = Constrained("can i get a large medium roast cappuccino with whole milk", -20.0, 14, 2)
    looped = " ".join(["Can I put a large medium roast cappuccino with whole milk?"] * 3)
    assert supported(held, -18.0, looped)
    # Talk stays talk however often it is written.
    chatter = " ".join(["We're going to have everybody else, take a look."] * 3)
    assert not supported(held, -18.0, chatter)


def test_a_held_sentence_keeps_every_value_the_free_reading_heard() -> None:
    graph = graph_of("can i get a latte", "can i get a mocha", "can i get an iced mocha",
                     "can i get a 20 ounce latte with lots of sugar")  # fmt: skip
    graph.values |= {("latte",), ("mocha",), ("iced", "mocha"), ("20", "ounce"), ("sugar",)}

    def held(text: str) -> Constrained:
        return Constrained(text, -10.0, 5, 1)

    # The opening mended, the drink kept ("iced mocha" holds the "mocha" heard).
    assert keeps_what_was_heard(held("can i get an iced mocha"), "Rub it, ice mocha.", graph)
    # A drink heard plainly is never swapped for another.
    assert not keeps_what_was_heard(held("can i get a latte"), "Run out, mocha.", graph)
    # Numbers as words or digits are the same value.
    assert keeps_what_was_heard(held("can i get a twenty ounce latte"), "Get a 20 ounce latte",
                                graph)  # fmt: skip
    assert not keeps_what_was_heard(held("can i get a latte"), "Get a 20 ounce latte", graph)
    # A value among words no sentence puts beside it is as likely another word misheard
    # ("lots of" as "latte"): the held sentence need not keep it.
    heard = "Can I get a 20 ounce mocha with latte sugar?"
    assert not keeps_what_was_heard(held("can i get a 20 ounce latte"), heard, graph)  # sugar
    assert keeps_what_was_heard(held("can i get a 20 ounce mocha with lots of sugar"), heard, graph)


def test_only_a_reading_that_begins_as_a_sentence_may_be_held_unasked() -> None:
    graph = graph_of("brew an iced mocha with a lot of sugar", "can i get a latte",
                     "i want a mocha")  # fmt: skip
    assert like_a_sentence(graph, "Can I get a lot tea?")  # begins as one
    assert like_a_sentence(graph, "Brew an ice mocha")  # a value misheard after the opening
    assert like_a_sentence(graph, "Can I")  # all of it is an opening
    # One word in common is no opening: talk begins with "I" too.
    assert not like_a_sentence(graph, "I already had a mocha with a lot of sugar.")
    assert not like_a_sentence(graph, "Brew 8, iced mocha with a lot of sugar.")
    # Talk and questions that end as an order ends, and so an order with its opening misheard.
    assert not like_a_sentence(graph, "Thanks for the iced mocha with a lot of sugar.")
    assert not like_a_sentence(graph, "Was that a large cappuccino?")
    assert not like_a_sentence(graph, "Rub it, iced mocha with a lot of sugar.")
    assert not like_a_sentence(graph, "Was that a capital key note?")
    assert not like_a_sentence(graph, "Is the mocha iced?")
    assert not like_a_sentence(graph, "Oat milk latte.")


def test_decoding_is_held_only_where_it_may_find_a_sentence_the_free_reading_missed() -> None:
    graph = graph_of("brew a single shot latte with skim milk", "can i get a latte",
                     "i want a light roast mocha",
                     "can i get a latte with a bit of sugar")  # fmt: skip
    graph.values = {("latte",), ("mocha",), ("single", "shot"), ("light", "roast"),
                    ("skim", "milk")}  # fmt: skip
    assert worth_holding(graph, "Prune, single shot latte with skin milk.")  # values heard
    assert worth_holding(graph, "Can I get a lot tea?")  # begins as a sentence
    assert worth_holding(graph, "Can I get a latte?")  # whole (the grammar refused it)
    # Talk: no value, no opening.
    assert not worth_holding(graph, "Thank you.")
    assert not worth_holding(graph, "All right.")
    assert not worth_holding(graph, "")
    # The start of a sentence not ended: its rest is still to come.
    assert not worth_holding(graph, "I want a light roast?")
    # The rest of one: held from a sentence's start it would need an opening nobody said.
    assert not worth_holding(graph, "With skim milk.")
    # An order whose opening the noise swallowed begins with a value: held, and asked; so
    # is one whose opening was misheard as a word the sentences say later ("with" for "brew").
    assert worth_holding(graph, "Single shot latte with skin milk.")
    assert worth_holding(graph, "With a single shot latte with skim milk.")


def test_a_held_sentence_is_made_unasked_only_from_an_opening_with_every_value_kept() -> None:
    graph = graph_of("can i get a 20 ounce latte with lots of sugar",
                     "can i get a 20 ounce mocha with lots of sugar")  # fmt: skip
    graph.values |= {("latte",), ("mocha",), ("20", "ounce"), ("sugar",)}
    held = "can i get a 20 ounce mocha with lots of sugar"
    assert made_unasked(graph, "Can I get a 20 ounce mocha with lots of sugars?", held)
    # Begun as no sentence begins: the audio cannot tell a misheard order from talk.
    assert not made_unasked(graph, "Was that a 20 ounce mocha with lots of sugar?", held)
    # Taken back: asked, the words quoted.
    assert not made_unasked(graph, "Can I get a 20 ounce mocha with lots of sugar, oops", held)
    # A value left out ("latte" beside words no sentence puts there): the speaker decides.
    assert not made_unasked(graph, "Can I get a 20 ounce mocha with latte sugar?", held)


class StepsOf:
    """A step decoder over every text token and the end, giving `Hears`'s rows: what
    `voiced.audio.stepdecoder.StepDecoder` gives held decoding, counting what it runs."""

    def __init__(self, model: Hears) -> None:
        self.model = model
        self.tokens = np.arange(EOT + 1)
        self.vocabulary = EOT + 1
        self.positions: list[int] = []
        """The last text position each run or step reached."""

    def column(self, token: int) -> int:
        return token if 0 <= token <= EOT else -1

    def _rows(self, length: int) -> list[np.ndarray]:
        # After the start (two tokens), position i's row is the text's token i + 1 - 2.
        rows = []
        for i in range(length):
            row = self.model.row(max(i - 1, 0))[: EOT + 1]
            rows.append(row - np.log(np.exp(row).sum()))
        return rows

    def run(self, sequence: list[int]) -> Any:
        self.positions.append(len(sequence) - 2)
        return _StepState(np.array(self._rows(len(sequence))))

    def step(self, state: Any, token: int) -> Any:
        self.positions[-1] += 1
        return _StepState(np.array(self._rows(len(state.rows) + 1)))


@dataclass
class _StepState:
    rows: np.ndarray


def test_on_a_step_decoder_held_decoding_finds_what_it_finds_on_ctranslate2() -> None:
    """The same sentence as a CTranslate2 call per correction, scored by the caller's exact
    scoring (`Stepping.score`) plus the step decoder's end of the text; nothing decoded past
    the first token the graph does not allow."""
    from voiced.audio.grammar_decode import Stepping

    heard = ids(" can", " i", " get", " a", " hot", " chocolate")
    model = Hears(heard, second={4: PIECES.index(" mocha")})
    steps = StepsOf(model)

    def exact(texts: list[str]) -> list[float]:
        said = [Vocabulary().encode(" " + text).ids for text in texts]
        return [sum(model.logp(at, t) for at, t in enumerate(tokens)) for tokens in said]

    held = decode_held(Hears(heard), ENCODED, Tokenizer(), ORDERS, steps=Stepping(steps, exact))  # type: ignore[arg-type]
    assert held is not None and held.text == "can i get a mocha"
    said = ids(" can", " i", " get", " a", " mocha")
    # The end's log-probability is the step decoder's (over its tokens only).
    end = model.row(5)[: EOT + 1]
    end = end[EOT] - np.log(np.exp(end).sum())
    expected = sum(model.logp(at, t) for at, t in enumerate(said)) + end
    assert held.logprob == pytest.approx(expected) and held.end == pytest.approx(end)
    # The free path leaves the graph at " hot" (text position 4): never decoded past it.
    assert max(steps.positions) <= len(said)
