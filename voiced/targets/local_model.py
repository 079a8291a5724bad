"""The local_model target: a local language model tidies dictated text up; both are kept as notes.

The original text is saved as a note before the model is asked anything, so neither a model that
is down nor a daemon killed while waiting for it can lose what was dictated. The model's reply is
saved as a second note with source "local_model" and the same correlation id.

Two dialects, chosen by `kind`: "ollama" (`/api/chat`, or `/api/generate` when the URL names it)
and "openai" (`/v1/chat/completions`, which llama.cpp, vLLM and LM Studio speak). A URL without a
path gets the kind's default path; one with a path is used as it is.
"""

from __future__ import annotations

import asyncio
import json
import random
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from voiced.notes import NoteStore
from voiced.targets.base import (
    DEFAULT_SOURCE,
    LOCAL_MODEL,
    TargetResult,
    failed,
    nothing_to_submit,
    succeeded,
)
from voiced.targets.note import save_note
from voiced.targets.retry import HttpFailure, JsonPoster, RetryPolicy, Sleep

log = structlog.get_logger(__name__)

OLLAMA = "ollama"
OPENAI = "openai"
DEFAULT_PATHS = {OLLAMA: "/api/chat", OPENAI: "/v1/chat/completions"}
"""The endpoint used when the configured URL has no path."""
GENERATE_PATH = "/api/generate"
"""Ollama's prompt-completion endpoint, used when the URL ends with it."""
REPLY_SOURCE = "local_model"
"""The `source` of the note holding the model's reply."""
TIDIED = "Tidied up and saved."
"""What the operator hears when both notes are saved."""


@dataclass(frozen=True)
class ModelSettings:
    """How to reach the model and what to ask it."""

    url: str
    """Base URL or full endpoint (see the module docstring)."""
    kind: str
    """"ollama" or "openai"."""
    model: str
    """The model name sent with each request."""
    system_prompt: str
    """The instruction sent with the text."""
    timeout: float
    """Seconds per attempt."""


def endpoint(url: str, kind: str) -> str:
    """The URL requests go to: `url` itself when it has a path, else with the kind's path."""
    parts = urllib.parse.urlsplit(url)
    if parts.path.strip("/"):
        return url
    return urllib.parse.urlunsplit(parts._replace(path=DEFAULT_PATHS[kind]))


def request_body(settings: ModelSettings, text: str) -> dict[str, Any]:
    """The JSON body for the endpoint `settings` resolve to."""
    messages = [
        {"role": "system", "content": settings.system_prompt},
        {"role": "user", "content": text},
    ]
    url = endpoint(settings.url, settings.kind)
    if settings.kind == OLLAMA and url.rstrip("/").endswith(GENERATE_PATH):
        return {
            "model": settings.model,
            "system": settings.system_prompt,
            "prompt": text,
            "stream": False,
        }
    return {"model": settings.model, "messages": messages, "stream": False}


def reply_text(kind: str, body: bytes) -> str | None:
    """The model's answer from a response body, or None when the body is not the kind's shape."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    answer: Any = None
    if kind == OPENAI:
        choices = data.get("choices") if isinstance(data, dict) else None
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            answer = message.get("content") if isinstance(message, dict) else None
    elif isinstance(data, dict):
        message = data.get("message")
        # /api/chat answers {"message": {"content"}}, /api/generate {"response"}.
        answer = message.get("content") if isinstance(message, dict) else data.get("response")
    return answer.strip() if isinstance(answer, str) else None


class LocalModelTarget:
    """Saves the text, has the model tidy it up, and saves the reply."""

    def __init__(
        self,
        settings: ModelSettings,
        notes: NoteStore,
        *,
        policy: RetryPolicy,
        sleep: Sleep = asyncio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.settings = settings
        self.notes = notes
        self._poster = JsonPoster(policy, sleep, rand)

    @property
    def name(self) -> str:
        return LOCAL_MODEL

    async def submit(
        self, text: str, correlation_id: str | None, *, source: str = DEFAULT_SOURCE
    ) -> TargetResult:
        empty = nothing_to_submit(text)
        if empty is not None:
            return empty
        original = await save_note(self.notes, text, source, correlation_id, TIDIED)
        if not original.ok:
            return original
        kept = {"original_note_id": original.detail["note_id"]}
        answer = await self._ask(text)
        if isinstance(answer, str):
            message = f"The local model failed: {answer}. Your text is saved as a note."
            return failed(message, url=endpoint(self.settings.url, self.settings.kind), **kept)
        tidied, detail = answer
        saved = await save_note(self.notes, tidied, REPLY_SOURCE, correlation_id, TIDIED)
        if not saved.ok:
            message = "Could not save the tidied text. Your own text is saved as a note."
            return failed(message, **saved.detail, **kept)
        return succeeded(TIDIED, **saved.detail, **detail, **kept)

    async def _ask(self, text: str) -> tuple[str, dict[str, Any]] | str:
        """(the tidied text, detail) or why there is none."""
        url = endpoint(self.settings.url, self.settings.kind)
        outcome = await self._poster.post(
            url, request_body(self.settings, text), self.settings.timeout
        )
        if isinstance(outcome, HttpFailure):
            return outcome.reason
        answer = reply_text(self.settings.kind, outcome.body)
        if answer is None:
            log.warning("unexpected model reply", url=url, body=outcome.body[:300])
            return f"its reply was not understood as {self.settings.kind}"
        if not answer:
            return "it answered with nothing"
        return answer, {"url": url, "attempts": outcome.attempts}
