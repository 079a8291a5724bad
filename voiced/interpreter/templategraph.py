"""The cell's template sentences as a word graph, for decoding held to them
(`voiced.audio.grammar_decode`): every sentence the templates say, as a path of lower-case
words from the start to an end, with each list's values inlined where it is referenced.

Lists of numbers give their digits ("12", as Whisper writes them). A template with a wildcard
or a list the cell lacks says nothing here (the graph is for commands, and those are not).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hassil import RangeSlotList, SlotList, TextSlotList
from hassil.expression import (
    Alternative,
    Expression,
    ListReference,
    Permutation,
    RuleReference,
    Sentence,
    TextChunk,
)
from hassil.sample import sample_expression

from voiced.audio.grammar_decode import WordGraph, values_heard
from voiced.interpreter.templates import Templates
from voiced.interpreter.vocabulary import plural
from voiced.rules.normalize import numbers_to_digits, words

MAX_SAYINGS = 8
"""Ways of saying one list value kept as the graph's `values` ("(eight|8) ounce": two)."""
MAX_PERMUTED = 4
"""Most items of a permutation ("(a;b;c)") spelt out in every order."""


class _Unsayable(Exception):
    """A template the graph cannot hold (a wildcard, a list that is missing)."""


class _Builder:
    def __init__(self, graph: WordGraph, rules: Mapping[str, Any], lists: Mapping[str, SlotList]):
        self.graph = graph
        self.rules = rules
        self.lists = lists

    def add(self, node: Expression | Sentence, source: int, target: int) -> None:
        """Paths from `source` to `target` that say `node`."""
        graph = self.graph
        if isinstance(node, Sentence):
            self.add(node.expression, source, target)
        elif isinstance(node, TextChunk):
            self._chain([[w] for w in words(node.text)], source, target)
        elif isinstance(node, Alternative):
            for item in node.items:
                self.add(item, source, target)
            if node.is_optional:
                graph.skip(source, target)
        elif isinstance(node, Permutation):
            if len(node.items) > MAX_PERMUTED:
                raise _Unsayable(f"a permutation of {len(node.items)}")
            for order in itertools.permutations(node.items):
                self._sequence(list(order), source, target)
        elif isinstance(node, RuleReference):
            rule = self.rules.get(node.rule_name)
            if rule is None:
                raise _Unsayable(f"no rule <{node.rule_name}>")
            self.add(rule, source, target)
        elif isinstance(node, ListReference):
            self._list(node.list_name, source, target)
        elif hasattr(node, "items"):  # a Sequence (hassil's Group in order)
            self._sequence(list(node.items), source, target)
        else:
            raise _Unsayable(type(node).__name__)

    def _sequence(self, items: list[Expression], source: int, target: int) -> None:
        if not items:
            self.graph.skip(source, target)
            return
        at = source
        for item in items[:-1]:
            following = self.graph.state()
            self.add(item, at, following)
            at = following
        self.add(items[-1], at, target)

    def _chain(self, spelt: list[list[str]], source: int, target: int) -> None:
        """Words one after another (each step any of its words)."""
        if not spelt:
            self.graph.skip(source, target)
            return
        at = source
        for i, choices in enumerate(spelt):
            following = target if i == len(spelt) - 1 else self.graph.state()
            for word in choices:
                self.graph.word(at, word, following)
            at = following

    def _list(self, name: str, source: int, target: int) -> None:
        listed = self.lists.get(name)
        if isinstance(listed, TextSlotList):
            for value in listed.values:
                self.add(value.text_in, source, target)
                for said in itertools.islice(sample_expression(value.text_in), MAX_SAYINGS):
                    self.graph.values.add(tuple(numbers_to_digits(words(said))))
        elif isinstance(listed, RangeSlotList):
            numbers = range(listed.start, listed.stop + 1, listed.step)
            self._chain([[str(n) for n in numbers]], source, target)
        else:
            raise _Unsayable(f"list {{{name}}}")


