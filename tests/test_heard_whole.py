"""A command said in pieces that together make none is heard again as one stretch of audio
(`QueryFrame._heard_whole`): the frames' side, with a hand-written recogniser behind
`Services.hear_whole`. The listener's side is in tests/audio/test_audio_listener.py, the
daemon's on a real order in tests/e2e/test_heard_whole_order.py."""

from __future__ import annotations

from typing import cast

import pytest
from voiced.audio.transcribe import Transcript
from voiced.frames import BaseFrame, CommandRouter
from voiced.frames.services import HeardWhole
from voiced.frames.stop import stop_rule
from voiced.rules import Utterance, words_after, words_before

from tests.fakes import EventRecorder, FakeServices
from voiced.commands.pipeline import RobotPipeline
from voiced.events import EventLog
from voiced.service.frame_services import DaemonServices

SILENCE = 1.5

WHOLE = "may i have a dark roast latte"


def always_router(*complete: str) -> tuple[CommandRouter, FakeServices]:
    services = FakeServices(complete_phrases=complete, things=("dark", "latte", "large", "oat"))
    services.own_verbs = (*services.own_verbs, "what")  # a question is no continuation
    base = BaseFrame("computer", SILENCE, 8.0)
    router = CommandRouter(base, services, EventRecorder(), [stop_rule()], "always")
    base.on_push(router, 0.0)
    return router, services


async def pieces(router: CommandRouter, *said: tuple[str, float, float]) -> float:
    """Say each (text, start, end); then let the silence timer run out. Returns the clock."""
    for text, start, end in said:
        await router.dispatch(Utterance(text, end, start=start))
    last = said[-1][2] + SILENCE + 0.1
    await router.tick(last)
    return last


async def test_pieces_that_make_no_command_are_heard_again_whole() -> None:
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await pieces(router, ("me i have a dark", 1.0, 1.8), ("roast latte", 2.4, 3.1))
    assert services.reheard == [(1.0, 3.1)]  # from the first word to the end of the last
    assert services.submitted == [("robot", WHOLE)]
    assert WHOLE not in services.doubts  # it names what the pieces named: made as heard


async def test_a_whole_that_names_more_than_the_pieces_is_asked_about() -> None:
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await pieces(router, ("may i have a dark", 1.0, 1.8), ("roast lotto", 2.4, 3.1))
    assert services.submitted == [("robot", WHOLE)]
    assert services.doubts[WHOLE] == 'heard "may i have a dark roast lotto"'


async def test_the_recognisers_doubt_goes_with_the_whole() -> None:
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE, doubt='heard "who i have a dark roast latte"')
    await pieces(router, ("who i have a dark", 1.0, 1.8), ("roast latte", 2.4, 3.1))
    assert services.doubts[WHOLE] == 'heard "who i have a dark roast latte"'


async def test_a_whole_without_what_a_piece_named_is_asked_about() -> None:
    """ "Can I have a dark roast, house coffee with milk?" ... "It's a sweetener.": heard
    whole, "... with lots of sweetener?" (a real order at 6 dB); the milk was misheard, or
    the whole was: asked, with the pieces quoted."""
    router, services = always_router("may i have a latte")
    services.whole = HeardWhole("may i have a latte")
    await pieces(router, ("me i have a dark", 1.0, 1.8), ("roast latte", 2.4, 3.1))
    assert services.submitted == [("robot", "may i have a latte")]
    assert services.doubts["may i have a latte"] == 'heard "me i have a dark roast latte"'


@pytest.mark.parametrize(
    "whole",
    [None, HeardWhole("may i have a dark roast"), HeardWhole("was that a dark roast latte")],
    ids=["nothing", "not a command", "a question"],
)
async def test_pieces_stand_as_said_unless_the_whole_is_a_command(
    whole: HeardWhole | None,
) -> None:
    router, services = always_router("was that a dark roast latte")
    services.questions = ("was that a dark roast latte",)
    services.whole = whole
    await pieces(router, ("me i have a dark", 1.0, 1.8), ("roast latte", 2.4, 3.1))
    assert services.reheard
    assert services.submitted == [("robot", "me i have a dark roast latte")]


