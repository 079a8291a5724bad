"""The LLM retry policy, table-driven: an SDK error -> what the operator hears, and whether and
after how long the call is tried again (the daemon's one HTTP policy, voiced.targets.retry)."""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from voiced.llm.policy import CallFailure, failure_of, llm_retry_delay
from voiced.targets.retry import RetryPolicy

POLICY = RetryPolicy(retries=2, base_delay=0.5, max_delay=4.0, max_retry_after=5.0)
URL = "http://127.0.0.1:9/v1/messages"


def request() -> httpx2.Request:
    return httpx2.Request("POST", URL)


def status_error(status: int, headers: dict[str, str] | None = None) -> anthropic.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=request())
    body = {"type": "error", "error": {"type": "x", "message": "m"}}
    classes: dict[int, type[anthropic.APIStatusError]] = {
        400: anthropic.BadRequestError,
        401: anthropic.AuthenticationError,
        404: anthropic.NotFoundError,
        429: anthropic.RateLimitError,
        500: anthropic.InternalServerError,
        503: anthropic.InternalServerError,
        529: anthropic.InternalServerError,
    }
    return classes.get(status, anthropic.APIStatusError)("m", response=response, body=body)


# (error, attempt that just failed) -> (reason, status, delay before the next try or None)
CASES = [
    pytest.param(TimeoutError(), 1, "no answer within 10 seconds", None, 0.5, id="timeout"),
    pytest.param(
        anthropic.APITimeoutError(request()),
        2,
        "no answer within 10 seconds",
        None,
        1.0,
        id="sdk-timeout-second",
    ),
    pytest.param(
        anthropic.APIConnectionError(request=request()),
        1,
        "cannot connect to the language model service",
        None,
        0.5,
        id="connection",
    ),
    pytest.param(status_error(429), 1, "rate limited", 429, 0.5, id="429"),
    pytest.param(
        status_error(429, {"retry-after": "2"}), 1, "rate limited", 429, 2.0, id="429-retry-after"
    ),
    pytest.param(
        status_error(429, {"retry-after": "120"}), 1, "rate limited", 429, 5.0, id="429-capped"
    ),
    pytest.param(
        status_error(429, {"retry-after-ms": "1500"}),
        1,
        "rate limited",
        429,
        1.5,
        id="429-retry-after-ms",
    ),
    pytest.param(status_error(500), 1, "the service failed (HTTP 500)", 500, 0.5, id="500"),
    pytest.param(status_error(503), 2, "the service failed (HTTP 503)", 503, 1.0, id="503-second"),
    pytest.param(status_error(529), 1, "the service is overloaded", 529, 0.5, id="529"),
    pytest.param(status_error(500), 3, "the service failed (HTTP 500)", 500, None, id="spent"),
    pytest.param(status_error(400), 1, "the request was refused (HTTP 400)", 400, None, id="400"),
    pytest.param(status_error(401), 1, "the API key was refused", 401, None, id="401"),
    pytest.param(status_error(404), 1, "the model was not found", 404, None, id="404"),
    pytest.param(status_error(418), 1, "the request was refused (HTTP 418)", 418, None, id="418"),
]


@pytest.mark.parametrize(("error", "attempt", "reason", "status", "delay"), CASES)
def test_policy(
    error: BaseException, attempt: int, reason: str, status: int | None, delay: float | None
) -> None:
    failure = failure_of(error, 10.0)
    assert failure.reason == reason
    assert failure.status == status
    assert llm_retry_delay(POLICY, attempt, failure, 0.5) == delay


def test_jitter_spreads_backoff() -> None:
    failure = CallFailure("rate limited", 429)
    assert llm_retry_delay(POLICY, 1, failure, 0.0) == pytest.approx(0.4)
    assert llm_retry_delay(POLICY, 1, failure, 1.0) == pytest.approx(0.6)
