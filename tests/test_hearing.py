"""The recogniser's hypotheses held to the live grammar (voiced.inputs.hearing), with a real router,
a real interpreter and the sandwich cell; espeak-ng supplies the sounds for the repair."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from voiced.audio.transcribe import Choice
from voiced.frames.base import BaseFrame
from voiced.frames.dictation import DictationFrame
from voiced.frames.pause import pause_rule
from voiced.frames.router import CommandRouter
from voiced.frames.stop import stop_rule
from voiced.robot.cellfile import load_cell
from voiced.rules import Utterance

from tests.fakes import EventRecorder, FakeServices
from voiced.commands.belief import Belief
from voiced.config import Config
from voiced.inputs.audio import FRAME_WORDS
from voiced.inputs.hearing import GrammarChooser
from voiced.interpreter.tiers import Interpreter
from voiced.paths import DataDir

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")


def chooser(
    tmp: Path, mode: str = "wake", repair: bool = True, cell_name: str = "sandwich",
    judge: bool = False, held: bool = False,
) -> tuple[GrammarChooser, CommandRouter]:  # fmt: skip
    cell = load_cell(cell_name)
    interpreter = Interpreter(cell, DataDir(tmp), None, Config().llm, lambda event: None)
    base = BaseFrame("computer", 1.5, 8.0)
    router = CommandRouter(base, FakeServices(), EventRecorder(), [stop_rule(), pause_rule()], mode)
    base.on_push(router, 0.0)
    belief = Belief(cell, cell.initial_scene, cell.initial_scene)
    choose = GrammarChooser(
        interpreter, belief, router, "computer", FRAME_WORDS,
        lambda text: router.is_global(Utterance(text, router.now)), repair=repair, judge=judge,
        held=held,
    )  # fmt: skip
    return choose, router


def test_decoding_is_held_only_to_a_closed_cells_sentences(tmp_path: Path) -> None:
    """The barista's templates are every order it takes: the recogniser may hold to them,
    with the wake word in front where one is needed. The sandwich's are a few extra phrasings
    beside the grammar; and with `[stt] held` off there is nothing to hold to."""
    always, _ = chooser(tmp_path / "a", mode="always", cell_name="barista", held=True)
    graph = always.sentences()
    assert graph is not None and graph.says(["can", "i", "get", "a", "latte"])
    wake, _ = chooser(tmp_path / "w", cell_name="barista", held=True)
    graph = wake.sentences()
    assert graph is not None and not graph.says(["can", "i", "get", "a", "latte"])
    assert graph.says(["computer", "can", "i", "get", "a", "latte"])
    assert chooser(tmp_path / "s", cell_name="sandwich", held=True)[0].sentences() is None
    assert chooser(tmp_path / "o", cell_name="barista", held=False)[0].sentences() is None


def test_the_first_hypothesis_the_grammar_reads_whole_is_kept(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    heard = ["Computer add layer this.", "Computer add this.", "Computer add lettuce."]
    # "add this" parses ("put it down"), but nothing is held: it cannot run, so it is passed by.
    assert choose(heard) == Choice(2)


def test_in_wake_mode_a_hypothesis_without_the_wake_word_is_not_a_command(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    assert choose(["Can you add bread?", "Computer add bread."]) == Choice(1)
    always, _ = chooser(tmp_path / "always", mode="always")
    assert always(["add bread", "computer add bread"]) == Choice(0)


def test_stop_and_frame_words_are_kept_as_they_are(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    assert choose(["Stop!", "Computer, stop."]) == Choice(0)
    assert choose(["hold on", "computer go home"]) == Choice(0)
    assert choose(["Yes.", "computer add bread"]) == Choice(0)


@needs_espeak
def test_a_command_nothing_reads_is_repaired_by_sound(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path)
    choice = choose(["Computer, art bread.", "Computer, art bred."])
    assert choice is not None and choice.index == 0
    assert choice.text == "computer add bread" or choice.text == "computer at bread"
    off, _ = chooser(tmp_path / "off", repair=False)
    assert off(["Computer, art bread."]) is None


@needs_espeak
def test_talk_questions_and_dictation_are_never_bent_into_commands(tmp_path: Path) -> None:
    choose, router = chooser(tmp_path)
    assert choose(["Somebody left a mop by the loading dock."]) is None  # no wake word
    # A question is kept as heard (the daemon answers it), never repaired into a command.
    asked = choose(["Computer, what is on the left stack?", "Computer, put it on the left stack."])
    assert asked == Choice(0)
    router.push(DictationFrame("note"))
    assert choose(["computer art bread", "computer add bread"]) is None


def test_a_name_the_cell_lacks_is_kept_and_never_swapped_for_one_it_has(tmp_path: Path) -> None:
    """ "add avocado": the operator was understood, and must hear that there is no avocado; a
    lower hypothesis or a repair naming tomato would move the arm for a command never given."""
    choose, _ = chooser(tmp_path)
    assert choose(["Computer add avocado.", "Computer add tomato."]) == Choice(0)
    assert choose(["Computer, art avocado.", "Computer add avocado.", "Computer add tomato."]) == (
        Choice(1)
    )


@pytest.mark.parametrize(
    ("cell_name", "heard"),
    [
        ("sandwich", ["Computer, add bread, no cheese.", "Computer, add bread and cheese."]),
        ("sandwich", ["Computer, don't add cheese.", "Computer, add cheese."]),
        # A template a word away: the repair took the "don't" out and the arm moved.
        ("sandwich", ["Computer, don't slap cheese on it."]),
        ("sandwich", ["Computer, don't scrap the sandwich."]),
        ("sandwich", ["Computer, I really don't want cheese.", "Computer, add cheese."]),
        ("weld", ["computer don't weld seam three"]),
        ("weld", ["computer never weld the third seam"]),
        ("barista", ["Computer, don't make me a latte."]),
        ("barista", ["Computer, I don't want a latte."]),
    ],
)  # fmt: skip
def test_a_negation_is_kept_as_heard_and_never_repaired_or_swapped(
    tmp_path: Path, cell_name: str, heard: list[str]
) -> None:
    # Refused ("I can't act on ..."): never a repair, a held sentence or a lower hypothesis
    # without it, each of which moves the arm for the command the operator took back.
    choose, _ = chooser(tmp_path, cell_name=cell_name, held=True)
    assert choose(heard) == Choice(0)


def test_the_wake_word_alone_is_kept_only_as_the_best_hypothesis(tmp_path: Path) -> None:
    """Lower down, "Computer," is the best hypothesis cut short: taking it would lose the rest
    (the question "what positions are available" became a bare wake word)."""
    choose, _ = chooser(tmp_path)
    assert choose(["Computer,"]) == Choice(0)
    assert choose(["Computer, what positions are available?", "Computer,"]) == Choice(0)
    assert choose(["Computer, the parcel van is late again.", "Computer,"]) != Choice(1)


def span(choice: Choice, heard: str) -> tuple[str, ...]:
    """The values offered for the slot that holds `heard`."""
    assert choice.form is not None
    found = [s for s in choice.slots if choice.form[s.start : s.end] == heard]
    assert len(found) == 1, (heard, choice)
    return found[0].values


def test_the_judge_is_offered_the_other_values_of_each_slot_and_the_other_readings(
    tmp_path: Path,
) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", judge=True)
    heard = ["Can I get a 12 ounce latte?", "Can I get a 20 ounce latte?", "Can I get a lot?"]
    choice = choose(heard)
    assert choice is not None and choice.index == 0 and choice.text is None
    assert choice.form == "can i get a 12 ounce latte"
    assert choice.rivals == ("can i get a 20 ounce latte",)  # "a lot" is no order
    assert set(span(choice, "12 ounce")) == {
        "small", "medium", "large", "eight ounce", "sixteen ounce", "twenty ounce",
    }  # fmt: skip
    assert "mocha" in span(choice, "latte") and "latte" not in span(choice, "latte")


def test_the_wake_word_stays_in_front_of_what_the_judge_hears(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, cell_name="barista", judge=True)
    choice = choose(["Computer, give me an iced mocha."])
    assert choice is not None and choice.form == "computer give me an iced mocha"
    assert span(choice, "iced mocha")


def test_frame_words_stops_and_questions_are_not_judged(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", judge=True)
    for heard in (["Yes."], ["Stop!", "Stop the latte."], ["What can you make?"]):
        choice = choose(heard)
        assert choice is None or not choice.judged, (heard, choice)


def test_grammar_commands_offer_the_lower_readings_the_grammar_also_reads(
    tmp_path: Path,
) -> None:
    choose, _ = chooser(tmp_path, judge=True)
    choice = choose(["Computer add bread.", "Computer add red.", "Computer add cheese."])
    assert choice is not None and choice.form == "computer add bread"
    assert choice.rivals == ("computer add cheese",) and choice.slots == ()


def test_without_the_judge_the_choice_is_as_before(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    assert choose(["Can I get a 12 ounce latte?"]) == Choice(0)


def test_a_sentence_whisper_wrote_twice_is_read_once(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    twice = "Give me an americano with lots of brown sugar. Give me an americano with lots of"
    assert choose([twice]) == Choice(0, "Give me an americano with lots of brown sugar.")


@needs_espeak
def test_a_sentence_written_twice_is_repaired_as_a_sentence_said_once(tmp_path: Path) -> None:
    """Written twice, an order that lost a short word to the noise was taken for a question
    nobody could answer, and never repaired."""
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    twice = "Give me 12 ounce, single shot, light roast latte. " * 2
    assert choose([twice.strip()]) == Choice(0, "give me a 12 ounce single shot light roast latte")
    twice = "Can I have a large americano, whole milk and some sugar. " * 2
    assert choose([twice.strip()]) == Choice(
        0, "can i have a large americano with whole milk and some sugar"
    )


def test_a_question_or_a_refusal_written_twice_is_kept_said_once(tmp_path: Path) -> None:
    """Answered or refused once, as a question said once is; a thing the cell lacks in a
    closed cell's sentence is still held and asked about."""
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", held=True)
    question = "Do you have any oat milk today?"
    assert choose([f"{question} {question}"]) == Choice(0, question)
    lacking = "Give me a large hot chocolate with sugar."
    assert choose([f"{lacking} {lacking}"]) == Choice(0, lacking, refused=True)


