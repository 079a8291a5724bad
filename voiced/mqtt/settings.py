"""[mqtt]: the broker the cell publishes to, in the form `voiced.config` reads its sections.

The password is never a setting: it lives in `credentials_file` (or the credential systemd
loads), so that it stays out of config files and `voiced config` dumps.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

from voiced.configschema import describe, setting

SCHEMES = {"mqtt": 1883, "mqtts": 8883}
"""URL scheme -> default port; `mqtts` is MQTT over TLS."""
_TOPIC_FORBIDDEN = frozenset("+#\0")


@dataclass(frozen=True)
class BrokerAddress:
    """Where the broker is, read from `[mqtt] url`."""

    host: str
    port: int
    tls: bool

    @property
    def url(self) -> str:
        """The URL as logs and errors name it (never with credentials)."""
        scheme = "mqtts" if self.tls else "mqtt"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"


def parse_broker_url(url: str) -> BrokerAddress | None:
    """`mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]` -> its address; None when malformed."""
    if any(c.isspace() for c in url):
        return None
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in SCHEMES or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.username is not None or parts.query or parts.fragment:
        return None  # credentials belong in credentials_file, never in the URL
    return BrokerAddress(parts.hostname, port or SCHEMES[parts.scheme], parts.scheme == "mqtts")


def _check_url(value: str) -> str | None:
    if not value or parse_broker_url(value) is not None:
        return None
    return (
        'expected "mqtt://HOST[:PORT]" or "mqtts://HOST[:PORT]" without user, path or query '
        f"(empty = off), got {describe(value)}"
    )


def _check_topic_part(value: str) -> str | None:
    if _TOPIC_FORBIDDEN.intersection(value) or value.startswith("/") or value.endswith("/"):
        return f"expected topic levels without +, # or a leading/trailing /, got {describe(value)}"
    return None


@dataclass(frozen=True)
class MqttSettings:
    """[mqtt]: the cell on an MQTT broker (state, events, availability; stop and say)."""

    url: str = setting(
        "",
        '"mqtt://HOST[:PORT]" (port 1883) or "mqtts://HOST[:PORT]" (TLS, port 8883); empty = '
        "no MQTT.",
        check=_check_url,
    )
    """Empty means the service does not exist; nothing is contacted."""
    credentials_file: str = setting(
        "",
        'A file holding one line "username:password" for the broker. Empty: the systemd '
        'credential "mqtt-credentials" when the unit loads one (LoadCredential=), else '
        "anonymous. A relative path is relative to this file's directory.",
    )
    """Read by `voiced.mqtt.connect.broker_for`; never the password itself."""
    ca_file: str = setting(
        "",
        "mqtts: the CA certificate (PEM) the broker's certificate is checked against; empty = "
        "the system's CAs.",
    )
    """Only with an mqtts:// url."""
    cert_file: str = setting(
        "", "mqtts: a client certificate (PEM) for brokers that ask for one; needs key_file."
    )
    """Only with an mqtts:// url."""
    key_file: str = setting("", "mqtts: the client certificate's private key (PEM).")
    """Only with cert_file."""
    topic_prefix: str = setting(
        "voiced",
        "Topics are <topic_prefix>/<cell>/availability, state, event, stop and say.",
        nonempty=True,
        check=_check_topic_part,
    )
    """The first topic levels of every topic this cell uses."""
    accept_commands: bool = setting(
        False,
        "Run the text published on <topic_prefix>/<cell>/say as a spoken command. A stop on "
        "<topic_prefix>/<cell>/stop is always obeyed.",
    )
    """Off: `say` is ignored with a log line."""
    discovery: bool = setting(
        True, "Publish Home Assistant MQTT discovery configs (one device per cell)."
    )
    """Retained configs under `discovery_prefix`."""
    discovery_prefix: str = setting(
        "homeassistant",
        "Home Assistant's discovery prefix.",
        nonempty=True,
        check=_check_topic_part,
    )
    """Home Assistant's default."""
    buffer_events: int = setting(
        1000,
        "How many event records are kept while the broker is away; past it the oldest are "
        "dropped and their count logged when the broker is back.",
        min=1,
        max=1_000_000,
    )
    """Bounded: the broker may be away for days."""
    reconnect_min: float = setting(
        0.5, "Seconds before the first reconnection attempt; doubled after each failure.",
        min=0.05, max=60.0,
    )  # fmt: skip
    """The backoff's first delay."""
    reconnect_max: float = setting(
        30.0, "The longest wait between reconnection attempts, in seconds.", min=0.1, max=3600.0
    )
    """The backoff's bound."""
    state_interval: float = setting(
        0.25,
        "The shortest time between two publications of the state, in seconds (changes in "
        "between are published together).",
        min=0.0,
        max=60.0,
    )
    """Debounce: a state snapshot reads the history."""
    keepalive: int = setting(
        30,
        "Seconds between MQTT keepalives; the broker publishes the last will (offline) after "
        "1.5 times this without a word from a daemon whose connection did not close.",
        min=5,
        max=3600,
    )
    """A daemon that dies closes its socket, and the will goes out at once."""

    @property
    def address(self) -> BrokerAddress | None:
        """The broker's address; None when MQTT is off."""
        return parse_broker_url(self.url) if self.url else None

    def cross_check(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        address = self.address
        plain = address is not None and not address.tls
        for key in ("ca_file", "cert_file", "key_file"):
            if plain and getattr(self, key):
                problems.append((key, "is used only with an mqtts:// url"))
        if bool(self.cert_file) != bool(self.key_file):
            problems.append(("key_file", "cert_file and key_file go together"))
        if self.reconnect_max < self.reconnect_min:
            problems.append(
                ("reconnect_max", f"{self.reconnect_max} is less than reconnect_min "
                 f"({self.reconnect_min})")
            )  # fmt: skip
        return problems
