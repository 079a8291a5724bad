"""The frame stack: base and query frames, global stop, transitions (seed 002's semantics)."""

from __future__ import annotations

import pytest
from voiced.frames import BaseFrame, CommandRouter, QueryFrame
from voiced.frames.dictation import DictationFrame
from voiced.frames.pause import pause_rule
from voiced.frames.stop import heard_with_spotted_stop, stop_rule
from voiced.rules import Utterance
from voiced.rules.negation import takes_back

from tests.fakes import EventRecorder, FakeServices

SILENCE = 1.5
LISTEN = 8.0


def make_router(mode: str = "wake") -> tuple[CommandRouter, FakeServices, EventRecorder]:
    services, events = FakeServices(), EventRecorder()
    base = BaseFrame("computer", SILENCE, LISTEN, variants=("compute her",))
    router = CommandRouter(base, services, events, [stop_rule()], mode)
    base.on_push(router, 0.0)
    return router, services, events


async def say(router: CommandRouter, text: str, t: float, level_db: float | None = None) -> None:
    await router.dispatch(Utterance(text, t, level_db=level_db))
    await router.tick(t)


async def test_wake_word_in_one_breath_opens_query_with_the_rest() -> None:
    router, services, events = make_router()
    await say(router, "computer add bread", 1.0)
    assert isinstance(router.top, QueryFrame)
    assert router.top.text == "add bread"
    await router.tick(1.0 + SILENCE)
    assert services.submitted == [("robot", "add bread")]
    assert events.frames() == [("push", "query"), ("pop", "query")]


async def test_wake_word_then_command_then_go() -> None:
    router, services, _ = make_router()
    await say(router, "computer", 1.0)
    await say(router, "add cheese", 2.0)
    await say(router, "go", 2.5)
    assert services.submitted == [("robot", "add cheese")]
    assert len(router.stack) == 1


async def test_silence_timer_does_not_fire_early() -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    await router.tick(1.0 + SILENCE - 0.1)
    assert services.submitted == []


async def test_words_reset_the_silence_timer() -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    await say(router, "and cheese", 2.0)
    await router.tick(3.0)
    assert services.submitted == []
    await router.tick(2.0 + SILENCE)
    assert services.submitted == [("robot", "add bread and cheese")]


async def test_voice_activity_holds_the_timer_while_the_operator_talks() -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    router.activity(2.4, voiced=True)
    await router.tick(3.0)
    assert services.submitted == []
    router.activity(3.0, voiced=False)
    await router.tick(2.4 + SILENCE)
    assert services.submitted == [("robot", "add bread")]


async def test_cancel_before_submit_sends_nothing() -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    await say(router, "cancel", 1.5)
    await router.tick(10.0)
    assert services.submitted == []
    assert services.spoken[-1] == "Cancelled."


async def test_read_back() -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    await say(router, "read back", 1.5)
    assert services.spoken[-1] == "You said: add bread"


async def test_wake_word_alone_then_nothing_closes_the_query() -> None:
    router, services, _ = make_router()
    await say(router, "computer", 1.0)
    await router.tick(1.0 + LISTEN)
    assert len(router.stack) == 1
    assert services.submitted == []


async def test_without_wake_word_nothing_happens_in_wake_mode() -> None:
    router, _services, _ = make_router()
    outcome = await router.dispatch(Utterance("add bread", 1.0))
    assert outcome.dropped
    assert len(router.stack) == 1


async def test_always_listen_mode_needs_no_wake_word() -> None:
    router, services, _events = make_router(mode="always")
    await say(router, "add bread", 1.0)
    await router.tick(1.0 + SILENCE)
    assert services.submitted == [("robot", "add bread")]


async def test_mode_words_work_inside_a_query_through_check_parent() -> None:
    router, _services, events = make_router()
    await say(router, "computer add bread", 1.0)
    await say(router, "always listen", 1.5)
    assert router.mode == "always"
    assert isinstance(router.top, QueryFrame)
    assert router.top.text == "add bread"
    assert ("mode", "always") in events.frames()


async def test_mode_query_speaks_the_mode() -> None:
    router, services, _ = make_router()
    await say(router, "mode query", 1.0)
    assert services.spoken == ["I am in wake word mode."]


async def test_wake_word_again_with_words_starts_the_next_command() -> None:
    """As inside one breath ("computer add bread. Computer, add cheese"): it used to join the
    open query ("add bread add cheese")."""
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    await say(router, "compute her add cheese", 1.5)
    assert services.submitted == [("robot", "add bread")]
    assert len(router.stack) == 2
    assert isinstance(router.top, QueryFrame)
    assert router.top.text == "add cheese"


async def test_wake_word_alone_again_keeps_the_open_query() -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    await say(router, "computer", 1.5)
    await say(router, "and cheese", 2.0)
    assert services.submitted == []
    assert isinstance(router.top, QueryFrame)
    assert router.top.text == "add bread and cheese"


