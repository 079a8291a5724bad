"""The cell on a real MQTT broker (mosquitto on a free port): what it publishes, what it takes,
and that a broker going away never stops the daemon."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt

from tests.e2e.helpers import (
    after,
    kinds,
    notify_socket,
    parse_events,
    spawn_text_daemon,
    statuses,
    voiced,
    voiced_env,
)
from tests.mqttbroker import (
    free_port,
    make_certificates,
    mosquitto,
    needs_mosquitto,
    retained,
    wait_for,
)

pytestmark = needs_mosquitto

FIVE = "add bread, meat, cheese, lettuce and tomato"
CELL = "voiced/sandwich"


def cell_config(
    tmp: Path, url: str, extra: str = "", time_scale: float = 1.0, reconnect: float = 0.1
) -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f'[simulator]\ntime_scale = {time_scale}\n[mqtt]\nurl = "{url}"\n'
        f"reconnect_min = {reconnect}\nreconnect_max = {reconnect * 2}\n{extra}",
        encoding="utf-8",
    )
    return path


async def next_state(
    client: aiomqtt.Client, wanted: Callable[[dict[str, Any]], bool], timeout: float = 20
) -> dict[str, Any]:
    """The first state published (from now) that is `wanted`."""
    async with asyncio.timeout(timeout):
        while True:
            state: dict[str, Any] = json.loads(await wait_for(client, f"{CELL}/state"))
            if wanted(state):
                return state


async def next_event(client: aiomqtt.Client, kind: str, timeout: float = 20) -> dict[str, Any]:
    """The next record of `kind` on the cell's event topic."""
    async with asyncio.timeout(timeout):
        while True:
            record: dict[str, Any] = json.loads(await wait_for(client, f"{CELL}/event"))
            if record["event"] == kind:
                return record


async def test_a_cell_publishes_itself_obeys_a_stop_and_its_will_says_offline(
    tmp_path: Path,
) -> None:
    with mosquitto(tmp_path / "broker") as broker:
        config = cell_config(tmp_path, broker.url, "accept_commands = true\n")
        async with aiomqtt.Client("127.0.0.1", broker.port) as watcher:
            await watcher.subscribe(f"{CELL}/#")
            daemon = await spawn_text_daemon(config, voiced_env(tmp_path))
            try:
                await wait_for(watcher, f"{CELL}/availability", b"online")
                state = json.loads(await wait_for(watcher, f"{CELL}/state"))
                assert (state["cell"], state["link"], state["halted"]) == ("sandwich", "up", False)
                await watcher.publish(f"{CELL}/say", f"computer {FIVE}".encode())
                await next_event(watcher, "primitive")
                await watcher.publish(f"{CELL}/stop", b"")
                stopped = await next_event(watcher, "stopped")
                halted = await next_state(watcher, lambda state: state["halted"])
                configs = await retained(broker.port, ["homeassistant/#"])
                daemon.send_signal(signal.SIGKILL)
                await wait_for(watcher, f"{CELL}/availability", b"offline")
            finally:
                if daemon.returncode is None:
                    daemon.kill()
                out, _ = await daemon.communicate()
    events = parse_events(out.decode())
    said = [(e["text"], e["source"]) for e in kinds(events, "remote")]
    assert said == [(f"computer {FIVE}", "mqtt"), ("stop", "mqtt")]
    assert stopped["reason"] == 'MQTT sent "stop"'
    assert halted["halt_reason"] == "stop"
    assert not kinds(after(events, "stopped"), "primitive")
    assert set(configs) == {
        f"homeassistant/{kind}/voiced_sandwich/{key}/config"
        for kind, key in [("sensor", "mode"), ("sensor", "link"), ("sensor", "holding"),
                          ("sensor", "last_command"), ("binary_sensor", "halted"),
                          ("button", "stop"), ("text", "command")]
    }  # fmt: skip
    button = json.loads(configs["homeassistant/button/voiced_sandwich/stop/config"])
    assert button["command_topic"] == f"{CELL}/stop"
    assert button["availability_topic"] == f"{CELL}/availability"
    assert button["device"]["identifiers"] == ["voiced_sandwich"]
    text = json.loads(configs["homeassistant/text/voiced_sandwich/command/config"])
    assert text["command_topic"] == f"{CELL}/say"


