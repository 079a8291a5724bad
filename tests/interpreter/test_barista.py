"""The barista cell's sentence templates against Picovoice's coffee-maker context
(tests/data/coffee_maker.yaml): every expression, every slot value, read into the order
composite whose parameters are exactly the labelled slots; and nothing beyond the context."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from voiced.robot.sequence import SequenceStep

from tests.interpreter.helpers import cell, grammar
from voiced.commands.acceptance import checked_plan
from voiced.explain import before_the_interpreter
from voiced.interpreter.templates import Templates
from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir
from voiced.words.review import read_back

CONTEXT = Path(__file__).resolve().parents[1] / "data" / "coffee_maker.yaml"
SAMPLES_PER_EXPRESSION = 5
"""Sentences made from each expression: enough for every slot value to come round (the
milk's 36 are the most; they come in 40 expressions) and under a second to match them all."""

# The cell's names -> the context's slot values (the mapping is one to one: see below).
SIZE = {
    "small cup": "small", "medium cup": "medium", "large cup": "large",
    "8 ounce cup": "eight ounce", "12 ounce cup": "twelve ounce",
    "16 ounce cup": "sixteen ounce", "20 ounce cup": "twenty ounce",
}  # fmt: skip
ROAST = {"light_roast": "light roast", "medium_roast": "medium roast", "dark_roast": "dark roast"}
SHOTS = {"single_shot": "single shot", "double_shot": "double shot", "triple_shot": "triple shot"}
DRINK = {
    "americano": "americano", "cappuccino": "cappuccino", "espresso": "espresso",
    "iced_mocha": "iced mocha", "latte": "latte", "mocha": "mocha", "coffee": "coffee",
    "drip_coffee": "drip coffee", "house_coffee": "house coffee", "iced_coffee": "iced coffee",
}  # fmt: skip
MILK = {
    "milk": "milk", "skim_milk": "skim milk", "whole_milk": "whole milk",
    "soy_milk": "soy milk", "almond_milk": "almond milk", "cream": "cream",
}  # fmt: skip
SUGAR = {"sugar": "sugar", "brown_sugar": "brown sugar", "sweetener": "sweetener"}
AMOUNT = {1.0: "a little bit of", 1.5: "a bit of", 2.5: "some", 3.5: "a lot of", 4.0: "lots of"}
"""Seconds under the tap -> the amount said; without one, the composite's default."""

PARAMS = {"size": ("cup", SIZE), "roast": ("roast", ROAST),
          "numberOfShots": ("shots", SHOTS), "coffeeDrink": ("drink", DRINK)}  # fmt: skip
"""Context slot -> (the composite's parameter, its names -> the slot's values)."""
ADDITIONS = {"milkAmount": ("milk", MILK), "sugarAmount": ("sugar", SUGAR)}
"""Context slot -> (parameter, names -> words); the amount is `<parameter>_amount`."""
COMPOSITES = {
    (False, False): "order_drink",
    (True, False): "order_drink_with_milk",
    (False, True): "order_drink_with_sugar",
    (True, True): "order_drink_with_milk_and_sugar",
}
"""(milk said, sugar said) -> the composite an order calls."""


@dataclass(frozen=True)
class Order:
    """A sentence made from the context, and what it is labelled with."""

    expression: int
    """The index of the expression it comes from."""
    text: str
    slots: Mapping[str, str]
    """Context slot -> value, as the benchmark labels the sentence."""


@cache
def context() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CONTEXT.read_text(encoding="utf-8"))["context"]
    return data


_PART = re.compile(r"\[(?P<choice>[^\]]*)\]|\$(?P<slot>\w+):\w+|(?P<word>[^\s\[$]+)")


