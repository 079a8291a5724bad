"""Voice picker, dictation and confirm frames, and the transitions between frames."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from voiced.frames import (
    Answer,
    BaseFrame,
    CommandRouter,
    ConfirmFrame,
    DictationFrame,
    QueryFrame,
    ReviewFrame,
    VoicePickerFrame,
)
from voiced.frames.base import split_at_wake_word
from voiced.frames.stop import stop_rule
from voiced.rules import Utterance

from tests.fakes import EventRecorder, FakeServices


def make_router() -> tuple[CommandRouter, FakeServices, EventRecorder]:
    services, events = FakeServices(), EventRecorder()
    base = BaseFrame("computer", 1.5, 8.0, ("compute her",), "robot", "note")
    router = CommandRouter(base, services, events, [stop_rule()], "wake")
    base.on_push(router, 0.0)
    return router, services, events


async def say(router: CommandRouter, *lines: str, start: float = 1.0) -> None:
    for i, line in enumerate(lines):
        await router.dispatch(Utterance(line, start + i * 0.1))


# -- voice picker ---------------------------------------------------------------------------


@pytest.mark.parametrize("opener", ["switch voice", "computer switch voice", "change voice"])
async def test_switch_voice_opens_the_picker(opener: str) -> None:
    router, services, _ = make_router()
    await say(router, opener)
    assert isinstance(router.top, VoicePickerFrame)
    assert len(router.stack) == 2, "an empty query under the picker is closed"
    assert "Annie" in services.spoken[-1]


@pytest.mark.parametrize("said", ["Annie", "annie voice", "use annie", "Annie."])
async def test_a_voice_name_sets_the_voice_and_pops(said: str) -> None:
    router, services, _ = make_router()
    await say(router, "switch voice", said)
    assert services.voice == "Annie"
    assert len(router.stack) == 1
    assert services.spoken[-1] == "This is Annie."


async def test_picker_cancel_keeps_the_voice() -> None:
    router, services, _ = make_router()
    await say(router, "switch voice", "cancel")
    assert services.voice == "Alex"
    assert len(router.stack) == 1


async def test_picker_is_exclusive() -> None:
    router, services, _ = make_router()
    await say(router, "switch voice")
    outcome = await router.dispatch(Utterance("computer add bread", 2.0))
    assert outcome.dropped
    assert isinstance(router.top, VoicePickerFrame)
    assert services.submitted == []


async def test_picker_over_a_query_returns_to_it() -> None:
    router, services, _ = make_router()
    await say(router, "computer add bread", "switch voice")
    assert [f.name for f in router.stack] == ["base", "query", "voice_picker"]
    await router.tick(5.0)
    assert services.submitted == [], "a covered query's timer waits"
    await say(router, "Michael", start=6.0)
    assert isinstance(router.top, QueryFrame)
    await router.tick(6.5)
    assert services.submitted == []
    await router.tick(6.1 + 1.5)
    assert services.submitted == [("robot", "add bread")]


# -- dictation ------------------------------------------------------------------------------


async def test_dictation_keeps_command_words_verbatim() -> None:
    router, services, _ = make_router()
    await say(router, "computer start dictation", "add bread", "go", "zero zero zero",
              "cancel", "end dictation")  # fmt: skip
    assert services.submitted == [("note", "add bread go zero zero zero cancel")]
    assert len(router.stack) == 1


async def test_dictation_has_no_silence_timer() -> None:
    router, services, _ = make_router()
    await say(router, "start dictation", "shelf A3 bolts")
    await router.tick(600.0)
    assert isinstance(router.top, DictationFrame)
    assert services.submitted == []


async def test_inventory_save_word_saves_and_keeps_dictating() -> None:
    router, services, _ = make_router()
    await say(router, "start dictation", "shelf A3", "save note", "shelf B1", "end dictation")
    assert services.submitted == [("note", "shelf A3"), ("note", "shelf B1")]


async def test_stop_inside_dictation_stops_the_arm_and_keeps_the_text() -> None:
    router, services, _ = make_router()
    await say(router, "start dictation", "first line", "stop", "second line", "end dictation")
    assert len(services.stops) == 1
    assert services.submitted == [("note", "first line second line")]


async def test_a_stop_while_dictating_says_dictation_goes_on() -> None:
    """After "stop" the next commands went into the note unannounced ("computer add bread"
    written down where the operator expected bread)."""
    router, services, _ = make_router()
    await say(router, "start dictation", "first line", "stop")
    assert services.spoken[-1] == 'Still dictating: say "end dictation" to finish.'
    assert isinstance(router.top, DictationFrame)


async def test_stop_dictation_stops_the_arm_and_ends_the_dictation() -> None:
    # An end phrase that holds a stop word: the stop reaches the arm first, and then the
    # dictation ends as the operator said, its note saved.
    router, services, _ = make_router()
    await say(router, "start dictation", "first line", "stop dictation")
    assert len(services.stops) == 1
    assert services.submitted == [("note", "first line")]
    assert len(router.stack) == 1 and services.spoken[-1] == "Dictation ended."


async def test_stop_dictation_with_the_wake_word_ends_the_dictation_too() -> None:
    router, services, _ = make_router()
    await say(router, "computer take a note", "hello world", "computer stop dictation",
              "computer add bread")  # fmt: skip
    assert services.submitted[0] == ("note", "hello world")
    assert len(router.stack) == 1 or not isinstance(router.top, DictationFrame)


async def test_a_stop_word_in_dictated_words_stops_the_arm_and_is_written_down() -> None:
    """ "we need to stop the line at noon" was left out of the note, and said as two dropped
    commands ("we need to; line at noon")."""
    router, services, _ = make_router()
    await say(router, "start dictation", "line one", "we need to stop the line at noon",
              "end dictation")  # fmt: skip
    assert len(services.stops) == 1
    assert services.unsent == []
    assert services.submitted == [("note", "line one we need to stop the line at noon")]


async def test_discard_dictation() -> None:
    router, services, _ = make_router()
    await say(router, "start dictation", "oops", "discard dictation")
    assert services.submitted == []
    assert len(router.stack) == 1


async def test_end_dictation_with_nothing_said() -> None:
    router, services, _ = make_router()
    await say(router, "start dictation", "end dictation")
    assert services.submitted == []
    assert "nothing" in services.spoken[-1]


# -- confirm --------------------------------------------------------------------------------


def push_confirm(router: CommandRouter, answers: list[Answer], timeout: float = 5.0) -> None:
    router.push(ConfirmFrame("Clear the assembly?", answers.append, timeout))


@pytest.mark.parametrize(
    ("said", "answer"),
    [("yes", "yes"), ("Yes.", "yes"), ("proceed", "yes"), ("go ahead", "yes"), ("no", "no"),
     ("cancel", "no"), ("nope", "no"), ("don't", "no")],
)  # fmt: skip
async def test_confirm_answers(said: str, answer: Answer) -> None:
    router, services, _ = make_router()
    answers: list[Answer] = []
    push_confirm(router, answers)
    assert services.spoken[-1] == "Clear the assembly?"
    await say(router, said)
    assert answers == [answer]
    assert len(router.stack) == 1


async def test_confirm_is_exclusive() -> None:
    router, _, _ = make_router()
    answers: list[Answer] = []
    push_confirm(router, answers)
    assert (await router.dispatch(Utterance("computer add bread", 1.0))).dropped
    assert (await router.dispatch(Utterance("maybe", 1.1))).dropped
    assert answers == []


async def test_confirm_times_out_and_discards() -> None:
    router, services, _ = make_router()
    answers: list[Answer] = []
    router.now = 10.0
    push_confirm(router, answers, timeout=5.0)
    await router.tick(14.9)
    assert answers == []
    await router.tick(15.0)
    assert answers == ["timeout"]
    assert "did not" in services.spoken[-1]
    assert len(router.stack) == 1


async def test_stop_during_confirm_discards_the_action() -> None:
    router, services, _ = make_router()
    answers: list[Answer] = []
    push_confirm(router, answers)
    await say(router, "stop")
    assert answers == ["no"]
    assert len(services.stops) == 1
    assert len(router.stack) == 1


# -- transitions ----------------------------------------------------------------------------


async def test_wake_word_then_mode_words_in_one_breath() -> None:
    router, _, _ = make_router()
    await say(router, "computer always listen")
    assert router.mode == "always"


@pytest.mark.parametrize(
    ("lines", "stack"),
    [
        (["computer"], ["base", "query"]),
        (["computer", "cancel"], ["base"]),
        (["computer add", "switch voice"], ["base", "query", "voice_picker"]),
        (["start dictation"], ["base", "dictation"]),
        (["computer", "start dictation"], ["base", "dictation"]),
        (["start dictation", "switch voice"], ["base", "dictation"]),
        (["switch voice", "start dictation"], ["base", "voice_picker"]),
    ],
)
async def test_stack_transitions(lines: list[str], stack: list[str]) -> None:
    router, _, _ = make_router()
    await say(router, *lines)
    assert [f.name for f in router.stack] == stack


class FakeClassifier:
    """A stand-in for the model: a fixed table of answers."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def classify(
        self, text: str, labels: Sequence[str], context: str
    ) -> tuple[str, str] | None:
        self.asked.append(text)
        label = self.table.get(text)
        return (label, "fake") if label in labels else None