async def test_the_state_says_a_command_ended_when_it_ends(tmp_path: Path) -> None:
    """The history marks a command completed after its last line from the controller: the
    retained state must say so then (it said "running" until some later event), and a
    command without the wake word, typed on a dashboard, runs as if the word were said."""
    with mosquitto(tmp_path / "broker") as broker:
        # Published at once on every event: the last one before the history says
        # "completed" is the controller's DONE.
        extra = "accept_commands = true\nstate_interval = 0\n"
        config = cell_config(tmp_path, broker.url, extra, time_scale=0.05)
        async with aiomqtt.Client("127.0.0.1", broker.port) as watcher:
            await watcher.subscribe(f"{CELL}/#")
            daemon = await spawn_text_daemon(config, voiced_env(tmp_path))
            try:
                await wait_for(watcher, f"{CELL}/availability", b"online")
                await watcher.publish(f"{CELL}/say", b"add bread")
                done = await next_state(
                    watcher, lambda s: (s["last_command"] or {}).get("status") == "completed"
                )
            finally:
                daemon.kill()
                await daemon.communicate()
    assert done["last_command"]["said"] == "add bread"
    assert done["state"]["zones"]["assembly_fixture"] == ["bread"]


async def read_until(daemon: asyncio.subprocess.Process, kind: str, seen: list[str]) -> None:
    """The daemon's event lines up to the first `kind`, kept in `seen`."""
    assert daemon.stdout is not None
    async with asyncio.timeout(20):
        while line := (await daemon.stdout.readline()).decode():
            seen.append(line)
            if json.loads(line)["event"] == kind:
                return
    raise AssertionError(f"the daemon ended before a {kind} event")


