"""LlmClient: the real AsyncAnthropic against a local server speaking the Messages API."""

from __future__ import annotations

import dataclasses

import pytest
from structlog.testing import capture_logs

from tests.llm.llmfakes import FAST, SleepRecorder, client_for
from tests.llm.messages_api import MessagesApi, Reply, error, message
from tests.ports import free_port
from voiced.llm.client import LlmClient, PromptBlock
from voiced.llm.policy import LlmCallError
from voiced.llm.settings import LlmSettings

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}},
    "required": ["a"],
    "additionalProperties": False,
}
SYSTEM = [PromptBlock("static rules", cache=True), PromptBlock("dynamic scene")]


async def test_request_shape_cache_flag_schema_and_usage() -> None:
    reply = message('{"a": 1}', input_tokens=300, output_tokens=12, cache_read=2000)
    async with MessagesApi([reply]) as api:
        client = client_for(api, LlmSettings(model="claude-haiku-4-5"))
        with capture_logs() as logs:
            answer = await client.complete(
                SYSTEM, "hi", temperature=0.0, max_tokens=900, json_schema=SCHEMA, purpose="pass1"
            )
        await client.aclose()
    body = api.messages[0].json()
    assert api.messages[0].path == "/v1/messages"
    assert api.messages[0].headers["authorization"] == "Bearer test-key"
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 900
    assert body["system"][0] == {
        "type": "text",
        "text": "static rules",
        "cache_control": {"type": "ephemeral"},
    }
    assert "cache_control" not in body["system"][1]
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    # API version 2026-10-21 refuses sampling parameters: the intent is not sent by default.
    assert "temperature" not in body
    assert (answer.text, answer.input_tokens, answer.output_tokens) == ('{"a": 1}', 300, 12)
    assert (answer.cache_read_tokens, answer.cache_write_tokens) == (2000, 0)
    assert answer.stop_reason == "end_turn"
    assert list(client.calls) == [answer]
    [logged] = [entry for entry in logs if entry["event"] == "llm call"]
    assert logged["purpose"] == "pass1" and logged["input_tokens"] == 300
    assert logged["cache_read_tokens"] == 2000 and logged["output_tokens"] == 12


async def test_schema_and_caching_can_be_switched_off() -> None:
    settings = LlmSettings(structured_output=False, prompt_caching=False)
    async with MessagesApi([message("plain")]) as api:
        client = client_for(api, settings)
        await client.complete(SYSTEM, "hi", temperature=0.0, max_tokens=50, json_schema=SCHEMA)
        await client.aclose()
    body = api.messages[0].json()
    assert "output_config" not in body
    assert all("cache_control" not in block for block in body["system"])


async def test_a_refused_schema_falls_back_to_plain_text_for_good() -> None:
    refused = error(400, "invalid_request_error", "output_config: not supported by this model")
    async with MessagesApi([refused, message('{"a": 1}'), message('{"a": 2}')]) as api:
        client = client_for(api)
        first = await client.complete(
            SYSTEM, "x", temperature=0.0, max_tokens=9, json_schema=SCHEMA
        )
        await client.complete(SYSTEM, "y", temperature=0.0, max_tokens=9, json_schema=SCHEMA)
        await client.aclose()
    assert first.text == '{"a": 1}' and first.attempts == 2
    assert ["output_config" in r.json() for r in api.messages] == [True, False, False]
    assert not client.structured_output


async def test_temperature_is_sent_only_when_configured_and_dropped_when_refused() -> None:
    refused = error(400, "invalid_request_error", "temperature: Extra inputs are not permitted")
    async with MessagesApi([refused, message("a"), message("b")]) as api:
        client = client_for(api, LlmSettings(send_temperature=True, structured_output=False))
        await client.complete(SYSTEM, "x", temperature=1.0, max_tokens=9)
        await client.complete(SYSTEM, "y", temperature=1.0, max_tokens=9)
        await client.aclose()
    assert [r.json().get("temperature") for r in api.messages] == [1.0, None, None]


async def test_429_is_retried_after_retry_after() -> None:
    limited = error(429, "rate_limit_error", "slow down", {"retry-after": "2"})
    sleep = SleepRecorder()
    async with MessagesApi([limited, message("ok")]) as api:
        client = client_for(api, sleep=sleep)
        answer = await client.complete(SYSTEM, "hi", temperature=0.0, max_tokens=9)
        await client.aclose()
    assert answer.text == "ok" and answer.attempts == 2
    assert sleep.delays == [2.0]
    assert len(api.messages) == 2


@pytest.mark.parametrize(
    ("replies", "reason", "status"),
    [
        ([error(500, "api_error", "boom")] * 2, "the service failed (HTTP 500)", 500),
        ([error(529, "overloaded_error", "busy")] * 2, "the service is overloaded", 529),
        ([error(401, "authentication_error", "bad key")], "the API key was refused", 401),
    ],
)
async def test_failures_surface_as_llm_call_errors(
    replies: list[Reply], reason: str, status: int
) -> None:
    async with MessagesApi(replies) as api:
        client = client_for(api)
        with pytest.raises(LlmCallError) as caught:
            await client.complete(SYSTEM, "hi", temperature=0.0, max_tokens=9)
        await client.aclose()
    assert caught.value.reason == reason
    assert caught.value.status == status
    assert caught.value.attempts == len(api.messages) == len(replies)


async def test_timeout_is_retried_then_reported() -> None:
    slow = dataclasses.replace(message("late"), delay=5.0)
    async with MessagesApi([slow, slow]) as api:
        client = client_for(api, LlmSettings(timeout=0.2, retries=1))
        with pytest.raises(LlmCallError) as caught:
            await client.complete(SYSTEM, "hi", temperature=0.0, max_tokens=9)
        await client.aclose()
    assert caught.value.reason == "no answer within 0.2 seconds"
    assert caught.value.attempts == 2


async def test_connection_refused() -> None:
    port = free_port()
    client = LlmClient(
        "k", FAST, base_url=f"http://127.0.0.1:{port}", sleep=SleepRecorder(), rand=lambda: 0.5
    )
    with pytest.raises(LlmCallError) as caught:
        await client.complete(SYSTEM, "hi", temperature=0.0, max_tokens=9)
    await client.aclose()
    assert caught.value.reason == "cannot connect to the language model service"
    assert caught.value.status is None


@pytest.mark.parametrize("key", [None, "", "   "])
def test_offline_without_a_key(key: str | None) -> None:
    environ = {} if key is None else {"ANTHROPIC_API_KEY": key}
    assert LlmClient.from_env(LlmSettings(), environ) is None


async def test_from_env_honours_the_base_url_variable_unless_configured() -> None:
    environ = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}
    from_env = LlmClient.from_env(LlmSettings(), environ)
    configured = LlmClient.from_env(LlmSettings(base_url="http://127.0.0.1:2"), environ)
    assert from_env is not None and configured is not None
    assert from_env.base_url.startswith("http://127.0.0.1:1")
    assert configured.base_url.startswith("http://127.0.0.1:2")
    await from_env.aclose()
    await configured.aclose()
