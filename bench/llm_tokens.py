"""Tokens per LLM command: what the LLM tier's real prompts cost, measured on their way out.

The LLM tier runs unchanged (the real AsyncAnthropic client, the real prompts built from the
sandwich cell) against the fake Messages API server of the tests (tests/llm/messages_api.py),
which answers each command from a script and reports usage the way the API would, prompt
caching included: the first request with a given cached system block pays a cache write, later
ones a cache read. No tokenizer is available offline, so every count is ESTIMATED as characters
/ 4 of the recorded request and reply texts; real counts differ by perhaps ±20 %.

    .venv/bin/python -m bench.llm_tokens [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell

from tests.llm.messages_api import MessagesApi, Recorded, Reply, message
from voiced.llm.classifier import AnthropicClassifier, IntentClassifier
from voiced.llm.client import LlmClient
from voiced.llm.creative import Axes, CreativeAssignment
from voiced.llm.resolver import PhraseResolver
from voiced.llm.sequence import LlmUsage, SequenceInterpreter
from voiced.llm.settings import LlmSettings
from voiced.logs import configure_logging

CHARS_PER_TOKEN = 4.0
_COMMAND = re.compile(r'Voice command: "(.*)"')


def estimate(text: str) -> int:
    """Tokens in `text`, estimated (no tokenizer offline)."""
    return max(1, round(len(text) / CHARS_PER_TOKEN))


def _step(instruction: str, **params: Any) -> dict[str, Any]:
    return {"instruction": instruction, "params": params}


def _answer(*steps: dict[str, Any], **fields: Any) -> str:
    data = {
        "interpretation": "What the operator asked for.",
        "sequence": list(steps),
        "composite_name": None,
        "confidence": 0.93,
        "user_feedback": None,
        "creative_reasoning": None,
    }
    data.update(fields)
    return json.dumps(data)


_BREAD_CHEESE = [_step("add_layer", item=i) for i in ("bread", "cheese", "bread")]
ANSWERS: dict[str, tuple[str, ...]] = {
    "make me a cheese sandwich": (_answer(*_BREAD_CHEESE, _step("go_home")),),
    "slowly put two tomatoes on the left": (
        _answer(
            _step("set_speed", speed="slow"),
            _step("set_active_zone", zone="assembly_left"),
            _step("add_layer", item="tomato"),
            _step("add_layer", item="tomato"),
            _step("go_home"),
        ),
    ),
    "add avocado": (
        _answer(confidence=0.1, user_feedback="I don't have avocado — I have bread, meat, ..."),
    ),
    # Pass 1 invents an instruction; pass 3 (CORRECTION REQUIRED) fixes it.
    "nudge the arm over a touch": (
        _answer(_step("move_absolute", x=420, y=10, z=400)),
        _answer(_step("move_relative", direction="right", distance="a little")),
    ),
    "impress me": (
        _answer(
            _step("set_active_zone", zone="assembly_right"),
            *[_step("add_layer", item=i) for i in ("meat", "cheese", "meat", "cheese", "meat")],
            _step("go_home"),
            creative_reasoning="Axis 1: palindrome × Axis 2: doubled — meat and cheese, "
            "M-C-M-C-M reads the same both ways.",
        ),
    ),
}
"""Scripted pass-1 (and pass-3) answers per command."""


class UsageModel:
    """Answers requests with usage as the API reports it, prompt caching included."""

    def __init__(self) -> None:
        self.cached: set[str] = set()
        self.seen: dict[str, int] = {}

    def __call__(self, request: Recorded) -> Reply:
        body = request.json()
        text = self._text(request)
        cached = [b["text"] for b in body.get("system", []) if b.get("cache_control")]
        plain = [b["text"] for b in body.get("system", []) if not b.get("cache_control")]
        write = read = 0
        for block in cached:
            if block in self.cached:
                read += estimate(block)
            else:
                self.cached.add(block)
                write += estimate(block)
        uncached = sum(estimate(b) for b in plain) + estimate(request.user_text)
        return message(
            text,
            input_tokens=uncached,
            output_tokens=estimate(text),
            cache_read=read,
            cache_write=write,
        )

    def _text(self, request: Recorded) -> str:
        found = _COMMAND.search(request.user_text)
        if found is None:
            return _side_answer(request)
        command = found.group(1)
        index = self.seen.get(command, 0)
        self.seen[command] = index + 1
        answers = ANSWERS[command]
        return answers[min(index, len(answers) - 1)]


def _side_answer(request: Recorded) -> str:
    system = request.system_text
    if "canonical instruction" in system:
        return json.dumps({"composite": "add_layer", "reasoning": "stack on means add a layer"})
    if "intent classifier" in system:
        return json.dumps({"intent": "action", "reasoning": "a robot command"})
    return json.dumps({"label": "yes", "reasoning": "agreement"})


@dataclass(frozen=True)
class Row:
    """One LLM command and what it cost."""

    command: str
    """The spoken command, or the side call's name."""
    kind: str
    """1-pass, 2-pass (pass 3 ran), creative, or side (resolver, intent, yes/no)."""
    calls: int
    """Model calls made."""
    input_tokens: int
    """Uncached input tokens (estimated)."""
    cache_write_tokens: int
    """Input tokens written to the prompt cache (estimated)."""
    cache_read_tokens: int
    """Input tokens read from the prompt cache (estimated)."""
    output_tokens: int
    """Output tokens (estimated)."""

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.cache_write_tokens
            + self.cache_read_tokens
            + (self.output_tokens)
        )


