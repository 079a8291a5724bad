"""The language model in rearrangement, against the fake Messages API: it only ever supplies a
target_structure (validated, corrected once), and a plan it writes runs only when the seed's
consistency check, a replay and the compiler all pass."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange import plan_rearrangement
from voiced.robot.rearrange.replay import check_llm_plan
from voiced.robot.rearrange.targets import validate_target_structure_payload

from tests.llm.llmfakes import client_for
from tests.llm.messages_api import MessagesApi, error, json_message, message
from voiced.errors import LlmError
from voiced.llm.rearrange import plan_with_llm, understand_target

CELL = load_cell("blocks")
START = CELL.initial_scene
PYRAMID = {"relationship": "pyramid", "placements": [
    {"position": "bottom left", "object 1": "green cube"},
    {"position": "bottom right", "object 2": "red cube"},
    {"position": "top", "object 3": "blue cube"}]}  # fmt: skip
STACK = {"relationship": "stacked", "placements": [
    {"position": "bottom", "object 1": "blue cube"},
    {"position": "middle", "object 2": "green cube"},
    {"position": "top", "object 3": "red cube"}]}  # fmt: skip
WRONG_TOP = START.with_changes(
    stacks={**{s: () for s in CELL.sites}, "center": ("blue cube", "red cube", "green cube")}
)


async def test_a_spoken_target_becomes_a_validated_structure() -> None:
    async with MessagesApi(
        [json_message({"target_structure": PYRAMID, "user_feedback": None})]
    ) as api:
        client = client_for(api)
        answer = await understand_target(client, CELL, START, "a little pyramid, blue on top")
        await client.aclose()
    assert answer.target == PYRAMID and answer.feedback is None
    request = api.messages[0]
    assert "You never plan moves" in request.system_text
    assert "- pyramid: bottom left, bottom right, top" in request.system_text
    assert "━━━ RULES (retrieved) ━━━" in request.system_text
    assert "Objects in the cell: blue cube, green cube, red cube" in request.system_text
    assert request.user_text == 'Command: "a little pyramid, blue on top"'
    schema = request.json()["output_config"]["format"]["schema"]
    assert schema["required"] == ["target_structure", "user_feedback"]


async def test_a_plan_in_the_answer_is_ignored() -> None:
    reply = {"target_structure": PYRAMID, "user_feedback": None, "plan": [{"step": 1}]}
    async with MessagesApi([json_message(reply)]) as api:
        client = client_for(api)
        answer = await understand_target(client, CELL, START, "pyramid please")
        await client.aclose()
    assert answer.target == PYRAMID
    assert answer.notes == ("the model also sent moves; ignored (the planner plans)",)


async def test_an_invalid_target_is_corrected_once() -> None:
    bad = {"relationship": "pyramid", "placements": PYRAMID["placements"][:2]}
    replies = [json_message({"target_structure": bad, "user_feedback": None}),
               json_message({"target_structure": PYRAMID, "user_feedback": None})]  # fmt: skip
    async with MessagesApi(replies) as api:
        client = client_for(api)
        answer = await understand_target(client, CELL, START, "pyramid")
        await client.aclose()
    assert answer.target == PYRAMID
    assert "pyramid needs 3 placements, got 2" in api.messages[1].user_text
    assert answer.notes[0].startswith("corrected: pyramid needs 3 placements")


async def test_a_target_that_stays_invalid_is_an_error() -> None:
    bad = json_message({"target_structure": {"relationship": "heap", "placements": []},
                        "user_feedback": None})  # fmt: skip
    async with MessagesApi([bad, bad]) as api:
        client = client_for(api)
        with pytest.raises(LlmError, match="stayed invalid: corrected: unknown relationship"):
            await understand_target(client, CELL, START, "make a heap")
        await client.aclose()


@pytest.mark.parametrize(
    ("reply", "feedback"),
    [
        ({"target_structure": None, "user_feedback": "I can't juggle"}, "I can't juggle"),
        ({"target_structure": {"relationship": "stacked_left", "placements": [
            {"object": "yellow cube"}]}, "user_feedback": None},
         "The yellow cube is not in the cell"),
        ({"target_structure": {"relationship": "stacked_left", "placements": [
            {"object": "pink cube"}]}, "user_feedback": None}, "I don't have a pink cube"),
    ],
)  # fmt: skip
async def test_no_target(reply: dict[str, Any], feedback: str) -> None:
    async with MessagesApi([json_message(reply)]) as api:
        client = client_for(api)
        answer = await understand_target(client, CELL, START, "juggle the cubes")
        await client.aclose()
    assert answer.target is None and answer.feedback == feedback


async def test_prose_is_an_error() -> None:
    async with MessagesApi([message("Sure! Stack them.")]) as api:
        client = client_for(api)
        with pytest.raises(LlmError, match="not JSON"):
            await understand_target(client, CELL, START, "stack them")
        await client.aclose()


# -- the optional mode where the model writes the plan --


def seed_plan(extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The planner's own plan for seed Test 2, in seed fields only (no `site`)."""
    plan = plan_rearrangement(CELL, WRONG_TOP, STACK).to_dict()
    out = {k: plan[k] for k in ("status", "plan", "final_expected")}
    for step in out["plan"]:
        for end in ("from", "to"):
            step[end].pop("site")
    out["plan"] += extra or []
    return out