@pytest.mark.parametrize(
    "first", ["don't give me a dark", "no i have a dark", "oops give me a dark"]
)
async def test_pieces_with_a_no_or_a_take_back_are_never_heard_again(first: str) -> None:
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await pieces(router, (first, 1.0, 1.8), ("roast latte", 2.4, 3.1))
    assert services.reheard == []
    assert services.submitted == [("robot", f"{first} roast latte")]


async def test_one_piece_or_a_whole_command_is_not_heard_again() -> None:
    router, services = always_router(WHOLE, "may i have a dark roast")
    services.whole = HeardWhole("something else")
    await pieces(router, ("may i have a dark roast latte", 1.0, 3.1))
    await pieces(router, ("may i have a dark", 5.0, 5.8), ("roast", 6.2, 6.6))
    assert services.reheard == []
    assert services.submitted == [("robot", WHOLE), ("robot", "may i have a dark roast")]


async def test_typed_pieces_with_no_clock_of_their_speech_are_not_heard_again() -> None:
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await router.dispatch(Utterance("me i have a dark", 1.8))
    await router.dispatch(Utterance("roast latte", 3.1, start=2.4))
    await router.tick(3.1 + SILENCE + 0.1)
    assert services.reheard == []
    assert services.submitted == [("robot", "me i have a dark roast latte")]


async def test_the_rest_of_an_order_heard_as_a_question_is_heard_with_the_pieces() -> None:
    """ "May I have a," ... "dark roast" ... "What a lot of oat?": the last piece is a
    question on its own, which would have dropped the pieces before it and been answered."""
    question = "what a lot of oat"
    whole = "may i have a dark roast with a lot of oat"
    router, services = always_router(question, whole)
    services.questions = (question,)
    services.whole = HeardWhole(whole)
    await router.dispatch(Utterance("may i have a", 1.8, start=1.0))
    await router.dispatch(Utterance("dark roast", 3.0, start=2.4))
    await router.dispatch(Utterance("What a lot of oat?", 5.0, start=3.6))
    assert services.reheard == [(1.0, 5.0)]
    assert services.submitted == [("robot", whole)]
    assert services.dropped_said == []


async def test_pieces_before_a_command_heard_unsure_are_heard_with_it() -> None:
    """ "Get the triple shot." ... "Just a small mocha ...", held to "I want a small mocha ..."
    with its opening misheard: the piece before it may have been its opening. Heard whole, it
    is still asked about: the order was heard unsure."""
    whole = "give me a large dark roast latte"
    router, services = always_router("give me a dark roast latte", whole)
    services.whole = HeardWhole(whole)
    await router.dispatch(Utterance("get the large", 1.8, start=1.0))
    doubt = 'heard "just a dark roast latte"'
    await router.dispatch(Utterance("give me a dark roast latte", 3.0, start=2.2, doubt=doubt))
    assert services.reheard == [(1.0, 3.0)]
    assert services.submitted == [("robot", whole)]
    assert services.doubts[whole] == doubt
    assert services.dropped_said == []


async def test_a_piece_heard_unsure_leaves_the_whole_unsure() -> None:
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await router.dispatch(
        Utterance("me i have a dark", 1.8, start=1.0, doubt="words before it: 'Don't.'")
    )
    await router.dispatch(Utterance("roast latte", 3.1, start=2.4))
    await router.tick(3.1 + SILENCE + 0.1)
    assert services.submitted == [("robot", WHOLE)]
    assert services.doubts[WHOLE] == "words before it: 'Don't.'"


async def test_talk_then_a_question_is_dropped_and_the_question_answered_as_before() -> None:
    question = "what a lot of oat"
    router, services = always_router(question)
    services.questions = (question,)
    await router.dispatch(Utterance("see you later", 1.8, start=1.0))
    await router.dispatch(Utterance("what a lot of oat", 3.0, start=2.4))
    await router.tick(3.0 + SILENCE + 0.1)
    assert services.reheard == [(1.0, 3.0)]
    assert services.dropped_said == [("see you later", "no command, and a whole one followed")]
    assert services.submitted == [("robot", question)]


async def waited_order(router: CommandRouter, stirred: bool) -> None:
    """A whole order that may go on, then (if `stirred`) speech that made no words (rejected
    by the recogniser: only its activity reaches the frames), then silence."""
    await router.dispatch(Utterance("give me a dark roast", 1.8, start=1.0))
    if stirred:
        router.activity(2.2, True)
        router.activity(2.9, False)
    await router.tick(2.9 + SILENCE + 0.1)