@pytest.mark.parametrize(
    ("said", "stops"),
    [("stop", True), ("computer stop", True), ("halt!", True), ("freeze", True),
     ("emergency stop", True), ("Stop it, stop!", True), ("the bus stop", True),
     ("it ran non-stop all week", False), ("a stop-gap", False), ("where is the stopwatch", False),
     ("I stopped by the shop", False), ("put it on top", False), ("it ran non stop", False),
     ("nonstop", False), ("check the stop watch", False), ("stop, watch out", True)],
)  # fmt: skip
async def test_what_is_a_stop(said: str, stops: bool) -> None:
    router, services, _ = make_router("always")
    await router.dispatch(Utterance(said, 1.0))
    assert len(services.stops) == int(stops)


@pytest.mark.parametrize("said", ["stop", "computer stop", "halt!", "freeze", "emergency stop"])
async def test_global_stop_from_a_query(said: str) -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", 1.0)
    outcome = await router.dispatch(Utterance(said, 1.2))
    assert outcome.frame == "global"
    assert len(services.stops) == 1
    assert len(router.stack) == 1, "stop drops the half-said query"
    await router.tick(10.0)
    assert services.submitted == []


@pytest.mark.parametrize(
    ("said", "dropped"),
    [("computer add bread and cheese, stop", ["add bread and cheese"]),
     ("computer, put the tomato on the right, oh no, stop", ["put the tomato on the right"]),
     ("go home. Halt! Then add meat", ["go home", "add meat"]),
     ("oh no, stop it", []), ("computer stop", []), ("stop stop stop", []),
     ("stop moving the arm now", []), ("stop the robot please", []), ("emergency stop", []),
     ("stop, then go home, stop, then go home", ["go home"])],
)  # fmt: skip
async def test_commands_said_with_a_stop_are_dropped_and_named(
    said: str, dropped: list[str]
) -> None:
    services, events = FakeServices(), EventRecorder()
    base = BaseFrame("computer", SILENCE, LISTEN)
    router = CommandRouter(base, services, events, [stop_rule(("computer",))], "wake")
    base.on_push(router, 0.0)
    await router.dispatch(Utterance(said, 1.0))
    await router.tick(10.0)
    assert len(services.stops) == 1
    assert services.unsent == dropped
    assert services.submitted == [], "nothing said with a stop moves"


async def test_a_question_for_what_a_command_left_out_takes_the_answer() -> None:
    services, events = FakeServices(complete_phrases=("the cheese",)), EventRecorder()
    base = BaseFrame("computer", SILENCE, LISTEN)
    router = CommandRouter(base, services, events, [stop_rule()], "wake")
    base.on_push(router, 0.0)
    assert isinstance(base, BaseFrame)
    base.expect_more("put")  # the daemon refused "put" with "Put what?"
    await say(router, "the cheese", 2.0)
    await router.tick(2.0 + SILENCE)
    assert services.submitted == [("robot", "put the cheese")]
    base.expect_more("pick up")
    await say(router, "computer pick up the tomato", 5.0)  # the whole command, said again
    await router.tick(5.0 + SILENCE)
    assert services.submitted[-1] == ("robot", "pick up the tomato")
    base.expect_more("put")
    await say(router, "what is on the left?", 8.0)  # a question, not what to put
    await router.tick(8.0 + SILENCE)
    assert services.submitted[-1] == ("robot", "what is on the left?")
    base.expect_more("put")
    await say(router, "computer go home", 11.0)  # a command of its own starts fresh
    await router.tick(11.0 + SILENCE)
    assert services.submitted[-1] == ("robot", "go home")
    base.expect_more("put")
    await say(router, "cancel", 14.0)
    await router.tick(14.0 + SILENCE)
    assert (services.submitted[-1], services.spoken[-1]) == (("robot", "go home"), "Cancelled.")


@pytest.mark.parametrize("late", [False, True])
async def test_the_answer_window_ends_at_the_listen_timeout_or_a_stop(late: bool) -> None:
    router, services, _ = make_router()
    base = router.stack[0]
    assert isinstance(base, BaseFrame)
    base.expect_more("put")
    if late:
        await router.tick(LISTEN + 0.5)
    else:
        base.expect_more(None)  # a stop: nothing said before it is finished after it
    await say(router, "the cheese", LISTEN + 1.0)
    await router.tick(LISTEN + 1.0 + SILENCE)
    assert services.submitted == []


async def test_help_describes_the_top_frame() -> None:
    router, services, _ = make_router()
    await say(router, "computer", 1.0)
    await say(router, "what can i say", 1.2)
    assert "go" in services.spoken[-1]


async def test_base_frame_cannot_be_popped() -> None:
    router, _, _ = make_router()
    with pytest.raises(ValueError, match="not poppable"):
        router.pop(router.stack[0])


async def test_a_complete_command_goes_after_a_short_silence() -> None:
    services, events = FakeServices(complete_phrases=("add bread",)), EventRecorder()
    base = BaseFrame("computer", SILENCE, LISTEN, complete_timeout=0.4)
    router = CommandRouter(base, services, events, [stop_rule()], "wake")
    base.on_push(router, 0.0)
    await say(router, "computer add bread", 1.0)
    await router.tick(1.3)
    assert services.submitted == []
    await router.tick(1.4)
    assert services.submitted == [("robot", "add bread")]


