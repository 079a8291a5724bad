"""The one way this project talks to a language model: `LlmClient` over `anthropic.AsyncAnthropic`.

The SDK's own retries are off (`max_retries=0`): every retry decision goes through
`voiced.llm.policy.llm_retry_delay`, so the daemon has one policy, bounded by what the operator
will wait for. A failure that survives the retries becomes an `LlmCallError` with a short reason
that can be spoken ("rate limited", "no answer within 10 seconds").

`anthropic` is imported lazily: it takes over a second to import, and an offline daemon (no API
key) never needs it.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from voiced.llm.policy import LlmCallError, failure_of, llm_retry_delay
from voiced.llm.settings import LlmSettings
from voiced.targets.retry import RetryPolicy

if TYPE_CHECKING:
    from anthropic import Omit
    from anthropic.types import Message, OutputConfigParam, TextBlockParam

log = structlog.get_logger(__name__)

API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"

CALL_HISTORY = 256
"""How many recent calls `LlmClient.calls` keeps."""

Sleep = Callable[[float], Awaitable[None]]
"""How the client waits between attempts (asyncio.sleep; tests pass a recorder)."""


@dataclass(frozen=True)
class PromptBlock:
    """One block of a system prompt."""

    text: str
    """The block's text."""
    cache: bool = False
    """Mark the end of this block as a prompt-caching breakpoint: everything up to here is the
    same from call to call (cell catalogue, rules), so the API may reuse it."""


@dataclass(frozen=True)
class LlmReply:
    """A model's answer and what it cost."""

    text: str
    """The concatenated text blocks of the reply."""
    input_tokens: int
    """Uncached input tokens billed."""
    output_tokens: int
    """Output tokens billed."""
    cache_read_tokens: int
    """Input tokens read from the prompt cache."""
    cache_write_tokens: int
    """Input tokens written to the prompt cache."""
    model: str
    """The model that answered."""
    stop_reason: str | None
    """end_turn, max_tokens, refusal, ..."""
    temperature: float | None = None
    """The sampling intent the call was made with (sent or not: see `LlmClient.complete`)."""
    attempts: int = 1
    """How many requests it took."""
    purpose: str = ""
    """What the call was for (pass1, pass2, pass3, resolver, intent, classify)."""


@dataclass(frozen=True)
class _Options:
    """What a request asks for beyond the prompt."""

    schema: Mapping[str, Any] | None
    """The JSON schema for output_config, or None for plain text."""
    temperature: float | None
    """The temperature sent in the body, or None to send none."""