async def status(url: str, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *voiced("status", "--mqtt", url, "--settle", "0.5", *args),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_daemon_outlives_its_broker_and_status_lists_every_cell(tmp_path: Path) -> None:
    with mosquitto(tmp_path / "broker") as broker:
        config = cell_config(tmp_path, broker.url, time_scale=0.02)
        notify = contextlib.ExitStack()
        sock = notify.enter_context(notify_socket(tmp_path))
        env = voiced_env(tmp_path, NOTIFY_SOCKET=str(tmp_path / "notify.sock"))
        daemon = await spawn_text_daemon(config, env)
        assert daemon.stdin is not None
        seen: list[str] = []
        try:
            async with aiomqtt.Client("127.0.0.1", broker.port) as watcher:
                await watcher.subscribe(f"{CELL}/#")
                await wait_for(watcher, f"{CELL}/availability", b"online")
                await watcher.publish(f"{CELL}/say", b"computer add bread", qos=1)  # refused
                await watcher.publish(f"{CELL}/stop", b"", qos=1)  # always obeyed
                stop = await next_event(watcher, "remote")  # so the say was taken before it
            broker.stop()
            daemon.stdin.write(b"computer add cheese\n\n")  # clears the halt, while it is away
            await read_until(daemon, "primitive", seen)
            away = statuses(sock)
            # The daemon is held while the broker restarts, so that this reader is subscribed
            # before the daemon is back and sees what it kept.
            daemon.send_signal(signal.SIGSTOP)
            broker.start()
            async with aiomqtt.Client("127.0.0.1", broker.port) as watcher:
                await watcher.subscribe(f"{CELL}/#")
                daemon.send_signal(signal.SIGCONT)
                await wait_for(watcher, f"{CELL}/availability", b"online")
                utterance = await next_event(watcher, "utterance")  # kept while it was away
                state = await next_state(watcher, lambda s: s["last_command"] is not None)
                await watcher.publish("voiced/weld2/availability", b"offline", retain=True)
                other = {"cell": "weld2", "mode": "always", "link": "up", "halted": True,
                         "last_command": {"said": "weld seam 3", "status": "done"}}  # fmt: skip
                await watcher.publish("voiced/weld2/state", json.dumps(other), retain=True)
            code, listing, _ = await status(broker.url)
            json_code, as_json, _ = await status(broker.url, "--json")
            daemon.stdin.close()  # end of input: a clean shutdown
            out, err = await asyncio.wait_for(daemon.communicate(), 30)
            after_exit = await retained(broker.port, [f"{CELL}/availability"])
            back = statuses(sock)
        finally:
            notify.close()
            if daemon.returncode is None:
                daemon.kill()
                await daemon.communicate()
    assert daemon.returncode == 0, err.decode()
    events = parse_events("".join(seen) + out.decode())
    assert kinds(events, "remote") == [stop], "say without accept_commands must not run"
    assert stop["text"] == "stop"
    assert utterance["text"] == "computer add cheese"
    assert state["last_command"]["said"] == "add cheese"
    assert (code, json_code) == (0, 0)
    assert listing.splitlines() == [
        "sandwich  online  mode wake  link up  not halted  last: 'add cheese' completed",
        "weld2  offline  last known:  mode always  link up  halted  last: 'weld seam 3' done",
    ]
    assert [cell["cell"] for cell in json.loads(as_json)] == ["sandwich", "weld2"]
    assert after_exit == {f"{CELL}/availability": b"offline"}
    assert away[-1].endswith("; mqtt broker away, retrying"), away
    assert not back[-1].endswith("retrying"), back
    log = err.decode()
    assert log.count("mqtt: broker lost") == 1, log
    assert log.count("mqtt: broker back") == 1, log
    assert "say ignored: [mqtt] accept_commands is off" in log


async def test_refused_credentials_are_named_and_the_cell_runs_on(tmp_path: Path) -> None:
    with mosquitto(tmp_path / "broker", users={"cell": "right"}) as broker:
        (tmp_path / "wrong").write_text("cell:wrong\n", encoding="utf-8")
        (tmp_path / "right").write_text("cell:right\n", encoding="utf-8")
        config = cell_config(tmp_path, broker.url, 'credentials_file = "wrong"\n', 0.02)
        daemon = await spawn_text_daemon(config, voiced_env(tmp_path))
        out, err = await asyncio.wait_for(daemon.communicate(b"computer add cheese\n\n"), 60)
        refused = await status(broker.url, "--credentials-file", str(tmp_path / "wrong"))
        allowed = await status(broker.url, "--credentials-file", str(tmp_path / "right"))
    assert daemon.returncode == 0, err.decode()
    assert kinds(parse_events(out.decode()), "primitive"), "the cell ran without its broker"
    (line,) = [json.loads(x) for x in err.decode().splitlines() if "refused the credentials" in x]
    assert (line["url"], line["user"]) == (broker.url, "cell")
    code, _, message = refused
    assert code == 1 and message.count("\n") == 1, message
    assert f"{broker.url} as 'cell'" in message and "right" not in message
    assert allowed[:2] == (0, f"no cell on {broker.url} under voiced/\n")


async def test_status_over_tls_checks_the_broker_against_the_ca_file(tmp_path: Path) -> None:
    ca, cert, key = make_certificates(tmp_path)
    with mosquitto(tmp_path / "broker", tls=(cert, key)) as broker:
        url = f"mqtts://127.0.0.1:{broker.port}"
        trusted = await status(url, "--ca-file", str(ca))
        untrusted = await status(url)
    assert trusted[:2] == (0, f"no cell on {url} under voiced/\n")
    code, _, message = untrusted
    assert code == 1 and "CERTIFICATE_VERIFY_FAILED" in message, message


async def test_status_without_a_broker_is_one_line_and_exit_1() -> None:
    url = f"mqtt://127.0.0.1:{free_port()}"
    code, out, err = await status(url)
    assert (code, out) == (1, "")
    assert err == f"voiced: MQTT broker {url} (anonymous): [Errno 111] Connection refused\n"