async def test_a_partial_command_waits_the_full_silence_timer() -> None:
    services, events = FakeServices(complete_phrases=("add bread",)), EventRecorder()
    base = BaseFrame("computer", SILENCE, LISTEN, complete_timeout=0.4)
    router = CommandRouter(base, services, events, [stop_rule()], "wake")
    base.on_push(router, 0.0)
    await say(router, "computer add", 1.0)
    await router.tick(2.0)
    assert services.submitted == []
    await say(router, "bread", 2.2)  # now complete: the short timer runs from here
    await router.tick(2.6)
    assert services.submitted == [("robot", "add bread")]


async def test_speech_that_goes_on_holds_even_a_complete_command() -> None:
    services, events = FakeServices(complete_phrases=("add bread",)), EventRecorder()
    base = BaseFrame("computer", SILENCE, LISTEN, complete_timeout=0.4)
    router = CommandRouter(base, services, events, [stop_rule()], "wake")
    base.on_push(router, 0.0)
    await say(router, "computer add bread", 1.0)
    router.activity(1.3, voiced=True)
    await router.tick(1.5)
    assert services.submitted == []
    await say(router, "and cheese", 2.0)
    router.activity(2.0, voiced=False)
    await router.tick(3.6)
    assert services.submitted == [("robot", "add bread and cheese")]


def quick_router(
    *complete: str, mode: str = "wake", going_on: tuple[str, ...] = ()
) -> tuple[CommandRouter, FakeServices]:
    services = FakeServices(complete_phrases=complete, going_on=going_on)
    base = BaseFrame("computer", SILENCE, LISTEN, complete_timeout=0.4)
    router = CommandRouter(base, services, EventRecorder(), [stop_rule()], mode)
    base.on_push(router, 0.0)
    return router, services


async def test_going_on_after_a_quick_submit_is_the_next_command() -> None:
    router, services = quick_router("add bread", "cheese and tomato")
    await say(router, "computer add bread", 1.0)
    await router.tick(1.4)
    assert services.submitted == [("robot", "add bread")]
    router.activity(1.9, voiced=True)  # began within the silence timer of the submit
    await say(router, "cheese and tomato", 3.1)
    await router.tick(3.5)
    assert services.submitted == [("robot", "add bread"), ("robot", "cheese and tomato")]


async def test_the_wake_word_after_other_words_still_opens_a_query() -> None:
    router, services, _ = make_router()
    await say(router, "And tomato. Computer, add meat on the left.", 1.0)
    assert isinstance(router.top, QueryFrame)
    assert router.top.text == "add meat on the left"
    await router.tick(3.0)
    await say(router, "I use my computer", 4.0)  # nothing after it: no query
    await router.tick(6.0)
    assert services.submitted == [("robot", "add meat on the left")]
    assert len(router.stack) == 1


async def test_talk_in_the_follow_up_window_that_is_no_command_is_ignored() -> None:
    router, services = quick_router("add bread")
    await say(router, "computer add bread", 1.0)
    await router.tick(1.4)
    router.activity(1.6, voiced=True)
    await say(router, "So, we're actually going to have a lot.", 2.8)
    await router.tick(5.0)
    assert services.submitted == [("robot", "add bread")]
    assert len(router.stack) == 1


async def test_a_new_verb_in_the_follow_up_window_needs_the_wake_word() -> None:
    router, services = quick_router("add bread", "go home")
    await say(router, "computer add bread", 1.0)
    await router.tick(1.4)
    router.activity(1.6, voiced=True)
    await say(router, "go home", 2.2)
    await router.tick(5.0)
    assert services.submitted == [("robot", "add bread")]


async def test_words_without_the_wake_word_later_are_ignored() -> None:
    router, services = quick_router("add bread", "cheese and tomato")
    await say(router, "computer add bread", 1.0)
    await router.tick(1.4)
    router.activity(3.0, voiced=True)  # after the follow-up window (1.4 + 1.5)
    await say(router, "cheese and tomato", 4.0)
    await router.tick(6.0)
    assert services.submitted == [("robot", "add bread")]


async def test_a_full_silence_submit_opens_no_follow_up() -> None:
    router, services = quick_router()  # nothing counts as complete
    await say(router, "computer add bread", 1.0)
    await router.tick(2.5)
    assert services.submitted == [("robot", "add bread")]
    await say(router, "cheese and tomato", 2.8)
    await router.tick(5.0)
    assert services.submitted == [("robot", "add bread")]


@pytest.mark.parametrize(
    ("heard", "query"),
    [
        ("Computer,add bread", "add bread"),
        ("computer computer add bread", "add bread"),
        ("Computer, add bread.", "add bread"),
        ("Computer,inspect position twenty two", "inspect position 22"),
    ],
)
async def test_the_rest_after_the_wake_word_never_loops(heard: str, query: str) -> None:
    router, _, _ = make_router()
    await say(router, heard, 1.0)
    assert isinstance(router.top, QueryFrame)
    assert router.top.text == query


