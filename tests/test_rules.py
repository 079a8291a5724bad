"""Rules, one short test per phrase (hassil style)."""

from __future__ import annotations

import pytest
from voiced.rules import (
    CHECK_PARENT,
    NO_MATCH,
    CatchAll,
    ExactSet,
    Handled,
    Pattern,
    Prefix,
    Utterance,
    When,
    check_parent,
)


def noop(*_: object) -> None:
    return None


cancel = ExactSet("cancel", ["cancel", "abort"], noop)


@pytest.mark.parametrize("said", ["cancel", "Cancel.", "ABORT!", "cancell", "cancels"])
def test_exact_set_matches(said: str) -> None:
    assert isinstance(cancel.match(Utterance(said)), Handled)


@pytest.mark.parametrize("said", ["cancel the bread", "add bread", "", "can"])
def test_exact_set_rejects(said: str) -> None:
    assert cancel.match(Utterance(said)) is NO_MATCH


def test_exact_set_explains_fuzzy_match() -> None:
    result = cancel.match(Utterance("cancell"))
    assert isinstance(result, Handled)
    assert result.match.why.startswith("fuzzy")
    assert result.match.matched == "cancel"


wake = Prefix("wake", ["computer", "compute her"], noop)


@pytest.mark.parametrize(
    ("said", "rest"),
    [
        ("computer add bread", "add bread"),
        ("Computer, add bread.", "add bread"),
        ("computers add bread", "add bread"),
        ("compute her add bread", "add bread"),
        ("computer", ""),
        ("commuter go home", "go home"),
    ],
)
def test_wake_prefix_tolerates_stt_variants(said: str, rest: str) -> None:
    result = wake.match(Utterance(said))
    assert isinstance(result, Handled), said
    assert result.match.args["rest"] == rest


@pytest.mark.parametrize("said", ["add bread", "go home computer", "commute", ""])
def test_wake_prefix_rejects(said: str) -> None:
    assert wake.match(Utterance(said)) is NO_MATCH


def test_pattern_captures_named_groups() -> None:
    rule = Pattern("goto", r"^go to position (?P<n>\d+)$", noop)
    result = rule.match(Utterance("Go to position three"))
    assert isinstance(result, Handled)
    assert result.match.args == {"n": "3"}


@pytest.mark.parametrize(
    ("said", "matches"),
    [("add bread", True), ("[BLANK_AUDIO]", False), ("uh um", False), ("", False),
     ("(music) hello", True), ("<|nospeech|>", False), ("zero zero zero", True)],
)  # fmt: skip
def test_catch_all_needs_real_words(said: str, matches: bool) -> None:
    result = CatchAll("all", noop).match(Utterance(said))
    assert isinstance(result, Handled) is matches


def test_check_parent_always_hands_down() -> None:
    assert check_parent.match(Utterance("anything")) is CHECK_PARENT
    assert check_parent.name == "check_parent"


def test_when_applies_only_while_condition_holds() -> None:
    state = {"on": False}
    rule = When(lambda: state["on"], CatchAll("all", noop), "always")
    assert rule.match(Utterance("add bread")) is NO_MATCH
    state["on"] = True
    assert isinstance(rule.match(Utterance("add bread")), Handled)