async def test_llm_classifier_hears_what_the_word_lists_miss() -> None:
    router, _, _ = make_router()
    answers: list[Answer] = []
    classifier = FakeClassifier({"sure why not": "yes"})
    router.push(ConfirmFrame("Proceed?", answers.append, 5.0, classifier))
    await say(router, "yes")
    assert answers == ["yes"]
    assert classifier.asked == [], "patterns first: the model is not asked for a plain yes"
    answers.clear()
    router.push(ConfirmFrame("Proceed?", answers.append, 5.0, classifier))
    await say(router, "sure why not")
    assert answers == ["yes"]


async def test_offline_llm_classifier_never_matches() -> None:
    router, _, _ = make_router()
    answers: list[Answer] = []
    router.push(ConfirmFrame("Proceed?", answers.append, 5.0, None))
    outcome = await router.dispatch(Utterance("sure why not", 1.0))
    assert outcome.dropped
    assert answers == []


async def test_review_frame_takes_a_revision() -> None:
    router, _, _ = make_router()
    answers: list[Answer] = []
    revisions: list[str] = []
    router.push(ReviewFrame("I will weld at Pos 1, then Pos 2. Proceed?", answers.append,
                            revisions.append, 5.0))  # fmt: skip
    await say(router, "revise: skip position 2")
    assert revisions == ["revise: skip position 2"]
    assert answers == []
    assert len(router.stack) == 1


