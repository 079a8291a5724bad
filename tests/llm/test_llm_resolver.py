"""Seed 003's resolver: unknown verbs to a canonical composite or UNKNOWN, cached in memory and
in an atomically written JSON file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.llmfakes import client_for
from tests.llm.messages_api import MessagesApi, error, json_message, message
from voiced.errors import LlmError
from voiced.llm.resolver import PhraseResolver, cache_key

CANDIDATES = {
    "add_layer": "Take one item from its supply and put it on top of the active zone's stack.",
    "clear_assembly": "Return every item on the active zone to its supply.",
    "go_home": "Move the arm to its home pose.",
}


async def test_maps_a_phrase_and_records_metadata(tmp_path: Path) -> None:
    answer = json_message({"composite": "add_layer", "reasoning": "stack on means add a layer"})
    async with MessagesApi([answer]) as api:
        client = client_for(api)
        resolver = PhraseResolver(client, tmp_path / "resolutions.json")
        resolution = await resolver.resolve("stack on", CANDIDATES, "stack on some cheese")
        await client.aclose()
    assert resolution.canonical == "add_layer" and not resolution.cached
    assert resolution.llm_metadata() == {
        "original_phrase": "stack on",
        "resolved": "add_layer",
        "reasoning": "stack on means add a layer",
    }
    assert resolution.note().startswith("LLM-resolved 'stack on' → add_layer")
    request = api.messages[0]
    assert "- clear_assembly: Return every item" in request.system_text
    assert 'Phrase: "stack on"' in request.user_text
    schema = request.json()["output_config"]["format"]["schema"]
    assert schema["properties"]["composite"]["enum"] == [*CANDIDATES, "UNKNOWN"]


async def test_unknown_and_names_not_offered_are_unknown() -> None:
    replies = [
        json_message({"composite": "UNKNOWN", "reasoning": "tallying is not something I do"}),
        json_message({"composite": "teleport", "reasoning": "made up"}),
    ]
    async with MessagesApi(replies) as api:
        client = client_for(api)
        resolver = PhraseResolver(client)
        tally = await resolver.resolve("tally up", CANDIDATES)
        teleport = await resolver.resolve("beam over", CANDIDATES)
        await client.aclose()
    assert tally.canonical is None and tally.reasoning == "tallying is not something I do"
    assert tally.llm_metadata()["resolved"] == "UNKNOWN"
    assert teleport.canonical is None


async def test_second_call_is_a_cache_hit_without_a_request(tmp_path: Path) -> None:
    path = tmp_path / "resolutions.json"
    answer = json_message({"composite": "go_home", "reasoning": "back to base"})
    async with MessagesApi([answer]) as api:
        client = client_for(api)
        resolver = PhraseResolver(client, path)
        first = await resolver.resolve("Head  back", CANDIDATES)
        again = await resolver.resolve("head back", CANDIDATES)
        await client.aclose()
    assert len(api.messages) == 1
    assert (first.cached, again.cached, again.canonical) == (False, True, "go_home")
    # The file survives a restart: a new resolver without any model still knows the phrase.
    reloaded = await PhraseResolver(None, path).resolve("head back", CANDIDATES)
    assert reloaded.cached and reloaded.canonical == "go_home"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["version"] == 1
    assert document["resolutions"][cache_key("head back", CANDIDATES)]["canonical"] == "go_home"
    assert [p.name for p in tmp_path.iterdir()] == ["resolutions.json"]  # no temp file left


async def test_another_candidate_set_is_asked_again() -> None:
    replies = [
        json_message({"composite": "go_home", "reasoning": "a"}),
        json_message({"composite": "UNKNOWN", "reasoning": "b"}),
    ]
    async with MessagesApi(replies) as api:
        client = client_for(api)
        resolver = PhraseResolver(client)
        await resolver.resolve("head back", CANDIDATES)
        other = await resolver.resolve("head back", {"pick": "Pick up a cube."})
        await client.aclose()
    assert len(api.messages) == 2 and other.canonical is None


async def test_failures_raise_and_are_not_cached() -> None:
    async with MessagesApi([error(500, "api_error", "x")] * 2 + [message("not json")]) as api:
        client = client_for(api)
        resolver = PhraseResolver(client)
        with pytest.raises(LlmError, match="HTTP 500"):
            await resolver.resolve("tally up", CANDIDATES)
        with pytest.raises(LlmError, match="not JSON"):
            await resolver.resolve("tally up", CANDIDATES)
        await client.aclose()
    assert resolver.cached() == []


async def test_offline_without_a_cached_answer() -> None:
    with pytest.raises(LlmError, match="no language model"):
        await PhraseResolver(None).resolve("tally up", CANDIDATES)


def test_a_damaged_cache_file_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "resolutions.json"
    path.write_text("{not json", encoding="utf-8")
    assert PhraseResolver(None, path).cached() == []