async def run_llm_plan(reply: Any) -> Any:
    async with MessagesApi([reply]) as api:
        client = client_for(api)
        plan = await plan_with_llm(
            client, CELL, WRONG_TOP, validate_target_structure_payload(STACK)
        )
        await client.aclose()
    return plan, api


async def test_a_good_llm_plan_runs() -> None:
    plan, api = await run_llm_plan(json_message(seed_plan()))
    assert plan.source == "llm" and plan.optimal and plan.notes == ()
    assert [s.target.site for s in plan.steps] == ["B1", "B2", "center", "center"]
    assert "Buffer slots: B1, B2, B3" in api.messages[0].system_text
    assert '"target_structure"' in api.messages[0].user_text


async def test_a_longer_llm_plan_runs_but_is_not_optimal() -> None:
    detour = seed_plan()
    first = copy.deepcopy(detour["plan"][0])
    # green: top of the stack -> B3, then B3 -> B1 (one move more than needed)
    first["to"] = {"type": "buffer", "slot": "B3"}
    hop = {"step": 2, "action": "move_to_position", "from": {"type": "buffer", "slot": "B3"},
           "to": {"type": "scattered", "position": "S4"}, "object": "green cube",
           "reason": "make room"}  # fmt: skip
    back = {**detour["plan"][2], "from": {"type": "scattered", "position": "S4"},
            "action": "move_to_position"}  # fmt: skip
    steps = [first, hop, detour["plan"][1], back, detour["plan"][3]]
    for number, step in enumerate(steps, 1):
        step["step"] = number
    detour["plan"] = steps
    plan, _ = await run_llm_plan(json_message(detour))
    assert plan.source == "planner", plan.notes  # move_to_position out of a buffer is refused
    assert "move_to_position cannot go from buffer" in plan.notes[0]
    hop["action"] = "move_from_buffer"
    plan, _ = await run_llm_plan(json_message(detour))
    assert plan.source == "llm" and not plan.optimal
    assert plan.notes == ("5 moves; the optimum is 4",)


async def test_an_inconsistent_llm_plan_falls_back_to_the_planner() -> None:
    bad = seed_plan()
    bad["plan"][0]["to"]["slot"] = "B7"
    plan, _ = await run_llm_plan(json_message(bad))
    assert plan.source == "planner" and len(plan.steps) == 4
    assert plan.notes[0].startswith("the language model's plan was rejected: step 1: buffer slot")


async def test_a_plan_that_does_not_replay_falls_back() -> None:
    bad = seed_plan()
    bad["plan"][0], bad["plan"][1] = bad["plan"][1], bad["plan"][0]
    bad["plan"][0]["step"], bad["plan"][1]["step"] = 1, 2
    plan, _ = await run_llm_plan(json_message(bad))
    assert plan.source == "planner"
    assert "step 1: the red cube is not on top of center" in plan.notes[0]


