"""The barista cell from the outside: `voiced check-cell` finds nothing wrong, `voiced interpret`
reads an order, and in a session an order makes the drink on the simulator, a question is
answered and stop stops the arm, as in every cell."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.helpers import (
    REPO,
    asked_about_words,
    final_state,
    kinds,
    run_text,
    start_daemon,
    stopped_while_moving,
    voiced,
    voiced_env,
)

CELL_FILE = REPO / "robot" / "cells" / "barista.toml"


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(voiced(*args), capture_output=True, text=True, env=voiced_env(tmp),
                          timeout=60)  # fmt: skip


def test_check_cell_finds_no_problem_in_the_barista_cell(tmp_path: Path) -> None:
    for named in ("barista", str(CELL_FILE)):
        proc = run(tmp_path, "check-cell", named)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.splitlines() == [f"OK: {CELL_FILE}"], proc.stdout
    proc = run(tmp_path, "check-cell", "--json", "barista")
    assert json.loads(proc.stdout)["problems"] == []


def test_interpret_reads_an_order_into_its_composite(tmp_path: Path) -> None:
    said = "I'd like a large dark roast latte with a bit of soy milk and some sugar"
    proc = run(tmp_path, "interpret", "--cell", "barista", said)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    meant = json.loads(proc.stdout)
    assert (meant["source"], meant["validated"]) == ("template", True)
    assert meant["sequence"] == [{
        "instruction": "order_drink_with_milk_and_sugar",
        "params": {"cup": "large cup", "roast": "dark_roast", "drink": "latte",
                   "milk_amount": 1.5, "milk": "soy_milk", "sugar_amount": 2.5, "sugar": "sugar"},
    }]  # fmt: skip


def test_an_order_is_made_and_served_and_a_question_answered(tmp_path: Path) -> None:
    said = ("computer can I get a small double shot cappuccino with almond milk\n\n"
            "computer what positions are there\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "barista", said)
    assert proc.returncode == 0, proc.stderr
    [meant] = kinds(events, "interpretation")
    assert meant["source"] == "template"
    assert [a["topic"] for a in kinds(events, "answer")] == ["positions"]
    state = final_state(events)
    assert state["zones"]["pickup_1"] == ["small cup"]
    assert state["supplies"]["small cup"] == 9
    assert [run["routine"] for run in state["log"]] == ["grind", "double_shot", "cappuccino"]
    assert (state["holding"], state["position"]) == (None, "home")


def test_stop_stops_an_order(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path, "barista")
    events = stopped_while_moving(proc, "computer brew a latte with cream\n\n")
    assert kinds(events, "stopped")
    state = final_state(events)
    assert state["zones"]["pickup_1"] == [] and state["log"] == []


def test_orders_in_one_breath_are_made_one_after_the_other(tmp_path: Path) -> None:
    """Always listening, talk before an order and the next order after one that waited for
    the rest: the talk is dropped aloud, each order is heard from the top of the frames (after
    the one before was accepted) and both drinks are served."""
    said = ("always listen\n\n"
            "so anyway the thing is\n"
            "I want a latte\n"
            "can I have a small mocha\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "barista", said)
    assert proc.returncode == 0, proc.stderr
    assert [e["text"] for e in kinds(events, "submit")] == [
        "I want a latte",
        "can I have a small mocha",
    ]
    assert [e["text"] for e in kinds(events, "dropped")] == ["so anyway the thing is"]
    state = final_state(events)
    assert state["zones"]["pickup_1"] == ["medium cup"]
    assert state["zones"]["pickup_2"] == ["small cup"]


def test_a_stop_after_the_next_order_in_one_breath_drops_it_aloud(tmp_path: Path) -> None:
    said = ("always listen\n\n"
            "I want a latte\n"
            "can I have a small mocha\n"
            "stop\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "barista", said)
    assert proc.returncode == 0, proc.stderr
    assert [e["text"] for e in kinds(events, "submit")] in (["I want a latte"], [])
    # Dropped while it waited for the latte to be accepted, or by the stop from the frames.
    dropped = [e["text"] for e in kinds(events, "dropped")]
    dropped += [text for e in kinds(events, "stopped") for text in e["dropped"]]
    assert dropped == ["can I have a small mocha"]
    assert "can I have a small mocha" in kinds(events, "feedback")[-1]["text"]
    assert final_state(events)["zones"]["pickup_2"] == []


def test_a_question_after_an_order_holds_the_order_back_and_is_answered(tmp_path: Path) -> None:
    """ "I want a latte" ... "do you have decaf?" had made the latte and answered "I don't know
    the word 'have decaf'": whether the order stands is what the question leaves open."""
    said = ("always listen\n\n"
            "I want a latte\n"
            "do you have decaf?\n\n"
            "do you have oat milk?\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "barista", said)
    assert proc.returncode == 0, proc.stderr
    assert [e["text"] for e in kinds(events, "dropped")] == ["I want a latte"]
    assert [a["brief"] for a in kinds(events, "answer")] == [
        "No, there is no decaf here.",
        "No, there is no oat milk here. The milks are milk, cream, skim milk, whole milk, soy "
        "milk and 1 more.",
    ]
    assert not kinds(events, "interpretation")
    assert final_state(events)["log"] == []


def test_talk_after_an_order_leaves_it_said_back_and_made_on_a_yes(tmp_path: Path) -> None:
    """Always listening, "All right." said after an order that waited for its rest had joined
    it and both were refused. Whose words they were cannot be told from typed lines: the
    order is said back and made on the operator's yes; without one, nothing is made."""
    said = ("always listen\n\n"
            "make me an 8 ounce coffee\n"
            "All right.\n\n"
            "yes\n\n"
            "can I get a small latte\n"
            "See you later.\n\n"
            "no\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "barista", said)
    assert proc.returncode == 0, proc.stderr
    assert asked_about_words(events) == [
        'I heard "All right." after "make me an 8 ounce coffee". Shall I do it?',
        'I heard "See you later." after "can I get a small latte". Shall I do it?',
    ]
    state = final_state(events)
    assert state["zones"]["pickup_1"] == ["8 ounce cup"]
    assert state["zones"]["pickup_2"] == []


def test_an_order_beside_a_no_is_asked_about_and_made_on_a_yes(tmp_path: Path) -> None:
    """Always listening, the kitchen's "No, I don't have that one." before an order (or "No, I
    don't know." after it) had joined it and both were refused. The "no" may be the
    operator's about the order, so it is heard on its own and made only on a yes to a
    question that quotes the words."""
    said = ("always listen\n\n"
            "No, I don't have that one.\n"
            "can I get a small latte\n\n"
            "yes\n\n"
            "Don't.\n"
            "make me an 8 ounce coffee\n\n"
            "no\n\n"
            "make me an 8 ounce coffee\n"
            "No, I don't know.\n\n"
            "no\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "barista", said)
    assert proc.returncode == 0, proc.stderr
    assert asked_about_words(events) == [
        'I heard "No, I don\'t have that one." before "can I get a small latte". Shall I do it?',
        'I heard "Don\'t." before "make me an 8 ounce coffee". Shall I do it?',
        'I heard "No, I don\'t know." after "make me an 8 ounce coffee". Shall I do it?',
    ]
    state = final_state(events)
    assert state["zones"]["pickup_1"] == ["small cup"]
    assert state["zones"]["pickup_2"] == []
