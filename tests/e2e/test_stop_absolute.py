"""Issue 13: a stop withdraws everything said before it, through the real daemon and simulator.

Nothing the operator said before "stop" moves the arm after it: not a command still waiting to
be interpreted, not one a language model is thinking about (the request is cancelled), not one
waiting for a yes, not one queued behind the stopped run, not a half-said query. The operator
hears what was dropped; the next command clears the halt; old work never comes back.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.helpers import (
    after,
    fast_config,
    final_state,
    kinds,
    parse_events,
    run_text,
    say_and_wait_for_motion,
    spawn_text_daemon,
    spoken,
    standalone_sim,
    start_daemon,
    voiced,
    voiced_env,
    wait_for_event,
)
from tests.llm.messages_api import MessagesApi, Recorded, Reply, json_message

FIVE = "add bread, meat, cheese, lettuce and tomato"


def test_a_command_submitted_before_stop_never_moves(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", f"computer {FIVE}\n\nstop\n\n")
    assert proc.returncode == 0, proc.stderr
    assert not kinds(after(events, "stopped"), "primitive")
    assert not [e for e in after(events, "stopped") if e.get("line") == "RESUME"]
    (stopped,) = kinds(events, "stopped")
    assert stopped["dropped_commands"] == 1
    assert stopped["dropped"] == [FIVE]
    assert f"Stopped. I dropped: {FIVE}." in spoken(events)
    assert all(not stack for stack in final_state(events)["zones"].values())


def test_a_command_said_with_the_stop_is_dropped_and_said_so(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add bread and cheese, oh no, stop\n\n")
    assert proc.returncode == 0, proc.stderr
    assert not kinds(events, "primitive")
    (stopped,) = kinds(events, "stopped")
    assert stopped["dropped"] == ["add bread and cheese"]
    assert "Stopped. I dropped: add bread and cheese." in spoken(events)


def test_an_answer_after_a_stop_finishes_nothing(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer put\n\nstop\n\ncheese\n\n")
    assert proc.returncode == 0, proc.stderr
    assert any(text.startswith("Put what?") for text in spoken(events))
    assert [e["text"] for e in kinds(events, "submit")] == ["put"]
    assert not kinds(events, "primitive")


def test_the_next_command_clears_the_halt_and_old_work_stays_dropped(tmp_path: Path) -> None:
    session = f"computer {FIVE}\n\nstop\n\ncomputer add cheese\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert [e["line"] for e in after(events, "stopped") if e.get("line") == "RESUME"]
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese"]


def test_a_half_said_query_is_dropped_and_said_so(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add bread\nstop\n\n")
    assert proc.returncode == 0, proc.stderr
    assert not kinds(events, "submit")
    (stopped,) = kinds(events, "stopped")
    assert stopped["dropped"] == ["add bread"]
    assert "Stopped. I dropped: add bread." in spoken(events)


def test_stop_during_a_read_back_withdraws_the_question(tmp_path: Path) -> None:
    # "clear the assembly" asks first; "hmm" (which the question ignores) waits until it is
    # asked, as typed lines wait for the interpreter; a "yes" after the stop answers nothing.
    session = "computer clear the assembly\n\nhmm\nstop\nyes\ncomputer yes\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert any("Proceed?" in text for text in spoken(events))
    (stopped,) = kinds(events, "stopped")
    assert stopped["dropped"] == ["clear the assembly"]
    assert not kinds(events, "confirmation"), "the question was taken back, not answered"
    assert ("pop", "review") in [(e["action"], e["frame"]) for e in kinds(events, "frame")]
    assert not kinds(events, "primitive")


def test_commands_queued_behind_a_moving_one_are_dropped_and_listed(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path, "sandwich")
    try:
        queued = "computer add cheese\n\ncomputer add tomato\n\ncomputer go home\n\n"
        say_and_wait_for_motion(proc, f"computer add bread\n\n{queued}")
        stdout, stderr = proc.communicate("stop\n\n", timeout=60)
    finally:
        proc.kill()
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, stderr
    (stopped,) = kinds(events, "stopped")
    assert stopped["dropped"] == ["add cheese", "add tomato", "go home"]
    # The moving one is named as not finished ("continue" finishes it), the rest as dropped.
    said = ("Stopped. Not finished: add bread. "
            "I dropped 3 commands: add cheese; add tomato; go home.")  # fmt: skip
    assert said in spoken(events)
    assert not kinds(after(events, "stopped"), "primitive")
    # The controller's report after the stop is taken without a word: the arm stopping
    # part-way is what a stop does, not news.
    (checked,) = kinds(after(events, "stopped"), "reconciled")
    assert checked["why"] == "cut_short"
    assert not [text for text in spoken(events) if "report differs" in text]
    zones = final_state(events)["zones"]
    assert "cheese" not in zones["assembly_fixture"] and "tomato" not in zones["assembly_fixture"]


def test_sigterm_drops_pending_work_the_same_way(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path, "sandwich")
    try:
        say_and_wait_for_motion(proc, "computer add bread\n\ncomputer add cheese\n\n")
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    (stopped,) = kinds(events, "stopped")
    assert stopped["reason"] == "shutdown"
    assert stopped["dropped"] == ["add cheese"]
    history = subprocess.run(
        voiced("history", "--json", "--last", "5"),
        capture_output=True, text=True, env=voiced_env(tmp_path), check=True, timeout=60,
    )  # fmt: skip
    rows = [json.loads(line) for line in history.stdout.splitlines()]
    by_input = {row["operator_input"]: row["status"] for row in rows}
    assert by_input["add cheese"] == "dropped"
    assert by_input["add bread"] == "stopped"


def _slow_resolver(request: Recorded) -> Reply:
    """The model takes 2.5 s to say what "slap" means."""
    if '"composite"' in request.system_text:
        return Reply(body=json_message({"composite": "add_layer", "reasoning": "a layer"}).body,
                     delay=2.5)  # fmt: skip
    return Reply(status=500)


async def test_stop_during_a_model_request_cancels_it(tmp_path: Path) -> None:
    async with MessagesApi(responder=_slow_resolver) as api:
        env = voiced_env(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        proc = await spawn_text_daemon(fast_config(tmp_path), env)
        assert proc.stdin is not None
        proc.stdin.write(b"computer slap cheese on the bread\n\n")
        await proc.stdin.drain()
        await asyncio.wait_for(api.received.wait(), 60)
        proc.stdin.write(b"stop\n\n")
        await proc.stdin.drain()
        # Longer than the model's answer takes: had the request survived, it would run now.
        await asyncio.sleep(3.5)
        stdout, stderr = await asyncio.wait_for(proc.communicate(b""), 60)
        hung_up, requests = list(api.hung_up), api.messages
    assert proc.returncode == 0, stderr.decode()
    events = parse_events(stdout.decode())
    (stopped,) = kinds(events, "stopped")
    assert stopped["dropped"] == ["slap cheese on the bread"]
    assert not kinds(events, "primitive")
    assert not kinds(events, "interpretation"), "the interpretation was cancelled, not finished"
    assert len(requests) == 1 and hung_up == requests, "the model request was cancelled"


async def test_a_stop_does_not_wait_behind_a_command_waiting_for_the_model(
    tmp_path: Path,
) -> None:
    """The arm runs a command; the model thinks about a second; a third waits for it (what is
    said waits for the interpreter); then "stop". The stop used to wait behind the third for
    the model's whole answer (measured: 4 s, the arm moving all the while); it is read ahead
    and acted on at once: the model request is cancelled, the third is dropped unheard."""
    async with MessagesApi(responder=_slow_resolver) as api:
        config = tmp_path / "config.toml"  # the arm at real speed: it moves while the model thinks
        config.write_text('[daemon]\nmode = "always"\n[controller]\nheartbeat_interval = 0.2\n',
                          encoding="utf-8")  # fmt: skip
        env = voiced_env(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        proc = await spawn_text_daemon(config, env)
        assert proc.stdin is not None
        proc.stdin.write(f"{FIVE}\n\n".encode())
        proc.stdin.write(b"slap cheese on the bread\n\n")
        await proc.stdin.drain()
        await asyncio.wait_for(api.received.wait(), 60)
        proc.stdin.write(b"add tomato\n\nstop\n\n")
        await proc.stdin.drain()
        await asyncio.sleep(3.5)  # longer than the model's answer takes
        stdout, stderr = await asyncio.wait_for(proc.communicate(b""), 60)
        hung_up, requests = list(api.hung_up), api.messages
    assert proc.returncode == 0, stderr.decode()
    events = parse_events(stdout.decode())
    assert len(requests) == 1 and hung_up == requests, "the stop came while the model thought"
    (stopped,) = kinds(events, "stopped")
    assert stopped["dropped"] == ["slap cheese on the bread"]
    assert {"text": "add tomato", "reason": "said before a stop"} in [
        {k: e[k] for k in ("text", "reason")} for e in kinds(events, "dropped")
    ]
    assert not kinds(after(events, "stopped"), "primitive")
    assert "tomato" not in final_state(events)["zones"]["assembly_fixture"][-1:]


def test_a_lost_link_drops_what_was_said_before_it(tmp_path: Path) -> None:
    with standalone_sim(tmp_path, 1.0) as sim:
        daemon = subprocess.Popen(
            voiced("run", "--config", str(sim.config), "--cell", "sandwich", "--text", "-",
                   "--controller", sim.address, "--events", "-"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=voiced_env(tmp_path),
        )  # fmt: skip
        try:
            assert daemon.stdin is not None
            daemon.stdin.write("computer add bread\n\ncomputer add cheese\n\n")
            daemon.stdin.flush()
            # The arm moves, and "add cheese" is said (submitted), not merely typed, in either
            # order, before the loss.
            seen: set[str] = set()
            wait_for_event(daemon, lambda e: _note(seen, e) >= {"primitive", "add cheese"},
                           "motion and add cheese submitted")  # fmt: skip
            sim.process.kill()
            stdout, stderr = daemon.communicate("", timeout=60)
        finally:
            daemon.kill()
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert [e["text"] for e in kinds(events, "dropped")] == ["add cheese"], stderr
    assert any(text.startswith("I lost the controller link") and "I dropped: add cheese." in text
               for text in spoken(events))  # fmt: skip
    sent = [e["line"] for e in kinds(events, "primitive")]
    assert len(sent) < 10, "nothing after the loss: add bread alone is 9 lines"


def _note(seen: set[str], event: dict[str, Any]) -> set[str]:
    if event["event"] == "primitive":
        seen.add("primitive")
    elif event["event"] == "submit":
        seen.add(event["text"])
    return seen


def test_a_command_waiting_for_a_lost_link_at_end_of_input_is_dropped_and_named(
    tmp_path: Path,
) -> None:
    """The link is lost, then a command is said: it waits for the link. When the input ends
    and the link stays down, the daemon stops waiting after the shutdown timeout, and what
    waited is dropped with a reason, not lost without a word."""
    with standalone_sim(tmp_path, 1.0) as sim:
        config = tmp_path / "short.toml"
        config.write_text(sim.config.read_text(encoding="utf-8")
                          + "\n[daemon]\nshutdown_timeout = 1.0\n", encoding="utf-8")  # fmt: skip
        daemon = subprocess.Popen(
            voiced("run", "--config", str(config), "--cell", "sandwich", "--text", "-",
                   "--controller", sim.address, "--events", "-"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=voiced_env(tmp_path),
        )  # fmt: skip
        try:
            wait_for_event(daemon, lambda e: e["event"] == "reconciled", "the link up")
            sim.process.kill()
            sim.process.wait()
            stdout, stderr = daemon.communicate("computer add cheese\n\n", timeout=60)
        finally:
            daemon.kill()
    assert daemon.returncode == 0, stderr
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert [e["text"] for e in kinds(events, "dropped")] == ["add cheese"], stderr
    assert not kinds(events, "primitive")