REVISIONS = ["skip the cheese", "also position 3", "use the camera", "tomato instead of cheese",
             "but leave out position 1"]  # fmt: skip


@pytest.mark.parametrize("said", REVISIONS)
async def test_review_revision_phrasings(said: str) -> None:
    router, _, _ = make_router()
    revisions: list[str] = []
    router.push(ReviewFrame("Proceed?", lambda a: None, revisions.append, 5.0))
    await say(router, said)
    assert revisions == [said]


async def test_review_frame_still_answers_yes_and_no() -> None:
    router, _, _ = make_router()
    answers: list[Answer] = []
    router.push(ReviewFrame("Proceed?", answers.append, lambda f: None, 5.0))
    await say(router, "yes")
    assert answers == ["yes"]


@pytest.mark.parametrize(
    ("text", "wake", "pieces"),
    [
        ("add bread and tomato. Computer, add meat on the left", "computer",
         ["add bread and tomato", "add meat on the left"]),
        ("add bread computer computer add cheese", "computer", ["add bread", "add cheese"]),
        ("add bread", "computer", ["add bread"]),
        ("computer", "computer", []),
        ("put the commuter mug down", "computer", ["put the commuter mug down"]),
        ("add bread, hey  gofa, add meat", "hey gofa", ["add bread", "add meat"]),
    ],
)  # fmt: skip
def test_a_command_is_cut_where_the_wake_word_is_said_again(
    text: str, wake: str, pieces: list[str]
) -> None:
    assert split_at_wake_word(text, wake) == pieces