async def test_a_wake_word_for_a_mode_word_leaves_no_empty_query_behind() -> None:
    router, services, _ = make_router()
    await say(router, "computer mode query", 1.0)
    await router.tick(1.0 + LISTEN + 1.0)
    assert services.spoken == ["I am in wake word mode."]
    assert len(router.stack) == 1


async def test_help_gives_the_examples_it_was_given_with_the_wake_word() -> None:
    base = BaseFrame("robot", SILENCE, LISTEN, examples=("go to position 1", "go home"))
    services = FakeServices()
    router = CommandRouter(base, services, EventRecorder())
    base.on_push(router, 0.0)
    await say(router, "what can i say", 1.0)
    assert services.spoken[-1].startswith(
        'Say "robot" and a command, for example "robot, go to position 1" or "robot, go home".'
    )
    await say(router, "robot", 2.0)
    await say(router, "what can i say", 2.2)
    assert services.spoken[-1].endswith('For example: "go to position 1" or "go home".')


def listening_router(*complete: str) -> tuple[CommandRouter, FakeServices]:
    return quick_router(*complete, mode="always")


async def test_a_whole_command_after_words_that_were_none_is_heard_on_its_own() -> None:
    # Talk nearby held the query open (the operator's order, then the kitchen's words, then
    # the next order): joined, all of it would be refused. The words before are never sent
    # (they may hold something the interpreter would act on); the operator hears they were
    # dropped.
    router, services = listening_router("can i have a house coffee")
    await say(router, "May have a dull shot of drip coffee.", 1.0)
    router.activity(1.5, voiced=True)
    await say(router, "See you later.", 2.0)
    await say(router, "can i have a house coffee", 3.0)
    assert services.dropped_said == [
        (
            "May have a dull shot of drip coffee. See you later.",
            "no command, and a whole one followed",
        )
    ]
    assert services.submitted == []
    assert isinstance(router.top, QueryFrame)
    assert router.top.text == "can i have a house coffee"
    router.activity(3.0, voiced=False)
    await router.tick(3.4)  # whole: the short timer
    assert services.submitted == [("robot", "can i have a house coffee")]
    assert len(router.stack) == 1


async def test_with_the_wake_word_what_is_said_in_the_open_query_stays_one_command() -> None:
    # A colleague's whole command said into the operator's open query is not run on its own.
    router, services = quick_router("go home")
    await say(router, "computer put the", 1.0)
    await say(router, "go home", 2.0)
    await router.tick(2.0 + SILENCE)
    assert services.submitted == [("robot", "put the go home")]
    assert services.dropped_said == []


@pytest.mark.parametrize(
    ("before", "after", "complete"),
    [
        # What the whole reads as wins: the rest of a command, not a new one.
        ("put", "cheese on the left", ("cheese on the left", "put cheese on the left")),
        # A word that changes what follows keeps it.
        ("don't", "add bread", ("add bread",)),
        ("add bread without", "cheese", ("cheese", "add bread")),
        # A whole command is never sent apart from what corrects it.
        ("add bread", "no add cheese", ("add bread", "no add cheese")),
    ],
)
async def test_what_finishes_or_bears_on_the_words_before_stays_one_command(
    before: str, after: str, complete: tuple[str, ...]
) -> None:
    router, services = quick_router(*complete)
    await say(router, f"computer {before}", 1.0)
    router.activity(1.2, voiced=True)
    await say(router, after, 2.0)
    router.activity(2.0, voiced=False)
    await router.tick(2.0 + SILENCE)
    assert services.submitted == [("robot", f"{before} {after}")]


def going_on_router(mode: str = "always") -> tuple[CommandRouter, FakeServices]:
    # A closed cell's order: "i want a latte" is whole, and its sentences may go on.
    complete = (
        "i want a latte",
        "i want a latte with oat milk",
        "can i have a mocha",
    )
    return quick_router(*complete, mode=mode, going_on=("i want a latte",))


async def test_a_whole_command_the_cells_sentences_may_go_on_from_waits_for_the_rest() -> None:
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0)
    await router.tick(1.0 + 0.4)
    assert services.submitted == []  # not on the short timer
    await say(router, "with oat milk", 2.2)
    await router.tick(2.2 + 0.4)  # whole and final: the short timer
    assert services.submitted == [("robot", "i want a latte with oat milk")]


async def test_a_whole_command_that_may_go_on_goes_after_the_full_silence() -> None:
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0)
    await router.tick(1.0 + SILENCE - 0.1)
    assert services.submitted == []
    await router.tick(1.0 + SILENCE)
    assert services.submitted == [("robot", "i want a latte")]