def test_a_short_phrase_said_twice_is_left_as_said(tmp_path: Path) -> None:
    from voiced.audio.guards import once

    assert once("go left, go left") == "go left, go left"
    assert once("add bread and cheese and tomato") == "add bread and cheese and tomato"


@needs_espeak
def test_a_word_the_cell_does_not_sell_is_repaired_into_one_of_its_sentences(
    tmp_path: Path,
) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    heard = "Can I get a light roast ice mocha with some sugar?"
    assert choose([heard]) == Choice(0, "can i get a light roast iced mocha with some sugar")


@needs_espeak
def test_a_name_heard_in_a_span_may_be_kept_in_a_longer_name(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    assert choose(["brew a coffee with some skin milk"]) == Choice(
        0, "brew a coffee with some skim milk"
    )


@needs_espeak
def test_a_repair_is_judged_like_a_hypothesis(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", judge=True)
    choice = choose(["brew a coffee with some skin milk"])
    assert choice is not None and choice.text == "brew a coffee with some skim milk"
    assert choice.form == "brew a coffee with some skim milk"
    assert "almond milk" in span(choice, "skim milk")


@needs_espeak
def test_a_short_word_the_recogniser_dropped_or_added_is_put_right_by_a_template(
    tmp_path: Path,
) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", judge=True)
    dropped = choose(["Give me a 20 ounce iced mocha, skim milk and a bit of sugar."])
    assert dropped is not None
    assert dropped.text == "give me a 20 ounce iced mocha with skim milk and a bit of sugar"
    added = choose(["May I have a double shot of drip coffee?"])
    assert added is not None and added.text == "may i have a double shot drip coffee"
    article = choose(["Make me medium roast latte."])
    assert article is not None and article.text == "make me a medium roast latte"
    edits = choose(["Get me 8 ounce, double shot, dark roast coffee."])
    assert edits is not None and edits.text in {
        "get me an 8 ounce double shot dark roast coffee",
        "get me a 8 ounce double shot dark roast coffee",
    }  # fmt: skip


@needs_espeak
def test_a_word_misheard_before_the_name_of_a_kind_is_not_taken_out(tmp_path: Path) -> None:
    """A "health coffee" was made a plain coffee and "single shot with coffee" a single shot
    coffee, unasked: the word there says which coffee (house, drip, iced). Such an order is
    held to the sentences by the audio instead, and asked about."""
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", held=True)
    for heard in ("Can I get a medium roast, health coffee with brown sugar?",
                  "May I have a single shot with coffee with a lot of skim milk?"):  # fmt: skip
        choice = choose([heard])
        assert choice is None or (choice.text is None and choice.refused), (heard, choice)
    # A short word before the name of a thing is still taken out.
    plain = choose(["May I have a double shot of drip coffee?"])
    assert plain is not None and plain.text == "may i have a double shot drip coffee"


@needs_espeak
def test_a_take_back_is_never_repaired_away_nor_left_out_by_a_lower_hypothesis(
    tmp_path: Path,
) -> None:
    """ "..., oops." with the "oops" taken out, or a lower hypothesis without it, ran the
    order that was taken back, unasked."""
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", held=True)
    for heard in ("Give me a large latte with sugar, oops.",
                  "Give me a large latte with sugar, oops. Give me a large latte with sugar, oops.",
                  "Can I get a large latte with sugar, wait."):  # fmt: skip
        choice = choose([heard])
        assert choice is None or (choice.text or heard).endswith(("oops.", "wait.")), choice
    lower = ["Oops, can I get a large hot chocolate with some sugar?",
             "Can I get a large coffee with sugar."]  # fmt: skip
    assert choose(lower) in (None, Choice(0), Choice(0, refused=True))
    # Taken back in so many words: "I changed my mind" had let the lower hypothesis without
    # them be made.
    for taken_back in ("Brew a large latte, I changed my mind.", "Brew a large latte, forget it."):
        assert choose([taken_back, "Brew a large latte."]) in (None, Choice(0)), taken_back


def test_a_refusal_written_twice_is_never_offered_to_the_judge(tmp_path: Path) -> None:
    """Kept as heard, said once: with the judge on, a lower hypothesis offered beside it
    could be chosen over a command the cell refuses ("avocado" -> "lettuce")."""
    choose, _ = chooser(tmp_path, judge=True)
    said = "Computer, add some avocado please."
    choice = choose([f"{said} {said}", "Computer, add some lettuce please."])
    assert choice == Choice(0, said)


@needs_espeak
def test_talk_and_real_questions_are_not_made_orders(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", judge=True)
    assert choose(["The parcel van is late again."]) is None
    for asked in ("What can you make?", "Give me the menu."):
        choice = choose([asked])
        assert choice == Choice(0), (asked, choice)  # answered, or refused, as heard


def test_an_order_after_talk_in_the_same_segment_is_taken_alone(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    heard = "I'll see you later. Okay, I know. Can I have a large latte with sugar?"
    assert choose([heard]) == Choice(0, "Can I have a large latte with sugar?")
    # Talk with a negation bears on what follows (as the query frame holds too): kept whole.
    negated = "I'll see you later. No, I don't know. Can I have a large latte with sugar?"
    assert choose([negated]) == Choice(0)
    # Only the cell's own sentences come out of talk: not a looser reading ("go home").
    assert choose(["We were late. Okay then, go home."]) is None


@needs_espeak
def test_a_misheard_opening_becomes_a_whole_one(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    assert choose(["Prune iced mocha with some sweetener."]) == Choice(
        0, "brew an iced mocha with some sweetener"
    )


def test_questions_and_readings_that_begin_as_no_order_are_kept_as_heard(tmp_path: Path) -> None:
    """A question is kept as heard, even one that ends as an order does ("do you have" may be a
    misheard "brew"; it may as well be a question about the menu): answered or refused."""
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", held=True)
    assert choose(["Who a single shot, light roast, drip coffee with skim milk."]) == Choice(0)
    assert choose(["Do you have a latte with sugar?"]) == Choice(0)


@needs_espeak
def test_a_closed_cells_repairs_make_only_its_own_sentences(tmp_path: Path) -> None:
    """The grammar reads a speed change in any cell; the barista's orders are its templates,
    and a repair of the kitchen's "with lots of speed pill" into "with lots of speed up" had
    changed the arm's speed."""
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista")
    assert choose(["With lots of speed pill."]) is None
    assert choose(["brew a coffee with some skin milk"]) == Choice(
        0, "brew a coffee with some skim milk"
    )


@needs_espeak
@pytest.mark.parametrize(
    ("heard", "refused"),
    [
        # Names what the cell lacks, no repair reaches it: the audio may hold the order.
        ("I want a large, dark roast, triple shot, ice coffee with a bit of sweet.", True),
        ("Room it, triple shot, large vocal, with some almond milk and some sugar.", True),
        # A question in words an order begins with ("give me"), no question the cell answers.
        ("Give me a triple shot, 8 ounce, dark roast, latte, with a little bit of milk and water.",
         True),
        # A question the cell answers is answered, never held to an order.
        ("Do you have oat milk?", False),
        ("What milks do you have?", False),
    ],
)  # fmt: skip
def test_a_refusal_in_a_closed_cell_may_be_held_to_its_sentences(
    tmp_path: Path, heard: str, refused: bool
) -> None:
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", held=True)
    assert choose([heard]) == Choice(0, refused=refused)
    # Only where the sentences are every command the cell takes, and held decoding is on.
    choose, _ = chooser(tmp_path / "off", mode="always", cell_name="barista", held=False)
    assert choose([heard]) == Choice(0)


@needs_espeak
def test_a_name_the_sandwich_lacks_is_refused_as_heard(tmp_path: Path) -> None:
    choose, _ = chooser(tmp_path, held=True)
    assert choose(["Computer, add avocado."]) == Choice(0)


@needs_espeak
def test_a_refusal_that_takes_something_back_is_never_held(tmp_path: Path) -> None:
    # Held and asked "Did you say: ... with a bit of sweetener?", the "oops" would be left out
    # of the question and a truthful yes make the drink.
    choose, _ = chooser(tmp_path, mode="always", cell_name="barista", held=True)
    assert choose(["I want a large latte with a bit of sweet, oops wrong one"]) == Choice(0)
