"""Model-backed classifiers: any label set (the confirm frame's yes/no, `rules.Classifier`) and
seed 001's intent router (action / question / unknown).

The yes/no classifier answers None when the model cannot be reached or answers unusably, so the
frame falls back to its word lists. The intent router always answers: an answer it cannot use
(or no answer) is "unknown", with `Intent.error` saying what was wrong, so the caller can report
it and carry on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog

from voiced.errors import LlmError
from voiced.llm import prompts
from voiced.llm.client import LlmClient, LlmReply, PromptBlock
from voiced.llm.jsonparse import JsonParseError, parse_json_object
from voiced.robot.cell import Cell

log = structlog.get_logger(__name__)

MAX_TOKENS = 150

ReplySink = Callable[[LlmReply | None, str | None], None]
"""Told of every call: the reply (None when there was none) and the error, if any, so that its
tokens are counted (the `llm` event) like every other call's."""


class AnthropicClassifier:
    """`rules.Classifier` over the Messages API: which of `labels` a reply means."""

    def __init__(self, client: LlmClient, on_reply: ReplySink | None = None) -> None:
        self.client = client
        self.on_reply = on_reply

    async def classify(
        self, text: str, labels: Sequence[str], context: str
    ) -> tuple[str, str] | None:
        """(label, reasoning), or None when no label fits or the model failed."""
        reply: LlmReply | None = None
        try:
            reply = await self.client.complete(
                [PromptBlock(prompts.classify_system(context, labels), cache=True)],
                prompts.classify_user(text),
                temperature=0.0,
                max_tokens=MAX_TOKENS,
                json_schema=prompts.classify_schema(labels),
                purpose="classify",
            )
            data = parse_json_object(reply.text).data
        except (LlmError, JsonParseError) as error:
            log.warning("classifier failed", error=str(error))
            self._told(reply, str(error))
            return None
        self._told(reply, None)
        label, reasoning = data.get("label"), data.get("reasoning")
        if not isinstance(label, str) or label not in labels:
            return None
        return label, reasoning if isinstance(reasoning, str) else ""

    def _told(self, reply: LlmReply | None, error: str | None) -> None:
        if self.on_reply is not None:
            self.on_reply(reply, error)


@dataclass(frozen=True)
class Intent:
    """Seed 001's router classification."""

    intent: str
    """action, question or unknown."""
    reasoning: str
    """The model's brief explanation."""
    error: str | None = None
    """Why the model's answer could not be used (then `intent` is "unknown")."""
    asked: bool = True
    """False when the model could not be reached at all (`error` says why)."""


class IntentClassifier:
    """Seed 001's router: is an utterance an action, a question or neither?"""

    def __init__(self, client: LlmClient, on_reply: ReplySink | None = None) -> None:
        self.client = client
        self.on_reply = on_reply

    async def classify(self, text: str, cell: Cell) -> Intent:
        """The intent; "unknown" with an error when the model could not be used. Empty input is
        "unknown" without a call (seed 001)."""
        found, reply = await self._classify(text, cell)
        if self.on_reply is not None and (reply is not None or found.error is not None):
            self.on_reply(reply, found.error)
        return found

    async def _classify(self, text: str, cell: Cell) -> tuple[Intent, LlmReply | None]:
        if not text.strip():
            return Intent("unknown", "empty input"), None  # no call made
        try:
            reply = await self.client.complete(
                [PromptBlock(prompts.intent_system(cell), cache=True)],
                prompts.intent_user(text),
                temperature=0.0,
                max_tokens=MAX_TOKENS,
                json_schema=prompts.INTENT_SCHEMA,
                purpose="intent",
            )
        except LlmError as error:
            return _unusable(f"the model could not be asked: {error}", asked=False), None
        try:
            data = parse_json_object(reply.text).data
        except JsonParseError as error:
            return _unusable(f"the answer was not JSON: {error.raw[:80]!r}"), reply
        intent, reasoning = data.get("intent"), data.get("reasoning")
        explained = reasoning if isinstance(reasoning, str) else ""
        if intent not in prompts.INTENTS:
            # Seed 001, step 3: an invalid intent is taken as unknown.
            allowed = ", ".join(prompts.INTENTS)
            why = f"the answer's intent {intent!r} is not one of {allowed}"
            return _unusable(why, explained), reply
        return Intent(str(intent), explained), reply


def _unusable(error: str, reasoning: str = "", *, asked: bool = True) -> Intent:
    log.warning("intent classifier failed; taken as unknown", error=error)
    return Intent("unknown", reasoning, error, asked)
