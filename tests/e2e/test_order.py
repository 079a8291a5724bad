"""Nothing the operator said is lost or reordered: the deferred queue, notes, dictation at the
end of a session (issue 17), through the real `voiced` command."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.helpers import (
    fast_config,
    final_state,
    kinds,
    parse_events,
    run_text,
    spawn_text_daemon,
    start_daemon,
    voiced,
    voiced_env,
    work_off_queue,
)
from tests.llm.messages_api import MessagesApi, Recorded, Reply, json_message

SAID = ["add bread", "add cheese", "add tomato", "add lettuce", "add meat", "go home"]


def notes(tmp: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(voiced("notes", "--json"), capture_output=True, text=True,
                          env=voiced_env(tmp), timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def queued_texts(listing: str) -> list[str]:
    """The texts of `voiced queue list`, in the order listed (each row ends with its text)."""
    return [line.split("  ")[-1] for line in listing.splitlines() if line.strip()]


def test_the_deferred_queue_lists_and_runs_commands_in_the_order_said(tmp_path: Path) -> None:
    config = fast_config(tmp_path, '[targets]\nquery = "queue"\n')
    env = voiced_env(tmp_path)
    session = "".join(f"computer {text}\n\n" for text in SAID)
    first = subprocess.run(
        voiced("run", "--config", str(config), "--cell", "sandwich", "--text", "-",
               "--controller", "sim", "--events", "-"),
        input=session, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert [e["detail"]["item_id"] for e in kinds(parse_events(first.stdout), "target")] == [
        1, 2, 3, 4, 5, 6
    ]  # fmt: skip
    listed = subprocess.run(voiced("queue", "list"), capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr
    assert queued_texts(listed.stdout) == SAID

    worked = work_off_queue(config, env)
    assert worked.returncode == 0, worked.stderr
    events = parse_events(worked.stdout)
    assert [e["text"] for e in kinds(events, "utterance")] == SAID
    stack = final_state(events)["zones"]["assembly_fixture"]
    assert stack == ["bread", "cheese", "tomato", "lettuce", "meat"]


def test_many_quick_notes_of_one_dictation_are_saved_in_the_order_said(tmp_path: Path) -> None:
    said = [f"shelf {n} holds {n} boxes" for n in range(1, 31)]
    session = "computer start dictation\n" + "".join(f"{text}\nsave note\n" for text in said)
    events, proc = run_text(tmp_path, "sandwich", session + "end dictation\n")
    assert proc.returncode == 0, proc.stderr
    assert [n["text"] for n in notes(tmp_path)] == said
    assert [e["message"] for e in kinds(events, "target")] == ["Note saved."] * len(said)


def test_dictation_still_open_at_end_of_input_is_saved(tmp_path: Path) -> None:
    session = "computer start dictation\nshelf A3 has bolts\nsave note\nshelf B2 is empty\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    saved = notes(tmp_path)
    assert [n["text"] for n in saved] == ["shelf A3 has bolts", "shelf B2 is empty"]
    assert {n["source"] for n in saved} == {"dictation"}
    assert not kinds(events, "primitive")


def test_dictation_is_saved_when_the_daemon_is_sent_sigterm(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path, "sandwich")
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("computer start dictation\nshelf C1 needs nuts\nten of them\n")
        proc.stdin.flush()
        seen = wait_for_utterance(proc, "ten of them")
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert [n["text"] for n in notes(tmp_path)] == ["shelf C1 needs nuts ten of them"]
    events = seen + parse_events(stdout)
    assert [e["ok"] for e in kinds(events, "target")] == [True]


def wait_for_utterance(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> list[Any]:
    """The daemon's events up to the `utterance` event for `text` (it has reached the frames)."""
    assert proc.stdout is not None
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("{"):
            seen.append(json.loads(line))
            if seen[-1]["event"] == "utterance" and seen[-1]["text"] == text:
                return seen
    raise AssertionError(f"no utterance {text!r} before the deadline: {seen}")


def test_each_run_keeps_its_own_trace_named_by_its_run_id(tmp_path: Path) -> None:
    traces = tmp_path / "data" / "traces"
    _, first = run_text(tmp_path, "sandwich", "computer add bread\n\n")
    assert first.returncode == 0, first.stderr
    (bread,) = traces.iterdir()
    written = bread.read_bytes()
    _, second = run_text(tmp_path, "sandwich", "computer add cheese\n\n")  # a new process
    assert second.returncode == 0, second.stderr

    history = subprocess.run(voiced("history", "--json"), capture_output=True, text=True,
                             env=voiced_env(tmp_path), timeout=60)  # fmt: skip
    run_ids = [json.loads(line)["run_id"] for line in history.stdout.splitlines()]
    assert sorted(t.name for t in traces.iterdir()) == sorted(
        f"tcp_commands-{run_id}.json" for run_id in run_ids
    )
    assert bread.read_bytes() == written, "the first run's trace was overwritten"
    for trace in traces.iterdir():
        records = json.loads(trace.read_text(encoding="utf-8"))
        assert records and all(r["result"] == f"{r['seq']} DONE" for r in records), trace.name