def orders() -> list[Order]:
    """SAMPLES_PER_EXPRESSION sentences of every expression, deterministically: each choice
    and each slot takes its values in turn, so every one of them is said somewhere."""
    slots: dict[str, list[str]] = context()["slots"]
    turns: Counter[str] = Counter()

    def next_of(key: str, values: list[str]) -> str:
        turns[key] += 1
        return values[(turns[key] - 1) % len(values)]

    made: list[Order] = []
    for index, expression in enumerate(context()["expressions"]["orderDrink"]):
        for _ in range(SAMPLES_PER_EXPRESSION):
            words: list[str] = []
            labels: dict[str, str] = {}
            for number, part in enumerate(_PART.finditer(expression)):
                if part["choice"] is not None:
                    options = [o.strip() for o in part["choice"].split(",")]
                    words.append(next_of(f"choice {number}", options))
                elif part["slot"] is not None:
                    labels[part["slot"]] = next_of(part["slot"], slots[part["slot"]])
                    words.append(labels[part["slot"]])
                else:
                    words.append(part["word"])
            made.append(Order(index, " ".join(words), labels))
    return made


ORDERS = orders()


def labels_of(step: SequenceStep) -> dict[str, str]:
    """The context's slots a composite call stands for, by the mappings above."""
    params = dict(step.params)
    labels = {slot: names[params[param]] for slot, (param, names) in PARAMS.items()
              if param in params}  # fmt: skip
    for slot, (param, names) in ADDITIONS.items():
        if param in params:
            amount = params.get(f"{param}_amount")
            said = names[params[param]]
            labels[slot] = said if amount is None else f"{AMOUNT[amount]} {said}"
    return labels


def expected_call(order: Order) -> str:
    return COMPOSITES[("milkAmount" in order.slots, "sugarAmount" in order.slots)]


# -- the sample and the mappings ---------------------------------------------------------------


def test_the_sample_says_every_expression_choice_and_slot_value() -> None:
    expressions = context()["expressions"]["orderDrink"]
    assert len(expressions) == 80
    assert {order.expression for order in ORDERS} == set(range(len(expressions)))
    said = Counter(value for order in ORDERS for value in order.slots.values())
    for slot, values in context()["slots"].items():
        assert [v for v in values if not said[v]] == [], slot
    texts = " ".join(order.text for order in ORDERS)
    for choice in ("brew", "can I get", "can I have", "I want", "get me", "give me", "I'd like",
                   "make me", "may I have", " a ", " an "):  # fmt: skip
        assert choice in texts


def test_the_mappings_are_one_to_one_and_cover_every_slot_value() -> None:
    slots = context()["slots"]
    for slot, (_, names) in PARAMS.items():
        assert sorted(names.values()) == sorted(slots[slot]), slot
        assert sorted(names) == sorted(set(names)), slot
    amounts = ["", *(f"{said} " for said in AMOUNT.values())]
    for slot, (_, names) in ADDITIONS.items():
        spoken = [f"{amount}{said}" for said in names.values() for amount in amounts]
        assert sorted(spoken) == sorted(slots[slot]), slot
    assert len(set(AMOUNT.values())) == len(AMOUNT)
    # Every name is one the cell has.
    barista = cell("barista")
    assert set(SIZE) <= set(barista.items())
    assert set(ROAST) | set(MILK) | set(SUGAR) <= set(barista.poses)
    assert set(SHOTS) | set(DRINK) <= set(barista.routines)


# -- the matcher -------------------------------------------------------------------------------


@cache
def matcher() -> Templates:
    return Templates(cell("barista"), grammar("barista").vocabulary)


def test_every_sampled_order_is_read_into_its_composite_with_the_labelled_slots() -> None:
    wrong = []
    for order in ORDERS:
        found = matcher().match(order.text)
        got = (found.step.instruction, labels_of(found.step)) if found else None
        if got != (expected_call(order), dict(order.slots)):
            wrong.append((order.text, got))
    assert wrong == [], f"{len(wrong)} of {len(ORDERS)}: {wrong[:5]}"