async def test_speech_that_made_no_words_after_a_waiting_order_is_heard_with_it() -> None:
    """ "Get me a small, dark roast, americano," ... its rest, "with some soy milk", lost in
    the kitchen (rejected as no speech): heard whole, the order with its rest is asked about."""
    whole = "give me a dark roast latte"
    router, services = always_router("give me a dark roast", whole)
    services.going_on = ("give me a dark roast",)
    services.whole = HeardWhole(whole)
    await waited_order(router, stirred=True)
    assert services.reheard == [(1.0, 2.9)]
    assert services.submitted == [("robot", whole)]
    assert services.doubts[whole] == 'heard "give me a dark roast"'


@pytest.mark.parametrize(
    ("stirred", "whole"),
    [(True, "give me a dark roast"), (False, "give me a dark roast latte"),
     (True, "give me a latte")],  # another order, not more of this one
)  # fmt: skip
async def test_a_waiting_order_stands_when_nothing_more_is_heard(stirred: bool, whole: str) -> None:
    router, services = always_router("give me a dark roast", whole)
    services.going_on = ("give me a dark roast",)
    services.whole = HeardWhole(whole)
    await waited_order(router, stirred=stirred)
    assert services.reheard == ([(1.0, 2.9)] if stirred else [])
    assert services.submitted == [("robot", "give me a dark roast")]
    assert services.doubts == {}


async def test_the_next_order_after_a_waiting_one_is_not_heard_with_it() -> None:
    router, services = always_router("give me a dark roast", "give me a latte")
    services.going_on = ("give me a dark roast",)
    services.whole = HeardWhole("give me a dark roast latte")
    await router.dispatch(Utterance("give me a dark roast", 1.8, start=1.0))
    router.activity(2.2, True)
    router.activity(2.9, False)  # the next order's own segment, heard next
    await router.dispatch(Utterance("give me a latte", 2.6, start=2.2))
    await router.tick(2.6 + SILENCE + 0.1)
    assert services.reheard == []
    assert services.submitted == [("robot", "give me a dark roast"), ("robot", "give me a latte")]


REST = "home at home"
"""Heard alone as a command ("go home"), said while an order waited: its rest, misheard."""


async def order_then(router: CommandRouter, said: str, start: float = 2.3) -> None:
    """A whole order that may go on, then `said` (a command of its own) at its level."""
    await router.dispatch(Utterance("give me a dark roast", 1.8, start=1.0, level_db=-16.0))
    await router.dispatch(Utterance(said, start + 0.7, start=start, level_db=-14.0))
    await router.tick(start + 0.7 + SILENCE + 0.1)


def rest_router(*complete: str) -> tuple[CommandRouter, FakeServices]:
    router, services = always_router("give me a dark roast", "go home", REST, *complete)
    services.going_on = ("give me a dark roast",)
    services.things = ("dark", "oat")
    return router, services


async def test_a_command_said_while_an_order_waits_may_be_its_rest_misheard() -> None:
    """ "I'd like a 16 ounce, dark roast, single shot, mocha with" ... "Home at home." (a
    real order at 6 dB: "whole milk" heard alone as a command, "go home"): heard on through
    it, the order with its rest is asked about, the words taken for its rest quoted."""
    whole = "give me a dark roast with oat"
    router, services = rest_router(whole)
    services.whole = HeardWhole(whole)
    await order_then(router, REST)
    assert services.reheard == [(1.0, 3.0)]
    assert services.submitted == [("robot", whole)]
    said = f"give me a dark roast {REST}"
    assert services.doubts[whole] == f'heard "{said}"; ' + words_after(REST)


@pytest.mark.parametrize(
    "whole", [f"give me a dark roast {REST}", "give me a dark roast"],
    ids=["no whole command", "nothing more of the order"],
)  # fmt: skip
async def test_a_command_after_a_waiting_order_not_its_rest_is_heard_alone(whole: str) -> None:
    router, services = rest_router(*{whole} - {f"give me a dark roast {REST}"})
    services.whole = HeardWhole(whole)
    await order_then(router, REST)
    assert services.reheard == [(1.0, 3.0)]
    assert services.submitted == [("robot", "give me a dark roast"), ("robot", REST)]


