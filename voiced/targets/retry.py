"""When a failed HTTP request is tried again and after how long, and the POST loop that does it.

`retry_delay` is the whole policy, as a pure function: retry on no response at all (connection
error, timeout), on 429 and on 5xx, never on another status; exponential backoff with a cap and
jitter; a Retry-After of seconds is honoured, up to a cap. `post_json` applies it.
"""

from __future__ import annotations

import asyncio
import random
import re
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx2
import structlog

log = structlog.get_logger(__name__)

Sleep = Callable[[float], Awaitable[None]]
"""How the loop waits between attempts (asyncio.sleep; tests pass a recorder)."""

_SECONDS = re.compile(r"\d{1,9}(\.\d{1,6})?")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a request is retried."""

    retries: int
    """Attempts after the first; 0 = never retry."""
    base_delay: float = 0.5
    """Seconds before the first retry; each further retry waits twice as long as the one before."""
    max_delay: float = 8.0
    """Cap on a backoff delay, jitter included."""
    max_retry_after: float = 15.0
    """Cap on a server's Retry-After: the operator is waiting, and a server may ask for hours."""
    jitter: float = 0.2
    """Fraction by which a backoff delay is randomly stretched or shrunk, so that clients that
    failed together do not retry in lockstep."""


def is_retryable(status: int | None) -> bool:
    """True for no response (None), 429 Too Many Requests and every 5xx."""
    return status is None or status == 429 or 500 <= status <= 599


def parse_retry_after(value: str | None) -> float | None:
    """A Retry-After header's seconds, or None (absent, an HTTP date, or malformed)."""
    if value is None or not _SECONDS.fullmatch(value.strip()):
        return None
    return float(value.strip())


def retry_delay(
    policy: RetryPolicy, attempt: int, status: int | None, retry_after: str | None, rand: float
) -> float | None:
    """Seconds to wait before trying again after failed attempt number `attempt` (1 = the
    first), or None to give up.

    `status` is the failed attempt's HTTP status, None when no response came; `retry_after` its
    Retry-After header, if any; `rand` a number in [0, 1) that drives the jitter (passed in so
    that the policy stays a pure function).
    """
    if attempt > policy.retries or not is_retryable(status):
        return None
    asked = parse_retry_after(retry_after)
    if asked is not None:
        return min(asked, policy.max_retry_after)
    # The exponent is bounded so that a large attempt number cannot overflow a float.
    backoff = policy.base_delay * 2.0 ** min(attempt - 1, 32)
    jittered = min(backoff, policy.max_delay) * (1.0 + policy.jitter * (2.0 * rand - 1.0))
    return max(0.0, min(jittered, policy.max_delay))


@dataclass(frozen=True)
class HttpReply:
    """A 2xx answer."""

    status: int
    """The HTTP status."""
    body: bytes
    """The response body."""
    attempts: int
    """How many requests it took."""


@dataclass(frozen=True)
class HttpFailure:
    """No 2xx answer, after every retry the policy allowed."""

    reason: str
    """Short, speakable, naming where: "cannot connect to 127.0.0.1:8080/tasks"."""
    status: int | None
    """The last HTTP status, None when no response came."""
    attempts: int
    """How many requests were made."""
    body: str = ""
    """The start of the last response body (servers often explain a refusal there)."""

    @property
    def refused(self) -> bool:
        """True when the server answered with a status that is not worth retrying (4xx, 3xx)."""
        return self.status is not None and not is_retryable(self.status)


def where(url: str) -> str:
    """The URL as said to the operator: host, port and path, no scheme or query."""
    parts = urllib.parse.urlsplit(url)
    return (parts.netloc + parts.path).rstrip("/") or url


async def post_json(
    url: str,
    payload: dict[str, Any],
    *,
    timeout: float,
    policy: RetryPolicy,
    sleep: Sleep = asyncio.sleep,
    rand: Callable[[], float] = random.random,
) -> HttpReply | HttpFailure:
    """POST `payload` as JSON until a 2xx answer or the policy gives up. Never raises for a
    network or server failure; `timeout` bounds each attempt as a whole."""
    async with httpx2.AsyncClient(timeout=timeout) as client:
        attempt = 0
        while True:
            attempt += 1
            outcome = await _attempt(client, url, payload, timeout)
            if isinstance(outcome, httpx2.Response) and outcome.is_success:
                return HttpReply(outcome.status_code, outcome.content, attempt)
            failure = _failure(url, outcome, attempt)
            retry_after = None
            if isinstance(outcome, httpx2.Response):
                retry_after = outcome.headers.get("retry-after")
            delay = retry_delay(policy, attempt, failure.status, retry_after, rand())
            if delay is None:
                log.warning("request failed", url=url, reason=failure.reason, attempts=attempt)
                return failure
            log.info("retrying request", url=url, reason=failure.reason, delay=round(delay, 3))
            await sleep(delay)


async def _attempt(
    client: httpx2.AsyncClient, url: str, payload: dict[str, Any], timeout: float
) -> httpx2.Response | str:
    """The response, or why there was none."""
    try:
        # httpx times each phase separately; a server dribbling bytes must not stretch an attempt.
        async with asyncio.timeout(timeout):
            return await client.post(url, json=payload)
    except (TimeoutError, httpx2.TimeoutException):
        return f"no answer from {where(url)} within {timeout:g} seconds"
    except httpx2.ConnectError:
        return f"cannot connect to {where(url)}"
    except httpx2.RequestError as error:
        return f"the request to {where(url)} failed ({type(error).__name__})"


def _failure(url: str, outcome: httpx2.Response | str, attempt: int) -> HttpFailure:
    after = f" after {attempt} attempts" if attempt > 1 else ""
    if isinstance(outcome, str):
        return HttpFailure(outcome + after, None, attempt)
    status = f"HTTP {outcome.status_code} {outcome.reason_phrase}".rstrip()
    body = outcome.content[:300].decode("utf-8", errors="replace")
    return HttpFailure(f"{where(url)} answered {status}{after}", outcome.status_code, attempt, body)


@dataclass(frozen=True)
class JsonPoster:
    """`post_json` with one target's retry policy (and, in tests, its clock and dice)."""

    policy: RetryPolicy
    sleep: Sleep = asyncio.sleep
    rand: Callable[[], float] = random.random

    async def post(
        self, url: str, payload: dict[str, Any], timeout: float
    ) -> HttpReply | HttpFailure:
        return await post_json(
            url, payload, timeout=timeout, policy=self.policy, sleep=self.sleep, rand=self.rand
        )
