"""Seed 003's resolver: a phrase the grammar does not know -> one canonical composite, or UNKNOWN.

The grammar stays the source of truth: the model only names which existing composite a phrase
means ("tally up" style verbs), chosen from the candidates it is given; any other answer counts
as UNKNOWN. Answers are cached in memory and, when the caller gives a path, in a JSON file
written atomically (temp file, fsync, os.replace), so a phrase costs one call ever. A resolution
carries seed 003's LLM-resolved metadata (original phrase, reasoning) for the result.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from voiced.errors import LlmError
from voiced.llm import prompts
from voiced.llm.client import LlmClient, PromptBlock
from voiced.llm.jsonparse import JsonParseError, parse_json_object
from voiced.paths import atomic_write_json
from voiced.rules.normalize import fold

log = structlog.get_logger(__name__)

CACHE_VERSION = 1
MAX_TOKENS = 200


@dataclass(frozen=True)
class Resolution:
    """What a phrase means, as resolved by the model (or remembered from an earlier call)."""

    phrase: str
    """The phrase as the grammar built it ("tally up")."""
    canonical: str | None
    """The composite it means; None for UNKNOWN."""
    reasoning: str
    """The model's one-sentence reason."""
    cached: bool = False
    """True when no call was made (memory or the cache file)."""

    def llm_metadata(self) -> dict[str, str]:
        """Seed 003's `llm_metadata` for the result: original phrase, resolution, reasoning."""
        return {
            "original_phrase": self.phrase,
            "resolved": self.canonical or prompts.UNKNOWN_LABEL,
            "reasoning": self.reasoning,
        }

    def note(self) -> str:
        """The metadata as one validation note, until the result has a field for it."""
        target = self.canonical or prompts.UNKNOWN_LABEL
        return f"LLM-resolved '{self.phrase}' → {target} ({self.reasoning})"


def cache_key(phrase: str, candidates: Mapping[str, str]) -> str:
    """The phrase in comparison form, plus a digest of the candidate names: an answer given
    for one cell's composites is not reused for another's."""
    names = "\n".join(sorted(candidates))
    digest = hashlib.sha256(names.encode()).hexdigest()[:12]
    return f"{fold(phrase)}|{digest}"


class PhraseResolver:
    """`await resolver.resolve("tally up", {"add_layer": "..."})`."""

    def __init__(self, client: LlmClient | None, cache_path: Path | None = None) -> None:
        self.client = client
        self.cache_path = cache_path
        self._cache: dict[str, Resolution] = _load(cache_path) if cache_path else {}
        # Writes run in a thread: without the lock, an older snapshot could land last.
        self._writing = asyncio.Lock()

    def cached(self) -> list[Resolution]:
        """Every resolution known (for learning confirmed ones into the grammar)."""
        return list(self._cache.values())

    async def resolve(
        self, phrase: str, candidates: Mapping[str, str], context: str = ""
    ) -> Resolution:
        """The canonical composite `phrase` means among `candidates` (name -> description).
        Raises LlmError when there is no model, it cannot be reached or it answers unusably
        (never cached, so the next attempt asks again)."""
        key = cache_key(phrase, candidates)
        known = self._cache.get(key)
        if known is not None:
            return Resolution(known.phrase, known.canonical, known.reasoning, cached=True)
        if self.client is None:
            raise LlmError("no language model is configured")
        data = await self._ask(phrase, candidates, context)
        answer = data.get("composite")
        canonical = _match(answer, candidates)
        reasoning = data.get("reasoning")
        resolution = Resolution(phrase, canonical, reasoning if isinstance(reasoning, str) else "")
        if canonical is None and answer != prompts.UNKNOWN_LABEL:
            log.warning("resolver answered a name not offered", phrase=phrase, answer=answer)
        self._cache[key] = resolution
        await self._save()
        log.info("phrase resolved", phrase=phrase, canonical=canonical)
        return resolution

    async def _ask(
        self, phrase: str, candidates: Mapping[str, str], context: str
    ) -> dict[str, Any]:
        assert self.client is not None
        reply = await self.client.complete(
            [PromptBlock(prompts.resolver_system(candidates), cache=True)],
            prompts.resolver_user(phrase, context),
            temperature=0.0,
            max_tokens=MAX_TOKENS,
            json_schema=prompts.resolver_schema(list(candidates)),
            purpose="resolver",
        )
        try:
            return parse_json_object(reply.text).data
        except JsonParseError as error:
            raise LlmError("the language model's answer was not JSON") from error

    async def _save(self) -> None:
        if self.cache_path is None:
            return
        async with self._writing:
            entries = {
                key: {"phrase": r.phrase, "canonical": r.canonical, "reasoning": r.reasoning}
                for key, r in self._cache.items()
            }
            document = {"version": CACHE_VERSION, "resolutions": entries}
            # fsync can take milliseconds: off the event loop.
            await asyncio.to_thread(atomic_write_json, self.cache_path, document)


def _match(answer: object, candidates: Mapping[str, str]) -> str | None:
    """The candidate the answer names (case and spacing aside); None for anything else."""
    if not isinstance(answer, str):
        return None
    wanted = fold(answer).replace(" ", "_")
    for name in candidates:
        if fold(name).replace(" ", "_") == wanted:
            return name
    return None


def _load(path: Path) -> dict[str, Resolution]:
    """The cache file's resolutions; a missing file is an empty cache, a damaged one is
    reported and replaced on the next write (it only ever saves calls)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        log.warning("resolver cache unreadable; starting empty", path=str(path), error=str(error))
        return {}
    entries = document.get("resolutions") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        log.warning("resolver cache malformed; starting empty", path=str(path))
        return {}
    cache: dict[str, Resolution] = {}
    for key, entry in entries.items():
        if isinstance(entry, dict) and isinstance(entry.get("phrase"), str):
            canonical = entry.get("canonical")
            reasoning = entry.get("reasoning")
            cache[str(key)] = Resolution(
                entry["phrase"],
                canonical if isinstance(canonical, str) else None,
                reasoning if isinstance(reasoning, str) else "",
            )
    return cache
