"""The cell's topics and its Home Assistant discovery configs: pure data, no connection.

Discovery follows Home Assistant's per-component form, `<discovery_prefix>/<component>/
<node_id>/<object_id>/config`, retained: one device per cell (identifiers `voiced_<cell>`), its
entities read the retained `state` JSON and share the cell's `availability` topic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ONLINE = "online"
OFFLINE = "offline"
_NOT_NODE_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class CellTopics:
    """`<prefix>/<cell>/...`: what one cell publishes and listens to."""

    prefix: str
    cell: str

    def _topic(self, leaf: str) -> str:
        return f"{self.prefix}/{self.cell}/{leaf}"

    @property
    def availability(self) -> str:
        """online / offline, retained; the last will says offline."""
        return self._topic("availability")

    @property
    def state(self) -> str:
        """`CellStatus.to_dict()` as JSON, retained."""
        return self._topic("state")

    @property
    def event(self) -> str:
        """Every event record as JSON, QoS 0, not retained."""
        return self._topic("event")

    @property
    def stop(self) -> str:
        """Any payload: the global stop."""
        return self._topic("stop")

    @property
    def say(self) -> str:
        """UTF-8 text, run as if said (only with accept_commands)."""
        return self._topic("say")


def node_id(cell: str) -> str:
    """The cell's name as Home Assistant's discovery topics and ids allow it."""
    return "voiced_" + _NOT_NODE_ID.sub("_", cell)


@dataclass(frozen=True)
class DiscoveryConfig:
    """One retained discovery message; an empty `payload` removes the entity."""

    topic: str
    payload: dict[str, Any] | None


def discovery_configs(
    topics: CellTopics,
    discovery_prefix: str,
    *,
    accept_commands: bool,
    version: str,
    max_chars: int,
) -> list[DiscoveryConfig]:
    """The cell's entities: sensors for mode, link, holding and the last command, a binary
    sensor for a halt, a STOP button and (with accept_commands) a text entity for commands.
    Without accept_commands the text entity's config is published empty, so one left by an
    earlier run disappears."""
    made = _Entities(topics, discovery_prefix, version)
    configs = [
        *_sensors(made, topics),
        made.entity(
            "binary_sensor",
            "halted",
            "Halted",
            state_topic=topics.state,
            value_template="{{ 'ON' if value_json.halted else 'OFF' }}",
            device_class="problem",
        ),
        made.entity(
            "button",
            "stop",
            "Stop",
            command_topic=topics.stop,
            payload_press="stop",
            icon="mdi:stop-circle",
        ),
    ]
    command = made.entity(
        "text",
        "command",
        "Command",
        command_topic=topics.say,
        max=min(max_chars, 255),
        icon="mdi:text",
    )
    configs.append(command if accept_commands else DiscoveryConfig(command.topic, None))
    return configs


class _Entities:
    """Discovery configs of one cell's device: every entity shares its availability and device."""

    def __init__(self, topics: CellTopics, discovery_prefix: str, version: str) -> None:
        self.node = node_id(topics.cell)
        self.prefix = discovery_prefix
        self.state = topics.state
        device = {
            "identifiers": [self.node],
            "name": f"voiced {topics.cell}",
            "model": "voiced cell",
            "manufacturer": "voiced",
            "sw_version": version,
        }
        self.shared = {
            "availability_topic": topics.availability,
            "payload_available": ONLINE,
            "payload_not_available": OFFLINE,
            "device": device,
        }

    def entity(self, component: str, key: str, name: str, **extra: Any) -> DiscoveryConfig:
        payload = {"name": name, "unique_id": f"{self.node}_{key}", **self.shared, **extra}
        return DiscoveryConfig(f"{self.prefix}/{component}/{self.node}/{key}/config", payload)

    def sensor(self, key: str, name: str, template: str, **extra: Any) -> DiscoveryConfig:
        return self.entity(
            "sensor", key, name, state_topic=self.state, value_template=template, **extra
        )


def _sensors(made: _Entities, topics: CellTopics) -> list[DiscoveryConfig]:
    return [
        made.sensor("mode", "Mode", "{{ value_json.mode }}", icon="mdi:microphone"),
        made.sensor("link", "Controller link", "{{ value_json.link }}", icon="mdi:lan-connect"),
        made.sensor(
            "holding",
            "Holding",
            "{{ value_json.holding or 'nothing' }}",
            icon="mdi:robot-industrial",
        ),
        made.sensor(
            "last_command",
            "Last command",
            "{{ (value_json.last_command.said ~ ': ' ~ value_json.last_command.status)[:250] "
            "if value_json.last_command else '' }}",
            json_attributes_topic=topics.state,
            json_attributes_template="{{ {'state': value_json.state, "
            "'frames': value_json.frames} | tojson }}",
            icon="mdi:message-text",
        ),
    ]