@pytest.mark.parametrize("began", [1.2, 1.9])
async def test_words_that_are_no_command_join_the_command_that_waited(began: float) -> None:
    # An addition, a correction or talk, whenever it began before the silence timer: joined,
    # refused, nothing moves (the order is never made without what was added to it).
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0)
    router.activity(began, voiced=True)
    await say(router, "large", 2.2)
    router.activity(2.2, voiced=False)
    await router.tick(2.2 + SILENCE)
    assert services.submitted == [("robot", "i want a latte large")]


async def test_with_the_wake_word_talk_after_a_command_that_waited_stays_with_it() -> None:
    # After the wake word, what is said while the query is open is the operator's.
    router, services = going_on_router("wake")
    await say(router, "computer i want a latte", 1.0)
    await say(router, "all right", 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", "i want a latte all right")]


@pytest.mark.parametrize("said", ["stop", "with oat milk, stop"])
async def test_a_stop_while_a_whole_command_waits_for_the_rest_sends_nothing(said: str) -> None:
    # The 1.1 s more an order that may go on waits is no time in which a stop is lost: the
    # order is dropped with the stop, named as not sent, and nothing goes after the silence.
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0)
    await say(router, said, 1.6)
    await router.tick(1.6 + SILENCE + LISTEN)
    assert services.stops and services.submitted == []
    assert services.unsent and services.unsent[0].startswith("i want a latte")
    assert len(router.stack) == 1


async def test_the_next_whole_command_leaves_the_one_that_waited_as_it_stood() -> None:
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0)
    await say(router, "can i have a mocha", 1.3)
    await router.tick(1.3 + 0.4)
    assert services.submitted == [("robot", "i want a latte"), ("robot", "can i have a mocha")]


@pytest.mark.parametrize(
    ("order_db", "talk_db", "sent"),
    [
        (-15.0, -26.0, ["i want a latte", "all right"]),  # another voice, further away
        # The operator's own a little quieter, or typed: no level to tell. The order is said
        # back ("Did you say ...?") and made only on a yes; the words after it are left.
        (-15.0, -20.0, ["i want a latte"]),
        (None, -26.0, ["i want a latte"]),
    ],
)
async def test_talk_far_quieter_than_a_waiting_command_is_someone_elses(
    order_db: float | None, talk_db: float, sent: list[str]
) -> None:
    # The kitchen's "All right." after "Make me an 8 ounce coffee." joined the order, and
    # both were refused.
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0, order_db)
    await say(router, "all right", 1.9, talk_db)
    await router.tick(1.9 + SILENCE)
    assert [text for _, text in services.submitted] == sent
    asked = len(sent) == 1
    assert services.doubts == ({"i want a latte": 'words after it: "all right"'} if asked else {})


@pytest.mark.parametrize("talk_db", [-30.0, -20.0, None])
@pytest.mark.parametrize("before", ["No, I don't have that one.", "Don't do it!", "No foam."])
async def test_a_no_before_a_command_leaves_it_asked_about_at_any_level(
    talk_db: float | None, before: str
) -> None:
    # The kitchen's "No, I don't have that one." before "Can I have a 16 ounce house coffee?"
    # joined it, and both were refused. A quiet "Don't do it!" may be the operator's, turned
    # away, so the order is never made unasked (a rule that dropped quiet ended sentences was
    # withdrawn on review: it ran "go home" after a quiet "Don't do it!"): it is heard on its
    # own, at its own level, and asked about with the words before it quoted.
    router, services = quick_router("can i have a mocha", mode="always")
    await say(router, before, 1.0, talk_db)
    await say(router, "can i have a mocha", 2.0, -15.0)
    await router.tick(2.0 + SILENCE)
    assert services.dropped_said == []
    assert services.submitted == [("robot", "can i have a mocha")]
    assert services.doubts == {"can i have a mocha": f'words before it: "{before}"'}
    assert services.levels == {"can i have a mocha": -15.0}


async def test_an_order_taken_back_before_another_is_dropped_aloud() -> None:
    # "I want a latte" ... "no, a large one" ... "can I have a mocha": the latte is never made,
    # and the operator hears so; the mocha is asked about with the words before it.
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0)
    await say(router, "no, a large one", 1.6)
    await say(router, "can i have a mocha", 2.4)
    await router.tick(2.4 + SILENCE)
    before = "i want a latte no, a large one"
    assert services.dropped_said == [(before, "taken back before another command")]
    assert services.submitted == [("robot", "can i have a mocha")]
    assert services.doubts == {"can i have a mocha": f'words before it: "{before}"'}


@pytest.mark.parametrize("before", ["don't", "No foam"])
async def test_with_the_wake_word_a_no_before_a_command_stays_with_it(before: str) -> None:
    router, services = quick_router("can i have a mocha")
    await say(router, f"computer {before}", 1.0)
    await say(router, "can i have a mocha", 2.0)
    await router.tick(2.0 + SILENCE)
    assert services.submitted == [("robot", f"{before} can i have a mocha")]
    assert services.doubts == {}


