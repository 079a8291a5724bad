"""`voiced status --mqtt URL`: every cell on a broker, read from their retained topics.

Each cell's `state` and `availability` are retained, so a short settle time after subscribing
is enough to see all of them; a cell that has only one of the two is still listed.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiomqtt

from voiced.config import Config, with_overrides
from voiced.errors import UsageError
from voiced.mqtt.connect import Broker, BrokerError, broker_for


@dataclass(frozen=True)
class SeenCell:
    """One cell as the broker holds it."""

    cell: str
    availability: str | None
    """online, offline, or None when the broker has no availability for it."""
    state: dict[str, Any] | None
    """The retained `CellStatus` JSON, or None (none yet, or not JSON)."""

    def to_dict(self) -> dict[str, Any]:
        return {"cell": self.cell, "availability": self.availability, "state": self.state}

    def line(self) -> str:
        """cell, online/offline, mode, link, halted, last command and its outcome."""
        state = self.state or {}
        halted = state.get("halted")
        parts = [
            self.cell,
            self.availability or "unknown",
            # An offline cell's retained state is what it was when it went: not now.
            *(["last known:"] if self.availability == "offline" else []),
            f"mode {state.get('mode', '?')}",
            f"link {state.get('link', '?')}",
            "halted" if halted else "not halted" if halted is not None else "halted ?",
        ]
        last = state.get("last_command")
        if isinstance(last, dict):
            parts.append(f"last: {last.get('said', '')!r} {last.get('status', '')}")
        else:
            parts.append("no command yet")
        return "  ".join(parts)


async def read_cells(broker: Broker, prefix: str, settle: float) -> list[SeenCell]:
    """Every cell under `prefix` on the broker, by name. Raises BrokerError when the broker
    cannot be reached or refuses."""
    availability: dict[str, str] = {}
    states: dict[str, dict[str, Any] | None] = {}
    try:
        async with broker.client() as client:
            await client.subscribe(f"{prefix}/+/state")
            await client.subscribe(f"{prefix}/+/availability")
            try:
                async with asyncio.timeout(settle):
                    async for message in client.messages:
                        _take(message, prefix, availability, states)
            except TimeoutError:
                pass  # settled: the retained messages have arrived
    except aiomqtt.MqttError as exc:
        raise BrokerError(f"MQTT broker {broker.describe()}: {exc}") from exc
    except OSError as exc:  # a TLS file that cannot be loaded
        raise BrokerError(f"MQTT broker {broker.describe()}: {exc}") from exc
    names = sorted(set(availability) | set(states))
    return [SeenCell(name, availability.get(name), states.get(name)) for name in names]


def _take(
    message: aiomqtt.Message,
    prefix: str,
    availability: dict[str, str],
    states: dict[str, dict[str, Any] | None],
) -> None:
    levels = message.topic.value[len(prefix) + 1 :].split("/")
    if len(levels) != 2:
        return
    cell, leaf = levels
    payload = message.payload
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
    if not text:
        return  # a cleared retained message: nothing there
    if leaf == "availability":
        availability[cell] = text
    elif leaf == "state":
        try:
            state = json.loads(text)
        except json.JSONDecodeError:
            state = None
        states[cell] = state if isinstance(state, dict) else None


def status_command(
    config: Config, url: str | None, overrides: dict[str, str], settle: float, as_json: bool
) -> int:
    """`voiced status`: the broker from `--mqtt URL` (else `[mqtt] url`), options over the
    configuration's `[mqtt]`; one line per cell, or one JSON document."""
    # Files named on the command line are relative to the working directory, not to the
    # configuration file's directory as in [mqtt].
    mqtt: dict[str, Any] = {
        key: value if key == "topic_prefix" else str(Path(value).absolute())
        for key, value in overrides.items()
        if value is not None
    }
    if url is not None:
        mqtt["url"] = url
    config = with_overrides(config, {"mqtt": mqtt})
    broker = broker_for(config.mqtt, config)
    if broker is None:
        raise UsageError("--mqtt", "no broker: give --mqtt URL or set [mqtt] url")
    cells = asyncio.run(read_cells(broker, config.mqtt.topic_prefix, settle))
    if as_json:
        print(json.dumps([cell.to_dict() for cell in cells], indent=2))
    elif not cells:
        print(f"no cell on {broker.address.url} under {config.mqtt.topic_prefix}/")
    for cell in [] if as_json else cells:
        print(cell.line())
    return 0
