"""Seed 000's three passes against a local Messages API server: generation, the deterministic
validator, regeneration, JSON repair, clean fallbacks and the live cell context in the prompt."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.cellsteps import with_learned
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep, steps
from voiced.robot.view import scene_from_view

from tests.llm.llmfakes import FAST, answer, client_for, reply, step, text_reply
from tests.llm.messages_api import MessagesApi, Reply, error, message
from voiced.eventtypes import CorrectionRound, Event
from voiced.llm.creative import Axes, CreativeAssignment, check
from voiced.llm.sequence import LlmOutcome, SequenceInterpreter
from voiced.llm.settings import LlmSettings

SANDWICH = load_cell("sandwich")
CHEESE_SANDWICH = (
    step("add_layer", item="bread"),
    step("add_layer", item="cheese"),
    step("add_layer", item="bread"),
    step("go_home"),
)


async def run(
    replies: list[Reply],
    text: str = "make me a cheese sandwich",
    *,
    cell: Cell = SANDWICH,
    scene: Scene | None = None,
    settings: LlmSettings = FAST,
    creative: CreativeAssignment | None = None,
    emitted: list[Event] | None = None,
) -> tuple[LlmOutcome, MessagesApi]:
    async with MessagesApi(replies) as api:
        client = client_for(api, settings)
        emit = emitted.append if emitted is not None else None
        interpreter = SequenceInterpreter(client, settings, rng=random.Random(7), emit=emit)
        outcome = await interpreter.interpret(
            text, cell, scene or cell.initial_scene, "cid-1", creative=creative
        )
        await client.aclose()
    return outcome, api


async def test_pass1_success() -> None:
    outcome, api = await run([reply(*CHEESE_SANDWICH)])
    result = outcome.interpretation
    assert result.sequence == steps(
        ("add_layer", {"item": "bread"}),
        ("add_layer", {"item": "cheese"}),
        ("add_layer", {"item": "bread"}),
        "go_home",
    )
    assert result.pass1_sequence == result.sequence
    assert result.validated and result.validation_issues == ()
    assert (result.source, result.correlation_id, result.confidence) == ("llm", "cid-1", 0.95)
    assert result.composite_name is None and not result.is_creative
    assert len(api.messages) == 1
    assert outcome.calls[0].temperature == 0.0 and outcome.calls[0].purpose == "pass1"
    assert outcome.error is None


async def test_pass2_issues_then_pass3_fix() -> None:
    first = reply(
        step("move_absolute", x=300, y=0, z=200),
        step("add_layer", item="avocado"),
        step("add_layer", item="Bread"),
        step("set_active_zone", zone="left"),
    )
    fixed = reply(step("set_active_zone", zone="left"), step("add_layer", item="bread"))
    outcome, api = await run([first, fixed], "put avocado and bread on the left")
    result = outcome.interpretation
    assert result.validated
    assert result.sequence == steps(
        ("set_active_zone", {"zone": "assembly_left"}), ("add_layer", {"item": "bread"})
    )
    assert [s.instruction for s in result.pass1_sequence] == [
        "move_absolute",
        "add_layer",
        "add_layer",
        "set_active_zone",
    ]
    assert all(issue.startswith("[P3 fixed] ") for issue in result.validation_issues)
    joined = "\n".join(result.validation_issues)
    assert "move_absolute is not a valid instruction" in joined
    assert "I don't have avocado" in joined
    correction = api.messages[1].system_text
    assert "CORRECTION REQUIRED (Pass 3)" in correction
    assert "move_absolute is not a valid instruction" in correction
    assert "CORRECTION REQUIRED" not in api.messages[0].system_text
    assert [c.purpose for c in outcome.calls] == ["pass1", "pass3"]
    assert outcome.usage.calls == 2


MOVE_ABSOLUTE = step("move_absolute", x=300, y=0, z=200)
AVOCADO = step("add_layer", item="avocado")


async def test_a_plan_corrected_twice_is_accepted_on_the_third_attempt() -> None:
    emitted: list[Event] = []
    replies = [reply(MOVE_ABSOLUTE), reply(AVOCADO), reply(*CHEESE_SANDWICH)]
    outcome, api = await run(replies, emitted=emitted)
    result = outcome.interpretation
    assert result.validated and result.sequence == steps_of_answer(CHEESE_SANDWICH)
    assert [c.purpose for c in outcome.calls] == ["pass1", "pass3", "pass3"]
    first, second = api.messages[1].system_text, api.messages[2].system_text
    # Each round carries the findings of the attempt before it; the second, the first's too.
    assert "Correction round 1 of 3." in first and "move_absolute is not a valid" in first
    assert "I don't have avocado — available items are" not in first
    assert "Correction round 2 of 3." in second
    assert "I don't have avocado — available items are" in second
    assert "Attempt 1 before it was refused for: move_absolute is not a valid" in second
    rounds = [e for e in emitted if isinstance(e, CorrectionRound)]
    assert [(r.round, r.of) for r in rounds] == [(1, 3), (2, 3)]
    assert "move_absolute" in rounds[0].issues[0] and "avocado" in rounds[1].issues[0]
    assert all(issue.startswith("[P3 fixed] ") for issue in result.validation_issues)


async def test_a_plan_that_fails_every_correction_is_refused_with_the_reason() -> None:
    emitted: list[Event] = []
    replies = [reply(MOVE_ABSOLUTE), reply(AVOCADO), reply(AVOCADO), reply(MOVE_ABSOLUTE)]
    outcome, api = await run(replies, emitted=emitted)
    result = outcome.interpretation
    assert len(api.messages) == 4, "pass 1 and three corrections, no more"
    assert result.sequence == () and not result.validated and result.confidence == 0.0
    feedback = result.user_feedback or ""
    assert "even after 3 corrections" in feedback
    assert "move_absolute is not a valid instruction" in feedback, "the last round's findings"
    assert "Nothing was moved" in feedback
    assert "(removed)" not in feedback and "step 1" not in feedback, "said plainly"
    assert [(e.round, e.of) for e in emitted if isinstance(e, CorrectionRound)] == [
        (1, 3), (2, 3), (3, 3)
    ]  # fmt: skip
    assert "Correction round 3 of 3." in api.messages[3].system_text


async def test_an_answer_that_is_not_json_uses_up_a_round() -> None:
    replies = [reply(MOVE_ABSOLUTE), text_reply("I cannot do JSON today"), reply(*CHEESE_SANDWICH)]
    outcome, api = await run(replies)
    assert outcome.interpretation.validated
    assert "the answer was not a JSON object" in api.messages[2].system_text


async def test_pass3_failure_keeps_pass2s_result() -> None:
    first = reply(step("transfer", item="bread", to="assembly"), step("go_home"), confidence=0.9)
    outcome, _ = await run([first, error(500, "api_error", "boom"), error(500, "api_error", "x")])
    result = outcome.interpretation
    # Rule 5 fixed transfer -> add_layer, but the model never confirmed it: not validated.
    assert result.sequence == steps(("add_layer", {"item": "bread"}), "go_home")
    assert not result.validated
    assert (
        result.validation_issues[0] == "transfer used for the assembly zone — should be add_layer"
    )
    assert result.confidence == 0.5
    assert result.user_feedback is not None


def steps_of_answer(raw: tuple[dict[str, object], ...]) -> tuple[SequenceStep, ...]:
    return tuple(SequenceStep.from_dict(step) for step in raw)


async def test_a_precondition_the_compiler_finds_goes_to_pass3() -> None:
    scene = scene_from_view(SANDWICH, {"supplies": {"bread": 0}}, "test")
    first = reply(step("add_layer", item="bread"), step("go_home"))
    unknown = reply(confidence=0.1, user_feedback="There is no bread left.")
    outcome, api = await run([first, unknown], "add bread", scene=scene)
    result = outcome.interpretation
    assert "supply_bread" in api.messages[1].system_text or "bread" in api.messages[1].system_text
    assert result.sequence == () and result.validated
    assert result.user_feedback == "There is no bread left."
    assert any("[P3 fixed] step 1 (add_layer)" in i for i in result.validation_issues)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(json.dumps(answer(*CHEESE_SANDWICH)), id="direct"),
        pytest.param(
            "Here is the sequence:\n```json\n" + json.dumps(answer(*CHEESE_SANDWICH)) + "\n```",
            id="fenced-prose",
        ),
        pytest.param("Sure! " + json.dumps(answer(*CHEESE_SANDWICH)) + " Let me know.", id="block"),
        pytest.param(
            json.dumps(
                answer(*CHEESE_SANDWICH, interpretation="A cheese sandwich:@@bread twice")
            ).replace("@@", "\n"),
            id="literal-newline-in-string",
        ),
    ],
)
async def test_json_repair_modes(text: str) -> None:
    outcome, _ = await run([text_reply(text)])
    assert outcome.interpretation.validated
    assert len(outcome.interpretation.sequence) == 4
    assert outcome.interpretation.raw_response is None


async def test_total_parse_failure_keeps_the_raw_text() -> None:
    raw = "I think you want a sandwich with {cheese"
    outcome, api = await run([text_reply(raw)])
    result = outcome.interpretation
    assert result.raw_response == raw
    assert result.confidence == 0.0 and result.sequence == () and not result.validated
    assert result.user_feedback is not None
    assert len(api.messages) == 1


async def test_an_impossible_command_passes_through() -> None:
    feedback = "I don't have avocado — available ingredients are: bread, meat, cheese"
    outcome, api = await run([reply(confidence=0.1, user_feedback=feedback)], "add avocado")
    result = outcome.interpretation
    assert (result.sequence, result.confidence, result.user_feedback) == ((), 0.1, feedback)
    assert len(api.messages) == 1


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        pytest.param(
            [error(429, "rate_limit_error", "slow down", {"retry-after": "1"})] * 2,
            "rate limited",
            id="429",
        ),
        pytest.param(
            [error(500, "api_error", "boom")] * 2, "the service failed (HTTP 500)", id="500"
        ),
        pytest.param(
            [dataclasses.replace(message("{}"), delay=5.0)] * 2,
            "no answer within 0.5 seconds",
            id="timeout",
        ),
    ],
)
async def test_failures_fall_back_with_spoken_feedback(replies: list[Reply], reason: str) -> None:
    outcome, api = await run(replies)
    result = outcome.interpretation
    assert result.sequence == () and result.confidence == 0.0
    assert result.user_feedback == (
        f"I couldn't reach the language model ({reason}); try a simpler command"
    )
    assert outcome.error == reason and outcome.usage.calls == 0
    assert len(api.messages) == 2  # one retry (FAST: retries=1)


async def test_the_command_budget_bounds_every_pass() -> None:
    slow = dataclasses.replace(message("{}"), delay=5.0)
    settings = LlmSettings(timeout=5.0, retries=0, command_budget=0.3)
    outcome, _ = await run([slow], settings=settings)
    assert outcome.error == "it took longer than 0.3 seconds"
    assert outcome.interpretation.sequence == ()


async def test_the_prompt_carries_the_live_cell_context() -> None:
    cell = with_learned(
        SANDWICH,
        "lunch",
        "Secret lunch recipe",
        [step("add_layer", item="meat"), step("wait", seconds=7)],
    )
    view = {
        "zones": {"assembly_left": ["bread", "cheese"]},
        "active_zone": "left",
        "supplies": {"bread": 6},
    }
    scene = scene_from_view(cell, view, "test")
    _, api = await run([reply(step("lunch"))], "lunch please", cell=cell, scene=scene)
    request = api.messages[0].json()
    static, dynamic = request["system"]
    assert static["cache_control"] == {"type": "ephemeral"} and "cache_control" not in dynamic
    for composite in SANDWICH.composites.values():
        if not composite.internal:
            assert f"- {composite.name}(" in static["text"]
            assert composite.description in static["text"]
    assert "slow = 100 mm/s" in static["text"] and "a bit = 50 mm" in static["text"]
    assert '"assembly_left": ["bread", "cheese"]' in dynamic["text"]
    assert '"active_zone": "assembly_left"' in dynamic["text"]
    assert '"bread": 6' in dynamic["text"]  # supplies left
    # Tier 2: the learned name is visible (in the dynamic block), its sequence is not.
    assert "LEARNED COMPOSITES" in dynamic["text"] and "\nlunch\n" in dynamic["text"]
    assert "- lunch(" not in static["text"]
    everything = static["text"] + dynamic["text"]
    assert "Secret lunch recipe" not in everything
    assert '"seconds": 7' not in everything
    assert request["messages"][0]["content"] == 'Voice command: "lunch please"'
    schema = request["output_config"]["format"]["schema"]
    assert "lunch" in schema["properties"]["sequence"]["items"]["properties"]["instruction"]["enum"]


async def test_token_use_is_recorded_per_command() -> None:
    first = reply(step("add_layer", item="avocado"), input_tokens=900, output_tokens=60)
    second = reply(
        step("add_layer", item="bread"), input_tokens=950, output_tokens=40, cache_read=2300
    )
    outcome, _ = await run([first, second])
    usage = outcome.usage
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (2, 1850, 100)
    assert usage.cache_read_tokens == 2300


async def test_the_llm_validator_is_never_trusted_alone() -> None:
    settings = dataclasses.replace(FAST, llm_validation=True)
    first = reply(step("add_layer", item="avocado"), step("go_home"))
    says_fine = message(json.dumps({"valid": True, "issues": [], "sequence": []}))
    outcome, api = await run(
        [first, says_fine, error(500, "api_error", "x"), error(500, "api_error", "x")],
        settings=settings,
    )
    result = outcome.interpretation
    assert not result.validated
    assert any("I don't have avocado" in issue for issue in result.validation_issues)
    assert any("correction rejected" in issue for issue in result.validation_issues)
    assert "valid_composites" in api.messages[1].system_text
    assert api.messages[1].json()["max_tokens"] == 700
    schema = api.messages[1].json()["output_config"]["format"]["schema"]
    assert schema["required"] == ["valid", "issues", "sequence"]


async def test_an_llm_validator_fix_is_adopted_only_after_the_deterministic_check() -> None:
    settings = dataclasses.replace(FAST, llm_validation=True)
    first = reply(step("move_absolute", x=1), step("add_layer", item="cheese"))
    fix = {"valid": False, "issues": ["move_absolute is not allowed"]}
    fix["sequence"] = [step("add_layer", item="cheese"), step("go_home")]
    outcome, _ = await run(
        [first, message(json.dumps(fix)), error(400, "x", "y")], settings=settings
    )
    result = outcome.interpretation
    assert result.sequence == steps(("add_layer", {"item": "cheese"}), "go_home")
    assert not result.validated  # pass 3 failed: the fix stands, unconfirmed
    assert "[LLM validator] move_absolute is not allowed" in result.validation_issues


PALINDROME = Axes("palindrome", "doubled")


async def test_a_creative_build_that_honours_its_axes() -> None:
    build = [step("set_active_zone", zone="right")] + [
        step("add_layer", item=item) for item in ("bread", "tomato", "bread", "tomato", "bread")
    ]
    creative = CreativeAssignment(PALINDROME, (), 4242)
    first = reply(*build, step("go_home"), composite_name="tower", creative_reasoning="B-T-B-T-B")
    outcome, api = await run([first], "impress me", creative=creative)
    result = outcome.interpretation
    assert result.is_creative and result.validated and result.composite_name is None
    assert result.creative_reasoning == "Axis 1: palindrome × Axis 2: doubled — B-T-B-T-B"
    dynamic = api.messages[0].json()["system"][1]["text"]
    assert "CREATIVE MODE — AXES" in dynamic and "variation #4242" in dynamic
    assert "AXIS 1 (spatial structure): palindrome" in dynamic
    assert "AXIS 2 (ingredient logic): doubled" in dynamic
    assert outcome.calls[0].temperature == 1.0


async def test_a_creative_build_failing_the_checker_falls_back_to_the_generator() -> None:
    creative = CreativeAssignment(PALINDROME, (), 1)
    wrong = reply(step("add_layer", item="bread"), step("add_layer", item="cheese"))
    outcome, api = await run([wrong, wrong], "go wild", creative=creative)
    result = outcome.interpretation
    assert len(api.messages) == 2  # pass 1, then pass 3 with the checker's problems
    assert "creative: palindrome" in api.messages[1].system_text
    assert result.is_creative and result.composite_name is None and result.source == "creative"
    assert check(PALINDROME, result.sequence) == []
    assert any("offline generator" in issue for issue in result.validation_issues)


async def test_a_creative_command_without_the_model_is_built_offline() -> None:
    creative = CreativeAssignment(Axes("three_zone_split", "all_one"), (), 1)
    outcome, _ = await run([error(500, "api_error", "x")] * 2, "surprise me", creative=creative)
    result = outcome.interpretation
    assert result.source == "creative" and result.sequence
    assert check(creative.axes, result.sequence) == []
    assert result.validation_issues[0].startswith("language model unavailable")