async def test_a_plan_that_stops_short_falls_back() -> None:
    short = seed_plan()
    short["plan"] = short["plan"][:2]
    plan, _ = await run_llm_plan(json_message(short))
    assert plan.source == "planner" and "does not reach the target" in plan.notes[0]


async def test_an_unreachable_model_falls_back() -> None:
    plan, _ = await run_llm_plan(error(400, "invalid_request_error", "no"))
    assert plan.source == "planner" and "was not used" in plan.notes[0]
    offline = await plan_with_llm(None, CELL, WRONG_TOP, validate_target_structure_payload(STACK))
    assert offline.source == "planner" and offline.notes == ()


def test_a_blocked_answer_for_a_reachable_target_is_refused() -> None:
    structure = validate_target_structure_payload(STACK)
    blocked = {"status": "blocked", "plan": [], "final_expected": structure.view()}
    assert check_llm_plan(CELL, WRONG_TOP, structure, blocked) == [
        "the model answered blocked, but the target can be reached"
    ]


# -- targets that contradict themselves: refused with the reason, never "corrected" --


async def test_a_contradiction_the_model_reports_is_the_answer() -> None:
    reply = {"target_structure": None, "user_feedback": None,
             "contradiction": "red on blue and blue on red"}  # fmt: skip
    async with MessagesApi([json_message(reply)]) as api:
        client = client_for(api)
        answer = await understand_target(client, CELL, START, "red on blue, blue on red")
        await client.aclose()
    assert answer.target is None
    assert answer.feedback == "That cannot all be done: red on blue and blue on red"
    assert "never drop a part to make the rest fit" in api.messages[0].system_text
    schema = api.messages[0].json()["output_config"]["format"]["schema"]
    assert "contradiction" in schema["properties"]


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ({"relationship": "stacked", "placements": [
            {"position": "bottom", "object 1": "red cube"},
            {"position": "bottom", "object 2": "blue cube"}]},
         "the bottom is given to both the red cube and the blue cube"),
        ({"relationship": "stacked", "placements": [
            {"position": "bottom", "object 1": "red cube"},
            {"position": "middle", "object 2": "blue cube"},
            {"position": "top", "object 3": "red cube"}]},
         "there is only one red cube: it cannot be in two places at once"),
        ({"relationship": "none", "placements": [
            {"position": "left", "object": "red cube"},
            {"position": "left", "object": "green cube"}]},
         "the left is given to both the red cube and the green cube"),
    ],
)  # fmt: skip
async def test_a_contradictory_target_is_refused_without_a_correction_round(
    target: dict[str, Any], reason: str
) -> None:
    """Sent back, the model would drop one part and the rest would run: the operator hears why
    instead, and the model is asked once."""
    async with MessagesApi([json_message({"target_structure": target, "user_feedback": None})]
                           ) as api:  # fmt: skip
        client = client_for(api)
        answer = await understand_target(client, CELL, START, "contradicting myself")
        await client.aclose()
    assert answer.target is None
    assert answer.feedback == f"That cannot all be done: {reason}"
    assert len(api.messages) == 1


async def test_alike_cubes_in_a_model_target_are_fine_when_there_are_enough() -> None:
    two_green = START.with_changes(stacks={**START.stacks, "S4": ("green cube",)})
    tower = {"relationship": "stacked", "placements": [
        {"position": "bottom", "object 1": "green cube"},
        {"position": "top", "object 2": "green cube"}]}  # fmt: skip
    async with MessagesApi([json_message({"target_structure": tower, "user_feedback": None})]
                           ) as api:  # fmt: skip
        client = client_for(api)
        answer = await understand_target(client, CELL, two_green, "both greens in a tower")
        await client.aclose()
    assert answer.target == tower
    assert "Objects in the cell: blue cube, green cube x2, red cube" in api.messages[0].system_text
