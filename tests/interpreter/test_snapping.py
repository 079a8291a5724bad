"""Near misses from speech-to-text snap to the cell's vocabulary, and every snap is recorded.

FIELD-NOTES: without biasing, whisper wrote "cheese" as "team"/"key" and "stack" as
"attack"/"tack". Snapping is for names (items, zones, tools...), only when unambiguous, and
never turns a filler or an everyday word into one.
"""

from __future__ import annotations

import pytest

from tests.interpreter.helpers import grammar
from tests.interpreter.phrases import LEFT, layers, s
from voiced.interpreter.confidence import GRAMMAR_SNAPPED
from voiced.interpreter.grammar import interpret

SNAPS = [
    # (cell, said, snaps, expected sequence)
    ("sandwich", "add chease", [("chease", "cheese")], layers("cheese")),
    ("sandwich", "add team", [("team", "cheese")], layers("cheese")),
    ("sandwich", "add key and bread", [("key", "cheese")], layers("cheese", "bread")),
    ("sandwich", "put cheese on the left stock", [("stock", "stack")], (LEFT, *layers("cheese"))),
    ("sandwich", "attack the bread", [("attack", "stack")], layers("bread")),
    ("sandwich", "tack some meat", [("tack", "stack")], layers("meat")),
    ("sandwich", "add meet", [("meet", "meat")], layers("meat")),
    ("sandwich", "add bred", [("bred", "bread")], layers("bread")),
    ("sandwich", "add letuce", [("letuce", "lettuce")], layers("lettuce")),
    ("sandwich", "add the tomatos", [("tomatos", "tomato")], layers("tomato")),
    ("sandwich", "add tomatoe", [("tomatoe", "tomatoes")], layers("tomato")),
    ("sandwich", "ad bread", [("ad", "add")], layers("bread")),
    ("weld", "go to position too", [("position too", "position 2")],
     (s("move_to_position", position="Pos_2"),)),
    ("weld", "inspect position to", [("position to", "position 2")],
     (s("run_routine_at", routine="camera_inspection", position="Pos_2"),)),
    ("weld", "attach the welter", [("welter", "welder")], (s("attach_tool", tool="Welder"),)),
    ("blocks", "pick up the read cube", [("read", "red")], (s("pick", object="red cube"),)),
    ("blocks", "move the blew cube to b1", [("blew", "blue")],
     (s("move_object", object="blue cube", to="B1"),)),
    # The spoken benchmark's confusions (tiny.en, espeak voices).
    ("sandwich", "cheen and tomato", [("cheen", "cheese")], layers("cheese", "tomato")),
    ("sandwich", "add cheat", [("cheat", "cheese")], layers("cheese")),
    ("weld", "well at position 1 and 2", [("well", "weld")],
     (s("run_routine_at", routine="tack_weld", position="Pos_1"),
      s("run_routine_at", routine="tack_weld", position="Pos_2"))),
    ("weld", "impact position 1", [("impact", "inspect")],
     (s("run_routine_at", routine="camera_inspection", position="Pos_1"),)),
]  # fmt: skip


def test_free_layers_is_three_layers_and_free_alone_is_not_a_number() -> None:
    result = grammar("sandwich").parse("free layer on cheese")
    assert result.success, result.error
    assert [dict(step.params) for step in result.sequence] == [{"item": "cheese"}] * 3
    assert not grammar("sandwich").parse("add free bread").success


@pytest.mark.parametrize(("cell", "said", "snaps", "expected"), SNAPS, ids=[x[1] for x in SNAPS])
def test_snap(cell: str, said: str, snaps: list[tuple[str, str]], expected: tuple[object]) -> None:
    result = grammar(cell).parse(said)
    assert result.success, result.error
    assert list(result.snaps) == snaps
    got = [(step.instruction, dict(step.params)) for step in result.sequence]
    assert got == [(name, dict(params)) for name, params in expected]  # type: ignore[misc]
    assert result.confidence == GRAMMAR_SNAPPED


NOT_SNAPPED = [
    # A word of the cell's own vocabulary is never "corrected": tack is a weld verb.
    ("weld", "tack weld position 1"),
    # Fillers and everyday words stay what they are.
    ("sandwich", "please could you add the bread now thanks"),
    ("sandwich", "add avocado"),
    ("sandwich", "add pickles"),  # near "piles" (a noun), but nouns are not snap targets
    ("sandwich", "make lunch"),  # near the verb "launch", but verbs are not snap targets
    ("sandwich", "put cheese on the plate"),  # "plate" is near "place"
    ("blocks", "key"),  # the sandwich confusion table only applies where "cheese" exists
    # Ambiguous: as near "downwards" (82) as "upwards" (80).
    ("sandwich", "move dopwards"),
]


@pytest.mark.parametrize(("cell", "said"), NOT_SNAPPED, ids=[x[1] for x in NOT_SNAPPED])
def test_no_snap(cell: str, said: str) -> None:
    assert grammar(cell).parse(said).snaps == ()


def test_the_snap_is_surfaced_in_the_interpretation() -> None:
    result = interpret(grammar("sandwich"), "add chease and bred")
    assert result.interpretation == (
        "Add cheese and bread. (heard 'chease' as 'cheese') (heard 'bred' as 'bread')"
    )
    assert result.confidence == 0.75


def test_snaps_are_recorded_on_failures_too() -> None:
    result = grammar("sandwich").parse("add chease and avocado")
    assert not result.success
    assert result.snaps == (("chease", "cheese"),)