@pytest.mark.parametrize(
    "then",
    ["No, make it a mocha.", "No.", "Wait.", "actually, cancel that", "oops, wrong one",
     "I changed my mind", "don't"],
)  # fmt: skip
async def test_a_quiet_take_back_still_holds_the_order_back(then: str) -> None:
    # The operator turned away: 14 dB quieter, still a take-back (joined, both refused).
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0, -13.7)
    await say(router, then, 1.9, -27.7)
    await router.tick(1.9 + SILENCE)
    # Joined and refused, cancelled ("cancel that"), or asked about with the words quoted:
    # never the latte made as it stood.
    asked = services.doubts.get("i want a latte") == f'words after it: "{then}"'
    assert services.submitted in ([("robot", f"i want a latte {then}")], []) or asked


@pytest.mark.parametrize("then", ["and sugar", "a large one", "extra shot", "I want a mocha"])
async def test_quiet_words_about_the_cells_things_stay_with_the_order(then: str) -> None:
    # The order made plain and "and sugar" refused apart; or a latte and a mocha made.
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0, -13.7)
    await say(router, then, 1.9, -28.4)
    await router.tick(1.9 + SILENCE)
    assert services.submitted == [("robot", f"i want a latte {then}")]


async def test_a_quiet_addition_still_goes_with_the_order() -> None:
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0, -13.7)
    await say(router, "with oat milk", 1.9, -27.7)
    await router.tick(1.9 + SILENCE)
    assert services.submitted == [("robot", "i want a latte with oat milk")]


