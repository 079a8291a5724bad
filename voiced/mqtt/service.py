"""The cell on an MQTT broker: availability, state and events out; stop and say in.

One reconnecting loop (the reconnect outside the `async with` client, as aiomqtt advises):
the broker going away never stops the daemon. While it is away the event records wait in a
bounded buffer (the oldest dropped, their count logged when it is back); on every connection the
retained availability, discovery configs and state are published again, so a broker that lost
them (a restart without persistence) has them at once.

QoS: availability, state and discovery are retained at QoS 1 (they must arrive); events are
QoS 0 (a stream: a lost record is not worth holding the daemon up for, and the retained state
carries the outcome).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable, Iterator

import aiomqtt
import structlog
from aiomqtt.exceptions import MqttConnectError
from paho.mqtt.reasoncodes import ReasonCode

from voiced import __version__
from voiced.config import Config
from voiced.events import EventLog
from voiced.eventtypes import Record
from voiced.mqtt.connect import Broker, broker_for
from voiced.mqtt.settings import MqttSettings
from voiced.mqtt.topics import OFFLINE, ONLINE, CellTopics, discovery_configs
from voiced.robot.link import backoff_delays
from voiced.service.cellstatus import CellStatus, RemoteInbox, StatusBoard

log = structlog.get_logger(__name__)

SOURCE = "mqtt"
"""How words from the broker are named in the `remote` event and the logs."""
FAREWELL_TIMEOUT = 2.0
"""Seconds a clean shutdown may spend publishing the last state and `offline`."""
_REFUSED_CODES = {4, 5, 134, 135}
"""CONNACK: bad username or password / not authorised (MQTT 3.1.1 and 5)."""


def read_say(payload: bytes, max_chars: int) -> tuple[str | None, str | None]:
    """(text, None) for a usable `say` payload, else (None, why it is refused)."""
    if len(payload) > 4 * max_chars:
        return None, f"longer than {max_chars} characters ({len(payload)} bytes)"
    try:
        text = payload.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    if not text:
        return None, "empty"
    if len(text) > max_chars:
        return None, f"longer than {max_chars} characters ({len(text)})"
    if any(ord(c) < 32 for c in text):
        return None, "has control characters (one command per message)"
    return text, None


class EventBuffer:
    """The event records not yet published, at most `size`; the oldest go first when full."""

    def __init__(self, size: int) -> None:
        self._records: deque[str] = deque(maxlen=size)
        self.dropped = 0
        self.waiting = asyncio.Event()

    def add(self, payload: str) -> None:
        if len(self._records) == self._records.maxlen:
            self.dropped += 1
        self._records.append(payload)
        self.waiting.set()

    def peek(self) -> str | None:
        return self._records[0] if self._records else None

    def done(self) -> None:
        """The oldest record has been published."""
        self._records.popleft()

    def take_dropped(self) -> int:
        dropped, self.dropped = self.dropped, 0
        return dropped


class MqttService:
    """Publishes one cell and takes its stop and say; `run()` lasts as long as the daemon."""

    def __init__(
        self,
        settings: MqttSettings,
        broker: Broker,
        cell: str,
        snapshot: Callable[[], CellStatus],
        inbox: RemoteInbox,
        events: EventLog,
        max_chars: int,
        status: Callable[[str | None], None] = lambda words: None,
    ) -> None:
        self._settings = settings
        self._broker = broker
        self._topics = CellTopics(settings.topic_prefix, cell)
        self._snapshot = snapshot
        self._inbox = inbox
        self._events = events
        self._max_chars = max_chars
        self._status = status
        """Told the broker's word for STATUS= ("mqtt broker away, reconnecting"); None: up."""
        self._buffer = EventBuffer(settings.buffer_events)
        self._changed = asyncio.Event()
        self._connected_before = False
        self._last_problem: str | None = None
        self._was_up = False
        """The last connection attempt got through (a failure after it is a lost broker)."""

    async def run(self) -> None:
        unsubscribe = self._events.subscribe(self._on_record)
        delays = self._delays()
        try:
            while True:
                try:
                    await self._connection()
                except (aiomqtt.MqttError, OSError) as exc:  # OSError: TLS files unusable
                    if self._was_up:
                        delays = self._delays()  # lost after it worked: start short again
                    self._report_failure(exc)
                await asyncio.sleep(next(delays))
        finally:
            unsubscribe()

    def _delays(self) -> Iterator[float]:
        """Doubling from `reconnect_min` to `reconnect_max`, with the controller link's jitter,
        so that the cells of a plant do not all knock at a restarted broker at once."""
        low, high = self._settings.reconnect_min, self._settings.reconnect_max
        return backoff_delays(base=low, cap=high)

    def _on_record(self, record: Record) -> None:
        self._buffer.add(json.dumps(record.to_dict(), default=str))
        self._changed.set()

    # -- one connection --------------------------------------------------------------------

    async def _connection(self) -> None:
        """Connected until the broker goes away (raises aiomqtt.MqttError) or the daemon ends."""
        self._was_up = False
        will = aiomqtt.Will(self._topics.availability, OFFLINE, qos=1, retain=True)
        async with self._broker.client(will, self._settings.keepalive) as client:
            self._was_up = True
            self._report_connected()
            try:
                await self._serve(client)
            except asyncio.CancelledError:
                await self._farewell(client)
                raise

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Listening from the first moment: a broker that goes away ends the message iteration
        at once, and with it whatever waits for the broker's answer (a publication at QoS 1
        would wait for its own timeout)."""
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._listen(client), name="mqtt-listen")
                group.create_task(self._publish(client), name="mqtt-publish")
        except* aiomqtt.MqttError as lost:
            raise lost.exceptions[0] from None

    async def _publish(self, client: aiomqtt.Client) -> None:
        await self._announce(client)
        async with asyncio.TaskGroup() as group:
            group.create_task(self._publish_events(client), name="mqtt-events")
            group.create_task(self._publish_state(client), name="mqtt-state")

    async def _announce(self, client: aiomqtt.Client) -> None:
        """What a (new or restarted) broker must have at once: the subscriptions, availability,
        discovery; the state follows from `_publish_state`."""
        topics, settings = self._topics, self._settings
        # Subscribed before `online`: a cell that says it is there takes a stop at once.
        await client.subscribe(topics.stop, qos=1)
        await client.subscribe(topics.say, qos=1)
        await client.publish(topics.availability, ONLINE, qos=1, retain=True)
        if settings.discovery:
            for config in discovery_configs(
                topics, settings.discovery_prefix, accept_commands=settings.accept_commands,
                version=__version__, max_chars=self._max_chars,
            ):  # fmt: skip
                payload = "" if config.payload is None else json.dumps(config.payload)
                await client.publish(config.topic, payload, qos=1, retain=True)
        self._changed.set()

    async def _farewell(self, client: aiomqtt.Client) -> None:
        """A clean shutdown: the last state, what is left of the events, then `offline` (the
        will is not sent on a clean disconnect)."""
        try:
            async with asyncio.timeout(FAREWELL_TIMEOUT):
                await self._drain(client)
                await self._send_state(client)
                await client.publish(self._topics.availability, OFFLINE, qos=1, retain=True)
        except (aiomqtt.MqttError, TimeoutError, asyncio.CancelledError) as exc:
            log.warning("mqtt: could not say offline on the way out", url=self._broker.describe(),
                        error=str(exc) or type(exc).__name__)  # fmt: skip

    async def _publish_events(self, client: aiomqtt.Client) -> None:
        while True:
            await self._buffer.waiting.wait()
            self._buffer.waiting.clear()
            await self._drain(client)

    async def _drain(self, client: aiomqtt.Client) -> None:
        while (payload := self._buffer.peek()) is not None:
            await client.publish(self._topics.event, payload, qos=0)
            self._buffer.done()

    async def _publish_state(self, client: aiomqtt.Client) -> None:
        """The retained state on every change, at most once per `state_interval`."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            await self._send_state(client)
            await asyncio.sleep(self._settings.state_interval)

    async def _send_state(self, client: aiomqtt.Client) -> None:
        payload = json.dumps(self._snapshot().to_dict(), default=str)
        await client.publish(self._topics.state, payload, qos=1, retain=True)

    # -- what comes in ---------------------------------------------------------------------

    async def _listen(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            payload = message.payload
            data = (
                bytes(payload) if isinstance(payload, (bytes, bytearray)) else str(payload).encode()
            )
            self._take(message.topic.value, data, message.retain)

    def _take(self, topic: str, payload: bytes, retained: bool) -> None:
        if retained:
            # A command must be live: a retained one would run again at every reconnection.
            log.warning("mqtt: retained command ignored", topic=topic)
            return
        if topic == self._topics.stop:
            log.info("mqtt: stop", topic=topic)
            self._inbox.stop(SOURCE)
        elif topic == self._topics.say:
            self._take_say(payload)

    def _take_say(self, payload: bytes) -> None:
        if not self._settings.accept_commands:
            log.warning("mqtt: say ignored: [mqtt] accept_commands is off", topic=self._topics.say)
            return
        text, refused = read_say(payload, self._max_chars)
        if text is None:
            log.warning("mqtt: say refused", topic=self._topics.say, reason=refused)
            return
        self._inbox.say(text, SOURCE)

    # -- what is logged --------------------------------------------------------------------

    def _report_connected(self) -> None:
        self._last_problem = None
        dropped = self._buffer.take_dropped()
        if self._connected_before:
            log.info("mqtt: broker back", url=self._broker.describe(), events_dropped=dropped)
        else:
            log.info("mqtt: connected", url=self._broker.describe(), events_dropped=dropped)
        self._connected_before = True
        self._status(None)

    def _report_failure(self, exc: Exception) -> None:
        """Once when the broker is lost (or cannot be reached, or refuses), not at every
        attempt; the next line is the one saying it is back."""
        refused = _is_refusal(exc)
        problem = "refused" if refused else "away"
        if problem == self._last_problem:
            return
        self._last_problem = problem
        self._status(f"mqtt broker {'refuses the credentials' if refused else 'away'}, retrying")
        if refused:
            log.error("mqtt: the broker refused the credentials; retrying",
                      url=self._broker.address.url, user=self._broker.username,
                      error=str(exc))  # fmt: skip
        elif self._was_up:
            log.warning("mqtt: broker lost; reconnecting", url=self._broker.describe(),
                        error=str(exc))  # fmt: skip
        else:
            log.warning("mqtt: broker unreachable; retrying", url=self._broker.describe(),
                        error=str(exc))  # fmt: skip


def _is_refusal(exc: Exception) -> bool:
    """The broker answered the connection with "bad user name or password" or "not
    authorised" (MQTT 3.1.1 codes 4 and 5, MQTT 5 reason codes 134 and 135)."""
    if not isinstance(exc, MqttConnectError):
        return False
    rc = exc.rc
    return (rc.value if isinstance(rc, ReasonCode) else rc) in _REFUSED_CODES


def mqtt_service(
    config: Config,
    cell: str,
    board: StatusBoard,
    inbox: RemoteInbox,
    events: EventLog,
    status: Callable[[str | None], None] = lambda words: None,
) -> MqttService | None:
    """The service `[mqtt]` asks for; None when its url is empty. Raises BrokerError naming a
    credentials or certificate file that cannot be used: a wrong file is found at start, not
    at the first reconnection."""
    broker = broker_for(config.mqtt, config)
    if broker is None:
        return None
    return MqttService(
        config.mqtt, broker, cell, board.snapshot, inbox, events,
        max_chars=config.daemon.max_utterance_chars, status=status,
    )  # fmt: skip