@pytest.mark.parametrize(
    ("said", "labels"),
    [
        ("I'd like an eight ounce latte", {"size": "eight ounce", "coffeeDrink": "latte"}),
        ("I’d like a 12 ounce latte.", {"size": "twelve ounce", "coffeeDrink": "latte"}),
        ("Can I get a medium medium roast mocha?",
         {"size": "medium", "roast": "medium roast", "coffeeDrink": "mocha"}),
        ("may I have a coffee with sugar and milk",
         {"coffeeDrink": "coffee", "sugarAmount": "sugar", "milkAmount": "milk"}),
        # People think aloud: "um", "yeah" are no words of the order (an order split by a
        # pause is joined by the query as "May I have a triple shot? Yeah, light roast ...").
        ("Um, can I get a latte?", {"coffeeDrink": "latte"}),
        ("May I have a triple shot? Yeah, light roast, iced mocha.",
         {"numberOfShots": "triple shot", "roast": "light roast", "coffeeDrink": "iced mocha"}),
    ],
)  # fmt: skip
def test_orders_as_a_transcript_writes_them(said: str, labels: dict[str, str]) -> None:
    """Capitals, punctuation, an apostrophe, the sizes in digits: the same words."""
    found = matcher().match(said)
    assert found is not None and labels_of(found.step) == labels


@pytest.mark.parametrize(
    "said",
    [
        "a latte",  # no way of asking
        "brew latte",  # no article
        "I'll have a latte",  # not one of the nine ways
        "brew a large small latte",  # two sizes
        "brew a dark roast latte light roast",  # the roast after the drink
        "brew a latte latte",
        "brew a double shot",  # no drink
        "brew a latte with milk and cream",  # two milks
        "brew a latte with sugar with milk",
        "brew a latte and milk",
        "brew a latte with milk and sugar and sweetener",
        "brew a latte with a lot milk",  # "a lot of"
        "brew a flat white",  # not on the menu
        "brew a latte with oat milk",
    ],
)
def test_nothing_beyond_the_context_is_an_order(said: str) -> None:
    found = matcher().match(said)
    assert found is None, found


# -- the public path: what `voiced interpret --cell barista "..."` does ---------------------------


async def test_every_sampled_order_goes_through_the_interpreter_to_a_checked_plan(
    tmp_path: Path,
) -> None:
    """As the daemon and `voiced interpret`: nothing before the interpreter takes the words
    (a question, a pause, a speed, an undo), the template reads them, the plan compiles."""
    barista = cell("barista")
    scene = barista.initial_scene
    tiers = Interpreter(barista, DataDir(tmp_path), None, LlmSettings(), lambda event: None)
    wrong = []
    for order in ORDERS:
        early = before_the_interpreter(barista, scene, order.text, "computer")
        understood = await tiers.interpret(order.text, scene, (), None)
        meant = understood.interpretation
        validated = checked_plan(barista, scene, meant).interpretation.validated
        [step] = meant.sequence or [SequenceStep("nothing", {})]
        got = (early, meant.source, step.instruction, labels_of(step), validated)
        if got != (None, "template", expected_call(order), dict(order.slots), True):
            wrong.append((order.text, got))
    assert wrong == [], f"{len(wrong)} of {len(ORDERS)}: {wrong[:3]}"


def sampled(instruction: str) -> Iterator[Order]:
    return (order for order in ORDERS if expected_call(order) == instruction)


def test_every_order_composite_is_sampled() -> None:
    assert all(any(sampled(name)) for name in COMPOSITES.values())


def test_an_order_is_read_back_as_the_drink_and_what_goes_in_it() -> None:
    found = matcher().match("can I get a large iced mocha with lots of soy milk and brown sugar")
    assert found is not None
    said = read_back(cell("barista"), [found.step])
    assert said == "I will make an iced mocha with soy milk and brown sugar."


def test_an_order_the_cell_cannot_take_names_the_word_it_does_not_know() -> None:
    # "can I get" is politeness: the refusal names "chai", never "i".
    parsed = grammar("barista").parse("can I get a chai latte", cell("barista").initial_scene, ())
    assert not parsed.success
    said = " ".join(str(x) for x in (parsed.error or "", *parsed.notes))
    assert "have i " not in said and "chai" in said, said


def test_the_speech_to_intent_bench_reads_every_order_as_the_labels_say() -> None:
    # bench.speech_to_intent scores the daemon with its own reading of the cell's values: it
    # must agree with this test's mappings on every sampled order.
    from bench.speech_to_intent import labelled

    for order in ORDERS:
        found = matcher().match(order.text)
        assert found is not None, order.text
        step = {"instruction": found.step.instruction, "params": dict(found.step.params)}
        assert labelled(step) == {"intent": "orderDrink", "slots": labels_of(found.step)}, order
