"""The pipeline's one state machine: where every command is, and what "busy", "moving",
"accepted" and "idle" mean in terms of it."""

from __future__ import annotations

import asyncio

from voiced.commands.pending import PendingWork, Ticket
from voiced.commands.workload import Phase, Workload


def tickets(n: int) -> list[Ticket]:
    pending = PendingWork()
    loop = asyncio.get_running_loop()
    return [pending.issue(f"command {i}", None, loop.create_future()) for i in range(n)]


async def test_a_command_through_every_phase() -> None:
    work = Workload()
    (ticket,) = tickets(1)
    assert not work.busy and work.accepted
    seen = []
    for phase in Phase:
        work.enter(ticket, phase)
        seen.append((work.busy, work.moving, work.accepted))
    work.leave(ticket)
    assert seen == [
        (True, False, False),  # submitted: not yet understood
        (True, False, False),  # interpreting
        (True, False, True),  # asking: understood, waiting for a yes
        (True, False, True),  # queued
        (True, True, True),  # running
    ]
    assert not work.busy and work.accepted and work.phase(ticket) is None


async def test_waiters_wake_when_the_state_allows() -> None:
    work = Workload()
    first, second = tickets(2)
    work.enter(first, Phase.INTERPRETING)
    work.enter(second, Phase.RUNNING)
    accepted = asyncio.create_task(work.wait_accepted())
    idle = asyncio.create_task(work.wait_idle())
    await asyncio.sleep(0)
    assert not accepted.done() and not idle.done()
    work.enter(first, Phase.QUEUED)
    await asyncio.sleep(0)
    assert accepted.done() and not idle.done()
    work.leave(first)
    work.leave(second)
    await asyncio.wait_for(idle, 1)


async def test_a_stop_withdraws_everything_not_moving_and_cancels_the_interpretation() -> None:
    work = Workload()
    said = tickets(5)
    for ticket, phase in zip(said, Phase, strict=True):
        work.enter(ticket, phase)
    thinking = asyncio.create_task(asyncio.sleep(60))
    work.set_interpretation(thinking)
    work.withdraw()
    await asyncio.sleep(0)
    assert thinking.cancelled()
    assert [work.phase(t) for t in said] == [None, None, None, None, Phase.RUNNING]
    assert work.moving and work.accepted and work.busy


async def test_any_in_names_the_phases_asked_about() -> None:
    work = Workload()
    (ticket,) = tickets(1)
    work.enter(ticket, Phase.ASKING)
    assert work.any_in(Phase.ASKING) and not work.any_in(Phase.QUEUED, Phase.RUNNING)
