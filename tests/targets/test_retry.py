"""The retry policy, table-driven: which failures are retried, and after how long."""

from __future__ import annotations

import pytest

from voiced.targets.retry import RetryPolicy, is_retryable, parse_retry_after, retry_delay, where

POLICY = RetryPolicy(retries=3, base_delay=0.5, max_delay=4.0, max_retry_after=10.0, jitter=0.2)
LONG = RetryPolicy(retries=10, base_delay=0.5, max_delay=4.0, max_retry_after=10.0, jitter=0.2)
NEVER = RetryPolicy(retries=0)

# (policy, attempt that just failed, its status (None = no response), Retry-After, rand) -> delay
CASES = [
    # No response at all (connection refused, timeout): exponential backoff, rand 0.5 = no jitter.
    pytest.param(POLICY, 1, None, None, 0.5, 0.5, id="no-response-first"),
    pytest.param(POLICY, 2, None, None, 0.5, 1.0, id="no-response-doubles"),
    pytest.param(POLICY, 3, None, None, 0.5, 2.0, id="no-response-doubles-again"),
    pytest.param(POLICY, 4, None, None, 0.5, None, id="retries-exhausted"),
    pytest.param(NEVER, 1, None, None, 0.5, None, id="retries-zero"),
    # Jitter: up to 20% either way.
    pytest.param(POLICY, 1, 500, None, 0.0, 0.4, id="jitter-low"),
    pytest.param(POLICY, 1, 500, None, 0.75, 0.55, id="jitter-high"),
    pytest.param(POLICY, 2, 503, None, 0.25, 0.9, id="jitter-second"),
    # The cap holds with jitter on top.
    pytest.param(LONG, 4, 502, None, 0.5, 4.0, id="cap-reached"),
    pytest.param(LONG, 6, 502, None, 0.999, 4.0, id="cap-holds-with-jitter-up"),
    pytest.param(LONG, 6, 502, None, 0.0, 3.2, id="cap-jitter-down"),
    pytest.param(LONG, 10, None, None, 0.5, 4.0, id="cap-at-last-retry"),
    pytest.param(RetryPolicy(retries=2000), 1500, None, None, 0.5, 8.0, id="huge-attempt"),
    # Which statuses are retried.
    pytest.param(POLICY, 1, 429, None, 0.5, 0.5, id="429-retried"),
    pytest.param(POLICY, 1, 500, None, 0.5, 0.5, id="500-retried"),
    pytest.param(POLICY, 1, 599, None, 0.5, 0.5, id="599-retried"),
    pytest.param(POLICY, 1, 400, None, 0.5, None, id="400-not-retried"),
    pytest.param(POLICY, 1, 401, None, 0.5, None, id="401-not-retried"),
    pytest.param(POLICY, 1, 404, None, 0.5, None, id="404-not-retried"),
    pytest.param(POLICY, 1, 408, None, 0.5, None, id="408-not-retried"),
    pytest.param(POLICY, 1, 422, None, 0.5, None, id="422-not-retried"),
    pytest.param(POLICY, 1, 301, None, 0.5, None, id="redirect-not-retried"),
    pytest.param(POLICY, 1, 600, None, 0.5, None, id="600-not-retried"),
    # Retry-After (seconds) wins over backoff and jitter, capped.
    pytest.param(POLICY, 1, 429, "2", 0.0, 2.0, id="retry-after"),
    pytest.param(POLICY, 3, 429, "0", 0.5, 0.0, id="retry-after-zero"),
    pytest.param(POLICY, 1, 503, " 1.5 ", 0.5, 1.5, id="retry-after-on-503-decimal"),
    pytest.param(POLICY, 1, 429, "3600", 0.5, 10.0, id="retry-after-capped"),
    pytest.param(POLICY, 4, 429, "1", 0.5, None, id="retry-after-but-exhausted"),
    pytest.param(POLICY, 1, 400, "1", 0.5, None, id="retry-after-on-400-ignored"),
    # A Retry-After that is not seconds falls back to backoff.
    pytest.param(POLICY, 1, 429, "Wed, 21 Oct 2015 07:28:00 GMT", 0.5, 0.5, id="http-date"),
    pytest.param(POLICY, 1, 429, "-5", 0.5, 0.5, id="negative"),
    pytest.param(POLICY, 1, 429, "", 0.5, 0.5, id="empty"),
    pytest.param(POLICY, 1, 429, "soon", 0.5, 0.5, id="garbage"),
]


@pytest.mark.parametrize(("policy", "attempt", "status", "retry_after", "rand", "expected"), CASES)
def test_retry_delay(
    policy: RetryPolicy,
    attempt: int,
    status: int | None,
    retry_after: str | None,
    rand: float,
    expected: float | None,
) -> None:
    delay = retry_delay(policy, attempt, status, retry_after, rand)
    if expected is None:
        assert delay is None
    else:
        assert delay == pytest.approx(expected)


@pytest.mark.parametrize(
    ("status", "expected"),
    [(None, True), (200, False), (404, False), (429, True), (500, True), (503, True)],
)
def test_is_retryable(status: int | None, expected: bool) -> None:
    assert is_retryable(status) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("7", 7.0), ("0.25", 0.25), ("1e3", None), ("inf", None), ("12 s", None)],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_delay_is_never_negative_or_above_the_cap() -> None:
    for attempt in range(1, 11):
        for rand in (0.0, 0.3, 0.999):
            delay = retry_delay(LONG, attempt, None, None, rand)
            assert delay is not None
            assert 0.0 <= delay <= LONG.max_delay


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/tasks", "127.0.0.1:8080/tasks"),
        ("https://tasks.example/api/v1/?key=secret", "tasks.example/api/v1"),
        ("http://host", "host"),
    ],
)
def test_where_names_host_and_path_without_the_query(url: str, expected: str) -> None:
    assert where(url) == expected
