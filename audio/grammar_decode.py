"""Decoding held to the cell's sentences: Whisper writes only what the templates can say.

Free decoding writes what it hears and the grammar reads the text afterwards; in noise the
opening of an order comes out as "Ruoy", "Burn ice mocha" or "Who a" for "brew a", and no repair
reaches it. A closed-grammar recogniser (Picovoice Rhino) decides instead which of the context's
sentences was said. This is that decision made by Whisper itself: a beam search in which every
step may only take a token that keeps the text on a path of the cell's word graph
(`WordGraph`, built from the templates by `voiced.interpreter.templates`), and the end of the
text only where a sentence may end. Its result is the sentence the audio supports best, with
its log-probability; whether it is a command or talk that the grammar was forced onto is for
the caller to decide (compare it with the free reading's score).

Each step is one batched CTranslate2 `generate` call with every beam's tokens as a forced
prefix (`return_logits_vocab`, as `voiced.audio.judge` scores a reading): there is no cache
between steps, which costs little for the few tokens of a command.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from voiced.audio.guards import once
from voiced.audio.stepdecoder import StepDecoder
from voiced.rules.negation import takes_back
from voiced.rules.normalize import numbers_to_digits, words

TOP_TOKENS = 200
"""Where free decoding leaves the graph, the most likely tokens tried for one it allows."""
MAX_TOKENS = 60
"""Longest sentence decoded (tokens)."""
MAX_CALLS = 12
"""Most decoder calls for one way through a segment (one, and one per correction: an order that
needs more than a dozen is not one the audio supports; each call costs ~7 ms a token here),
and twice the time of that many for all the ways of one segment together (`BATCH_COST`; with
four ways side by side each way's own limit comes first: 23 calls' worth at most)."""
BATCH_COST = 1 / 3
"""The time a call for each way more in a batched call adds, as a share of one call's: four
ways decoded side by side cost about twice one (0.22 s against 0.13 s here)."""
BRANCHES = 4
"""Ways on decoded (to the end, unless one falls behind) where free decoding leaves the graph
at its first token (the opening of an order misheard). Development orders at 6 dB: the right
opener's first token was 0.5-5 nats below the likeliest (" I" -4.1 / " Brew" -4.7; " I" -5.6 /
" Brew" -10.6), or a first word whose tokens go astray ("Can't" for "Can I")."""
BRANCH_NATS = 6.0
"""How much less likely than the best a way's first token may be and still be decoded."""


STEP_SLACK = 4.0
"""How far the step decoder's score of a way may fall below the floor and the way still go
on: its scores are over the graph's tokens only (higher than the model's) but in float32
where CTranslate2's are int8, and the two differ by up to ~0.5 nats a token (a tested
bound of 1)."""


MAX_GAP = 20.0
"""How much less likely (nats) the held sentence may be than the free reading of the same
audio. Talk forced onto the grammar scores 13-160 below it ("Thank you." -> "I want a coffee."
-13, prose -30 and lower), real orders in 6 dB kitchen noise mostly 0-20 below (the coffee
orders' development half, bench/README.md)."""
MIN_LIKENESS = 50.0
"""How alike the held sentence's words and the free reading's must be (rapidfuzz's ratio,
0-100): a misheard order keeps most of its letters ("Through a double shot drip coffee" ->
"Brew a double shot drip coffee"), talk forced onto an order does not ("See you later." ->
"I want a coffee.", 29)."""


