"""The cell's template sentences as a word graph (what decoding held to them may write), and how
a text is read along it token by token."""

from __future__ import annotations

import pytest
from voiced.audio.grammar_decode import Reading, WordGraph
from voiced.rules.normalize import words

from tests.interpreter.helpers import cell, grammar
from voiced.interpreter.templategraph import may_go_on, word_graph
from voiced.interpreter.templates import Templates


def barista_graph(lead: tuple[str, ...] = ()) -> WordGraph:
    return word_graph(Templates(cell("barista"), grammar("barista").vocabulary), lead)


def test_every_example_of_the_barista_templates_is_a_sentence_of_the_graph() -> None:
    templates = Templates(cell("barista"), grammar("barista").vocabulary)
    graph = word_graph(templates)
    examples = templates.examples()
    assert len(examples) >= 10
    unsaid = [e for e in examples if not graph.says(words(e, apostrophes="drop"))]
    assert not unsaid


@pytest.mark.parametrize(
    "said",
    [
        "can i get a small latte",
        "brew a large dark roast double shot americano with a lot of almond milk and brown sugar",
        "id like a 12 ounce cappuccino",
        "id like a twelve ounce cappuccino",
        "make me a triple shot light roast 8 ounce iced mocha with some cream and sweetener",
    ],
)
def test_orders_are_sentences(said: str) -> None:
    assert barista_graph().says(said.split())


@pytest.mark.parametrize(
    "said",
    [
        "can i get a latte with",  # stops where no sentence ends
        "add cheese on the left",  # another cell's command
        "thank you",
        "can i get a latte latte",
        "can i get a small small latte",  # a size said twice
    ],
)
def test_what_no_template_says_is_not(said: str) -> None:
    assert not barista_graph().says(said.split())


def test_a_lead_word_comes_first_and_is_needed() -> None:
    graph = barista_graph(("computer",))
    assert graph.says(["computer", "can", "i", "get", "a", "latte"])
    assert not graph.says(["can", "i", "get", "a", "latte"])


def test_only_the_barista_says_its_sentences_are_every_command_it_takes() -> None:
    """Holding decoding to the templates suits a closed context; the other cells' templates
    are a few extra phrasings beside the grammar."""
    names = ("barista", "sandwich", "blocks", "weld")
    closed = {name: cell(name).sentences.closed for name in names}
    assert closed == {"barista": True, "sandwich": False, "blocks": False, "weld": False}


def read(graph: WordGraph, *pieces: str) -> Reading | None:
    reading: Reading | None = Reading(graph.start)
    for piece in pieces:
        reading = reading.then(graph, piece) if reading is not None else None
    return reading


def test_tokens_are_read_as_whisper_writes_them() -> None:
    graph = barista_graph()
    done = read(graph, " Can", " I", " get", " a", " 12", "-", "ounce", " Amer", "icano", "?")
    assert done is not None and done.may_end(graph)
    apostrophe = read(graph, " I", "'d", " like", " a", " latte", ".")
    assert apostrophe is not None and apostrophe.may_end(graph)


def test_a_word_half_made_may_not_end_the_text_or_leave_the_graph() -> None:
    graph = barista_graph()
    half = read(graph, " Can", " I", " get", " a", " lat")
    assert half is not None and not half.may_end(graph) and not half.ends_word(graph)
    assert half.then(graph, "te") is not None
    assert half.then(graph, "ch") is None  # no word starts "latch"


def test_punctuation_only_ends_a_word() -> None:
    graph = barista_graph()
    assert read(graph, ",") is None  # nothing said yet
    assert read(graph, " Can", ",", ",") is None  # never a text of commas
    assert read(graph, " Can", "''") is None  # an apostrophe is inside a word
    assert read(graph, " Can", ",") is not None


@pytest.mark.parametrize(
    ("said", "goes_on"),
    [
        ("I want a dark roast latte.", True),  # "... with almond milk"
        ("Get me a small, dark roast, americano with some soy milk", True),  # "... and sugar"
        ("I'd like a latte with soy milk and brown sugar", False),  # a sentence ends there
        ("I want a dark roast", True),  # not a whole order yet
        ("I want a latte with", True),
        ("see you later", False),
    ],
)
def test_whether_an_order_may_go_on(said: str, goes_on: bool) -> None:
    templates = Templates(cell("barista"), grammar("barista").vocabulary)
    assert may_go_on(templates, said) is goes_on


def test_only_a_closed_cells_sentences_say_a_command_may_go_on() -> None:
    templates = Templates(cell("sandwich"), grammar("sandwich").vocabulary)
    assert not templates.sentences.closed
    assert not may_go_on(templates, "add bread")


def test_the_graph_knows_the_words_of_each_list_value() -> None:
    values = barista_graph().values
    assert {("iced", "mocha"), ("mocha",), ("20", "ounce"), ("a", "lot", "of")} <= values
    assert ("can", "i", "get") not in values  # an opening is no value
