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

from voiced.audio.grammar_decode import WordGraph
from voiced.interpreter.templates import Templates
from voiced.rules.normalize import words

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
