"""Failures: seed 003's structured objects with the right type, a suggestion, and a hint for the
LLM tier; seed 000's answer to an impossible command."""

from __future__ import annotations

import pytest
from voiced.robot.sequence import steps

from tests.interpreter.helpers import grammar, scene
from voiced.interpreter.grammar import interpret
from voiced.interpreter.vocabulary import normal_words

FAILURES = [
    # (cell, said, error_type, token, fallback)
    ("sandwich", "add avocado", "semantic_failure", "avocado", "none"),
    # Counts past MAX_REPEATS: three million steps stalled the daemon, 10^12 ran out of memory.
    ("sandwich", "add 3000000 layers of cheese", "semantic_failure", "cheese", "none"),
    ("sandwich", "add 1000000000000 layers of cheese", "semantic_failure", "cheese", "none"),
    ("sandwich", "add bread 500 times", "semantic_failure", "bread", "none"),
    ("sandwich", "add pickles and cheese", "semantic_failure", "pickles", "none"),
    ("sandwich", "put the big sausage on the left", "semantic_failure", "big sausage", "interpret"),
    ("sandwich", "tally the bread", "lexical_failure", "tally", "resolve_phrase"),
    ("sandwich", "open the gripper", "lexical_failure", "open", "resolve_phrase"),
    ("sandwich", "add", "syntax_error", "add", "none"),
    ("sandwich", "add bread 7", "syntax_error", "7", "interpret"),
    ("sandwich", "left", "syntax_error", "left", "none"),
    ("sandwich", "", "syntax_error", "", "none"),
    ("sandwich", "pick up bread and cheese", "semantic_failure", "cheese", "none"),
    ("sandwich", "put bread on both stacks", "semantic_failure", "put", "none"),
    ("sandwich", "do it again", "semantic_failure", "do it again", "none"),
    ("sandwich", "call that a BLT", "semantic_failure", "blt", "none"),
    ("sandwich", "when I say wait, add bread", "semantic_failure", "wait", "none"),
    ("weld", "go to position 7", "semantic_failure", "7", "none"),
    ("weld", "weld", "semantic_failure", "weld", "none"),
    ("blocks", "move left", "semantic_failure", "move", "none"),
    ("weld", "pick up the hammer", "semantic_failure", "hammer", "none"),
    ("weld", "go to the kitchen", "semantic_failure", "kitchen", "none"),
    ("weld", "grab the camera and the welder", "semantic_failure", "grab", "none"),
    ("weld", "add bread", "semantic_failure", "bread", "none"),
    ("blocks", "stack the blue cube on the red cube", "semantic_failure", "red cube", "interpret"),
    ("blocks", "put the red cube", "syntax_error", "red cube", "none"),
    ("blocks", "move the pink cube to B1", "semantic_failure", "pink", "none"),
    (
        "blocks",
        "erect a tower red green blue",
        "lexical_failure",
        "erect a tower",
        "resolve_phrase",
    ),
    ("blocks", "put it down", "syntax_error", "put", "none"),
    # The barista cell names poses (the taps, the grinders) but has no composite that goes to one.
    ("barista", "go to the machine", "semantic_failure", "go to", "none"),
    ("barista", "dark roast", "semantic_failure", "dark roast", "none"),
]


@pytest.mark.parametrize(
    ("cell", "said", "error_type", "token", "fallback"), FAILURES, ids=[f[1] for f in FAILURES]
)
def test_failure(cell: str, said: str, error_type: str, token: str, fallback: str) -> None:
    result = grammar(cell).parse(said, scene=scene(cell))
    assert not result.success and result.sequence == ()
    error = result.error
    assert error is not None
    assert (error.error_type, error.token, error.fallback) == (error_type, token, fallback)
    assert error.suggestion, "every failure says what to do instead"
    assert error.context == " ".join(normal_words(said))
    assert error.context[error.position :].startswith(error.token)


def test_failure_objects_carry_seed_003s_schema() -> None:
    error = grammar("sandwich").parse("tally the bread").error
    assert error is not None
    assert error.to_dict() == {
        "error_type": "lexical_failure",
        "token": "tally",
        "position": 0,
        "message": "Unknown command 'tally'",
        "suggestion": 'Try: "add bread and meat", "put tomato on the left", "go home"',
        "context": "tally the bread",
        "fallback": "resolve_phrase",
    }


def test_unknown_item_gives_seed_000s_feedback() -> None:
    result = interpret(grammar("sandwich"), "add avocado", "c-1")
    assert result.sequence == ()
    assert result.confidence == 0.1
    assert result.user_feedback == (
        "I don't have avocado — available ingredients are: bread, meat, cheese, lettuce, tomato"
    )
    assert result.correlation_id == "c-1" and result.source == "grammar"


def test_unknown_position_lists_the_positions() -> None:
    result = interpret(grammar("weld"), "go to position 7")
    assert result.user_feedback == (
        "I don't have position 7 — available positions are: Safe_Pos_1, Pos_1, Pos_2, Pos_3; "
        "or say go home"
    )


def test_unknown_cube_lists_the_objects() -> None:
    feedback = interpret(grammar("blocks"), "pick up the pink cube").user_feedback
    assert feedback is not None
    assert feedback.startswith("I don't have pink — available objects are: red cube, green cube")


def test_a_failed_command_never_carries_a_sequence_to_run() -> None:
    for cell, said, *_ in FAILURES:
        result = interpret(grammar(cell), said, scene=scene(cell))
        assert result.sequence == () and result.confidence == 0.1, said
        assert result.user_feedback, said


def test_repetition_needs_something_to_repeat() -> None:
    last = steps(("add_layer", {"item": "tomato"}))
    again = grammar("sandwich").parse("do it again", last_sequence=last)
    assert again.sequence == last
    more = grammar("sandwich").parse("two more", last_sequence=last)
    assert more.sequence == last * 2


@pytest.mark.parametrize(("said", "message"), [
    ("add", "Put what, and where?"),
    ("put", "Put what, and where?"),
    ("put it", "Put it where?"),
])  # fmt: skip
def test_a_bare_put_in_the_blocks_cell_asks_for_what_is_missing(said: str, message: str) -> None:
    error = grammar("blocks").parse(said, scene=scene("blocks")).error
    assert error is not None and error.message == message
    assert error.suggestion.startswith("Try: " if "what" in message else "Say where")
