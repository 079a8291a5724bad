"""When a failed model call is tried again, and what the operator is told when it is not.

The decision itself is the daemon's one HTTP retry policy (`voiced.targets.retry.retry_delay`:
no response, 429 and 5xx are retried with capped, jittered backoff; Retry-After is honoured up
to a cap). This module only reads an SDK error into the inputs of that policy (`failure_of`) and
names the combination `llm_retry_delay`; both are pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from voiced.errors import LlmError
from voiced.targets.retry import RetryPolicy, retry_delay

_REASONS = {
    400: "the request was refused (HTTP 400)",
    401: "the API key was refused",
    403: "the API key may not use this model",
    404: "the model was not found",
    413: "the prompt was too large",
    429: "rate limited",
    529: "the service is overloaded",
}


class LlmCallError(LlmError):
    """A model call failed after every retry the policy allowed."""

    def __init__(self, reason: str, status: int | None, attempts: int) -> None:
        self.reason = reason
        """Short and speakable: "rate limited", "no answer within 10 seconds"."""
        self.status = status
        """The last HTTP status, None when no response came."""
        self.attempts = attempts
        """How many requests were made."""
        super().__init__(reason)


@dataclass(frozen=True)
class CallFailure:
    """One failed attempt, as the retry policy sees it."""

    reason: str
    """Short and speakable."""
    status: int | None
    """The HTTP status; None when no response came (timeout, connection error)."""
    retry_after: str | None = None
    """The response's Retry-After in seconds, if it gave one."""


def failure_of(error: BaseException, timeout: float) -> CallFailure:
    """Read an SDK (or asyncio) error into a `CallFailure`. `timeout` is the per-attempt limit,
    named in the reason when the attempt ran out of time."""
    import anthropic  # lazily, as in voiced.llm.client

    if isinstance(error, TimeoutError | anthropic.APITimeoutError):
        return CallFailure(f"no answer within {timeout:g} seconds", None)
    if isinstance(error, anthropic.APIConnectionError):
        return CallFailure("cannot connect to the language model service", None)
    if isinstance(error, anthropic.APIStatusError):
        return _status_failure(error.status_code, error.response.headers)
    if isinstance(error, anthropic.APIResponseValidationError):
        return CallFailure("the answer was malformed", error.status_code)
    return CallFailure(f"the request failed ({type(error).__name__})", None)


def _status_failure(status: int, headers: object) -> CallFailure:
    reason = _REASONS.get(status)
    if reason is None:
        kind = "the service failed" if status >= 500 else "the request was refused"
        reason = f"{kind} (HTTP {status})"
    return CallFailure(reason, status, _retry_after(headers))


def _retry_after(headers: object) -> str | None:
    """Seconds from Retry-After, or from the millisecond variant some gateways send."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    seconds = get("retry-after")
    if seconds is not None:
        return str(seconds)
    millis = get("retry-after-ms")
    try:
        return None if millis is None else f"{float(millis) / 1000:g}"
    except ValueError:
        return None


def llm_retry_delay(
    policy: RetryPolicy, attempt: int, failure: CallFailure, rand: float
) -> float | None:
    """Seconds to wait before retrying after failed attempt `attempt` (1 = the first), or None
    to give up: the shared HTTP policy applied to a model call's failure."""
    return retry_delay(policy, attempt, failure.status, failure.retry_after, rand)
