"""Calibrated confidences and seed 000's strict mode."""

from __future__ import annotations

import pytest
from voiced.robot.sequence import steps

from tests.interpreter.helpers import grammar, scene
from voiced.interpreter.confidence import (
    band,
    grammar_confidence,
    needs_confirmation,
    phrase_confidence,
    strict_warning,
)
from voiced.interpreter.grammar import interpret
from voiced.interpreter.result import Interpretation


@pytest.mark.parametrize(
    ("snaps", "guesses", "expected"),
    [(0, 0, 0.95), (1, 0, 0.80), (2, 0, 0.75), (0, 1, 0.85), (1, 1, 0.70), (9, 9, 0.40)],
)
def test_grammar_confidence(snaps: int, guesses: int, expected: float) -> None:
    assert grammar_confidence(snaps, guesses) == expected


@pytest.mark.parametrize(
    ("score", "exact", "expected"), [(100, True, 0.98), (100, False, 0.95), (90, False, 0.75),
                                     (95, False, 0.85), (80, False, 0.75)],
)  # fmt: skip
def test_phrase_confidence(score: float, exact: bool, expected: float) -> None:
    assert phrase_confidence(score, 90.0, exact) == expected


def test_bands_follow_seed_000() -> None:
    assert [band(c) for c in (0.95, 0.9, 0.89, 0.75, 0.74, 0.1)] == [
        "HIGH", "HIGH", "MED", "MED", "LOW", "LOW"]  # fmt: skip


def result(confidence: float, creative: bool = False, empty: bool = False) -> Interpretation:
    sequence = () if empty else steps("go_home")
    return Interpretation("x", sequence, confidence=confidence, is_creative=creative)


def test_strict_mode_holds_back_low_confidence_results() -> None:
    assert needs_confirmation(result(0.59), strict=True)
    assert not needs_confirmation(result(0.59), strict=False)
    assert not needs_confirmation(result(0.6), strict=True)
    assert not needs_confirmation(result(0.3, creative=True), strict=True)
    assert not needs_confirmation(result(0.1, empty=True), strict=True)
    assert strict_warning(result(0.55)) == (
        "Strict mode: confidence 0.55 — would request confirmation before executing"
    )


def test_guesses_lower_the_confidence() -> None:
    said = "put bread on both stacks"
    view = {"zones": {"assembly_left": ["bread"], "assembly_fixture": ["meat"]}}
    parsed = grammar("sandwich").parse(said, scene=scene("sandwich", view))
    assert parsed.success and parsed.confidence == 0.85
    assert parsed.notes == (
        "both stacks: assembly_left and assembly_fixture (the two with layers)",
    )


def test_the_interpretation_carries_the_confidence() -> None:
    assert interpret(grammar("sandwich"), "add bread").confidence == 0.95
    assert interpret(grammar("sandwich"), "add chease").confidence == 0.80
    assert interpret(grammar("sandwich"), "add avocado").confidence == 0.1