class LlmClient:
    """Async Messages API calls with one retry policy, structured output and prompt caching."""

    def __init__(
        self,
        api_key: str,
        settings: LlmSettings,
        *,
        base_url: str | None = None,
        sleep: Sleep = asyncio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        import anthropic  # lazily: see the module docstring

        self.settings = settings
        self.model = settings.model
        self.calls: deque[LlmReply] = deque(maxlen=CALL_HISTORY)
        """The latest successful calls, in order (token use per call; read by the benchmark).
        Bounded: the daemon runs for months."""
        self._sleep = sleep
        self._rand = rand
        # A long Retry-After is capped: the operator is waiting, and the command budget bounds all.
        self._policy = RetryPolicy(
            retries=settings.retries, base_delay=0.5, max_delay=4.0, max_retry_after=5.0
        )
        self._schema_refused = False
        self._send_temperature = settings.send_temperature
        self._errors: tuple[type[Exception], ...] = (anthropic.AnthropicError, TimeoutError)
        self._api = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url or settings.base_url or None,
            max_retries=0,
            timeout=settings.timeout,
        )

    @classmethod
    def from_env(
        cls,
        settings: LlmSettings,
        environ: Mapping[str, str] = os.environ,
        *,
        sleep: Sleep = asyncio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> LlmClient | None:
        """A client when $ANTHROPIC_API_KEY is set (non-blank), else None: offline."""
        key = environ.get(API_KEY_ENV, "").strip()
        if not key:
            return None
        base_url = settings.base_url or environ.get(BASE_URL_ENV, "").strip() or None
        return cls(key, settings, base_url=base_url, sleep=sleep, rand=rand)

    @property
    def structured_output(self) -> bool:
        """True while JSON-schema output is asked for (on in settings, not refused by the API)."""
        return self.settings.structured_output and not self._schema_refused

    @property
    def base_url(self) -> str:
        return str(self._api.base_url)

    async def aclose(self) -> None:
        await self._api.close()

    async def complete(
        self,
        system: Sequence[PromptBlock],
        user: str,
        *,
        temperature: float | None,
        max_tokens: int,
        json_schema: Mapping[str, Any] | None = None,
        purpose: str = "",
    ) -> LlmReply:
        """One model call, retried per `llm_retry_delay`. Raises LlmCallError.

        `temperature` is the seed's sampling intent (0 deterministic, 1.0 creative). It is sent
        only with `send_temperature`: API version 2026-10-21, which the SDK speaks, refuses any
        sampling parameter, so by default the prompts carry that intent instead.
        """
        options = _Options(
            json_schema if self.structured_output else None,
            temperature if self._send_temperature else None,
        )
        attempt = 0
        while True:
            attempt += 1
            try:
                message = await self._create(system, user, max_tokens, options)
            except self._errors as error:
                downgraded = self._downgrade(error, options)
                if downgraded is not None:
                    options = downgraded
                    continue
                failure = failure_of(error, self.settings.timeout)
                delay = llm_retry_delay(self._policy, attempt, failure, self._rand())
                if delay is None:
                    log.warning("llm call failed", purpose=purpose, reason=failure.reason)
                    raise LlmCallError(failure.reason, failure.status, attempt) from error
                log.info("retrying llm call", purpose=purpose, reason=failure.reason, delay=delay)
                await self._sleep(delay)
                continue
            return self._record(message, attempt, purpose, temperature)

    async def _create(
        self, system: Sequence[PromptBlock], user: str, max_tokens: int, options: _Options
    ) -> Message:
        from anthropic import omit

        output: OutputConfigParam | Omit = omit
        if options.schema is not None:
            output = {"format": {"type": "json_schema", "schema": dict(options.schema)}}
        body = None if options.temperature is None else {"temperature": options.temperature}
        # The SDK's timeout covers each phase; this bounds the attempt as a whole, so a server
        # that dribbles bytes cannot stretch it.
        async with asyncio.timeout(self.settings.timeout):
            return await self._api.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=self._system(system),
                messages=[{"role": "user", "content": user}],
                output_config=output,
                extra_body=body,
            )

    def _system(self, blocks: Sequence[PromptBlock]) -> list[TextBlockParam]:
        out: list[TextBlockParam] = []
        for block in blocks:
            param: TextBlockParam = {"type": "text", "text": block.text}
            if block.cache and self.settings.prompt_caching:
                param["cache_control"] = {"type": "ephemeral"}
            out.append(param)
        return out

    def _downgrade(self, error: Exception, options: _Options) -> _Options | None:
        """After a 400, the same request without what the model or a proxy may not support
        (the temperature when the refusal names it, else output_config); None when there is
        nothing left to drop. The client stops sending it from then on."""
        import anthropic

        if not isinstance(error, anthropic.BadRequestError):
            return None
        if options.temperature is not None and "temperature" in str(error).lower():
            log.warning("temperature refused; no longer sent", reason=str(error)[:200])
            self._send_temperature = False
            return _Options(options.schema, None)
        if options.schema is not None:
            log.warning("structured output refused; using plain text", reason=str(error)[:200])
            self._schema_refused = True
            return _Options(None, options.temperature)
        return None

    def _record(
        self, message: Message, attempts: int, purpose: str, temperature: float | None
    ) -> LlmReply:
        usage = message.usage
        text = "".join(block.text for block in message.content if block.type == "text")
        reply = LlmReply(
            text=text,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
            model=message.model,
            stop_reason=message.stop_reason,
            temperature=temperature,
            attempts=attempts,
            purpose=purpose,
        )
        self.calls.append(reply)
        log.info(
            "llm call",
            purpose=purpose,
            model=reply.model,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cache_read_tokens=reply.cache_read_tokens,
            cache_write_tokens=reply.cache_write_tokens,
            stop_reason=reply.stop_reason,
            attempts=attempts,
        )
        return reply
