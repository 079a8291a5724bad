"""How to reach the broker: its address, the credentials from their file, TLS; shared by the
daemon's MQTT service and `voiced status --mqtt`."""

from __future__ import annotations

import logging
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import aiomqtt

from voiced.config import Config, resolve_config_path
from voiced.errors import VoicedError
from voiced.mqtt.settings import BrokerAddress, MqttSettings

_PAHO_LOG = logging.getLogger("voiced.mqtt.paho")
# paho logs a lost socket as an error at every attempt; the service says it once, in its own
# words (lost, back, refused), so paho's lines are for debugging only.
_PAHO_LOG.setLevel(logging.CRITICAL)

CREDENTIAL = "mqtt-credentials"
"""The credential's name in the unit's LoadCredential= line."""


class BrokerError(VoicedError):
    """The MQTT broker could not be reached or refused this client (for one-shot commands; the
    daemon's service never raises it: it reconnects)."""


@dataclass(frozen=True)
class Broker:
    """Everything needed to open a connection to the broker."""

    address: BrokerAddress
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None

    def describe(self) -> str:
        """The broker and user as a log line or an error names them (never the password)."""
        who = f" as {self.username!r}" if self.username else " (anonymous)"
        return f"{self.address.url}{who}"

    def client(self, will: aiomqtt.Will | None = None, keepalive: int = 30) -> aiomqtt.Client:
        return aiomqtt.Client(
            self.address.host,
            self.address.port,
            username=self.username,
            password=self.password,
            will=will,
            keepalive=keepalive,
            timeout=10.0,
            tls_context=self._tls_context(),
            logger=_PAHO_LOG,
        )

    def _tls_context(self) -> ssl.SSLContext | None:
        if not self.address.tls:
            return None
        context = ssl.create_default_context(
            cafile=None if self.ca_file is None else str(self.ca_file)
        )
        if self.cert_file is not None:
            key = None if self.key_file is None else str(self.key_file)
            context.load_cert_chain(str(self.cert_file), key)
        return context


def broker_for(settings: MqttSettings, config: Config) -> Broker | None:
    """The broker `settings` name (paths relative to `config`'s file); None when MQTT is off.

    Raises BrokerError naming the credentials or certificate file that cannot be used."""
    address = settings.address
    if address is None:
        return None
    username, password = None, None
    credentials = credentials_path(settings, config)
    if credentials is not None:
        username, password = read_credentials(credentials)

    def path(value: str) -> Path | None:
        return None if not value else resolve_config_path(config, value)

    broker = Broker(
        address, username, password,
        path(settings.ca_file), path(settings.cert_file), path(settings.key_file),
    )  # fmt: skip
    for file in (broker.ca_file, broker.cert_file, broker.key_file):
        if file is not None and not file.is_file():
            raise BrokerError(f"{file}: no such file (a certificate or key for {address.url})")
    return broker


def credentials_path(settings: MqttSettings, config: Config) -> Path | None:
    if settings.credentials_file:
        return resolve_config_path(config, settings.credentials_file)
    directory = os.environ.get("CREDENTIALS_DIRECTORY")
    if directory and (Path(directory) / CREDENTIAL).is_file():
        return Path(directory) / CREDENTIAL
    return None


def read_credentials(path: Path) -> tuple[str, str]:
    """(username, password) from a file holding one line `username:password` (the password
    may contain ':'); a trailing newline is not part of the password."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise BrokerError(f"{path}: cannot read the MQTT credentials: {reason}") from exc
    lines = text.splitlines()
    username, colon, password = (lines[0] if lines else "").partition(":")
    if len(lines) != 1 or not colon or not username:
        raise BrokerError(f'{path}: expected one line "username:password" (the MQTT credentials)')
    return username, password
