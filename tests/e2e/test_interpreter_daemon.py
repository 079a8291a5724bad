"""Issue 6 through the real daemon: learning by voice, creative commands offline, and the LLM
tier reached by the real anthropic client at a local server that speaks the Messages API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.e2e.helpers import (
    fast_config,
    final_state,
    kinds,
    parse_events,
    run_text,
    spawn_text_daemon,
    spoken,
    voiced_env,
)
from tests.llm.messages_api import MessagesApi, Recorded, Reply, json_message


def test_learning_by_voice_then_using_it(tmp_path: Path) -> None:
    session = "computer when I say lunch make bread cheese bread\n\nyes\ncomputer lunch\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert kinds(events, "learned")[0]["phrase"] == "lunch"
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread", "cheese", "bread"]
    learned = json.loads((tmp_path / "data" / "learned_composites.json").read_text("utf-8"))
    assert "lunch" in json.dumps(learned)
    # The next run starts with it: the phrase works straight away.
    events, proc = run_text(tmp_path, "sandwich", "computer lunch\n\n")
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread", "cheese", "bread"]


def test_learning_declined_saves_nothing(tmp_path: Path) -> None:
    events, proc = run_text(
        tmp_path, "sandwich", "computer when I say lunch make bread cheese bread\n\nno\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert not kinds(events, "learned")
    assert not kinds(events, "primitive"), "a learning command is learned, never run"
    assert not (tmp_path / "data" / "learned_composites.json").exists()


def test_a_creative_command_works_offline(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer surprise me\n\n")
    assert proc.returncode == 0, proc.stderr
    interp = kinds(events, "interpretation")[0]
    assert interp["is_creative"] is True
    assert interp["composite_name"] is None
    assert interp["creative_reasoning"].startswith("Axis 1:")
    zones = final_state(events)["zones"]
    assert sum(len(stack) for stack in zones.values()) >= 2
    # The operator hears what the arm is about to build, place by place, before it moves.
    named = {"assembly_left": "left", "assembly_fixture": "fixture", "assembly_right": "right"}
    listed = {zone: ", ".join(stack[:-1]) + " and " + stack[-1] if len(stack) > 1 else stack[0]
              for zone, stack in zones.items() if stack}  # fmt: skip
    built = [f"{items} on the {named[zone]}" for zone, items in listed.items()]
    surprise = [said for said in spoken(events) if said.startswith("A surprise")]
    assert set(surprise[0][len("A surprise: ") : -1].split("; ")) == set(built), surprise
    order = [e["event"] for e in events if e["event"] in ("feedback", "primitive")]
    assert order[0] == "feedback", "said before the arm moves"


def cheesy(request: Recorded) -> Reply:
    """The model's side: the resolver does not know "give", the intent classifier calls it an
    action, pass 1 makes a cheese layer."""
    if '"composite"' in request.system_text:
        return json_message({"composite": "UNKNOWN", "reasoning": "not a composite"})
    if "intent classifier" in request.system_text:
        return json_message({"intent": "action", "reasoning": "wants cheese"})
    return json_message({
        "interpretation": "Add a layer of cheese.",
        "sequence": [{"instruction": "add_layer", "params": {"item": "cheese"}}],
        "composite_name": None, "confidence": 0.9, "user_feedback": None,
        "creative_reasoning": None,
    })  # fmt: skip


async def test_the_llm_tier_through_the_daemon(tmp_path: Path) -> None:
    async with MessagesApi(responder=cheesy) as api:
        env = voiced_env(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        proc = await spawn_text_daemon(fast_config(tmp_path), env)
        session = b"computer give it the cheesy treatment\n\nyes\n"
        stdout, stderr = await asyncio.wait_for(proc.communicate(session), 120)
        requests = api.messages
    assert proc.returncode == 0, stderr.decode()
    events = parse_events(stdout.decode())
    sources = [e["source"] for e in kinds(events, "interpretation")]
    assert sources[-1] == "llm"
    said = [e["text"] for e in kinds(events, "feedback")]
    assert any(s.endswith("Proceed?") for s in said), "LLM plans are read back first"
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese"]
    assert kinds(events, "llm"), "token use is recorded per command"
    assert any("add_layer" in r.system_text for r in requests), "the live cell is in the prompt"


async def test_an_unreachable_model_falls_back_to_the_grammars_reason(tmp_path: Path) -> None:
    env = voiced_env(tmp_path, ANTHROPIC_API_KEY="test-key",
                     ANTHROPIC_BASE_URL="http://127.0.0.1:9")  # fmt: skip
    config = fast_config(tmp_path, "[llm]\nretries = 0\ntimeout = 2.0\n")
    proc = await spawn_text_daemon(config, env)
    stdout, stderr = await asyncio.wait_for(
        proc.communicate(b"computer give it the cheesy treatment\n\n"), 120
    )
    assert proc.returncode == 0, stderr.decode()
    events = parse_events(stdout.decode())
    assert not kinds(events, "primitive")
    said = [e["text"] for e in kinds(events, "feedback")]
    assert any("the model could not be asked" in s for s in said), "the operator hears why"
    (unread,) = [e for e in kinds(events, "error") if e["kind"] == "intent"]
    assert unread["text"] == "give it the cheesy treatment"
