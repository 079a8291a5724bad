"""voiced.rules.normalize, the one text module: words, folding, number words, fuzzy matching.

Each table holds the cases of the normaliser it replaced (rules, interpreter lexer, audio guards,
wake word, rearrangement targets, LLM resolver), under the options that caller uses.
"""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz
from voiced.rules.normalize import (
    PREFIX_THRESHOLD,
    Apostrophes,
    closest,
    fold,
    fuzzy_prefix,
    normalize,
    numbers_to_digits,
    ranked,
    words,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Computer, add bread.", ["computer", "add", "bread"]),
        ("What's the speed?", ["whats", "the", "speed"]),
        ("it’s `quoted`", ["its", "quoted"]),
        ("move 2.5 mm.", ["move", "2.5", "mm"]),
        ("version 1. and .5 and a.b", ["version", "1", "and", "5", "and", "a", "b"]),
        ("top-left_corner", ["top", "left", "corner"]),
        ("  \t\n ", []),
        ("Café", ["caf"]),
    ],
)
def test_words_as_rules_read_them(text: str, expected: list[str]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    ("text", "apostrophes", "decimals", "expected"),
    [
        # audio guards: apostrophes kept (curly ones straightened), every dot a break
        ("What’s that?", "keep", False, ["what's", "that"]),
        ("Thanks for watching!", "keep", False, ["thanks", "for", "watching"]),
        ("add 2.5 mm", "keep", False, ["add", "2", "5", "mm"]),
        ("it`s", "keep", False, ["it", "s"]),
        # wake word: letters and digits only, as `_after_words` counts them in the raw text
        ("Okay, Nabu, add bread.", "split", False, ["okay", "nabu", "add", "bread"]),
        ("computer's arm", "split", False, ["computer", "s", "arm"]),
        ("2.5", "split", False, ["2", "5"]),
        # the defaults, spelled out
        ("What's 2.5?", "drop", True, ["whats", "2.5"]),
    ],
)
def test_words_options(
    text: str, apostrophes: Apostrophes, decimals: bool, expected: list[str]
) -> None:
    assert words(text, apostrophes=apostrophes, decimals=decimals) == expected


@pytest.mark.parametrize(
    ("text", "breaks", "expected"),
    [
        # LLM resolver: case and spacing only
        ("  Tally   UP ", "", "tally up"),
        ("Add_Layer", "", "add_layer"),
        ("what's up?", "", "what's up?"),
        # rearrangement targets: `_` and `-` are spaces too
        ("Top-Left", "_-", "top left"),
        ("TOP_left  corner", "_-", "top left corner"),
        ("peanut-butter.", "_-", "peanut butter."),
        ("", "_-", ""),
    ],
)
def test_fold(text: str, breaks: str, expected: str) -> None:
    assert fold(text, breaks) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Computer, add bread.", "computer add bread"),
        ("Go to Position Two!", "go to position 2"),
        ("twenty one", "21"),
        ("twenty", "20"),
        ("twenty twelve", "20 12"),
        ("one two three", "1 2 3"),
        ("one oh five", "1 0 5"),
        ("5 oh", "5 0"),
        ("oh no", "oh no"),
        ("one hundred", "1 hundred"),
        ("What's the speed?", "whats the speed"),
        ("move 2.5 mm", "move 2.5 mm"),
        ("  ", ""),
    ],
)
def test_normalize_is_words_and_digits_for_rules(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("twenty five", ["25"]),
        ("three hundred and fifty", ["350"]),
        ("two thousand three hundred", ["2300"]),
        ("one hundred and two and bread", ["102", "and", "bread"]),
        ("three hundred twenty five", ["325"]),
        ("five five", ["5", "5"]),
        ("add bread and cheese", ["add", "bread", "and", "cheese"]),
        ("a hundred", ["a", "100"]),
        ("thousand", ["1000"]),
        ("one oh five", ["1", "oh", "5"]),
        # a tens word takes a unit, never a zero or a teen
        ("twenty zero", ["20", "0"]),
        ("ninety ten", ["90", "10"]),
    ],
)
def test_numbers_to_digits_with_scales_as_the_interpreter_reads(
    said: str, expected: list[str]
) -> None:
    assert numbers_to_digits(said.split(), scales=True) == expected


