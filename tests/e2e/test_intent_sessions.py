"""Seed 001 through the real daemon: every input in the history with its intent, the model's
intent classifier asked only about words the grammar cannot read, and a plan the validator
refuses sent back for correction up to three times (the model is a local server that speaks the
Messages API, reached by the real anthropic client)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.e2e.helpers import (
    fast_config,
    final_state,
    kinds,
    parse_events,
    run_text,
    spawn_text_daemon,
    voiced,
    voiced_env,
)
from tests.llm.messages_api import MessagesApi, Recorded, Reply, json_message, message

Events = list[dict[str, Any]]


def history(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        voiced("history", *args), capture_output=True, text=True, env=voiced_env(tmp_path)
    )


def test_questions_actions_and_unknowns_are_stored_with_their_intent(tmp_path: Path) -> None:
    session = ("computer what tools are there\n\ncomputer go to position 1\n\n"
               "computer sing a song\n\ncomputer what did you do\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "weld", session)
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["position"] == "Pos_1"
    listed = history(tmp_path, "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in reversed(listed.stdout.splitlines())]
    assert [(r["operator_input"], r["intent"], r["status"]) for r in rows] == [
        ("what tools are there", "question", "answered"),
        ("go to position 1", "action", "completed"),
        ("sing a song", "unknown", "rejected"),
        ("what did you do", "question", "answered"),
    ]
    tools, _, unknown, last = rows
    assert tools["plan"] == [] and "Camera" in tools["answer"] and "Camera" in tools["feedback"]
    assert "Unknown command" in unknown["feedback"]
    # "What did you do" means the last action, not the question or the words before it.
    assert '"go to position 1"' in last["feedback"]
    text = history(tmp_path, "--last", "4")
    lines = text.stdout.splitlines()
    assert "question answered" in lines[3] and "'what tools are there' -> The tools" in lines[3]
    assert "action   completed" in lines[2] and "-> move_to_position" in lines[2]
    assert "unknown  rejected" in lines[1]


def model(
    intent: Callable[[], Reply] | None = None, plans: Iterator[Reply] | None = None
) -> Callable[[Recorded], Reply]:
    """The model's side: the verb resolver knows no verb, the intent classifier answers
    `intent()`, and each pass 1 or correction takes the next of `plans`."""

    def respond(request: Recorded) -> Reply:
        system = request.system_text
        if '"composite"' in system:
            return json_message({"composite": "UNKNOWN", "reasoning": "not a composite"})
        if "intent classifier" in system:
            assert intent is not None, "the intent classifier was not to be asked"
            return intent()
        assert plans is not None, "no plan was to be asked for"
        return next(plans)

    return respond


def action() -> Reply:
    return json_message({"intent": "action", "reasoning": "wants a sandwich"})


async def session(tmp_path: Path, respond: Callable[[Recorded], Reply], lines: bytes) -> tuple[
    Events, list[Recorded]
]:  # fmt: skip
    async with MessagesApi(responder=respond) as api:
        env = voiced_env(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        config = fast_config(tmp_path, "[llm]\nretries = 0\n")
        proc = await spawn_text_daemon(config, env)
        stdout, stderr = await asyncio.wait_for(proc.communicate(lines), 120)
        requests = api.messages
    assert proc.returncode == 0, stderr.decode()
    return parse_events(stdout.decode()), requests


def purposes(requests: list[Recorded]) -> list[str]:
    names = []
    for request in requests:
        system = request.system_text
        if '"composite"' in system:
            names.append("resolver")
        elif "intent classifier" in system:
            names.append("intent")
        else:
            names.append("correction" if "CORRECTION REQUIRED" in system else "pass1")
    return names


async def test_what_the_grammar_reads_never_asks_the_model(tmp_path: Path) -> None:
    events, requests = await session(tmp_path, model(), b"computer add bread\n\n")
    assert requests == []
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread"]


async def test_a_question_the_model_recognises_is_answered_and_stored_as_one(
    tmp_path: Path,
) -> None:
    def question() -> Reply:
        return json_message({"intent": "question", "reasoning": "asks for the items"})

    # Neither a question by its words nor a command the grammar reads.
    events, requests = await session(tmp_path, model(question), b"computer ingredients please\n\n")
    assert purposes(requests) == ["intent"], "no plan is asked for"
    (used,) = kinds(events, "llm")
    assert used["calls"] == 1 and used["input_tokens"] > 0 and used["error"] is None, used
    (answer,) = kinds(events, "answer")
    assert "bread" in answer["brief"]
    assert not kinds(events, "primitive")
    (row,) = [json.loads(line) for line in history(tmp_path, "--json").stdout.splitlines()]
    assert (row["intent"], row["status"]) == ("question", "answered")


async def test_an_unusable_classification_is_an_error_event_and_taken_as_unknown(
    tmp_path: Path,
) -> None:
    answers = iter([message("it is probably an action?"),
                    json_message({"intent": "dance", "reasoning": "?"})])  # fmt: skip
    lines = b"computer frobnicate the thing\n\ncomputer wibble wobble\n\ncomputer add cheese\n\n"
    events, requests = await session(tmp_path, model(lambda: next(answers)), lines)
    assert purposes(requests) == ["resolver", "intent", "resolver", "intent"]
    errors = [e for e in kinds(events, "error") if e["kind"] == "intent"]
    assert [e["text"] for e in errors] == ["frobnicate the thing", "wibble wobble"]
    assert "not JSON" in errors[0]["error"] and "'dance'" in errors[1]["error"]
    said = [e["text"] for e in kinds(events, "feedback")]
    assert any(s.startswith("Unknown command 'frobnicate the thing'") for s in said), said
    # The daemon kept going: the next command ran.
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese"]
    rows = [json.loads(line) for line in history(tmp_path, "--json").stdout.splitlines()]
    assert [r["intent"] for r in rows] == ["action", "unknown", "unknown"]


def plan(*steps: dict[str, Any]) -> Reply:
    return json_message({
        "interpretation": "A cheese sandwich.", "sequence": list(steps), "composite_name": None,
        "confidence": 0.9, "user_feedback": None, "creative_reasoning": None,
    })  # fmt: skip


INVALID = plan({"instruction": "move_absolute", "params": {"x": 300, "y": 0, "z": 200}})
AVOCADO = plan({"instruction": "add_layer", "params": {"item": "avocado"}})
VALID = plan(
    {"instruction": "add_layer", "params": {"item": "bread"}},
    {"instruction": "add_layer", "params": {"item": "cheese"}},
)


async def test_a_plan_corrected_twice_runs_after_the_third_attempt(tmp_path: Path) -> None:
    plans = iter([INVALID, AVOCADO, VALID])
    events, requests = await session(
        tmp_path, model(action, plans), b"computer give it the cheesy treatment\n\nyes\n"
    )
    assert purposes(requests) == ["resolver", "intent", "pass1", "correction", "correction"]
    rounds = kinds(events, "correction")
    assert [(r["round"], r["of"]) for r in rounds] == [(1, 3), (2, 3)]
    assert "move_absolute is not a valid instruction" in rounds[0]["issues"][0]
    assert "avocado" in rounds[1]["issues"][0]
    assert "move_absolute is not a valid instruction" in requests[3].system_text
    assert "I don't have avocado — available items" in requests[4].system_text
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread", "cheese"]


async def test_a_plan_that_fails_three_corrections_is_refused_and_nothing_moves(
    tmp_path: Path,
) -> None:
    plans = iter([INVALID, AVOCADO, INVALID, AVOCADO])
    events, requests = await session(
        tmp_path, model(action, plans), b"computer give it the cheesy treatment\n\nyes\n"
    )
    assert purposes(requests) == ["resolver", "intent", "pass1", *["correction"] * 3]
    assert [r["round"] for r in kinds(events, "correction")] == [1, 2, 3]
    assert not kinds(events, "primitive"), "the arm never moves"
    said = [e["text"] for e in kinds(events, "feedback")]
    refusal = [s for s in said if "even after 3 corrections" in s]
    assert refusal and "I don't have avocado" in refusal[0], said
    assert not any(s.endswith("Proceed?") for s in said), "a refused plan is not offered"
    (row,) = [json.loads(line) for line in history(tmp_path, "--json").stdout.splitlines()]
    assert (row["intent"], row["status"], row["plan"]) == ("action", "rejected", [])