# -- a review gives way to the next command -------------------------------------------------


@pytest.mark.parametrize(("mode", "said"), [("always", "make me a latte"),
                                            ("wake", "computer, make me a latte")])  # fmt: skip
async def test_a_whole_command_instead_of_an_answer_declines_the_review_and_is_heard(
    mode: str, said: str
) -> None:
    router, services, _ = make_router()
    router.set_mode(mode)
    services.complete_phrases = ("make me a latte",)
    answers: list[Answer] = []
    router.push(ReviewFrame("I am not sure I heard you right. I will make a mocha. Proceed?",
                            answers.append, lambda f: None, 10.0, None, ("computer",)))  # fmt: skip
    await router.dispatch(Utterance(said, 2.0))
    assert answers == ["no"]  # the mocha is not made...
    assert services.spoken[-1] == "Not confirmed; I did not do it."
    assert isinstance(router.top, QueryFrame) and router.top.text == "make me a latte"
    await router.tick(10.0)
    assert services.submitted == [("robot", "make me a latte")]  # ...the latte is ordered


async def test_words_that_are_no_command_still_leave_the_review_waiting() -> None:
    router, services, _ = make_router()
    services.complete_phrases = ("make me a latte",)
    answers: list[Answer] = []
    router.push(ReviewFrame("Proceed?", answers.append, lambda f: None, 10.0, None, ("computer",)))
    assert (await router.dispatch(Utterance("see you later", 2.0))).dropped
    assert (await router.dispatch(Utterance("computer", 2.5))).dropped
    assert answers == [] and isinstance(router.top, ReviewFrame)
    await say(router, "yes", start=3.0)
    assert answers == ["yes"]


# -- what the recogniser was unsure of goes with the command -------------------------------


async def test_a_part_heard_unsure_makes_the_whole_command_unsure() -> None:
    router, services, _ = make_router()
    router.set_mode("always")
    await router.dispatch(Utterance("brew a mocha", 1.0, doubt='heard "who a mocha"'))
    await router.dispatch(Utterance("with milk", 1.5))
    await router.tick(5.0)
    assert services.submitted == [("robot", "brew a mocha with milk")]
    assert services.doubts == {"brew a mocha with milk": 'heard "who a mocha"'}

    await router.dispatch(Utterance("brew a latte", 6.0))
    await router.tick(10.0)
    assert services.submitted[-1] == ("robot", "brew a latte")
    assert "brew a latte" not in services.doubts


async def test_with_the_wake_word_the_doubt_goes_with_the_command() -> None:
    router, services, _ = make_router()
    await router.dispatch(Utterance("computer, brew a mocha", 1.0, doubt='heard "who a mocha"'))
    await router.tick(5.0)
    assert services.submitted == [("robot", "brew a mocha")]
    assert services.doubts == {"brew a mocha": 'heard "who a mocha"'}


async def test_a_far_quieter_answer_is_another_voice_and_answers_nothing() -> None:
    router, services, _ = make_router()
    router.set_mode("always")
    answers: list[Answer] = []
    router.push(ReviewFrame("Did you say: brew a mocha?", answers.append, lambda f: None, 10.0,
                            command_db=-15.0))  # fmt: skip  # the order the question is about
    for said in ("okay", "yeah", "skip the milk", "make me a latte"):  # the next table, 15 dB down
        await router.dispatch(Utterance(said, 2.0, level_db=-30.0))
    # Nor does a command of theirs heard unsure (held, or apart from a take-back).
    await router.dispatch(Utterance("make me a latte", 2.1, level_db=-30.0, doubt='heard "x"'))
    assert answers == [] and isinstance(router.top, ReviewFrame)
    await router.dispatch(Utterance("stop", 2.5, level_db=-30.0))
    assert services.stops and answers == ["no"]  # a stop is a stop at any level


