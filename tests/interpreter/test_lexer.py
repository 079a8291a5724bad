"""The lexer: normalisation, phrases, offsets, units (number words: tests/test_normalize.py)."""

from __future__ import annotations

from tests.interpreter.helpers import grammar
from voiced.interpreter.numbers import split_glued, tidy
from voiced.interpreter.vocabulary import normal_words


def test_glued_units_and_names_come_apart() -> None:
    assert split_glued(["30mm", "b1", "pos2", "2.5cm"]) == ["30", "mm", "b", "1", "pos", "2",
                                                           "2.5", "cm"]  # fmt: skip
    assert normal_words("Move LEFT 30mm, please!") == ["move", "left", "30", "mm", "please"]
    assert tidy(30.0) == 30 and isinstance(tidy(30.0), int) and tidy(2.5) == 2.5


def test_tokens_take_the_longest_phrase_and_drop_fillers() -> None:
    lexed = grammar("sandwich").lexer.lex("Could you put it on the left stack, please")
    assert [t.text for t in lexed.tokens] == ["put", "it", "on", "left stack"]
    assert lexed.said == "could you put it on the left stack please"
    assert [lexed.said[t.start :].split()[0] for t in lexed.tokens] == ["put", "it", "on", "left"]


def test_a_word_can_mean_several_things() -> None:
    (left,) = grammar("sandwich").lexer.lex("left").tokens
    assert left.readings == {"zone": "assembly_left", "direction": "left"}
    (back,) = grammar("blocks").lexer.lex("back").tokens
    assert back.readings == {"site": "back", "direction": "backward"}


def test_units_scale_to_millimetres_and_seconds() -> None:
    g = grammar("sandwich")
    assert g.parse("move up 2 cm").sequence[0].params == {"direction": "up", "distance": 20}
    assert g.parse("wait half a second").sequence[0].params == {"seconds": 0.5}
    assert g.parse("set the speed to 300 mm per second").sequence[0].params == {"speed": 300}
