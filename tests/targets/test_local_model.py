"""The local_model target against a real HTTP server speaking Ollama's and OpenAI's shapes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.targets.httpfake import FakeHttpServer, Reply, SleepRecorder, refused_url
from voiced.config import DEFAULT_SYSTEM_PROMPT, Config, replace_in, with_overrides
from voiced.errors import ConfigError
from voiced.events import EventLog
from voiced.notes import NoteStore
from voiced.paths import DataDir
from voiced.targets import build_targets
from voiced.targets.local_model import (
    TIDIED,
    LocalModelTarget,
    ModelSettings,
    endpoint,
    reply_text,
)
from voiced.targets.retry import RetryPolicy

DICTATED = "bread milk zero zero zero eggs go"
TIDY = "- bread\n- milk\n- 000\n- eggs\n- go"
PROMPT = "Make a list."


def model(url: str, kind: str, notes: NoteStore, *, retries: int = 1) -> LocalModelTarget:
    settings = ModelSettings(url, kind, "tiny", PROMPT, timeout=2.0)
    return LocalModelTarget(
        settings, notes, policy=RetryPolicy(retries=retries), sleep=SleepRecorder()
    )


def ollama_chat(content: str) -> dict[str, Any]:
    return {
        "model": "tiny",
        "created_at": "2024-05-01T10:00:00Z",
        "message": {"role": "assistant", "content": content},
        "done": True,
    }


def openai_chat(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def assert_both_notes(notes: NoteStore, cid: str | None) -> None:
    original, tidied = notes.list()
    assert (original.source, original.text, original.correlation_id) == ("dictation", DICTATED, cid)
    assert (tidied.source, tidied.text, tidied.correlation_id) == ("local_model", TIDY, cid)


async def test_ollama_chat(tmp_path: Path) -> None:
    notes = NoteStore(tmp_path)
    async with FakeHttpServer([Reply(200, ollama_chat(f"  {TIDY}\n"))]) as server:
        result = await model(server.url(), "ollama", notes).submit(
            DICTATED, "cid-1", source="dictation"
        )

    assert result.ok, result.message
    assert result.message == TIDIED
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert request.json() == {
        "model": "tiny",
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": DICTATED},
        ],
        "stream": False,
    }
    assert_both_notes(notes, "cid-1")
    original, tidied = notes.list()
    assert result.detail["original_note_id"] == original.id
    assert result.detail["note_id"] == tidied.id


async def test_ollama_generate(tmp_path: Path) -> None:
    notes = NoteStore(tmp_path)
    reply = {"model": "tiny", "response": TIDY, "done": True}
    async with FakeHttpServer([Reply(200, reply)]) as server:
        result = await model(server.url("/api/generate"), "ollama", notes).submit(
            DICTATED, None, source="dictation"
        )

    assert result.ok, result.message
    [request] = server.requests
    assert request.path == "/api/generate"
    assert request.json() == {
        "model": "tiny",
        "system": PROMPT,
        "prompt": DICTATED,
        "stream": False,
    }
    assert_both_notes(notes, None)


@pytest.mark.parametrize("path", ["", "/", "/v1/chat/completions"])
async def test_openai_chat_completions(tmp_path: Path, path: str) -> None:
    notes = NoteStore(tmp_path)
    async with FakeHttpServer([Reply(200, openai_chat(TIDY))]) as server:
        result = await model(server.url(path), "openai", notes).submit(
            DICTATED, "cid-2", source="dictation"
        )

    assert result.ok, result.message
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    body = request.json()
    assert body["model"] == "tiny"
    assert body["stream"] is False
    assert body["messages"][1] == {"role": "user", "content": DICTATED}
    assert_both_notes(notes, "cid-2")


async def test_server_error_is_retried(tmp_path: Path) -> None:
    notes = NoteStore(tmp_path)
    async with FakeHttpServer([Reply(503), Reply(200, ollama_chat(TIDY))]) as server:
        result = await model(server.url(), "ollama", notes).submit(
            DICTATED, None, source="dictation"
        )
    assert result.ok
    assert len(server.requests) == 2
    assert_both_notes(notes, None)


async def test_failure_keeps_the_original_text(tmp_path: Path) -> None:
    notes = NoteStore(tmp_path)
    async with FakeHttpServer([Reply(500)]) as server:
        result = await model(server.url(), "ollama", notes).submit(
            DICTATED, "c", source="dictation"
        )

    assert not result.ok
    assert len(server.requests) == 2
    assert result.message == (
        f"The local model failed: 127.0.0.1:{server.port}/api/chat answered HTTP 500 "
        "Internal Server Error after 2 attempts. Your text is saved as a note."
    )
    [original] = notes.list()
    assert (original.text, original.source) == (DICTATED, "dictation")
    assert result.detail["original_note_id"] == original.id


async def test_unreachable_model_keeps_the_original_text(tmp_path: Path) -> None:
    notes = NoteStore(tmp_path)
    url = refused_url()
    result = await model(url, "openai", notes, retries=0).submit(DICTATED, None)

    assert not result.ok
    where = url.removeprefix("http://").rstrip("/")
    assert result.message == (
        f"The local model failed: cannot connect to {where}/v1/chat/completions. "
        "Your text is saved as a note."
    )
    assert [note.text for note in notes.list()] == [DICTATED]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>Bad Gateway</html>", "its reply was not understood as openai"),
        ({"error": "model not loaded"}, "its reply was not understood as openai"),
        ({"choices": []}, "its reply was not understood as openai"),
        (openai_chat("   "), "it answered with nothing"),
    ],
)
async def test_unusable_reply_keeps_the_original_text(
    tmp_path: Path, body: Any, reason: str
) -> None:
    notes = NoteStore(tmp_path)
    async with FakeHttpServer([Reply(200, body)]) as server:
        result = await model(server.url(), "openai", notes).submit(DICTATED, None)

    assert not result.ok
    assert result.message == f"The local model failed: {reason}. Your text is saved as a note."
    assert [note.text for note in notes.list()] == [DICTATED]


async def test_original_that_cannot_be_saved_stops_before_the_model(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").symlink_to("/dev/full")
    async with FakeHttpServer([Reply(200, ollama_chat(TIDY))]) as server:
        result = await model(server.url(), "ollama", NoteStore(tmp_path)).submit(DICTATED, None)
    assert not result.ok
    assert "No space left on device" in result.message
    assert server.requests == []


@pytest.mark.parametrize(
    ("url", "kind", "expected"),
    [
        ("http://h:11434", "ollama", "http://h:11434/api/chat"),
        ("http://h:11434/", "ollama", "http://h:11434/api/chat"),
        ("http://h:11434/api/generate", "ollama", "http://h:11434/api/generate"),
        ("http://h:8000", "openai", "http://h:8000/v1/chat/completions"),
        ("https://h/custom/chat", "openai", "https://h/custom/chat"),
    ],
)
def test_endpoint(url: str, kind: str, expected: str) -> None:
    assert endpoint(url, kind) == expected


@pytest.mark.parametrize(
    ("kind", "body", "expected"),
    [
        ("ollama", ollama_chat(" a "), "a"),
        ("ollama", {"response": "b"}, "b"),
        ("ollama", {"message": {"content": 3}}, None),
        ("ollama", [1], None),
        ("openai", openai_chat("c"), "c"),
        ("openai", {"choices": [{"message": None}]}, None),
        ("openai", "text", None),
    ],
)
def test_reply_text(kind: str, body: Any, expected: str | None) -> None:
    assert reply_text(kind, json.dumps(body).encode()) == expected


# --- Configuration and the factory --------------------------------------------------------------


def test_defaults() -> None:
    settings = Config().targets.local_model
    assert (settings.url, settings.kind, settings.model) == ("", "ollama", "llama3.2")
    assert settings.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert "keep every item" in DEFAULT_SYSTEM_PROMPT.lower()


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("kind", "llamafile", 'expected one of "ollama", "openai", got "llamafile" (str)'),
        ("url", "file:///tmp/model", 'expected a URL starting with "http://" or "https://"'),
        ("model", " ", "must not be empty"),
        ("system_prompt", "", "must not be empty"),
        ("timeout", 0.0, "0.0 is out of range, expected 0.1 to 600.0"),
    ],
)
def test_bad_local_model_settings_are_named(key: str, value: object, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        replace_in(Config(), f"targets.local_model.{key}", value)
    [problem] = caught.value.problems
    assert str(problem).startswith(f"command line: targets.local_model.{key}: {expected}")


def test_dictation_to_local_model_needs_its_url() -> None:
    with pytest.raises(ConfigError) as caught:
        replace_in(Config(), "targets.dictation", "local_model")
    assert [str(p) for p in caught.value.problems] == [
        'command line: targets.dictation: "local_model" needs targets.local_model.url'
    ]
    config = with_overrides(
        Config(),
        {"targets": {"dictation": "local_model", "local_model": {"url": "http://127.0.0.1:11434"}}},
    )
    assert config.targets.dictation == "local_model"


async def test_built_local_model_uses_the_data_dir_notes(tmp_path: Path) -> None:
    stream = io.StringIO()
    data = DataDir(tmp_path)
    async with FakeHttpServer([Reply(200, openai_chat(TIDY))]) as server:
        config = with_overrides(
            Config(),
            {"targets": {"local_model": {"url": server.url(), "kind": "openai", "model": "m"}}},
        )
        targets = build_targets(config, data, EventLog(stream))
        assert sorted(targets) == ["local_model", "note", "queue"]
        result = await targets["local_model"].submit(DICTATED, "cid", source="dictation")

    assert result.ok
    assert server.requests[0].json()["model"] == "m"
    assert server.requests[0].json()["messages"][0]["content"] == DEFAULT_SYSTEM_PROMPT
    assert_both_notes(NoteStore(data.notes), "cid")
    [event] = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert (event["event"], event["target"], event["ok"]) == ("target", "local_model", True)
