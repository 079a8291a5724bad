"""The confirm frame's yes/no classifier (rules.Classifier) and seed 001's intent classifier."""

from __future__ import annotations

import pytest
from voiced.robot.cellfile import load_cell
from voiced.rules import Handled, LlmClassifier, Utterance

from tests.llm.llmfakes import client_for
from tests.llm.messages_api import MessagesApi, Reply, error, json_message, message
from voiced.llm.classifier import AnthropicClassifier, Intent, IntentClassifier

CONTEXT = "The operator was asked: Clear the assembly? Classify the reply as yes or no."


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (json_message({"label": "yes", "reasoning": "sure means yes"}), ("yes", "sure means yes")),
        (json_message({"label": "no", "reasoning": "hold off"}), ("no", "hold off")),
        (json_message({"label": "none", "reasoning": "unclear"}), None),
        (json_message({"label": "maybe", "reasoning": "?"}), None),
        (message("yes, I think"), None),
        (error(400, "invalid_request_error", "bad"), None),
    ],
)
async def test_yes_no(answer: Reply, expected: tuple[str, str] | None) -> None:
    async with MessagesApi([answer]) as api:
        client = client_for(api)
        result = await AnthropicClassifier(client).classify("sure, why not", ["yes", "no"], CONTEXT)
        await client.aclose()
    assert result == expected
    request = api.messages[0]
    assert CONTEXT in request.system_text and 'Reply: "sure, why not"' in request.user_text
    schema = request.json()["output_config"]["format"]["schema"]
    assert schema["properties"]["label"]["enum"] == ["yes", "no", "none"]


async def test_drives_the_confirm_frames_rule() -> None:
    said: list[str] = []
    actions = {"yes": lambda *_: said.append("yes"), "no": lambda *_: said.append("no")}
    async with MessagesApi([json_message({"label": "yes", "reasoning": "agreed"})]) as api:
        client = client_for(api)
        rule = LlmClassifier("llm_yes_no", actions, AnthropicClassifier(client), CONTEXT)
        result = await rule.match_async(Utterance("sure, go for it"))
        await client.aclose()
    assert isinstance(result, Handled)
    assert result.match.args == {"label": "yes"} and "agreed" in result.match.why


WELD = load_cell("weld")


@pytest.mark.parametrize(
    ("text", "answer", "expected"),
    [
        ("weld at position 1", {"intent": "action", "reasoning": "run"}, Intent("action", "run")),
        ("where is the robot", {"intent": "question", "reasoning": "q"}, Intent("question", "q")),
        ("what's the weather", {"intent": "unknown", "reasoning": "o"}, Intent("unknown", "o")),
    ],
)
async def test_intent(text: str, answer: dict[str, str], expected: Intent) -> None:
    async with MessagesApi([json_message(answer)]) as api:
        client = client_for(api)
        result = await IntentClassifier(client).classify(text, WELD)
        await client.aclose()
    assert result == expected
    system = api.messages[0].system_text
    assert "SYSTEM CAPABILITIES:" in system
    assert "Available routines: tack_weld, camera_inspection" in system
    assert "Available positions: Home, Safe_Pos_1, Pos_1, Pos_2, Pos_3" in system
    assert f'OPERATOR INPUT: "{text}"' in api.messages[0].user_text


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (json_message({"intent": "chitchat", "reasoning": "?"}), "'chitchat' is not one of"),
        (json_message({"reasoning": "no intent"}), "None is not one of action, question, unknown"),
        (message("action, I think"), "the answer was not JSON: 'action, I think'"),
        (error(400, "invalid_request_error", "bad"), "the model could not be asked"),
    ],
)
async def test_an_unusable_answer_is_unknown_and_says_why(answer: Reply, error: str) -> None:
    async with MessagesApi([answer]) as api:
        client = client_for(api)
        result = await IntentClassifier(client).classify("hmm", WELD)
        await client.aclose()
    assert result.intent == "unknown"
    assert result.error is not None and error in result.error


async def test_intent_of_nothing_needs_no_call() -> None:
    async with MessagesApi() as api:
        client = client_for(api)
        result = await IntentClassifier(client).classify("  ", WELD)
        await client.aclose()
    assert result == Intent("unknown", "empty input")
    assert len(api.messages) == 0


async def test_every_call_is_told_with_its_tokens_or_its_error() -> None:
    """So the `llm` event counts the classifiers' tokens like every other call's."""
    told: list[tuple[int, str | None]] = []

    def sink(reply: object, error: str | None) -> None:
        told.append((getattr(reply, "input_tokens", 0), error))

    answers = [json_message({"label": "yes", "reasoning": "ok"}), message("not json"),
               json_message({"intent": "action", "reasoning": "do"})]  # fmt: skip
    async with MessagesApi(answers) as api:
        client = client_for(api)
        await AnthropicClassifier(client, sink).classify("sure", ["yes", "no"], CONTEXT)
        await AnthropicClassifier(client, sink).classify("hmm", ["yes", "no"], CONTEXT)
        await IntentClassifier(client, sink).classify("add bread", load_cell("sandwich"))
        await IntentClassifier(client, sink).classify("   ", load_cell("sandwich"))  # no call
        await client.aclose()
    assert len(told) == 3
    assert told[0][0] > 0 and told[0][1] is None
    assert told[1][0] > 0 and told[1][1] is not None, "an answer that is not JSON still cost"
    assert told[2][0] > 0 and told[2][1] is None