@pytest.mark.parametrize(
    ("said", "scales", "oh", "expected"),
    [
        ("three hundred", False, False, ["3", "hundred"]),
        ("three hundred", True, False, ["300"]),
        ("one oh five", False, False, ["1", "oh", "5"]),
        ("one oh five", False, True, ["1", "0", "5"]),
        ("oh one", False, True, ["oh", "1"]),
        ("2.5 oh", False, True, ["2.5", "oh"]),
        ("twenty oh", False, True, ["20", "0"]),
    ],
)
def test_numbers_to_digits_options(said: str, scales: bool, oh: bool, expected: list[str]) -> None:
    assert numbers_to_digits(said.split(), scales=scales, oh_after_digit=oh) == expected


@pytest.mark.parametrize(
    ("said", "forms", "threshold", "expected"),
    [
        ("computer add bread", ["computer"], PREFIX_THRESHOLD, ("computer", 1, 100)),
        ("computers add bread", ["computer"], PREFIX_THRESHOLD, ("computer", 1, 94)),
        ("computeher add bread", ["computer"], PREFIX_THRESHOLD, ("computer", 1, 89)),
        # the best score wins: "compute" (93) beats "compute her" (89)
        ("compute her add bread", ["computer"], PREFIX_THRESHOLD, ("computer", 1, 93)),
        ("com puter add", ["computer"], PREFIX_THRESHOLD, ("computer", 2, 100)),
        ("okay nabu add", ["computer", "okay nabu"], PREFIX_THRESHOLD, ("okay nabu", 2, 100)),
        ("ok nabu add", ["okay nabu"], PREFIX_THRESHOLD, ("okay nabu", 2, 86)),
        ("ok nabu add", ["okay nabu"], 90.0, None),
        ("add bread", ["computer"], PREFIX_THRESHOLD, None),
        ("", ["computer"], PREFIX_THRESHOLD, None),
        ("computer", [""], 0.0, None),
        # a tie goes to the earlier form, then to the shorter run
        ("computer", ["computer", "computer"], PREFIX_THRESHOLD, ("computer", 1, 100)),
    ],
)
def test_fuzzy_prefix(
    said: str, forms: list[str], threshold: float, expected: tuple[str, int, int] | None
) -> None:
    hit = fuzzy_prefix(said.split(), forms, threshold)
    found = None if hit is None else (hit.form, hit.size, round(hit.score))
    assert found == expected


@pytest.mark.parametrize(
    ("query", "choices", "cutoff", "expected"),
    [
        ("cancell", ["cancel", "abort"], 86.0, "cancel"),
        ("can", ["cancel", "abort"], 86.0, None),
        ("adding.", ["adding", "bread"], 80.0, "adding"),
        ("ax", ["ab", "ac"], 0.0, "ab"),  # equals: the first
        ("anything", [], 0.0, None),
    ],
)
def test_closest(query: str, choices: list[str], cutoff: float, expected: str | None) -> None:
    found = closest(query, choices, cutoff)
    assert (None if found is None else found[0]) == expected


def test_closest_reads_a_mapping_by_its_keys() -> None:
    assert closest("cancell", {"cancel": "the cancel phrase"}, 80.0) == (
        "cancel",
        pytest.approx(fuzz.ratio("cancell", "cancel")),
    )


def test_ranked_keeps_the_best_few_above_the_cutoff_best_first() -> None:
    found = ranked("brad", ["bead", "bread", "bra", "cheese"], 70.0, limit=2)
    assert [choice for choice, _ in found] == ["bread", "bra"]  # 89, 86; "bead" 75 is third
    assert all(score >= 70.0 for _, score in found)
    assert ranked("brad", ["cheese"], 70.0, limit=4) == []