async def test_a_question_that_finishes_the_order_is_part_of_it() -> None:
    # "I want a latte" ... "with oat milk?": rising intonation written as a question.
    router, services = going_on_router()
    services.questions = ("with oat milk?",)
    await say(router, "i want a latte", 1.0)
    await say(router, "with oat milk?", 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.dropped_said == []
    assert services.submitted == [("robot", "i want a latte with oat milk?")]


@pytest.mark.parametrize("mode", ["always", "wake"])
async def test_hold_on_while_an_order_waits_for_its_rest_holds_it_back(mode: str) -> None:
    # "I want a latte" ... "hold on": "Nothing is moving.", and then the latte was made.
    router, services = going_on_router(mode)
    router.global_rules = (*router.global_rules, pause_rule(["computer"]))
    wake = "computer " if mode == "wake" else ""
    await say(router, f"{wake}i want a latte", 1.0)
    await say(router, "hold on", 1.6)
    await router.tick(1.6 + SILENCE + LISTEN)
    assert services.pauses and services.submitted == []
    assert services.dropped_said == [("i want a latte", "paused before it was sent")]


async def test_with_the_wake_word_quieter_talk_still_joins_the_command() -> None:
    router, services = going_on_router("wake")
    await say(router, "computer i want a latte", 1.0, -15.0)
    await say(router, "all right", 1.6, -30.0)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", "i want a latte all right")]


@pytest.mark.parametrize("question", ["do you have decaf", "how much is that", "what"])
async def test_a_question_after_a_whole_command_that_waited_holds_it_back(question: str) -> None:
    # "I want a latte" ... "do you have decaf?": the question leaves open whether the order
    # stands, so it is dropped aloud (never made) and the question is heard on its own.
    router, services = going_on_router()
    services.questions = (question,)
    services.complete_phrases = (*services.complete_phrases, question)
    await say(router, "i want a latte", 1.0)
    await say(router, question, 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.dropped_said == [("i want a latte", "a question followed before it was sent")]
    assert services.submitted == [("robot", question)]


async def test_a_question_after_a_question_drops_nothing() -> None:
    router, services = going_on_router()
    services.questions = ("do you have decaf", "what milks")
    services.complete_phrases = (*services.complete_phrases, *services.questions)
    await say(router, "do you have decaf", 1.0)
    await say(router, "what milks", 1.3)
    await router.tick(1.3 + SILENCE)
    assert services.dropped_said == []
    assert services.submitted and services.submitted[0][1].startswith("do you have decaf")


async def test_the_start_of_how_a_sentence_goes_on_is_waited_for() -> None:
    router, services = going_on_router()
    services.going_on = (*services.going_on, "i want a latte with")
    await say(router, "i want a latte", 1.0)
    await say(router, "with", 1.8)
    await say(router, "oat milk", 2.6)
    await router.tick(2.6 + 0.4)
    assert services.submitted == [("robot", "i want a latte with oat milk")]


TAKE_BACKS = ("no, I don't know", "hang on", "nah", "oops, wrong one", "changed my mind")
"""Taken back or negated, in the words people use for it."""


@pytest.mark.parametrize(
    ("then", "mode"),
    [
        *((then, mode) for mode in ("always", "wake")
          for then in ("no, make it a mocha", "uh, no, can i have a mocha", "large",
                       "a mocha instead")),
        # With the wake word, what is said while the query is open is the operator's.
        *((then, "wake") for then in TAKE_BACKS),
    ],
)  # fmt: skip
async def test_a_correction_or_an_addition_of_a_whole_command_that_waited_stays_with_it(
    then: str, mode: str
) -> None:
    # Joined, the interpreter refuses it and nothing moves: never the order before the "no",
    # nor a question that a reflexive "yes" would answer ("Did you say: I want a latte?").
    router, services = going_on_router(mode)
    wake = "computer " if mode == "wake" else ""
    await say(router, f"{wake}i want a latte", 1.0)
    await say(router, then, 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", f"i want a latte {then}")]
    assert services.doubts == {}


@pytest.mark.parametrize(
    "then", ["All right.", "I can't say that", "decaf please", "Sorry, take your time", *TAKE_BACKS]
)
async def test_words_after_a_whole_command_that_make_it_none_leave_it_said_back(then: str) -> None:
    # The kitchen's "All right." (or "No, I don't know.") after "Make me an 8 ounce coffee."
    # joined it and both were refused. Whose words they were cannot be told at one level: the
    # order goes with a doubt and is made only on a yes to a question that quotes them ('I
    # heard "nah" after ...': a truthful yes is an informed one), and the words are left.
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0)
    await say(router, then, 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", "i want a latte")]
    assert services.doubts == {"i want a latte": f'words after it: "{then}"'}


async def test_with_the_wake_word_words_after_a_whole_command_still_join_it() -> None:
    router, services = going_on_router("wake")
    await say(router, "computer i want a latte", 1.0)
    await say(router, "All right.", 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", "i want a latte All right.")]


# "Get me an espresso with skim milk." "No, I don't know." "May I have a mocha?": the "no" is
# asked about with the first; the last is an order of its own.
@pytest.mark.parametrize("talk", ["All right.", "No, I don't know."])
async def test_a_whole_command_after_talk_that_followed_one_is_heard_on_its_own(talk: str) -> None:
    router, services = going_on_router()
    router.owner_hears_again = True
    await say(router, "i want a latte", 1.0)
    await say(router, talk, 1.6)
    await say(router, "can i have a mocha", 2.2)
    assert services.submitted == [("robot", "i want a latte")]
    assert services.doubts == {"i want a latte": f'words after it: "{talk}"'}
    assert [u.text for u in router.again] == ["can i have a mocha"]
    # A take-back between two commands may bear on either: both are asked about.
    asked = f'words before it: "{talk}"' if "No" in talk else None
    assert router.again[0].doubt == asked


@pytest.mark.parametrize("then", ["go home", "add cheese"])
async def test_a_dont_between_two_commands_leaves_both_asked_about(then: str) -> None:
    # "add bread" ... "Don't." ... "go home" had asked about the bread and made "go home".
    router, services = quick_router("add bread", "go home", "add cheese", mode="always")
    await say(router, "add bread", 1.0)
    await say(router, "Don't.", 1.3)
    await say(router, then, 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", "add bread"), ("robot", then)]
    assert services.doubts == {"add bread": 'words after it: "Don\'t."',
                               then: 'words before it: "Don\'t."'}  # fmt: skip


async def test_a_question_after_talk_holds_the_order_back_and_is_heard() -> None:
    router, services = quick_router(
        "i want a latte", "do you have decaf", mode="always", going_on=("i want a latte",)
    )
    services.questions = ("do you have decaf",)
    services.own_verbs = (*services.own_verbs, "do")  # a question is no continuation
    router.owner_hears_again = True
    await say(router, "i want a latte", 1.0)
    await say(router, "All right.", 1.6)
    await say(router, "do you have decaf", 2.2)
    assert services.submitted == [] and services.doubts == {}
    assert services.dropped_said and services.dropped_said[0][0] == "i want a latte All right."
    assert [u.text for u in router.again] == ["do you have decaf"]


async def test_the_question_about_an_order_left_by_talk_is_heard_at_the_orders_level() -> None:
    # Louder talk after a quiet order: the operator's own yes must not be taken for far talk.
    router, services = going_on_router()
    await say(router, "i want a latte", 1.0, -30.0)
    await say(router, "All right.", 1.6, -18.0)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", "i want a latte")]
    assert services.levels == {"i want a latte": -30.0}


async def test_the_wake_word_and_cancel_cancel_the_open_query() -> None:
    # "computer, cancel" had sent the order it was said to cancel.
    router, services = going_on_router("wake")
    await say(router, "computer i want a latte", 1.0)
    await say(router, "computer cancel", 1.5)
    await router.tick(1.5 + SILENCE + LISTEN)
    assert services.submitted == []
    assert "Cancelled." in services.spoken


async def test_a_question_before_talk_is_not_said_back_as_a_command() -> None:
    router, services = quick_router("do you have decaf", mode="always")
    services.questions = ("do you have decaf",)
    await say(router, "do you have decaf", 1.0)
    await say(router, "All right.", 1.1)
    await router.tick(1.1 + SILENCE)
    assert services.submitted == [("robot", "do you have decaf All right.")]
    assert services.doubts == {}


@pytest.mark.parametrize(
    ("before", "after", "asked"),
    [
        # The rest of a command (no verb of its own) goes on from the words before it.
        ("don't add", "cheese", False),
        ("don't put the bread and", "cheese", False),
        ("skip the", "cheese", False),
        ("so anyway the", "cheese", False),
        # A command of its own is heard apart and asked about with the words quoted: a "no"
        # with other words may govern what follows, whatever Whisper wrote after it.
        ("do not add", "add bread", True),
        ("there should be no...", "add cheese", True),
        ("put no", "add cheese", True),
        ("I said no,", "add cheese", True),
        ("skip", "add cheese", True),
        ("leave out the", "add cheese", True),
    ],
)
async def test_a_negation_before_a_command_is_never_dropped_from_it(
    before: str, after: str, asked: bool
) -> None:
    router, services = quick_router("cheese", "add bread", "add cheese", mode="always")
    await say(router, before, 1.0)
    await say(router, after, 2.0)
    await router.tick(2.0 + SILENCE)
    assert services.dropped_said == []
    if asked:
        assert services.submitted == [("robot", after)]
        assert services.doubts == {after: f'words before it: "{before}"'}
    else:
        assert services.submitted == [("robot", f"{before} {after}")]
        assert services.doubts == {}


async def test_with_the_wake_word_talk_after_a_whole_command_that_waited_is_not_a_command() -> None:
    router, services = going_on_router("wake")
    await say(router, "computer i want a latte", 1.0)
    await say(router, "can i have a mocha", 2.0)  # a colleague, without the wake word
    await router.tick(2.0 + SILENCE + LISTEN)
    assert services.submitted == [("robot", "i want a latte")]
    assert len(router.stack) == 1


def test_words_heard_with_a_spotted_stop_name_only_what_would_have_been_commands() -> None:
    router, _ = quick_router("go home")
    assert heard_with_spotted_stop(router, "Stop, then go home.", ("computer",)) == ["go home"]
    assert heard_with_spotted_stop(router, "Stop. See you later.", ("computer",)) == []
    # A misheard joining word ("end" for "then") does not hide the command; Whisper's loop
    # of the same words names it once.
    looped = "stop, end go home, stop, end go home, stop, end go home."
    assert heard_with_spotted_stop(router, looped, ("computer",)) == ["go home"]
    # A command taken back in the stop's breath is not one that "will not happen".
    assert heard_with_spotted_stop(router, "Stop, don't go home.", ("computer",)) == []


def test_words_heard_with_a_spotted_stop_while_dictating_are_the_notes() -> None:
    router, _ = quick_router("go home")
    note = DictationFrame("note")
    router.push(note)
    said = "we need to stop the line at noon"
    assert heard_with_spotted_stop(router, said, ("computer",)) == []
    assert note.parts == [said]


async def test_a_stop_drops_what_a_frame_gave_back_to_be_heard_and_names_it() -> None:
    # The daemon hears it again only after the order before was accepted; a stop read in
    # that wait comes first and must take it along, said as dropped.
    router, services = going_on_router()
    router.owner_hears_again = True
    await say(router, "i want a latte", 1.0)
    await say(router, "can i have a mocha", 1.3)
    assert services.submitted == [("robot", "i want a latte")]
    assert [u.text for u in router.again] == ["can i have a mocha"]
    await say(router, "stop", 1.4)
    assert services.unsent == ["can i have a mocha"] and router.again == []
    await router.tick(1.4 + SILENCE + LISTEN)
    assert services.submitted == [("robot", "i want a latte")]


@pytest.mark.parametrize("before", ["No, no, no.", "nope", "Oh no!"])
async def test_a_no_said_on_its_own_does_not_take_back_the_command_after_it(before: str) -> None:
    # It takes back what came before it (talk nearby, or the operator starting again): the
    # words before are dropped aloud and the order is heard on its own.
    router, services = quick_router("add cheese", mode="always")
    router.owner_hears_again = True
    await say(router, before, 1.0)
    await say(router, "add cheese", 2.0)
    assert services.dropped_said and services.dropped_said[0][0] == before
    assert [u.text for u in router.again] == ["add cheese"]


@pytest.mark.parametrize("then", ["no, go home", "no, can i have a mocha", "No, no, go home"])
async def test_a_correction_that_holds_a_command_is_refused_with_the_one_before(then: str) -> None:
    # Asked 'I heard "no, go home" after "i want a latte"', a yes made the latte.
    router, services = quick_router(
        "i want a latte", "go home", "can i have a mocha", mode="always",
        going_on=("i want a latte",),
    )  # fmt: skip
    await say(router, "i want a latte", 1.0)
    await say(router, then, 1.6)
    await router.tick(1.6 + SILENCE)
    assert services.submitted == [("robot", f"i want a latte {then}")]
    assert services.doubts == {}


@pytest.mark.parametrize(
    "said", ["so nope", "I mean the other one", "on second thought", "make that two"]
)
def test_a_take_back_is_found_wherever_it_stands(said: str) -> None:
    assert takes_back(said)
    assert not takes_back("can I get a small latte with a bit of sugar")
