"""Seed 000's three-step JSON parsing (direct, block extraction, newline collapse) and seed 001's
markdown fences."""

from __future__ import annotations

import pytest

from voiced.llm.jsonparse import (
    JsonParseError,
    collapse_unescaped_newlines,
    parse_json_object,
    strip_fence,
)

CASES = [
    pytest.param('{"a": 1}', {"a": 1}, "direct", id="plain"),
    pytest.param('  {"a": [1, 2]}\n', {"a": [1, 2]}, "direct", id="whitespace"),
    pytest.param('```json\n{"a": 1}\n```', {"a": 1}, "direct", id="json-fence"),
    pytest.param('```\n{"a": 1}\n```', {"a": 1}, "direct", id="bare-fence"),
    pytest.param('Here is the plan:\n{"a": 1}\nHope that helps.', {"a": 1}, "block", id="prose"),
    pytest.param('Sure! {"a": {"b": "}"}} done', {"a": {"b": "}"}}, "block", id="nested"),
    pytest.param('{"r": "line one\nline two"}', {"r": "line one\nline two"}, "newlines", id="nl"),
    pytest.param(
        'Plan:\n{"r": "a\r\n\tb", "s": "x\\ny"}\nEnd',
        {"r": "a\r\n\tb", "s": "x\ny"},
        "newlines",
        id="prose-and-newlines",
    ),
]


@pytest.mark.parametrize(("text", "expected", "repair"), CASES)
def test_parse_json_object(text: str, expected: dict[str, object], repair: str) -> None:
    parsed = parse_json_object(text)
    assert parsed.data == expected
    assert parsed.repair == repair


@pytest.mark.parametrize(
    "text", ["", "no json here", "[1, 2]", '{"a": }', '{"a": 1', "```json\n```"]
)
def test_total_failure_carries_the_raw_text(text: str) -> None:
    with pytest.raises(JsonParseError) as caught:
        parse_json_object(text)
    assert caught.value.raw == text


def test_collapse_keeps_newlines_between_tokens_and_escaped_quotes() -> None:
    text = '{\n  "a": "say \\"hi\\"\nnow",\n  "b": 2\n}'
    collapsed = collapse_unescaped_newlines(text)
    assert collapsed == '{\n  "a": "say \\"hi\\"\\nnow",\n  "b": 2\n}'


def test_strip_fence_leaves_unfenced_text_alone() -> None:
    assert strip_fence('x ```json {"a": 1}```') == 'x ```json {"a": 1}```'
