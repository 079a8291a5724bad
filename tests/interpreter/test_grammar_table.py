"""The grammar table: every phrasing parses to exactly its sequence, which compiles (catching
drift between the grammar and the cell files)."""

from __future__ import annotations

from collections import Counter

import pytest
from voiced.robot.compiler import compile_sequence

from tests.interpreter.helpers import cell, grammar, scene
from tests.interpreter.phrases import CASES, Case


def _id(case: Case) -> str:
    return f"{case.cell}: {case.said}"


def test_the_table_covers_the_three_cells_with_at_least_60_phrasings() -> None:
    per_cell = Counter(case.cell for case in CASES)
    assert len(CASES) >= 60
    assert set(per_cell) == {"sandwich", "weld", "blocks"}
    assert min(per_cell.values()) >= 15
    assert len({(case.cell, case.said) for case in CASES}) == len(CASES), "duplicate phrasing"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_phrase(case: Case) -> None:
    start = scene(case.cell, case.scene)
    result = grammar(case.cell).parse(case.said, scene=start)
    assert result.success, result.error
    got = [(step.instruction, dict(step.params)) for step in result.sequence]
    assert got == [(name, dict(params)) for name, params in case.expected]
    compiled = compile_sequence(cell(case.cell), start, result.sequence)
    assert compiled.ok, compiled.errors
