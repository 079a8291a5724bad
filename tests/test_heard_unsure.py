"""A command made of the recogniser's guess (a sentence of the cell held to from words that began
as none of them: `Ticket.doubt`) is read back and runs only on a yes; a guess never resumes,
undoes or replays. The robot is the simulator over its socket; the interpreter the real one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.link import ControllerLink
from voiced.robot.simulator import Simulator
from voiced.rules import heard_as, heard_in, words_after, words_around, words_before

from voiced.commands.asking import NOT_SURE
from voiced.commands.pipeline import RobotPipeline
from voiced.events import EventLog
from voiced.eventtypes import Dropped
from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir
from voiced.service.frame_services import DaemonServices
from voiced.targets.base import TargetResult

ORDER = "brew a small latte"
DOUBT = 'heard "who a small latte"'


@dataclass
class Cell:
    pipeline: RobotPipeline
    said: list[str]
    asked: list[str] = field(default_factory=list)
    answers: list[Callable[[str], None]] = field(default_factory=list)
    levels: list[float | None] = field(default_factory=list)
    """How loud each command asked about was said (the voice its answer must come in)."""
    sim: Simulator | None = None

    @property
    def moved(self) -> int:
        """Motion primitives the controller executed."""
        assert self.sim is not None
        return sum(self.sim.executions.values())


@pytest.fixture
async def barista(tmp_path: Path) -> AsyncIterator[Cell]:
    cell = load_cell("barista")
    said: list[str] = []
    events = EventLog()
    found: Cell | None = None

    def ask(
        question: str, answered: Callable[[str], None], revised: object, level_db: float | None
    ) -> Callable[[], None]:
        assert found is not None
        found.asked.append(question)
        found.levels.append(level_db)
        found.answers.append(answered)
        return lambda: None

    async with (
        Simulator(cell, cell.initial_scene, time_scale=0.001) as sim,
        ControllerLink("127.0.0.1", sim.motion_port, sim.control_port) as link,
    ):
        interpreter = Interpreter(cell, DataDir(tmp_path), None, LlmSettings(), lambda e, f: None)
        pipeline = RobotPipeline(
            cell, cell.initial_scene, link, events, speak=said.append,
            save_scene=lambda scene: None, ask=ask, interpreter=interpreter,
        )  # fmt: skip
        found = Cell(pipeline, said, sim=sim)
        tasks = [asyncio.create_task(pipeline.accept()), asyncio.create_task(pipeline.run())]
        try:
            yield found
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def test_an_order_heard_plainly_runs_unasked(barista: Cell) -> None:
    outcome = await asyncio.wait_for(barista.pipeline.submit(ORDER, None), 30)
    assert outcome.ok and barista.asked == [] and barista.moved > 0


async def test_an_order_made_of_a_guess_is_read_back_and_runs_on_yes(barista: Cell) -> None:
    outcome = barista.pipeline.submit(ORDER, None, doubt=DOUBT)
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    [question] = barista.asked
    assert question == f"Did you say: {ORDER}?"
    assert not outcome.done() and barista.moved == 0  # nothing moves while it is asked
    barista.answers[0]("yes")
    assert (await asyncio.wait_for(outcome, 30)).ok
    assert barista.moved > 0


async def test_an_order_left_by_talk_after_it_is_asked_about_with_the_talk_quoted(
    barista: Cell,
) -> None:
    # Not "Did you say ...?": the operator did say the order, and a truthful yes would make
    # what a "let me think" after it took back.
    outcome = barista.pipeline.submit(ORDER, None, doubt=words_after("let me think"))
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    assert barista.asked == [f'I heard "let me think" after "{ORDER}". Shall I do it?']
    barista.answers[0]("no")
    assert not (await asyncio.wait_for(outcome, 30)).ok
    assert barista.moved == 0


@pytest.mark.parametrize(
    ("doubt", "question"),
    [
        (words_before("No, I don't have that one."),
         f'I heard "No, I don\'t have that one." before "{ORDER}". Shall I do it?'),
        (words_before("Don't.") + "; " + words_after("All right."),
         f'I heard "Don\'t." before "{ORDER}" and "All right." after it. Shall I do it?'),
        # Long talk is quoted by the words nearest the order.
        (words_before("one two three four five six seven eight nine ten eleven twelve no, no"),
         f'I heard "... three four five six seven eight nine ten eleven twelve no, no" before '
         f'"{ORDER}". Shall I do it?'),
        # ... but never without the take-back that made it a question, wherever it stands.
        (words_after("well the thing is that we need to keep the line moving today so nope"),
         'I heard "well the thing is that we need to keep the line moving today so nope" '
         f'after "{ORDER}". Shall I do it?'),
        (words_before("Don't, the machine is still warming up and the cup holder is jammed."),
         'I heard "Don\'t, the machine is still warming up and the cup holder is jammed." '
         f'before "{ORDER}". Shall I do it?'),
    ],
)  # fmt: skip
async def test_an_order_heard_apart_from_the_words_before_it_is_asked_about_with_them_quoted(
    barista: Cell, doubt: str, question: str
) -> None:
    # "No, I don't have that one." (the kitchen, or the operator turned away) ... "Can I have a
    # latte?": a yes makes it, a no makes nothing.
    outcome = barista.pipeline.submit(ORDER, None, doubt=doubt)
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    assert barista.asked == [question]
    barista.answers[0]("yes")
    assert (await asyncio.wait_for(outcome, 30)).ok
    assert barista.moved > 0


async def test_an_order_held_from_words_that_take_it_back_is_asked_about_with_them_quoted(
    barista: Cell,
) -> None:
    # "Did you say: I want a large latte?" invited a truthful yes that made what the "oops"
    # took back.
    heard = "I want a large latte. Oops, wrong one."
    outcome = barista.pipeline.submit("I want a large latte", None, doubt=heard_as(heard))
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    assert barista.asked == [f'I heard "{heard}". Did you mean: I want a large latte?']
    barista.answers[0]("no")
    assert not (await asyncio.wait_for(outcome, 30)).ok
    assert barista.moved == 0
    # With talk after it too, both are quoted.
    doubt = f"{heard_as(heard)}; {words_after('All right.')}"
    outcome = barista.pipeline.submit("I want a large latte", None, doubt=doubt)
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    assert barista.asked[-1] == (
        f'I heard "{heard}" and "All right." after it. Did you mean: I want a large latte?'
    )
    barista.answers[-1]("no")
    assert not (await asyncio.wait_for(outcome, 30)).ok


def test_the_words_around_a_command_are_read_back_from_its_doubt() -> None:
    assert words_around(None) == (None, None)
    assert words_around(DOUBT) == (None, None)
    # A transcript's own double quotes would end the quote early: they read back as single.
    assert words_around(words_after('say "hi"')) == (None, "say 'hi'")
    assert words_around(words_before('No "thanks"; not that')) == ("No 'thanks'; not that", None)
    joined = f"{words_before('No.')}; {DOUBT}; {words_after('Bye.')}"
    assert words_around(joined) == ("No.", "Bye.")
    assert heard_in(joined) == "who a small latte" and heard_in(words_before("x")) is None


async def test_each_question_is_answered_in_the_voice_of_its_own_command(barista: Cell) -> None:
    """A second command said while the first is still being accepted (a slow model) does not
    lend its level to the first's question: a far voice's "computer, ..." could then answer
    the operator's guess, or the operator's own yes go unheard."""
    first = barista.pipeline.submit(ORDER, None, doubt=DOUBT, level_db=-14.0)
    second = barista.pipeline.submit("brew a large mocha", None, doubt=DOUBT, level_db=-35.0)
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    assert barista.asked[0] == f"Did you say: {ORDER}?" and barista.levels[0] == -14.0
    barista.answers[0]("no")
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    assert barista.levels == [-14.0, -35.0]
    barista.answers[1]("no")
    assert not (await asyncio.wait_for(first, 30)).ok
    assert not (await asyncio.wait_for(second, 30)).ok


@pytest.mark.parametrize("answer", ["no", "timeout"])
async def test_an_order_made_of_a_guess_is_not_made_without_a_yes(
    barista: Cell, answer: str
) -> None:
    outcome = barista.pipeline.submit(ORDER, None, doubt=DOUBT)
    await asyncio.wait_for(barista.pipeline.wait_accepted(), 30)
    barista.answers[0](answer)
    assert not (await asyncio.wait_for(outcome, 30)).ok
    assert barista.moved == 0


async def test_a_guess_that_is_no_plan_is_never_acted_on(barista: Cell) -> None:
    outcome = await asyncio.wait_for(barista.pipeline.submit("continue", None, doubt=DOUBT), 30)
    assert not outcome.ok and barista.asked == []
    assert barista.said[-1] == NOT_SURE


class Queue:
    """A target that takes words as said (the deferred queue, a task API): it cannot ask."""

    def __init__(self) -> None:
        self.got: list[str] = []

    async def submit(
        self, text: str, correlation_id: str | None, *, source: str = "voiced"
    ) -> TargetResult:
        self.got.append(text)
        return TargetResult(True, "Queued.")


async def test_a_guess_is_never_handed_to_a_target_that_cannot_ask() -> None:
    events, queue, seen = EventLog(), Queue(), []
    events.subscribe(lambda r: seen.append(r.event))
    services = DaemonServices(events, cast(Any, None), {"queue": queue, "note": Queue()})
    await services.submit("queue", ORDER, None, doubt=DOUBT)
    await services.submit("queue", "brew a large mocha", None)
    await services.flush()
    assert queue.got == ["brew a large mocha"]  # the plain one only
    [dropped] = [e for e in seen if isinstance(e, Dropped)]
    assert dropped.text == ORDER and "heard unsure" in dropped.reason
