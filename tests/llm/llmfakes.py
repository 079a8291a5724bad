"""Helpers shared by the LLM tier's tests: a client pointed at the fake Messages API, a sleep
recorder, and answers in seed 000's format."""

from __future__ import annotations

import json
from typing import Any

from tests.llm.messages_api import MessagesApi, Reply, json_message, message
from voiced.llm.client import LlmClient
from voiced.llm.settings import LlmSettings

FAST = LlmSettings(timeout=0.5, retries=1, command_budget=10.0)
"""Short timeouts so that failure paths finish quickly."""


class SleepRecorder:
    """Stands in for asyncio.sleep between retries: records each delay and waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def client_for(
    api: MessagesApi, settings: LlmSettings = FAST, sleep: SleepRecorder | None = None
) -> LlmClient:
    """The real SDK client, talking to the fake server (rand 0.5 = no jitter)."""
    return LlmClient(
        "test-key", settings, base_url=api.url, sleep=sleep or SleepRecorder(), rand=lambda: 0.5
    )


def step(instruction: str, **params: Any) -> dict[str, Any]:
    return {"instruction": instruction, "params": params}


def answer(
    *steps: dict[str, Any],
    interpretation: str = "Build what was asked.",
    confidence: float = 0.95,
    composite_name: str | None = None,
    user_feedback: str | None = None,
    creative_reasoning: str | None = None,
) -> dict[str, Any]:
    """A pass-1 answer in seed 000's format."""
    return {
        "interpretation": interpretation,
        "sequence": list(steps),
        "composite_name": composite_name,
        "confidence": confidence,
        "user_feedback": user_feedback,
        "creative_reasoning": creative_reasoning,
    }


_USAGE = frozenset({"input_tokens", "output_tokens", "cache_read", "cache_write"})


def reply(*steps: dict[str, Any], **fields: Any) -> Reply:
    """A 200 reply whose text is `answer(...)` as JSON (token counts go to the usage)."""
    usage = {key: fields.pop(key) for key in list(fields) if key in _USAGE}
    return json_message(answer(*steps, **fields), **usage)


def text_reply(text: str, **usage: Any) -> Reply:
    return message(text, **usage)


def dumps(data: Any) -> str:
    return json.dumps(data)