async def test_a_take_back_heard_on_before_a_command_leaves_both_asked_about() -> None:
    whole = f"give me a dark roast no {REST}"
    router, services = rest_router(whole)
    services.whole = HeardWhole(whole)
    await order_then(router, REST)
    assert services.submitted == [("robot", "give me a dark roast"), ("robot", REST)]
    assert services.doubts == {"give me a dark roast": f'heard "{whole}"', REST: f'heard "{whole}"'}


@pytest.mark.parametrize(
    ("said", "start"), [("go home", 2.3), (REST, 3.4)], ids=["a verb of its own", "a pause"]
)
async def test_a_command_of_its_own_after_a_waiting_order_is_never_heard_with_it(
    said: str, start: float
) -> None:
    """ "go home" is the operator's next command, whatever hearing it with the order reads;
    after a pause as long as the silence timer, which the room held open, no word is the
    order's rest."""
    router, services = rest_router()
    services.whole = HeardWhole("give me a dark roast with oat")
    await order_then(router, said, start)
    assert services.reheard == []
    assert services.submitted == [("robot", "give me a dark roast"), ("robot", said)]


async def test_the_next_order_said_while_one_waits_is_never_heard_with_it() -> None:
    router, services = always_router("give me a dark roast", "give me a latte")
    services.going_on = ("give me a dark roast",)
    services.things = ("dark", "latte", "oat")
    services.whole = HeardWhole("give me a dark roast latte with oat")
    await router.dispatch(Utterance("give me a dark roast", 1.8, start=1.0))
    await router.dispatch(Utterance("give me a latte", 3.0, start=2.3))
    await router.tick(3.0 + SILENCE + 0.1)
    assert services.reheard == []
    assert services.submitted == [("robot", "give me a dark roast"), ("robot", "give me a latte")]


# -- the review's holes ----------------------------------------------------------------------


async def test_pieces_from_two_voices_are_not_heard_again_whole() -> None:
    """The operator's "May I have a" and, three times as far away, a colleague's "What, a
    large latte?": one stretch of audio, but not one speaker's command."""
    router, services = always_router("what a large latte", "may i have a large latte")
    services.questions = ("what a large latte",)
    services.whole = HeardWhole("may i have a large latte")
    await router.dispatch(Utterance("may i have a", 1.7, start=1.0, level_db=-15.0))
    await router.dispatch(Utterance("What, a large latte?", 3.6, start=2.5, level_db=-35.0))
    await router.tick(3.6 + SILENCE + 0.1)
    assert services.reheard == []
    assert ("robot", "may i have a large latte") not in services.submitted


async def test_pieces_heard_whole_after_a_question_are_asked_about() -> None:
    router, services = always_router("what a large latte", "may i have a large latte")
    services.questions = ("what a large latte",)
    services.whole = HeardWhole("may i have a large latte")
    await router.dispatch(Utterance("may i have a", 1.7, start=1.0, level_db=-15.0))
    await router.dispatch(Utterance("What a large latte!", 3.6, start=2.5, level_db=-16.0))
    assert services.submitted == [("robot", "may i have a large latte")]
    assert services.doubts["may i have a large latte"] == (
        'heard "may i have a What a large latte!"'
    )


async def test_the_rest_of_an_order_read_as_a_question_is_heard_with_it() -> None:
    """ "Give me a double shot, house coffee." ... "Would a little bit of almond milk.": the
    order's rest, misheard alone, made the parts a question and no command (a real order at
    6 dB). Heard whole it is the order, asked about: its parts read as a question."""
    joined = "give me a dark roast would a lot of oat"
    whole = "give me a dark roast with a lot of oat"
    router, services = always_router("give me a dark roast", joined, whole)
    services.questions = (joined,)
    services.things = ("dark", "oat")
    services.whole = HeardWhole(whole)
    await pieces(router, ("give me a dark roast", 1.0, 1.8), ("would a lot of oat", 2.3, 3.2))
    assert services.reheard == [(1.0, 3.2)]
    assert services.submitted == [("robot", whole)]
    assert services.doubts[whole] == f'heard "{joined}"'


