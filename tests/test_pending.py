"""The ledger of what was said and has not moved yet, and what a stop says about it."""

from __future__ import annotations

import asyncio

import pytest

from voiced.commands.pending import PendingWork, dropped_sentence
from voiced.targets.base import TargetResult


async def test_a_stop_withdraws_every_pending_ticket_in_order_and_starts_an_epoch() -> None:
    work = PendingWork()
    loop = asyncio.get_running_loop()
    first = work.issue("add bread", "a", loop.create_future())
    second = work.issue("add cheese", "b", loop.create_future())
    taken_back: list[str] = []
    second.withdraw = lambda: taken_back.append("question about add cheese")
    assert work.current(first) and len(work) == 2
    assert work.withdraw_all() == [first, second]
    assert taken_back == ["question about add cheese"] and second.withdraw is None
    assert not work.current(first) and not work.current(second) and len(work) == 0
    later = work.issue("go home", "c", loop.create_future())
    assert work.current(later), "what is said after the stop stands"


async def test_started_and_settled_tickets_are_not_withdrawn() -> None:
    work = PendingWork()
    loop = asyncio.get_running_loop()
    moving = work.issue("add bread", None, loop.create_future())
    answered = work.issue("where are you", None, loop.create_future())
    waiting = work.issue("add cheese", None, loop.create_future())
    work.release(moving)
    answered.outcome.set_result(TargetResult(True, "at home"))
    assert work.withdraw_all() == [waiting]


@pytest.mark.parametrize(
    ("texts", "lead", "said"),
    [
        ([], "Stopped.", "Stopped."),
        (["add bread"], "Stopped.", "Stopped. I dropped: add bread."),
        (["add bread", "go home"], "Stopped.",
         "Stopped. I dropped 2 commands: add bread; go home."),
        (["a", "b", "c", "d", "e"], "Stopped.",
         "Stopped. I dropped 5 commands: a; b; c; and 2 more."),
        (["add cheese"], "I lost the controller link.",
         "I lost the controller link. I dropped: add cheese."),
        # The joining word the stop cut off is not read out ("I dropped: add tomato and.").
        (["add tomato and"], "Stopped.", "Stopped. I dropped: add tomato."),
        (["add bread, and then"], "Stopped.", "Stopped. I dropped: add bread."),
    ],
)  # fmt: skip
def test_what_the_operator_hears(texts: list[str], lead: str, said: str) -> None:
    assert dropped_sentence(texts, lead) == said


def test_a_command_the_stop_cut_short_is_named_before_what_was_dropped() -> None:
    """The arm may not have started it yet: without this the operator thinks it was done."""
    assert dropped_sentence([], cut=["go to the welder"]) == (
        "Stopped. Not finished: go to the welder."
    )
    assert dropped_sentence(["add cheese"], cut=["add bread"]) == (
        "Stopped. Not finished: add bread. I dropped: add cheese."
    )


def test_a_command_is_read_out_as_part_of_the_sentence() -> None:
    """As transcribed ("Add bread. And cheese and tomato.") it used to come out as "Not
    finished: add bread And cheese and tomato..": its own capitals and full stops go."""
    assert dropped_sentence(
        ["Put it on the BLT stack!"], cut=["Add bread. And cheese and tomato."]
    ) == (
        "Stopped. Not finished: add bread and cheese and tomato. "
        "I dropped: put it on the BLT stack."
    )
    assert dropped_sentence(["Go to Safe_Pos_1, then I'd like bread."]) == (
        "Stopped. I dropped: go to Safe_Pos_1, then I'd like bread."
    )
    assert dropped_sentence(["Put the Reuben on the left.", "I want bread? Now!"]) == (
        "Stopped. I dropped 2 commands: put the Reuben on the left; I want bread now."
    )
