"""The cell's page on a real `voiced run --text -`: it comes up for typed input, and its STOP,
pressed while a command moves, stops the arm as a spoken "stop" does."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

from tests.e2e.helpers import kinds, next_event, parse_events, spawn_text_daemon, voiced_env

PAGE_CONFIG = """
[simulator]
time_scale = 1.0
[page]
enabled = true
port = 0
"""


def press_stop(url: str) -> tuple[int, str]:
    request = urllib.request.Request(url + "stop", method="POST", headers={"X-Voiced-Stop": "1"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        return answer.status, answer.read().decode()


async def test_stop_on_the_page_stops_a_moving_command(tmp_path: Path) -> None:
    config = tmp_path / "page.toml"
    config.write_text(PAGE_CONFIG, encoding="utf-8")
    proc = await spawn_text_daemon(config, voiced_env(tmp_path))
    assert proc.stdin is not None
    page, seen = await next_event(proc, "page")
    proc.stdin.write(b"computer add bread\n\n")
    await proc.stdin.drain()
    _, more = await next_event(proc, "primitive")
    pressed = await asyncio.to_thread(press_stop, page["url"])
    _, until_stop = await next_event(proc, "stopped")
    with urllib.request.urlopen(page["url"] + "state", timeout=5) as answer:
        state = json.loads(answer.read())
    stdout, stderr = await asyncio.wait_for(proc.communicate(b""), 60)
    assert proc.returncode == 0, stderr.decode()
    events = parse_events("".join(seen + more + until_stop) + stdout.decode())
    assert pressed == (200, "stopping\n")
    assert kinds(events, "remote") == [
        {"event": "remote", "t": kinds(events, "remote")[0]["t"], "text": "stop", "source": "page"}
    ]
    stop_at = next(i for i, e in enumerate(events) if e["event"] == "stopped")
    assert events[stop_at]["reason"] == 'the cell\'s page sent "stop"'  # not "operator said"
    assert not kinds(events[stop_at:], "primitive"), "nothing moved after the stop"
    stories = {story["said"]: story for story in state["exchanges"]}
    assert stories["stop"]["source"] == "page" and stories["stop"]["outcome"] == "stopped"
    command = stories["computer add bread"]
    assert (command["interpretation"], command["tier"], command["outcome"]) == (
        "Add bread.", "grammar", "stopped")  # fmt: skip