async def test_quiet_talk_after_the_pieces_is_left_out_and_quoted() -> None:
    """ "I want a triple shot." ... "Large ice mocha." ... "With almond milk ..." ... the
    kitchen's "All right.", 10 dB below them (a real order at 6 dB): the operator's pieces
    are heard again without it, and the order is asked about with it quoted."""
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await router.dispatch(Utterance("me i have a", 1.7, start=1.0, level_db=-15.0))
    await router.dispatch(Utterance("dark roast latte", 3.0, start=2.2, level_db=-16.0))
    await router.dispatch(Utterance("All right.", 4.2, start=3.6, level_db=-26.0))
    await router.tick(4.2 + SILENCE + 0.1)
    assert services.reheard == [(1.0, 3.0)]
    assert services.submitted == [("robot", WHOLE)]
    assert services.doubts[WHOLE] == words_after("All right.")


@pytest.mark.parametrize("pause", [2.0, 0.5])
async def test_pieces_after_a_pause_that_held_talk_open_are_heard_without_it(
    pause: float,
) -> None:
    """The kitchen's "No, I don't know." opened a query that its noise kept open; the order's
    pieces joined it, and the last, "What a lot of brown sugar.", read as a question (a real
    order at 6 dB). After a pause as long as the silence timer, the pieces are heard again
    without the talk before it, which is quoted. Without that pause the talk may be the
    operator's "no" about what follows: the command is heard on its own, as before."""
    question = "what a lot of oat"
    whole = "may i have a dark roast with a lot of oat"
    router, services = always_router(question, whole)
    services.questions = (question,)
    services.things = ("dark", "oat")
    services.whole = HeardWhole(whole)
    await router.dispatch(Utterance("No, I don't know.", 1.5, start=1.0, level_db=-22.0))
    router.activity(1.5 + pause / 2, True)  # the kitchen: speech that made no words
    start = 1.5 + pause
    await router.dispatch(Utterance("may i have a", start + 0.7, start=start, level_db=-14.0))
    await router.dispatch(Utterance("dark roast", start + 2.0, start=start + 1.4))
    await router.dispatch(Utterance("What a lot of oat?", start + 3.5, start=start + 2.6))
    await router.tick(start + 3.5 + SILENCE + 0.1)
    if pause < SILENCE:
        assert services.reheard == []
        assert (whole, "robot") not in [(t, r) for r, t in services.submitted]
        return
    assert services.reheard == [(start, start + 3.5)]
    assert services.submitted == [("robot", whole)]
    said = "may i have a dark roast What a lot of oat?"
    assert services.doubts[whole] == (f'heard "{said}"; ' + words_before("No, I don't know."))


@pytest.mark.parametrize(
    ("talk", "level"),
    [("and large", -26.0),  # quiet, but about the order
     ("no, go home", -26.0)],  # a correction with a command of its own
)  # fmt: skip
async def test_pieces_with_words_after_them_that_may_be_the_operators_stand(
    talk: str, level: float
) -> None:
    router, services = always_router(WHOLE, "go home")
    services.whole = HeardWhole(WHOLE)
    await router.dispatch(Utterance("me i have a", 1.7, start=1.0, level_db=-15.0))
    await router.dispatch(Utterance("dark roast latte", 3.0, start=2.2, level_db=-16.0))
    await router.dispatch(Utterance(talk, 4.2, start=3.6, level_db=level))
    await router.tick(4.2 + SILENCE + 0.1)
    assert ("robot", WHOLE) not in services.submitted
    assert WHOLE not in services.doubts


@pytest.mark.parametrize(
    ("first", "second", "whole"),
    [("move left by 15", "fifteen sentimeters", "move left by 50 centimeters"),  # no list value
     ("move left by 15", "sentimeters please", "move right by 15 centimeters please"),  # a word
     ("rays 1.5", "millimeters", "raise 4.5 millimeters"),  # a number with a point
     ("pot 15", "millimeters", "put 15 millimeters"),  # a verb of the cell in the new words
     ("czech", "seam 2", "tack seam 2"),  # the words kept are a command: the verb chose it
     ("moo 15", "millimeters", "move 50 millimeters")],  # a number changed in the opening
)  # fmt: skip
async def test_a_whole_that_changes_more_than_a_mended_opening_is_asked_about(
    first: str, second: str, whole: str
) -> None:
    router, services = always_router(whole, "seam 2")
    services.whole = HeardWhole(whole)
    await pieces(router, (first, 1.0, 1.8), (second, 2.3, 3.2))
    assert services.submitted == [("robot", whole)]
    assert services.doubts[whole] == f'heard "{first} {second}"'