def word_graph(templates: Templates, lead: tuple[str, ...] = ()) -> WordGraph:
    """Every sentence of the cell's templates, as heard (without apostrophes), each after the
    `lead` words (the wake word, where one is needed)."""
    graph = WordGraph()
    end = graph.state()
    graph.final.add(end)
    opening = 0
    for word in lead:
        following = graph.state()
        graph.word(opening, word, following)
        opening = following
    heard = templates.heard
    for intent in heard.intents.values():
        for data in intent.data:
            builder = _Builder(graph, heard.expansion_rules, {**templates.lists, **data.slot_lists})
            for sentence in data.sentences:
                start = graph.state()
                try:
                    builder.add(sentence, start, end)
                except (_Unsayable, RecursionError):  # a rule that names itself: endless
                    continue
                graph.skip(opening, start)
    return graph


@functools.lru_cache(maxsize=8)
def graph_of(templates: Templates, lead: tuple[str, ...] = ()) -> WordGraph:
    """`word_graph`, built once per cell's templates and lead (a few hundred states, and the
    query asks on every part it hears)."""
    return word_graph(templates, lead)


def may_go_on(templates: Templates, text: str) -> bool:
    """Whether `text` is the start of a longer one of the cell's sentences ("I want a dark
    roast latte" ... "with almond milk"; "I want a latte with" ...), in a cell whose templates
    are every command it takes (`[sentences] closed`): the speaker may not have finished."""
    if not templates.sentences.closed:
        return False
    graph = graph_of(templates)
    states = graph.start
    for word in words(text):
        states = graph.after(states, word)
        if not states:
            return False
    return bool(graph.next_words(states))


@dataclass(frozen=True)
class OffTheSentences:
    """Where words about a closed cell's orders leave its sentences."""

    followed: str
    """The words the sentences took, from the start ("i want a large latte with")."""
    lost_at: str | None
    """The first word no sentence takes there; None: the words stop before a sentence ends."""

    def reason(self) -> str:
        followed = " ".join("I" if word == "i" else word for word in self.followed.split())
        if self.lost_at is None:
            return f'That order is not finished: what comes after "{followed}"?'
        if not followed:  # "a latte please": the words never began an order
            return "That is not an order as I take them: say the whole order"
        return (
            f'That is not an order as I take them: I lost it at "{self.lost_at}" after "{followed}"'
        )


def off_the_sentences(templates: Templates, text: str) -> OffTheSentences | None:
    """Where `text` leaves the sentences of a closed cell (`[sentences] closed`), when it names
    one of the things its templates are about (a value of their own lists: "large", "latte")
    and no sentence takes it whole: a refusal in the grammar's words ("I don't know the word
    'large'", "Where should I run latte?") would send a customer the wrong way. None when the
    cell is not closed, the words name none of those things, or a sentence takes them."""
    if not templates.sentences.closed:
        return None
    said = words(text)
    if not set(said) & _named_things(templates):
        return None
    graph = graph_of(templates)
    walks = [_walk(graph, form) for form in (said, numbers_to_digits(said, oh_after_digit=True))]
    taken, states, form = max(walks, key=lambda walk: walk[0])
    if taken == len(form) and graph.final & states:
        return None
    lost = form[taken] if taken < len(form) else None
    return OffTheSentences(" ".join(form[:taken]), lost)


def _walk(graph: WordGraph, said: list[str]) -> tuple[int, frozenset[int], list[str]]:
    """How many of `said` the graph takes from its start, and the states after them."""
    states = graph.start
    for taken, word in enumerate(said):
        following = graph.after(states, word)
        if not following:
            return taken, states, said
        states = following
    return len(said), states, said


def values_named(templates: Templates, text: str) -> frozenset[tuple[str, ...]]:
    """The values of the templates' lists that `text` names (`grammar_decode.values_heard`)."""
    return values_heard(graph_of(templates), text)


def names_a_thing(templates: Templates, text: str) -> bool:
    """Whether `text` names one of the things the templates' own lists are about."""
    return bool(set(words(text)) & _named_things(templates))


@functools.lru_cache(maxsize=8)
def _named_things(templates: Templates) -> frozenset[str]:
    """The words of the values of the templates' own lists that name things (not amounts)."""
    found: set[str] = set()
    for name in templates.sentences.lists:
        listed = templates.lists.get(name)
        if isinstance(listed, TextSlotList):
            values = [v for v in listed.values if isinstance(v.value_out, str)]
            for value in values:
                for sample in itertools.islice(sample_expression(value.text_in), 4):
                    found.update(w for w in words(sample) if len(w) > 2)
    # Said of more than one ("2 lattes with some switch" had set the speed to 2).
    return frozenset({*found, *(plural(w) for w in found), *(f"{w}s" for w in found)})