def slapping(request: Recorded) -> Reply:
    """The model's side: the resolver reads "slap" as add_layer; nothing else is asked."""
    assert '"composite"' in request.system_text, "only the resolver should be asked"
    return json_message({"composite": "add_layer", "reasoning": "to slap on is to add a layer"})


async def test_a_verb_the_model_resolved_still_works_after_a_restart_offline(
    tmp_path: Path,
) -> None:
    async with MessagesApi(responder=slapping) as api:
        env = voiced_env(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        proc = await spawn_text_daemon(fast_config(tmp_path), env)
        said = b"computer slap bread\n\nyes\n"  # read back first: the model had a say
        stdout, stderr = await asyncio.wait_for(proc.communicate(said), 120)
        asked = len(api.messages)
    assert proc.returncode == 0, stderr.decode()
    assert asked == 1
    online = parse_events(stdout.decode())
    assert final_state(online)["zones"]["assembly_fixture"] == ["bread"]
    saved = json.loads((tmp_path / "data" / "learned_verbs.json").read_text(encoding="utf-8"))
    assert saved["learned_verbs"]["sandwich"] == {"slap": "add_layer"}

    # A new process with no model at all (voiced_env drops the key): the grammar knows it.
    events, offline = run_text(tmp_path, "sandwich", "computer slap cheese\n\n")
    assert offline.returncode == 0, offline.stderr
    assert [e["source"] for e in kinds(events, "interpretation")] == ["grammar"]
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese"]  # a fresh simulator


def test_a_corrupt_learned_verbs_file_is_kept_aside_and_named(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    spoiled = b'{"version": 1, "learned_verbs": {"sandwich": {"slap": '  # torn by hand
    (data / "learned_verbs.json").write_bytes(spoiled)
    events, proc = run_text(tmp_path, "sandwich", "computer add bread\n\ncomputer slap cheese\n\n")
    assert proc.returncode == 0, proc.stderr
    (failure,) = [e for e in kinds(events, "error") if e["kind"] == "learned_verbs"]
    (aside,) = data.glob("learned_verbs.json.corrupt-*")
    assert aside.name in failure["error"] and "learned_verbs.json" in failure["error"]
    assert aside.read_bytes() == spoiled, "the operator's file is kept as it was"
    assert not (data / "learned_verbs.json").exists(), "nothing learned, nothing written"
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread"], "runs without them"


def test_a_surprise_build_is_never_learned_and_its_name_never_starts_another(
    tmp_path: Path,
) -> None:
    session = (
        "computer surprise me\n\n"
        "computer call that lunch\n\nyes\n"
        "computer call that fancy\n\nyes\n"  # a creative cue word, as a name
        "computer do that again\n\ncomputer remember this as the usual\n\nyes\n"
    )
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    said = [e["text"] for e in kinds(events, "feedback")]
    for name in ("lunch", "fancy", "usual"):
        refusal = [s for s in said if s.startswith(f'I will not remember that as "{name}"')]
        assert len(refusal) == 1 and "surprise build, made up at random" in refusal[0], said
    assert not any(s.startswith("Shall I remember") for s in said), "refused before asking"
    assert not kinds(events, "learned")
    assert not (tmp_path / "data" / "learned_composites.json").exists()
    assert not (tmp_path / "data" / "phrase_bank.json").exists()
    creative = [(e["is_creative"], e["source"]) for e in kinds(events, "interpretation")]
    assert creative == [(True, "creative"), (True, "replay")], (
        "'call that fancy' built nothing; the repeat is a replay of a surprise build"
    )


def test_a_surprise_build_repeated_in_a_later_session_is_never_learned(tmp_path: Path) -> None:
    """The history knows a plan was made up ("replay+creative" for its repeats), so a later
    session's "do that again" cannot be named either, however often it is repeated."""
    first, proc = run_text(tmp_path, "sandwich", "computer surprise me\n\n")
    assert proc.returncode == 0, proc.stderr
    for _ in range(2):  # a repeat of a repeat, each in a session of its own
        events, proc = run_text(
            tmp_path, "sandwich", "computer do that again\n\ncomputer call that brunch\n\nyes\n"
        )
        assert proc.returncode == 0, proc.stderr
        said = [e["text"] for e in kinds(events, "feedback")]
        assert any(s.startswith('I will not remember that as "brunch"') for s in said), said
        assert any(s.startswith("Again: ") for s in said), "what it builds, before it moves"
        assert not kinds(events, "learned")
    built = final_state(first)["zones"]
    assert final_state(events)["zones"] != {zone: [] for zone in built}, "it did run"


def test_an_ordinary_command_can_still_be_named(tmp_path: Path) -> None:
    session = "computer surprise me\n\ncomputer add bread\n\ncomputer call that lunch\n\nyes\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert [e["phrase"] for e in kinds(events, "learned")] == ["lunch"]