def _row(command: str, kind: str, usage: LlmUsage) -> Row:
    return Row(
        command,
        kind,
        usage.calls,
        usage.input_tokens,
        usage.cache_write_tokens,
        usage.cache_read_tokens,
        usage.output_tokens,
    )


async def measure() -> tuple[list[Row], dict[str, int]]:
    cell = load_cell("sandwich")
    settings = LlmSettings()
    rows: list[Row] = []
    async with MessagesApi(responder=UsageModel()) as api:
        client = LlmClient("bench-key", settings, base_url=api.url)
        interpreter = SequenceInterpreter(client, settings, rng=random.Random(1))
        creative = CreativeAssignment(Axes("palindrome", "doubled"), (), 17)
        for command in ANSWERS:
            assignment = creative if command == "impress me" else None
            outcome = await interpreter.interpret(
                command, cell, cell.initial_scene, creative=assignment
            )
            kind = "creative" if assignment else f"{outcome.usage.calls}-pass"
            rows.append(_row(command, kind, outcome.usage))
        rows += await _side_calls(client, cell)
        await client.aclose()
        static = api.messages[0].json()["system"][0]["text"]
    sizes = {"pass1_static_block": estimate(static), "requests": len(api.messages)}
    return rows, sizes


async def _side_calls(client: LlmClient, cell: Cell) -> list[Row]:
    rows: list[Row] = []
    before = len(client.calls)
    candidates = {c.name: c.description for c in cell.composites.values() if not c.internal}
    await PhraseResolver(client).resolve("stack on", candidates)
    await IntentClassifier(client).classify("put cheese on the left", cell)
    await AnthropicClassifier(client).classify("sure, go ahead", ["yes", "no"], "Clear it?")
    for reply, name in zip(
        list(client.calls)[before:], ("resolver", "intent", "yes/no"), strict=True
    ):
        rows.append(_row(name, "side", LlmUsage.of([reply])))
    return rows


def render(rows: Sequence[Row], sizes: dict[str, int]) -> str:
    head = f"{'command':38} {'kind':9} {'calls':>5} {'input':>6} {'c.write':>7} {'c.read':>7}"
    lines = [
        "Tokens per LLM command (sandwich cell, model answers scripted)",
        "ESTIMATED: characters / 4 of the real requests (no tokenizer offline)",
        "",
        head + f" {'output':>6} {'total':>6}",
    ]
    for r in rows:
        lines.append(
            f"{r.command[:38]:38} {r.kind:9} {r.calls:>5} {r.input_tokens:>6} "
            f"{r.cache_write_tokens:>7} {r.cache_read_tokens:>7} {r.output_tokens:>6} {r.total:>6}"
        )
    lines += [
        "",
        f"pass-1 static (cached) block: ~{sizes['pass1_static_block']} tokens. The API caches a "
        "prefix only above a model-specific minimum (Haiku models: 2048-4096 tokens); below it "
        "every call pays full input price.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.llm_tokens", description=__doc__)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    configure_logging(level="warning", stream=sys.stderr)
    rows, sizes = asyncio.run(measure())
    print(render(rows, sizes))
    if args.json:
        document = {"estimated": "chars/4", "rows": [asdict(r) | {"total": r.total} for r in rows]}
        args.json.write_text(json.dumps(document | sizes, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
