"""The MQTT parts that need no broker: settings, credentials, backoff, what `say` accepts, the
buffer, Home Assistant's discovery configs and the status lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from voiced.config import Config, load_config
from voiced.errors import ConfigError
from voiced.events import EventLog
from voiced.mqtt.connect import BrokerError, broker_for, read_credentials
from voiced.mqtt.service import EventBuffer, MqttService, read_say
from voiced.mqtt.settings import BrokerAddress, parse_broker_url
from voiced.mqtt.status import SeenCell
from voiced.mqtt.topics import CellTopics, discovery_configs, node_id
from voiced.service.cellstatus import RemoteInbox


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("mqtt://broker", BrokerAddress("broker", 1883, False)),
        ("mqtts://broker", BrokerAddress("broker", 8883, True)),
        ("mqtt://10.0.0.5:1884", BrokerAddress("10.0.0.5", 1884, False)),
        ("mqtt://[::1]:1883/", BrokerAddress("::1", 1883, False)),
        ("http://broker", None),
        ("mqtt://user:secret@broker", None),
        ("mqtt://broker:99999", None),
        ("mqtt://broker/topic", None),
        ("mqtt://", None),
        ("mqtt://bro ker", None),
    ],
)
def test_broker_urls(url: str, address: BrokerAddress | None) -> None:
    assert parse_broker_url(url) == address


def test_an_address_names_itself_without_credentials() -> None:
    assert BrokerAddress("::1", 1883, False).url == "mqtt://[::1]:1883"
    assert BrokerAddress("b", 8883, True).url == "mqtts://b:8883"


def write(tmp: Path, text: str) -> Path:
    path = tmp / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("section", "key", "message"),
    [
        ('url = "http://b"', "mqtt.url", 'expected "mqtt://HOST[:PORT]"'),
        ('url = "mqtt://b"\nca_file = "ca.pem"', "mqtt.ca_file", "only with an mqtts:// url"),
        ('url = "mqtts://b"\ncert_file = "c.pem"', "mqtt.key_file", "go together"),
        ("reconnect_min = 5.0\nreconnect_max = 1.0", "mqtt.reconnect_max", "less than"),
        ('topic_prefix = "plant/#"', "mqtt.topic_prefix", "without +, #"),
        ("buffer_events = 0", "mqtt.buffer_events", "1 to 1000000"),
    ],
)
def test_bad_mqtt_settings_are_named(tmp_path: Path, section: str, key: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(str(write(tmp_path, f"[mqtt]\n{section}\n")))
    text = str(caught.value)
    assert key in text and message in text, text


def test_mqtt_is_off_by_default() -> None:
    assert broker_for(Config().mqtt, Config()) is None


def test_credentials_come_from_their_file_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "mqtt.secret").write_text("cell7:pa:ss word\n", encoding="utf-8")
    config = load_config(
        str(write(tmp_path, '[mqtt]\nurl = "mqtt://b"\ncredentials_file = "mqtt.secret"\n'))
    )
    broker = broker_for(config.mqtt, config)
    assert broker is not None
    assert (broker.username, broker.password) == ("cell7", "pa:ss word")
    assert "pa:ss" not in repr(broker) and "pa:ss" not in broker.describe()
    assert broker.describe() == "mqtt://b:1883 as 'cell7'"


@pytest.mark.parametrize("text", ["", "no colon\n", ":password\n", "a:b\nc:d\n"])
def test_a_malformed_credentials_file_is_named(tmp_path: Path, text: str) -> None:
    path = tmp_path / "creds"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BrokerError, match="creds: expected one line"):
        read_credentials(path)


def test_a_missing_credentials_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(BrokerError, match="nope: cannot read the MQTT credentials"):
        read_credentials(tmp_path / "nope")


def test_a_missing_certificate_is_named(tmp_path: Path) -> None:
    config = load_config(str(write(tmp_path, '[mqtt]\nurl = "mqtts://b"\nca_file = "ca.pem"\n')))
    with pytest.raises(BrokerError, match=r"ca.pem: no such file .*mqtts://b:8883"):
        broker_for(config.mqtt, config)


def test_backoff_doubles_up_to_its_bound_with_jitter(tmp_path: Path) -> None:
    config = load_config(str(write(tmp_path, '[mqtt]\nurl = "mqtt://b"\n')))
    broker = broker_for(config.mqtt, config)
    assert broker is not None
    service = MqttService(config.mqtt, broker, "sandwich", lambda: None, RemoteInbox(), EventLog(),
                          max_chars=100)  # type: ignore[arg-type]  # fmt: skip
    delays = [next(service._delays()) for _ in range(200)]
    assert 0.45 <= min(delays) < max(delays) <= 0.55, "jittered around reconnect_min"
    later = service._delays()
    waits = [next(later) for _ in range(12)]
    assert waits[5] > 4 * waits[2], "doubling"
    assert max(waits) <= 30.0, "never over reconnect_max"


@pytest.mark.parametrize(
    ("payload", "text", "why"),
    [
        (b"computer add bread", "computer add bread", None),
        (b"  computer stop \n", "computer stop", None),
        ("Fräse an".encode(), "Fräse an", None),
        (b"\xff\xfe", None, "not UTF-8 text"),
        (b"   ", None, "empty"),
        (b"x" * 101, None, "longer than 100 characters (101)"),
        (b"x" * 401, None, "longer than 100 characters (401 bytes)"),
        (b"add bread\nadd cheese", None, "has control characters (one command per message)"),
    ],
)
def test_what_say_accepts(payload: bytes, text: str | None, why: str | None) -> None:
    assert read_say(payload, max_chars=100) == (text, why)


def test_the_buffer_drops_the_oldest_and_counts_them() -> None:
    buffer = EventBuffer(2)
    for n in range(5):
        buffer.add(str(n))
    assert buffer.peek() == "3"
    buffer.done()
    assert buffer.peek() == "4"
    assert buffer.take_dropped() == 3
    assert buffer.take_dropped() == 0


def test_discovery_is_one_device_per_cell_wired_to_its_topics() -> None:
    topics = CellTopics("plant", "weld 2")
    configs = {
        c.topic: c.payload
        for c in discovery_configs(
            topics, "homeassistant", accept_commands=True, version="9.9", max_chars=2000
        )
    }
    button = configs["homeassistant/button/voiced_weld_2/stop/config"]
    assert button is not None
    assert button["command_topic"] == "plant/weld 2/stop"
    assert button["availability_topic"] == "plant/weld 2/availability"
    assert button["device"]["identifiers"] == ["voiced_weld_2"]
    assert button["device"]["sw_version"] == "9.9"
    text = configs["homeassistant/text/voiced_weld_2/command/config"]
    assert text is not None and text["command_topic"] == "plant/weld 2/say"
    assert text["max"] == 255
    ids = [payload["unique_id"] for payload in configs.values() if payload is not None]
    assert len(ids) == len(set(ids)) == 7
    sensors = [p for t, p in configs.items() if "/sensor/" in t and p is not None]
    assert all(p["state_topic"] == "plant/weld 2/state" for p in sensors)


def test_without_accept_commands_the_command_entity_is_removed() -> None:
    configs = discovery_configs(CellTopics("voiced", "x"), "homeassistant",
                                accept_commands=False, version="1", max_chars=100)  # fmt: skip
    (text,) = [c for c in configs if "/text/" in c.topic]
    assert text.payload is None
    assert node_id("a/b+c") == "voiced_a_b_c"


def test_status_lines() -> None:
    state = {"mode": "always", "link": "up", "halted": True,
             "last_command": {"said": "add bread", "status": "stopped"}}  # fmt: skip
    assert SeenCell("a", "online", state).line() == (
        "a  online  mode always  link up  halted  last: 'add bread' stopped"
    )
    assert (
        SeenCell("b", None, None).line() == "b  unknown  mode ?  link ?  halted ?  no command yet"
    )


def test_check_config_names_a_missing_credentials_file(tmp_path: Path) -> None:
    from voiced.checks.files import check_config_file

    path = write(tmp_path, '[mqtt]\nurl = "mqtt://b"\ncredentials_file = "gone"\n')
    report = check_config_file(str(path))
    assert [str(p) for p in report.problems] == [
        f"{path}:1: mqtt: {tmp_path / 'gone'}: cannot read the MQTT credentials: "
        "No such file or directory"
    ]