@pytest.mark.parametrize("whole", ["don't give me a dark roast latte", "give me a latte, oops"])
async def test_a_whole_that_holds_a_no_the_pieces_lacked_is_not_used(whole: str) -> None:
    router, services = always_router(whole)
    services.whole = HeardWhole(whole)
    await pieces(router, ("me i have a dark", 1.0, 1.8), ("roast latte", 2.4, 3.1))
    assert services.reheard
    assert services.submitted == [("robot", "me i have a dark roast latte")]


async def test_an_answer_finished_with_words_said_before_is_not_heard_again_from_itself() -> None:
    """ "put" was refused with "Put what?"; the answer "the cheese" is the part "put the
    cheese", but its audio holds no "put": heard again from there, the verb would be lost."""
    services = FakeServices(things=("cheese", "left"))
    base = BaseFrame("computer", SILENCE, 8.0)
    router = CommandRouter(base, services, EventRecorder(), [stop_rule()], "wake")
    base.on_push(router, 0.0)
    base.expect_more("put")
    services.whole = HeardWhole("the cheese on the left side")
    await router.dispatch(Utterance("the cheese", 2.6, start=2.0))
    await router.dispatch(Utterance("on the left sight", 3.8, start=3.0))
    await router.tick(3.8 + SILENCE + 0.1)
    assert services.reheard == []
    assert services.submitted == [("robot", "put the cheese on the left sight")]


@pytest.mark.parametrize("rest", ["give me a dark roast, no, wait", "give me a dark roast. Stop."])
async def test_a_take_back_heard_on_after_a_waiting_order_is_asked_about(rest: str) -> None:
    router, services = always_router("give me a dark roast")
    services.going_on = ("give me a dark roast",)
    services.whole = HeardWhole(rest)
    await waited_order(router, stirred=True)
    assert services.submitted == [("robot", "give me a dark roast")]
    assert services.doubts["give me a dark roast"] == f'heard "{rest}"'


async def test_speech_another_rule_took_after_a_waiting_order_is_not_heard_with_it() -> None:
    router, services = always_router("give me a dark roast")
    services.going_on = ("give me a dark roast",)
    services.whole = HeardWhole("give me a dark roast latte")
    await router.dispatch(Utterance("give me a dark roast", 1.8, start=1.0))
    router.activity(2.2, True)
    router.activity(2.9, False)
    await router.dispatch(Utterance("read it back", 2.6, start=2.2))  # the query's own rule
    await router.tick(2.9 + SILENCE + 0.1)
    assert services.reheard == []
    assert services.submitted == [("robot", "give me a dark roast")]


async def test_a_take_back_heard_on_is_the_first_words_its_question_quotes() -> None:
    """The question quotes the first words heard of a doubt (`Asking.check_hearing`): the
    take-back, not an earlier doubt of the order's own, or a yes makes it."""
    router, services = always_router("give me a dark roast")
    services.going_on = ("give me a dark roast",)
    services.whole = HeardWhole("give me a dark roast, no, wait")
    await router.dispatch(
        Utterance("give me a dark roast", 1.8, start=1.0, doubt='heard "give me a dark roost"')
    )
    router.activity(2.2, True)
    router.activity(2.9, False)
    await router.tick(2.9 + SILENCE + 0.1)
    assert services.doubts["give me a dark roast"] == (
        'heard "give me a dark roast, no, wait"; heard "give me a dark roost"'
    )


class _Workload:
    moving = False


class _Pipeline:
    """What `DaemonServices.hear_whole` reads of the robot pipeline."""

    def __init__(self) -> None:
        self.workload = _Workload()


# -- the second review's holes (pieces after a pause, a quiet end) ---------------------------


async def test_a_far_voices_pieces_after_a_pause_are_not_heard_again_whole() -> None:
    """The operator's "all right then" (-14 dB); the room keeps the query open; a voice three
    times as far away (-26 dB) orders in pieces after the pause: not the operator's order."""
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await router.dispatch(Utterance("all right then", 1.5, start=1.0, level_db=-14.0))
    router.activity(2.0, True)  # the kitchen: speech that made no words
    router.activity(3.2, False)
    await router.dispatch(Utterance("me i have a", 4.0, start=3.3, level_db=-26.0))
    await router.dispatch(Utterance("dark roast latte", 5.2, start=4.4, level_db=-27.0))
    await router.tick(5.2 + SILENCE + 0.1)
    assert services.reheard == []
    assert ("robot", WHOLE) not in services.submitted