@pytest.mark.parametrize("said", ["no", "cancel", "don't"])
async def test_a_quiet_no_still_declines(said: str) -> None:
    """The operator turned away: a "no" can only keep the arm still, so it counts at any level."""
    router, _, _ = make_router()
    answers: list[Answer] = []
    router.push(ReviewFrame("Did you say: brew a mocha?", answers.append, lambda f: None, 10.0,
                            command_db=-15.0))  # fmt: skip
    await router.dispatch(Utterance(said, 2.0, level_db=-30.0))
    assert answers == ["no"] and not isinstance(router.top, ReviewFrame)


async def test_the_operators_yes_a_little_quieter_still_answers() -> None:
    router, _, _ = make_router()
    answered: list[Answer] = []
    router.push(ReviewFrame("Did you say: brew a mocha?", answered.append, lambda f: None, 10.0,
                            command_db=-15.0))  # fmt: skip
    await router.dispatch(Utterance("yes", 3.0, level_db=-19.0))  # the operator, turned a little
    assert answered == ["yes"]


async def test_a_query_sends_its_level_with_the_command() -> None:
    router, services, _ = make_router()
    router.set_mode("always")
    await router.dispatch(Utterance("brew a mocha", 1.0, level_db=-14.0))
    await router.tick(5.0)
    assert services.submitted == [("robot", "brew a mocha")]
    assert services.levels == {"brew a mocha": -14.0}


@pytest.mark.parametrize("said", ["make me a latte", "is it raining?"])
async def test_in_wake_mode_talk_without_the_wake_word_or_a_question_leaves_the_review(
    said: str,
) -> None:
    router, services, _ = make_router()
    services.complete_phrases = ("make me a latte", "is it raining?")
    services.questions = ("is it raining?",)
    answers: list[Answer] = []
    router.push(ReviewFrame("Proceed?", answers.append, lambda f: None, 10.0, None, ("computer",)))
    assert (await router.dispatch(Utterance(said, 2.0))).dropped
    assert answers == []
    outcome = await router.dispatch(Utterance(f"computer {said}", 2.5))
    if "?" in said:  # a question does not give way, with the wake word or without
        assert outcome.dropped and answers == []
    else:
        assert not outcome.dropped and answers == ["no"]


async def test_a_command_heard_unsure_is_never_an_answer_nor_a_change() -> None:
    # "add bread" ... "Don't." ... "add cheese": the cheese, heard apart from the "Don't.", had
    # been taken for a change to the bread's plan ("also add cheese"), and a yes made both.
    router, services, _ = make_router()
    router.set_mode("always")
    answers: list[Answer] = []
    revised: list[str] = []
    router.push(ReviewFrame("Shall I do it?", answers.append, revised.append, 10.0,
                            command_db=-15.0))  # fmt: skip
    await router.dispatch(
        Utterance("add cheese", 2.0, level_db=-15.0, doubt='words before it: "x"')
    )
    assert answers == ["no"] and revised == []
    assert not isinstance(router.top, ReviewFrame)
    await router.tick(6.0)  # heard on its own, and asked about in turn
    assert services.doubts == {"add cheese": 'words before it: "x"'}


async def test_in_wake_mode_a_command_heard_unsure_without_the_wake_word_leaves_the_question() -> (
    None
):
    # A nearby customer's misheard order, held without the wake word, had declined the
    # operator's question.
    router, _, _ = make_router()
    answers: list[Answer] = []
    router.push(ReviewFrame("Proceed?", answers.append, lambda f: None, 10.0,
                            wake_words=("computer",)))  # fmt: skip
    await router.dispatch(Utterance("make me a latte", 2.0, doubt='heard "x"'))
    assert answers == [] and isinstance(router.top, ReviewFrame)
