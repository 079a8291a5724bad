"""The task_api target against a real HTTP server on 127.0.0.1; its config keys; the factory."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path

import pytest

from tests.targets.httpfake import FakeHttpServer, Reply, SleepRecorder, refused_url
from voiced.config import Config, replace_in, with_overrides
from voiced.errors import ConfigError
from voiced.events import EventLog
from voiced.paths import DataDir
from voiced.targets import build_targets
from voiced.targets.retry import RetryPolicy
from voiced.targets.task_api import SENT, TaskApiTarget

POLICY = RetryPolicy(retries=3)


def target(
    url: str, sleep: SleepRecorder, *, timeout: float = 5.0, retries: int = 3
) -> TaskApiTarget:
    return TaskApiTarget(url, timeout=timeout, policy=RetryPolicy(retries=retries), sleep=sleep)


async def test_success_posts_the_documented_json() -> None:
    sleep = SleepRecorder()
    async with FakeHttpServer([Reply(201, {"id": 7})]) as server:
        result = await target(server.url("/tasks"), sleep).submit(
            "order more bread", "cid-1", source="dictation"
        )

    assert result.ok
    assert result.message == SENT
    assert result.detail["attempts"] == 1
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/tasks")
    assert request.headers["content-type"] == "application/json"
    body = request.json()
    assert set(body) == {"text", "correlation_id", "timestamp", "source"}
    assert body["text"] == "order more bread"
    assert body["correlation_id"] == "cid-1"
    assert body["source"] == "voiced"
    assert datetime.fromisoformat(body["timestamp"]).utcoffset() is not None
    assert sleep.delays == []


async def test_server_error_then_success_is_retried() -> None:
    sleep = SleepRecorder()
    async with FakeHttpServer([Reply(500), Reply(200)]) as server:
        result = await target(server.url(), sleep).submit("x", None)

    assert result.ok
    assert result.detail["attempts"] == 2
    assert len(server.requests) == 2
    [delay] = sleep.delays
    assert 0.4 <= delay <= 0.6  # base delay with jitter
    assert server.requests[0].json() == server.requests[1].json()


async def test_too_many_requests_honours_retry_after() -> None:
    sleep = SleepRecorder()
    replies = [Reply(429, headers={"Retry-After": "3"}), Reply(503, headers={"Retry-After": "1"})]
    async with FakeHttpServer([*replies, Reply(200)]) as server:
        result = await target(server.url(), sleep).submit("x", None)

    assert result.ok
    assert sleep.delays == [3.0, 1.0]


async def test_retry_after_is_capped() -> None:
    sleep = SleepRecorder()
    async with FakeHttpServer([Reply(429, headers={"Retry-After": "86400"}), Reply(200)]) as server:
        result = await target(server.url(), sleep).submit("x", None)

    assert result.ok
    assert sleep.delays == [POLICY.max_retry_after]


async def test_client_error_is_not_retried_and_says_so() -> None:
    sleep = SleepRecorder()
    async with FakeHttpServer([Reply(400, {"error": "text too long"})]) as server:
        url = server.url("/tasks")
        result = await target(url, sleep).submit("x", None)

    assert not result.ok
    assert len(server.requests) == 1
    assert sleep.delays == []
    assert result.message == (
        f"The task list refused the text: 127.0.0.1:{server.port}/tasks answered "
        "HTTP 400 Bad Request."
    )
    assert result.detail["status"] == 400
    assert "text too long" in result.detail["body"]
    assert result.detail["url"] == url


async def test_persistent_server_error_gives_up_after_the_retries() -> None:
    sleep = SleepRecorder()
    async with FakeHttpServer([Reply(503)]) as server:
        result = await target(server.url("/t"), sleep, retries=2).submit("x", None)

    assert not result.ok
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2
    assert result.message == (
        f"The task list did not answer: 127.0.0.1:{server.port}/t answered "
        "HTTP 503 Service Unavailable after 3 attempts."
    )


async def test_connection_refused_names_the_url() -> None:
    sleep = SleepRecorder()
    url = refused_url("/tasks")
    result = await target(url, sleep, retries=1).submit("x", None)

    assert not result.ok
    host_port_path = url.removeprefix("http://")
    assert result.message == (
        f"The task list did not answer: cannot connect to {host_port_path} after 2 attempts."
    )
    assert result.detail["url"] == url
    assert result.detail["status"] is None
    assert len(sleep.delays) == 1


async def test_timeout_counts_as_no_answer_and_is_retried() -> None:
    sleep = SleepRecorder()
    async with FakeHttpServer([Reply(hang=True)]) as server:
        result = await target(server.url(), sleep, timeout=0.3, retries=1).submit("x", None)

    assert not result.ok
    assert len(server.requests) == 2
    assert result.message == (
        f"The task list did not answer: no answer from 127.0.0.1:{server.port} within "
        "0.3 seconds after 2 attempts."
    )


async def test_real_sleep_between_retries() -> None:
    policy = RetryPolicy(retries=1, base_delay=0.01)
    async with FakeHttpServer([Reply(502), Reply(204, b"")]) as server:
        result = await TaskApiTarget(server.url(), timeout=2.0, policy=policy).submit("x", None)
    assert result.ok


async def test_blank_text_is_not_sent() -> None:
    async with FakeHttpServer([Reply(200)]) as server:
        result = await target(server.url(), SleepRecorder()).submit("  ", None)
    assert not result.ok
    assert server.requests == []


# --- Configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            "ftp://tasks.local/",
            'expected a URL starting with "http://" or "https://" (empty = off)',
        ),
        (
            "tasks.local:8080/api",
            'expected a URL starting with "http://" or "https://" (empty = off)',
        ),
        ("http://", "expected an http(s) URL with a host"),
        ("http://tasks.local:99999/", "expected an http(s) URL with a valid port"),
        ("http://tasks local/", "expected an http(s) URL without spaces"),
    ],
)
def test_bad_task_api_url_is_named(url: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        replace_in(Config(), "targets.task_api.url", url)
    [found] = caught.value.problems
    assert str(found) == (
        f"command line: targets.task_api.url: {problem}, got {json.dumps(url)} (str)"
    )


def test_good_task_api_settings_load() -> None:
    config = with_overrides(
        Config(),
        {"targets": {"dictation": "task_api", "task_api": {"url": "https://t.example/api"}}},
    )
    assert config.targets.dictation == "task_api"
    assert config.targets.task_api.url == "https://t.example/api"
    assert config.targets.task_api.timeout == 5.0
    assert config.targets.task_api.retries == 3


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            {"dictation": "task_api"},
            'command line: targets.dictation: "task_api" needs targets.task_api.url',
        ),
        (
            {"query": "local_model"},
            'command line: targets.query: "local_model" needs targets.local_model.url',
        ),
        (
            {"dictation": "robot"},
            'command line: targets.dictation: expected one of "note", "queue", "task_api", '
            '"local_model", got "robot" (str)',
        ),
        (
            {"task_api": {"retries": 11}},
            "command line: targets.task_api.retries: 11 is out of range, expected 0 to 10",
        ),
    ],
)
def test_targets_cross_check_and_choices(overrides: dict[str, object], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        with_overrides(Config(), {"targets": overrides})
    assert [str(p) for p in caught.value.problems] == [expected]


# --- The factory --------------------------------------------------------------------------------


def test_build_targets_defaults_contact_nothing(tmp_path: Path) -> None:
    targets = build_targets(Config(), DataDir(tmp_path), EventLog())
    assert sorted(targets) == ["note", "queue"]
    assert list(tmp_path.iterdir()) == []  # nothing is created until a target is used


async def test_built_task_api_reports_its_result_as_an_event(tmp_path: Path) -> None:
    stream = io.StringIO()
    async with FakeHttpServer([Reply(200)]) as server:
        config = replace_in(Config(), "targets.task_api.url", server.url("/tasks"))
        targets = build_targets(config, DataDir(tmp_path), EventLog(stream))
        assert sorted(targets) == ["note", "queue", "task_api"]
        result = await targets["task_api"].submit("x", "cid-9", source="query")

    assert result.ok
    [event] = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert event["event"] == "target"
    assert event["target"] == "task_api"
    assert event["ok"] is True
    assert event["message"] == SENT
    assert event["source"] == "query"
    assert event["correlation_id"] == "cid-9"
    assert event["detail"]["status"] == 200
