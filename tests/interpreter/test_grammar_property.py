"""Whatever is said, the grammar answers with a ParseResult (never an exception), and a success
only calls composites the cell has."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.interpreter.helpers import cell, grammar, scene
from voiced.interpreter.grammar import interpret

_EXTRA = ["and", "then", "the", "it", "two", "3", "twice", "on", "to", "all", "both", "more",
          "again", "please", "avocado", "xyzzy", "left", "back", "off", "up", "a bit", "30",
          "mm", "seconds", "when i say", "call that", "means", ","]  # fmt: skip


def _words(name: str) -> list[str]:
    return sorted({" ".join(k) for k in grammar(name).vocabulary.phrases}) + _EXTRA


@pytest.mark.parametrize("name", ["sandwich", "weld", "blocks", "barista"])
def test_any_word_salad_gets_an_answer(name: str) -> None:
    g = grammar(name)
    composites = set(cell(name).instructions())
    start = scene(name)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(_words(name)), min_size=0, max_size=9))
    def check(words: list[str]) -> None:
        text = " ".join(words)
        result = g.parse(text, scene=start)
        if result.success:
            assert result.sequence or result.learning is not None, text
            assert {s.instruction for s in result.sequence} <= composites, text
        else:
            assert result.error is not None and result.error.suggestion, text
        answer = interpret(g, text, scene=start)
        assert answer.sequence or answer.user_feedback, text

    check()