def log_softmax(logits: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Log-probabilities from logits, along the last axis (one row per decoder step)."""
    top = logits.max(axis=-1, keepdims=True)
    return np.asarray(logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True)))


def supported(held: Constrained, free_logprob: float, free_text: str) -> bool:
    """The audio supports the held sentence about as well as the free reading, and the two
    are the same words misheard, not talk the grammar was forced onto. A free reading that is
    one sentence written over and over is compared as the sentence once: the repetition is
    Whisper's, not the speaker's."""
    if held.logprob < free_logprob - MAX_GAP:
        return False
    from rapidfuzz import fuzz

    said = " ".join(words(once(free_text)))
    return fuzz.ratio(said, " ".join(words(held.text))) >= MIN_LIKENESS


OPENING_WORDS = 2
"""How many first words of a free reading must be the first words of one of the graph's
sentences for the sentence held to from it to be acted on unasked: an opening ("can I",
"I want", "brew a"). One word was too few: talk that names a drink begins with "I" too
("I already had a mocha with whole milk." had been held to "Can I have a mocha with whole milk"
and made; espeak-ng talk, bench/README.md). Three would send a misheard value after a short
opening ("Brew an ice mocha") to be asked."""


def like_a_sentence(graph: WordGraph, text: str) -> bool:
    """The free reading begins as one of the graph's sentences begins (its first
    `OPENING_WORDS` words, or all of them if fewer): the sentence held to from it may be acted
    on as heard. A question or talk that names a drink ("Was that a large cappuccino?",
    "Thanks for the iced mocha with a lot of brown sugar.") does not; neither does an order
    whose opening was misheard ("Rub it, iced mocha ..."): what is held from them is said back
    first, and made only on a yes."""
    said = words(once(text))
    states = graph.start
    for word in said[:OPENING_WORDS]:
        states = graph.after(states, word)
        if not states:
            return False
    return bool(said)


def worth_holding(graph: WordGraph, text: str) -> bool:
    """Whether decoding held to the graph may find a sentence the free reading missed. Not for
    a reading that names none of the lists' values and begins as no sentence begins ("Thank
    you.", "All right.", "Bye.": talk; on a development slice at 6 dB every such reading's held
    sentence was 9-70 nats below it and unsupported, each decode 0.1-2 s of the next segment's
    wait), nor for
    one that is all of it the start of a sentence not ended ("May I have a light roast?": the
    rest is still to come, and held decoding can only add words nobody said), nor for the rest
    of one ("With lots of speed film.", "And brown sugar.": its first word begins no sentence
    and no value, and the next goes with it as in the sentences; held from a sentence's
    start, an opening and a drink nobody said cost 40-70 nats: never supported, each try
    0.3-1 s)."""
    said = words(once(text))
    if not values_heard(graph, text) and not like_a_sentence(graph, text):
        return False
    if len(said) > 1 and _a_rest(graph, said):
        return False
    states = graph.walk(graph.start, said)
    return not states or graph.ends(states)


def _a_rest(graph: WordGraph, said: Sequence[str]) -> bool:
    # "With a large latte ..." is "brew a" misheard, not a rest: it goes on after an opening.
    first, second = said[0], said[1]
    value_words = {word for value in graph.values for word in value}
    return (
        first not in graph.next_words(graph.start)
        and first not in value_words
        and (first, second) in graph.pairs
        and not _after_an_opening(graph, said[1 : 1 + OPENING_WORDS])
    )


OPENING_DEPTH = 3
"""How many words into a sentence its opening may end ("brew", "brew a", "I want a"; longer
openings lead to the same words as these)."""


def _after_an_opening(graph: WordGraph, said: Sequence[str]) -> bool:
    """`said` goes on as a sentence goes on after its first word, two or three (not from its
    start): "a large latte" after a misheard "brew"."""
    opened: set[int] = set()
    states = graph.start
    for _ in range(OPENING_DEPTH):
        states = frozenset(t for w in graph.next_words(states) for t in graph.after(states, w))
        opened |= states
    return bool(graph.walk(frozenset(opened), said))


def made_unasked(graph: WordGraph, free_text: str, held: str) -> bool:
    """Whether the sentence `held` to from a free reading the grammar read nothing of may be
    made without a question. A reading that begins as no sentence does is an order with its
    opening misheard ("Who a single shot ...", "Run out, mocha ...") or talk about the cell's
    things ("Was that a large cappuccino?"): the audio cannot tell them apart (a real order
    forced onto another opening scores only 6-46 nats lower), so it is read back. Never
    unasked where the words take something back ("I want a large latte, oops, wrong one"):
    the question then quotes them (`Asking.check_hearing`); nor where the held sentence left
    out a value the free reading named beside words no sentence says ("... mocha with latte
    sugar" held without the latte: `plainly_heard` lets it, the speaker decides)."""
    dropped = values_heard(graph, free_text) - values_heard(graph, held)
    return like_a_sentence(graph, free_text) and not takes_back(free_text) and not dropped


def keeps_what_was_heard(held: Constrained, free_text: str, graph: WordGraph) -> bool:
    """Every value of the cell's lists that the free reading heard plainly (`plainly_heard`),
    the held sentence holds too: holding to the sentences mends an opening or a word the cell
    does not know, it never drops what was heard plainly ("Run out, mocha with some sweetener."
    is no "I want a small coffee with some sweetener.")."""
    return plainly_heard(graph, free_text) <= values_heard(graph, held.text)


def values_heard(graph: WordGraph, text: str) -> frozenset[tuple[str, ...]]:
    """The values of the graph's lists that `text` names, said once ("iced coffee" names
    "coffee" too)."""
    said = _digit_words(once(text))
    return frozenset(value for value in graph.values if _within(value, said))


def plainly_heard(graph: WordGraph, text: str) -> frozenset[tuple[str, ...]]:
    """The values `text` names where a sentence of the graph could say them: beside a word
    that one of the sentences says before or after the value (or where a sentence may end
    after it). "... skim milk and latte sweetener." names a latte where no sentence says one
    ("and latte", "latte sweetener"): it is as likely "lots of" misheard, and the held sentence
    need not keep it; "Run out, mocha with ..." says "mocha with" as the sentences do."""
    said = _digit_words(once(text))
    pairs, last = graph.pairs, graph.last_words
    found = set()
    for value in graph.values:
        n = len(value)
        for i in range(len(said) - n + 1):
            if said[i : i + n] != value:
                continue
            before = i > 0 and (said[i - 1], value[0]) in pairs
            after = (value[-1], said[i + n]) in pairs if i + n < len(said) else value[-1] in last
            if before or after:
                found.add(value)
    return frozenset(found)


def _digit_words(text: str) -> tuple[str, ...]:
    return tuple(numbers_to_digits(words(text)))


def _within(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    n = len(part)
    return n > 0 and any(whole[i : i + n] == part for i in range(len(whole) - n + 1))


class WordGraph:
    """A word automaton with empty moves: state 0 is the start; a path from it to a final state
    spells a sentence. States are ints; sets of states are frozensets."""

    def __init__(self) -> None:
        self.values: set[tuple[str, ...]] = set()
        """The words of each value of the lists the sentences name (a drink, a size), numbers
        as digits: what a held sentence must keep where the free reading heard it."""
        self.edges: list[list[tuple[str, int]]] = [[]]
        self.skips: list[list[int]] = [[]]
        self.final: set[int] = set()
        self._after: dict[tuple[frozenset[int], str], frozenset[int]] = {}
        self._next: dict[frozenset[int], frozenset[str]] = {}
        self._prefixes: dict[frozenset[int], frozenset[str]] = {}

    def state(self) -> int:
        self.edges.append([])
        self.skips.append([])
        return len(self.edges) - 1

    def word(self, source: int, word: str, target: int) -> None:
        self.edges[source].append((word, target))

    def skip(self, source: int, target: int) -> None:
        self.skips[source].append(target)

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        todo = list(seen)
        while todo:
            for target in self.skips[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return frozenset(seen)

    @functools.cached_property
    def start(self) -> frozenset[int]:
        return self.closure((0,))

    def after(self, states: frozenset[int], word: str) -> frozenset[int]:
        """The states after `word` (empty: the graph cannot say it here)."""
        key = (states, word)
        found = self._after.get(key)
        if found is None:
            found = self.closure(t for s in states for w, t in self.edges[s] if w == word)
            self._after[key] = found
        return found

    def next_words(self, states: frozenset[int]) -> frozenset[str]:
        found = self._next.get(states)
        if found is None:
            found = frozenset(w for s in states for w, _ in self.edges[s])
            self._next[states] = found
        return found

    def begins_word(self, states: frozenset[int], part: str) -> bool:
        """`part` is the start of a word the graph may say next."""
        prefixes = self._prefixes.get(states)
        if prefixes is None:
            said = self.next_words(states)
            prefixes = frozenset(w[:i] for w in said for i in range(1, len(w) + 1))
            self._prefixes[states] = prefixes
        return part in prefixes

    @functools.cached_property
    def pairs(self) -> frozenset[tuple[str, str]]:
        """Every two words one of the sentences says one after the other."""
        found = set()
        for source in range(len(self.edges)):
            for word, target in self.edges[source]:
                for following in self.next_words(self.closure((target,))):
                    found.add((word, following))
        return frozenset(found)

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """Every word the sentences say."""
        return frozenset(word for edges in self.edges for word, _ in edges)

    @functools.cached_property
    def last_words(self) -> frozenset[str]:
        """Every word a sentence may end with."""
        return frozenset(
            word
            for source in range(len(self.edges))
            for word, target in self.edges[source]
            if self.ends(self.closure((target,)))
        )

    def ends(self, states: frozenset[int]) -> bool:
        return not self.final.isdisjoint(states)

    def walk(self, states: frozenset[int], text: Iterable[str]) -> frozenset[int]:
        """The states after the words from `states` (empty: the graph cannot say them)."""
        for word in text:
            states = self.after(states, word)
            if not states:
                break
        return states

    def says(self, text: Iterable[str]) -> bool:
        """The whole word sequence is a sentence of the graph."""
        return self.ends(self.walk(self.start, text))


CONTRACTED = frozenset({
    "i", "you", "we", "they", "he", "she", "it", "that", "there", "here", "what", "who", "let",
    "where", "how", "when", "why", "would", "should", "could", "must", "might", "o", "y",
    "don", "can", "won", "isn", "aren", "wasn", "weren", "doesn", "didn", "hasn", "haven",
    "hadn", "wouldn", "couldn", "shouldn", "mustn", "needn", "shan", "ain",
})  # fmt: skip
"""The words an apostrophe may follow inside a word ("I'd", "don't", "let's"): the sentences'
words are spelt without one ("id"), so an apostrophe elsewhere ("ice'd", "Brew 'a") would
read as the word without it while the model scores a word nobody says."""

SENTENCE_MARKS = ".?!"
"""End a sentence: written only where one of the graph's may end. Mid-order ("Can I?",
"Make.") they had sent the free decoding after them astray, a decoder call each."""
WORD_MARKS = ",-"
"""May end any word: "a small, dark roast", "light-roast"."""


@dataclass(frozen=True)
class Reading:
    """Where a text stands in the graph: the states after its complete words, and the word
    being spelt (lower case, letters and digits only)."""

    states: frozenset[int]
    partial: str = ""
    joined: bool = False
    """The text ends in a hyphen: the next word is written on without a space."""

    def then(self, graph: WordGraph, piece: str) -> Reading | None:
        """After the token text `piece`, or None if the graph cannot go on so. Case is
        folded, apostrophes dropped (only after a word of `CONTRACTED`), spaces and
        `WORD_MARKS` end a word (as `voiced.rules.normalize.words` reads text),
        `SENTENCE_MARKS` end one where a sentence may end; any other character (quotes,
        brackets) is never written."""
        states, partial = self.states, self.partial
        punctuation = not any(char.isalnum() for char in piece)
        if punctuation and (not partial or not piece.strip("'’")):
            return None  # punctuation only where it ends a word: never "...", "a"
        for char in piece:
            if char.isalnum():
                partial += char.lower()
                if not graph.begins_word(states, partial):
                    return None
                continue
            if char in "'’":
                if partial not in CONTRACTED:
                    return None  # "ice'd", "'a": the graph's words are written without
                continue
            if partial:
                states = graph.after(states, partial)
                if not states:
                    return None
                partial = ""
            if char in SENTENCE_MARKS:
                if not graph.ends(states):
                    return None
            elif not char.isspace() and char not in WORD_MARKS:
                return None
        return Reading(states, partial, piece.endswith("-"))

    def ends_word(self, graph: WordGraph) -> bool:
        """The word being spelt is whole: one the graph may say here."""
        return self.partial in graph.next_words(self.states)

    def may_end(self, graph: WordGraph) -> bool:
        if not self.partial:
            return graph.ends(self.states)
        return graph.ends(graph.after(self.states, self.partial))


@dataclass(frozen=True)
class Constrained:
    """The sentence of the graph the audio supports best."""

    text: str
    logprob: float
    """log P(tokens, end of text | audio) under the model (nats)."""
    tokens: int
    calls: int
    """Decodes it took, counted for each way (one, and one more each time free decoding left
    the graph; ways decoded side by side share a batched call, each counted)."""
    end: float = 0.0
    """log P(end of text | tokens, audio), included in `logprob`."""


def _pieces(tokenizer: Any) -> tuple[str, ...]:
    """Each text token's own text (" ounce", "'d", ",")."""
    return _pieces_of(tokenizer.tokenizer, tokenizer.eot)


@functools.cache
def _pieces_of(vocabulary: Any, eot: int) -> tuple[str, ...]:
    # Keyed on the model's own tokenizer: faster-whisper's `Tokenizer` wrapper is made anew
    # for every segment.
    return tuple(vocabulary.decode([i]) for i in range(eot))


def decode_held(
    model: Any,
    encoded: npt.NDArray[np.float32],
    tokenizer: Any,
    graph: WordGraph,
    branches: int = BRANCHES,
    keep: Callable[[Constrained], bool] = lambda _: True,
    floor: float = -np.inf,
    steps: Stepping | None = None,
) -> Constrained | None:
    """The graph's sentence that greedy decoding held to it gives for the encoded audio
    (`model` is CTranslate2's Whisper; `encoded` its encoder output for one segment, trimmed as
    `Judge` trims it); None if the model gives no sentence of the graph any chance.

    Each call decodes freely from the tokens kept so far to the end of the text and returns
    the distribution at every step of that path; its tokens are kept while the graph allows
    them (the free choice is then the best the graph allows too), and where it leaves the
    graph the best token the graph allows is taken and decoding goes on from there. So a text
    the graph says whole costs one call, and each place the grammar corrects costs one more.
    Where it first leaves the graph, the `branches` likeliest ways on are decoded side by side
    to their ends (unless one falls behind, below), and the likeliest whole sentence is kept:
    a first token is a poor guide to the sentence it begins ("Ruoy, iced mocha": " I" is
    likelier than " brew", but "I want a mocha" is far less likely than "brew an iced mocha").
    Only sentences `keep` keeps count: the likeliest of them is returned (a likelier way to a
    sentence nothing like what was heard, "Clear the counter", does not hide the order it was).

    A way whose log-probability falls below `floor` is given up at once: each token only
    lowers it, so no sentence it leads to could score above the floor (the caller's least
    support, `supported`); most ways that end unsupported are known to be long before their end.

    With `steps`, the decoding is done by `voiced.audio.stepdecoder` (its cache kept within a
    greedy run, only the graph's tokens scored) instead of a CTranslate2 call for each
    correction: the opening is always branched on (its first token need not leave the graph),
    greedy decoding stops where the graph is left, and each sentence reached that could still
    win is scored again by `steps.score` (its words; the end of the text's is the step
    decoder's) before `keep` judges it.
    """
    held = _Held(model, encoded, tokenizer, graph, keep, floor, steps)
    found = held.search(_Path([], Reading(graph.start)), branches)
    return None if found is None else replace(found, calls=held.calls)


@dataclass
class _Live:
    """A way being decoded: its path, the positions of its tokens not scored yet, and the
    calls it took."""

    path: _Path
    unscored: list[int]
    calls: int


class _Held:
    """One segment's held decoding: the model, its audio and the graph, and the calls made."""

    def __init__(
        self, model: Any, encoded: Any, tokenizer: Any, graph: WordGraph,
        keep: Callable[[Constrained], bool], floor: float, steps: Stepping | None = None,
    ) -> None:  # fmt: skip
        self.model, self.encoded, self.tokenizer, self.graph = model, encoded, tokenizer, graph
        self.keep, self.floor, self.steps = keep, floor, steps
        self.pieces = _pieces(tokenizer)
        self.start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
        self.calls = 0
        self.spent = 0.0
        """The decoding time spent, in single calls' worth (`BATCH_COST`)."""
        self.best: Constrained | None = None
        self.reached: list[Constrained] = []
        """Sentences the step decoder reached this round, to be scored again."""

    def search(self, path: _Path, branches: int) -> Constrained | None:
        """The likeliest sentence kept that `path` leads to, branching `branches` ways where
        it first leaves the graph. The ways are decoded side by side, one batched decoder call
        for all of them a round (four ways cost about twice one, here, not four times); once a
        sentence is kept, a way less likely is given up, as below the floor: it could not
        win."""
        live = [_Live(path, [], 0)]
        while live:
            live = [way for way in live if self._may_go_on(way)]
            if not live:
                break
            self.calls += len(live)
            self.spent += 1 + BATCH_COST * (len(live) - 1)
            if self.steps is None:
                prefixes = [way.path.kept for way in live]
                decoded = _decode_from(self.model, self.encoded, self.start, prefixes)
            else:
                decoded = [self._stepped(self.steps, way.path) for way in live]
            after: list[_Live] = []
            for way, (free, rows) in zip(live, decoded, strict=True):
                after += self._step(way, free, rows, branches)
            self._judge_reached()
            live = after
        return self.best

    @property
    def _floor(self) -> float:
        """Below this a way is given up: the floor, less `STEP_SLACK` on the step decoder."""
        return self.floor - (0.0 if self.steps is None else STEP_SLACK)

    def _stepped(self, steps: Stepping, path: _Path) -> tuple[list[int], _Rows]:
        """Greedy decoding after `path` on the step decoder, up to where it leaves the graph
        (that token last, and no row after it: as `_decode_from` gives it, for `_keep_free`),
        or up to the end of the text (its row last). Unlike a CTranslate2 call, every step
        costs: nothing is decoded past the first token the graph does not allow."""
        decoder, eot = steps.decoder, self.tokenizer.eot
        state = decoder.run([*self.start, *path.kept])
        if not path.kept:
            # The opening is always branched on (`BRANCHES`): a first token the graph allows
            # says little more of the sentence than one it does not.
            return [], _Rows(state.rows[-1:], decoder)
        free, reading, cut = list(path.kept), path.reading, True
        while cut and len(free) < len(path.kept) + MAX_TOKENS:
            token = int(decoder.tokens[int(np.argmax(state.rows[-1]))])
            following = None if token == eot else reading.then(self.graph, self.pieces[token])
            if following is None:
                free += [] if token == eot else [token]
                cut = False
            else:
                free.append(token)
                reading = following
                state = decoder.step(state, token)
        rows = state.rows[len(self.start) - 1 :]
        return free, _Rows(rows[: len(free) + (not cut)], decoder)

    def _may_go_on(self, way: _Live) -> bool:
        return (
            way.calls < MAX_CALLS
            and self.spent < MAX_CALLS * 2
            and len(way.path.kept) < MAX_TOKENS
            and way.path.logprob >= self._floor
        )

    def _step(self, way: _Live, free: list[int], rows: _Rows, branches: int) -> list[_Live]:
        """`way` on after a call: the free tokens the graph allows kept, then the end of its
        sentence (`_ended`), or the ways on where the free path left the graph."""
        path, tokenizer, graph = way.path, self.tokenizer, self.graph
        calls = way.calls + 1
        if len(rows) <= len(path.kept):
            return []  # nothing decoded after the prefix (the length limit)
        path.logprob += sum(rows.logprob(at, path.kept[at]) for at in way.unscored)
        left = _keep_free(path, free, rows, graph, tokenizer, self.pieces)
        if path.logprob < self._floor:
            return []
        if isinstance(left, float):
            self._ended(path.done(tokenizer, left, calls))
            return []
        if not left:
            return [_Live(path, [], calls)]  # cut off by the length limit: on from its end
        logp = rows[len(path.kept)]
        ways = _ways_allowed(logp, path.reading, graph, tokenizer)
        # Only the opening is in doubt that way: past it, the rest is heard.
        ways = _branches(ways, 1 if path.kept else branches, tokenizer)
        going: list[_Live] = []
        for on in ways:
            taken = (path.copy() if len(ways) > 1 else path).taking(on, logp, tokenizer)
            if isinstance(taken, Constrained):
                self._ended(replace(taken, calls=calls))
            else:
                going.append(_Live(taken[0], taken[1], calls))
        return going

    def _ended(self, sentence: Constrained) -> None:
        """A sentence reached: judged now, or, on the step decoder, with the others the round
        reaches (`_judge_reached`)."""
        if self.steps is None:
            self._judge([sentence])
        else:
            self.reached.append(sentence)

    def _judge_reached(self) -> None:
        """The step decoder's scores are upper bounds: the sentences a round reached are
        scored again (in one batched call), then judged."""
        # An upper bound below the floor cannot win: not worth a call.
        reached = [sentence for sentence in self.reached if sentence.logprob >= self._floor]
        self.reached = []
        if reached:
            assert self.steps is not None
            said = self.steps.score([sentence.text for sentence in reached])
            self._judge([replace(c, logprob=p + c.end) for c, p in zip(reached, said, strict=True)])

    def _judge(self, reached: list[Constrained]) -> None:
        """Each sentence the best so far if it is kept and likelier; the floor rises to it."""
        for sentence in reached:
            if (self.best is None or sentence.logprob > self.best.logprob) and self.keep(sentence):
                self.best = sentence
                self.floor = max(self.floor, sentence.logprob)


_Way = tuple[float, list[int], "Reading | None"]
"""A way on where free decoding left the graph: its first token's log-probability, its
tokens, and the reading after them (None: the end of the text)."""


@dataclass
class _Path:
    """The tokens held decoding has kept, where they leave the graph, and their score."""

    kept: list[int]
    reading: Reading
    logprob: float = 0.0

    def done(self, tokenizer: Any, end_logprob: float, calls: int) -> Constrained:
        text = tokenizer.decode(self.kept).strip()
        return Constrained(text, self.logprob + end_logprob, len(self.kept), calls, end_logprob)

    def copy(self) -> _Path:
        return _Path(list(self.kept), self.reading, self.logprob)

    def taking(
        self, way: _Way, logp: npt.NDArray[np.float64], tokenizer: Any
    ) -> Constrained | tuple[_Path, list[int]]:
        """The path on along `way`, and where its unscored tokens are; or the sentence, where
        the way is the end of the text."""
        score, tokens, following = way
        if following is None:
            return self.done(tokenizer, score, 0)
        # The first token's log-probability is known; the others' come with the next call.
        self.logprob += float(logp[tokens[0]])
        unscored = list(range(len(self.kept) + 1, len(self.kept) + len(tokens)))
        self.kept += tokens
        self.reading = following
        return self, unscored


def _keep_free(
    path: _Path,
    free: list[int],
    rows: _Rows,
    graph: WordGraph,
    tokenizer: Any,
    pieces: Sequence[str],
) -> float | bool:
    """Keep the free decoding's tokens while the graph allows them. The end-of-text
    log-probability where the free path ends a sentence of the graph; True where it leaves
    the graph (at `len(path.kept)`); False where the length limit cut it off."""
    for at in range(len(path.kept), len(rows)):
        token = free[at] if at < len(free) else tokenizer.eot
        if token == tokenizer.eot and path.reading.may_end(graph):
            return rows.logprob(at, token)
        following = path.reading.then(graph, pieces[token]) if token < tokenizer.eot else None
        if following is None:
            return True
        path.kept.append(int(token))
        path.reading, path.logprob = following, path.logprob + rows.logprob(at, token)
    return False


def _branches(ways: list[_Way], most: int, tokenizer: Any) -> list[_Way]:
    """The likeliest way, and up to `most` - 1 more that begin a word no more than
    `BRANCH_NATS` less likely: a way that only ends the word being spelt (",") is taken when
    it is the likeliest, never tried beside them."""
    if not ways:
        return []
    best = ways[0][0]
    more = [w for w in ways[1:] if w[0] >= best - BRANCH_NATS and _begins_word(w, tokenizer)]
    return [ways[0], *more][: max(1, most)]


def _begins_word(way: _Way, tokenizer: Any) -> bool:
    """The way writes letters or digits (a word), or is the end of the text."""
    return not way[1] or any(char.isalnum() for char in tokenizer.decode(way[1]))


def _ways_allowed(
    logp: npt.NDArray[np.float64],
    reading: Reading,
    graph: WordGraph,
    tokenizer: Any,
) -> list[_Way]:
    """Where free decoding left the graph: the ways on that the graph allows, likeliest first,
    one for each word they begin. The ways are the end of the text where a sentence may end,
    each single token among the `TOP_TOKENS` most likely that ends on a word the graph may say
    here, and each word the graph may say next spelt as the tokenizer spells it (so a word is
    never left half made with no token to finish it). A way is as likely as its first token."""
    pieces = _pieces(tokenizer)
    ways: list[_Way] = []
    if reading.may_end(graph):
        ways.append((float(logp[tokenizer.eot]), [], None))
    text = -logp[: tokenizer.eot]
    likeliest = np.argpartition(text, min(TOP_TOKENS, len(text) - 1))[:TOP_TOKENS]
    for token in likeliest[np.argsort(text[likeliest], kind="stable")]:
        after = reading.then(graph, pieces[token])
        if after is not None and (not after.partial or after.ends_word(graph)):
            ways.append((float(logp[token]), [int(token)], after))
    for tokens in _spellings(tokenizer, reading, graph):
        spelt: Reading | None = reading
        for token in tokens:
            spelt = spelt.then(graph, pieces[token]) if spelt is not None else None
        if spelt is not None:
            ways.append((float(logp[tokens[0]]), tokens, spelt))
    ways.sort(key=lambda way: way[0], reverse=True)
    seen: set[str] = set()
    distinct = []
    for way in ways:
        word = tokenizer.decode(way[1]).strip().lower() if way[1] else ""
        if word not in seen:
            seen.add(word)
            distinct.append(way)
    return distinct


def _spellings(tokenizer: Any, reading: Reading, graph: WordGraph) -> list[list[int]]:
    """The tokens of each word the graph may say next (the rest of the word being spelt; and
    after a whole word, the words that may follow it), lower case and capitalised."""
    found = []
    following = frozenset[str]()
    if reading.partial:
        for word in graph.next_words(reading.states):
            if word.startswith(reading.partial) and word != reading.partial:
                found.append(_spelt(tokenizer, word[len(reading.partial) :]))
        if reading.ends_word(graph):  # or the word is whole, and the next one comes
            following = graph.next_words(graph.after(reading.states, reading.partial))
    else:
        following = graph.next_words(reading.states)
    space = "" if reading.joined else " "
    for word in following:
        found.append(_spelt(tokenizer, space + word))
        found.append(_spelt(tokenizer, space + word.capitalize()))
    return [t for t in found if t]


def _spelt(tokenizer: Any, text: str) -> list[int]:
    return list(_spelt_by(tokenizer.tokenizer, text))


@functools.lru_cache(maxsize=4096)
def _spelt_by(vocabulary: Any, text: str) -> tuple[int, ...]:
    return tuple(vocabulary.encode(text, add_special_tokens=False).ids)


def held_tokens(graph: WordGraph, tokenizer: Any) -> tuple[int, ...]:
    """The tokens the graph's sentences may be written with (as `Reading.then` reads them),
    and the end of the text: the step decoder scores only these. Not a hyphen: where the
    model wants a word no sentence says, a hyphen is often the likeliest token left, and it
    joins the next word on ("Brew-A-Espresso", far less likely than "Brew an espresso")."""
    return _held_tokens(graph, tokenizer.tokenizer, tokenizer.eot)


@functools.lru_cache(maxsize=8)
def _held_tokens(graph: WordGraph, vocabulary: Any, eot: int) -> tuple[int, ...]:
    starts = {word[:i] for word in graph.words for i in range(1, len(word) + 1)}
    inside = {word[i:j] for word in graph.words for i in range(len(word))
              for j in range(i + 1, len(word) + 1)}  # fmt: skip
    marks = SENTENCE_MARKS + WORD_MARKS.replace("-", "")
    found = []
    for token, piece in enumerate(_pieces_of(vocabulary, eot)):
        text = piece.replace("'", "").replace("’", "")
        body = text.strip()
        letters = body.rstrip(marks)
        if not body:
            if text:  # a bare space: the tokenizer writes " iced" as " " then "iced"
                found.append(token)
            continue
        if any(char not in marks for char in body[len(letters) :]):
            continue
        if not letters or (letters.isalnum() and letters.lower() in (
            starts if text.startswith(" ") else inside
        )):  # fmt: skip
            found.append(token)
    return (*found, eot)


class Stepping:
    """Held decoding on `voiced.audio.stepdecoder`: the segment's decoder over the graph's
    tokens, and the log-probability CTranslate2 gives a sentence's words (`score`, the
    caller's `Judge.said`: the step decoder's own are over the graph's tokens only, higher);
    the end of the text's is the step decoder's."""

    def __init__(self, decoder: StepDecoder, score: Callable[[list[str]], list[float]]) -> None:
        self.decoder, self.score = decoder, score


def _decode_from(
    model: Any, encoded: npt.NDArray[np.float32], start: list[int], prefixes: list[list[int]]
) -> list[tuple[list[int], _Rows]]:
    """Greedy decoding after each forced prefix, in one batched call: for each, the tokens
    (prefix first) and, for each step of them and the end after them, the log-probabilities
    of every token."""
    import ctranslate2  # type: ignore[import-untyped]

    audio = np.repeat(encoded, len(prefixes), axis=0) if len(prefixes) > 1 else encoded
    results = model.generate(
        ctranslate2.StorageView.from_array(np.ascontiguousarray(audio)),
        [start + prefix for prefix in prefixes],
        beam_size=1,
        # As in `voiced.audio.judge`: the forced prefix counts twice against max_length.
        max_length=min(448, 2 * max(len(prefix) for prefix in prefixes) + MAX_TOKENS),
        return_logits_vocab=True,
        suppress_blank=False,
        suppress_tokens=[],
    )
    return [(list(result.sequences_ids[0]), _Rows(result.logits[0])) for result in results]


class _Rows:
    """The log-probabilities of each step, worked out from the logits when a step is read
    (most steps of a call are only looked at for one token). With a `decoder`, the rows are
    log-probabilities over its tokens already: spread out to its vocabulary when a whole row is
    read, every other token impossible."""

    def __init__(self, logits: Any, decoder: StepDecoder | None = None) -> None:
        self.logits, self.decoder = logits, decoder
        self._done: dict[int, npt.NDArray[np.float64]] = {}

    def logprob(self, step: int, token: int) -> float:
        """One token's log-probability at `step` (on the step decoder's rows, without
        spreading the row out to the whole vocabulary, 400 kB a row)."""
        if self.decoder is None:
            return float(self[step][token])
        column = self.decoder.column(token)
        return float(self.logits[step][column]) if column >= 0 else -np.inf

    def __len__(self) -> int:
        return len(self.logits)

    def __getitem__(self, step: int) -> npt.NDArray[np.float64]:
        found = self._done.get(step)
        if found is None:
            if self.decoder is None:
                found = log_softmax(np.asarray(self.logits[step], dtype=np.float64))
            else:
                found = np.full(self.decoder.vocabulary, -np.inf)
                found[self.decoder.tokens] = self.logits[step]
            self._done[step] = found
        return found