async def test_the_question_about_pieces_after_a_pause_is_answered_at_their_level() -> None:
    """A voice nearer the microphone (-8 dB) before the pause, the operator's pieces (-15 dB)
    after it: the question is answered at the pieces' level, not the talk's (which would
    leave the operator's "yes" nearly 10 dB below what it answers)."""
    router, services = always_router(WHOLE)
    services.whole = HeardWhole(WHOLE)
    await router.dispatch(Utterance("no, all right then", 1.5, start=1.0, level_db=-8.0))
    router.activity(2.0, True)
    router.activity(3.2, False)
    await router.dispatch(Utterance("me i have a", 4.0, start=3.3, level_db=-15.0))
    await router.dispatch(Utterance("dark roast latte", 5.2, start=4.4, level_db=-16.0))
    await router.tick(5.2 + SILENCE + 0.1)
    assert services.submitted == [("robot", WHOLE)]
    assert services.levels[WHOLE] == -15.0


async def test_a_command_before_the_pause_taken_back_is_still_said_not_made() -> None:
    """ "i want a latte" ... "no, a large one" ... [the room] ... "may i have a" ...
    "dark roast" ... "What a lot of oat?": a whole command before the pause is never left
    out of the stretch unsaid; the latte is said not made, as without the pause."""
    question, whole = "what a lot of oat", "may i have a dark roast with a lot of oat"
    router, services = always_router("i want a latte", question, whole)
    services.going_on = ("i want a latte",)
    services.questions = (question,)
    services.whole = HeardWhole(whole)
    await router.dispatch(Utterance("i want a latte", 1.8, start=1.0, level_db=-14.0))
    await router.dispatch(Utterance("no, a large one", 2.8, start=2.0, level_db=-14.0))
    router.activity(3.0, True)
    router.activity(4.0, False)
    await router.dispatch(Utterance("may i have a", 5.2, start=4.5, level_db=-14.0))
    await router.dispatch(Utterance("dark roast", 6.4, start=5.6, level_db=-14.0))
    await router.dispatch(Utterance("What a lot of oat?", 8.0, start=6.8, level_db=-14.0))
    assert any(reason == "taken back before another command"
               for _, reason in services.dropped_said)  # fmt: skip


async def test_quiet_words_that_go_on_with_the_pieces_are_not_left_out() -> None:
    """A quiet "with some" after the pieces goes on with the order heard whole: its rest,
    refused with it (as `_talk_after` and `_someone_else` refuse such talk)."""
    router, services = always_router(WHOLE)
    services.going_on = ("may i have a dark roast latte with some",)
    services.whole = HeardWhole(WHOLE)
    await router.dispatch(Utterance("me i have a", 1.7, start=1.0, level_db=-15.0))
    await router.dispatch(Utterance("dark roast latte", 3.0, start=2.2, level_db=-16.0))
    await router.dispatch(Utterance("with some", 4.2, start=3.6, level_db=-26.0))
    await router.tick(4.2 + SILENCE + 0.1)
    assert ("robot", WHOLE) not in services.submitted


async def test_the_daemon_hears_a_stretch_again_through_the_listener_unless_the_arm_moves() -> None:
    pipeline = _Pipeline()
    services = DaemonServices(EventLog(), cast(RobotPipeline, pipeline), {})
    assert await services.hear_whole(1.0, 2.0) is None  # no ears: typed input, a replay
    asked: list[tuple[float, float]] = []

    async def rehear(start: float, end: float) -> Transcript | None:
        asked.append((start, end))
        text = "May I have a latte?" if start < 5 else ""
        return Transcript(text, text, 0.0, 0.0, None, 0.1, doubt='heard "me i have a latte"')

    services.attach_ears(rehear)
    assert await services.hear_whole(1.0, 2.0) == HeardWhole(
        "May I have a latte?", 'heard "me i have a latte"'
    )
    assert await services.hear_whole(6.0, 7.0) is None  # nothing heard
    pipeline.workload.moving = True  # a stop said meanwhile would wait for the decoding
    assert await services.hear_whole(1.0, 2.0) is None
    assert asked == [(1.0, 2.0), (6.0, 7.0)]
