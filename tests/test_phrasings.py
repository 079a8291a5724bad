"""The phrasing table (tests/phrasings/*.toml) through the real daemon and simulator.

Every `dev` row must pass. The `test` rows were written before the grammar work on their forms
and are never used to tune it: their pass rate is printed and must not fall below the floor
measured when it was last raised.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.phrasingtable import Case, Runner, TableError, Verdict, load_table, parse_row, quiet_logs
from tests.phrasingtable import run_table as judge_all

TEST_HALF_FLOOR = 0.89
"""The held-out half's pass rate, as last measured: 158/176 (the same rows before the grammar
work: 108/176)."""

pytestmark = pytest.mark.timeout(900)
"""The first test runs the whole table (about 500 daemon sessions: half a minute on two idle
cores, several minutes on a loaded machine); the suite's 120 s per test is too little for it."""

CASES = load_table()
DEV = [case for case in CASES if case.half == "dev"]


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Verdict]:
    return judge_all(CASES)


@pytest.mark.parametrize("case", DEV, ids=[case.name for case in DEV])
def test_dev_phrasing(case: Case, verdicts: dict[str, Verdict]) -> None:
    verdict = verdicts[case.source]
    assert verdict.passed, f"{case.source}: {verdict.why}"


def test_held_out_half_keeps_its_pass_rate(
    verdicts: dict[str, Verdict], capsys: pytest.CaptureFixture[str]
) -> None:
    held_out = [case for case in CASES if case.half == "test"]
    passed = Counter(case.cell for case in held_out if verdicts[case.source].passed)
    total = Counter(case.cell for case in held_out)
    rate = sum(passed.values()) / len(held_out)
    with capsys.disabled():
        cells = ", ".join(f"{cell} {passed[cell]}/{total[cell]}" for cell in sorted(total))
        print(
            f"\nheld-out phrasings: {sum(passed.values())}/{len(held_out)} = {rate:.0%} ({cells})"
        )
    assert rate >= TEST_HALF_FLOOR


def test_the_table_is_big_enough_and_split_in_halves() -> None:
    halves = Counter(case.half for case in CASES if case.cell in ("sandwich", "weld", "blocks"))
    assert halves["dev"] + halves["test"] >= 300
    assert abs(halves["dev"] - halves["test"]) <= len(CASES) // 10


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"cell": "kitchen", "half": "dev", "say": "x", "same_as": "y"}, "cell 'kitchen'"),
        ({"cell": "weld", "half": "train", "say": "x", "same_as": "y"}, "half 'train'"),
        ({"cell": "weld", "half": "dev", "say": "x"}, "exactly one of"),
        ({"cell": "weld", "half": "dev", "say": "x", "same_as": "y", "event": "paused"},
         "exactly one of"),
        ({"cell": "weld", "half": "dev", "say": " ", "event": "paused"}, "no say"),
        ({"cell": "weld", "half": "dev", "say": "x", "event": "paused", "expect": 1}, "unknown"),
    ],
)  # fmt: skip
def test_a_malformed_row_is_named(row: dict[str, object], problem: str) -> None:
    with pytest.raises(TableError, match=f"t.toml:3: {problem}"):
        parse_row(row, "t.toml:3")


def _case(**row: object) -> Case:
    return parse_row({"half": "dev", **row}, "inline")


@pytest.mark.parametrize(
    ("case", "passes"),
    [
        (_case(cell="sandwich", say="add cheese", same_as="add some cheese"), True),
        (_case(cell="sandwich", say="add cheese", same_as="add bread"), False),
        (_case(cell="sandwich", say="add avocado", same_as="add bread"), False),
        (_case(cell="sandwich", say="go home", same_as="go home", before=["add bread"]), True),
        (_case(cell="sandwich", say="go home", same_as="add bread", before=["add bread"]), False),
        (_case(cell="weld", say="what tools do you have", answer_contains=["camera"]), True),
        (_case(cell="weld", say="what tools do you have", answer_contains=["hammer"]), False),
        (_case(cell="weld", say="what tools do you have", event="answer"), True),
        (_case(cell="weld", say="go home", event="answer"), False),
        (_case(cell="weld", say="go home", same_as="go home", before=["add avocado"]), False),
    ],
)  # fmt: skip
def test_the_judge_can_fail(case: Case, passes: bool, tmp_path: Path) -> None:
    """The verdicts above mean something: a different command, an unknown word, a missing
    answer, a wrong event kind and a line before that was not understood all fail."""
    with quiet_logs():
        assert Runner(tmp_path).judge(case).passed is passes


def test_a_table_file_is_read_in_row_order(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(
        '[[case]]\ncell = "weld"\nhalf = "dev"\nsay = "go home"\nevent = "paused"\n\n'
        '[[case]]\ncell = "blocks"\nform = "where"\nhalf = "test"\nsay = "where is it"\n'
        'answer_contains = "red"\n',
        encoding="utf-8",
    )
    first, second = load_table(tmp_path)
    assert (first.source, first.event, second.source) == ("a.toml:1", "paused", "a.toml:2")
    assert (second.form, second.answer_contains) == ("where", ("red",))
