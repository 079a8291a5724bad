"""The cell's page in a real headless Chromium (Debian's chromium, over the DevTools pipe) on
a real `voiced run --text -`: after a few commands it shows the cell drawn with its stacks and
the command list; its STOP button, clicked in the browser while a command moves, stops the arm.
Screenshots go to tmp_path (not to git); the test looks at their pixels."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.cdp import CHROMIUM, Browser
from tests.e2e.helpers import spawn_text_daemon, voiced_env
from tests.page.served import served, tone_segment
from tests.pngpixels import read_png
from voiced import eventtypes as ev
from voiced.page.drawing import COLOURS

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium)"
)

CONFIG = """
[simulator]
time_scale = 0.15
[page]
enabled = true
port = 0
"""
VIEWPORT = {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False}


class Events:
    """The daemon's event stream, read in the background."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.records: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.records.append(json.loads(line))
            self._changed.set()

    async def wait(self, kind: str, count: int = 1, timeout: float = 60) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while len(found := [r for r in self.records if r["event"] == kind]) < count:
                self._changed.clear()
                await self._changed.wait()
        return found[count - 1]

    async def say(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n\n")
        await self.proc.stdin.drain()


@contextlib.asynccontextmanager
async def daemon(tmp: Path) -> AsyncIterator[Events]:
    config = tmp / "page.toml"
    config.write_text(CONFIG, encoding="utf-8")
    proc = await spawn_text_daemon(config, voiced_env(tmp))
    events = Events(proc)
    try:
        yield events
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)
        await events._task


async def shot(browser: Browser, selector: str, path: Path) -> Path:
    """A screenshot of one element (by its box on the page)."""
    box = await browser.evaluate(
        f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
        ".getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; })()"
    )
    clip = {**box, "scale": 1}
    data = await browser.send("Page.captureScreenshot", {"format": "png", "clip": clip}, page=True)
    path.write_bytes(base64.b64decode(data["data"]))
    return path


def share(pixels: list[tuple[int, int, int]], colour: str, tolerance: int = 12) -> float:
    """The share of `pixels` within `tolerance` of `colour` (#rrggbb)."""
    want = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    near = sum(all(abs(a - b) <= tolerance for a, b in zip(p, want, strict=True)) for p in pixels)
    return near / max(len(pixels), 1)


STORIES = "[...document.querySelectorAll('.exchange')].map(e => e.textContent)"
COMMANDS = "document.querySelectorAll('#commands tr.command').length"


async def test_the_live_cell_and_its_stop_button(tmp_path: Path) -> None:
    async with daemon(tmp_path) as events, Browser(tmp_path / "profile") as browser:
        url = (await events.wait("page"))["url"]
        await events.say("computer add bread")
        await events.say("computer add cheese")
        await browser.send("Emulation.setDeviceMetricsOverride", VIEWPORT, page=True)
        await browser.goto(url)
        # Both commands done, as the history says, and drawn on the fixture.
        await browser.wait_for(f"{COMMANDS} === 2 && [...document.querySelectorAll("
                               "'#commands .status')].every(s => s.textContent === 'completed')",
                               timeout=60)  # fmt: skip
        drawn = await browser.evaluate(
            '[...document.querySelectorAll(\'#drawing g.site[data-site="assembly_fixture"] '
            "rect.object')].map(r => r.dataset.object)"
        )
        stories = await browser.evaluate(STORIES)
        whole = await browser.screenshot(tmp_path / "cell.png")
        drawing = read_png(await shot(browser, "#drawing svg", tmp_path / "drawing.png"))
        button = read_png(await shot(browser, "#stop", tmp_path / "stop.png"))

        # A long command, and STOP clicked in the browser while the arm moves.
        await events.say("computer three layers of tomato")
        moving = len([r for r in events.records if r["event"] == "primitive"]) + 1
        await events.wait("primitive", moving)
        await browser.evaluate("document.getElementById('stop').click()")
        stopped = await events.wait("stopped")
        await browser.wait_for("document.getElementById('stop-said').textContent === 'stop sent'")
        await browser.wait_for(f"{STORIES}.some(t => t.includes('page') && t.includes('stopped'))")
        await browser.screenshot(tmp_path / "stopped.png")
        records = list(events.records)
        shown = await browser.evaluate(
            "[...document.querySelectorAll('.exchange')].map(e => e.dataset.id)"
        )

    assert drawn == ["bread", "cheese"]
    assert shown == ["4", "3", "2", "1"], "each story once, newest first"
    assert any("computer add bread" in s and "Add bread." in s for s in stories), stories
    assert whole.stat().st_size > 20_000
    pixels = drawing.region(0, 0, drawing.width, drawing.height)
    assert len(set(pixels)) > 20, "the drawing is not blank"
    assert share(pixels, COLOURS["bread"]) > 0.001 and share(pixels, COLOURS["cheese"]) > 0.001
    assert share(pixels, "#ff5722") * len(pixels) > 60, "the arm's tool centre point is drawn"
    assert share(button.region(0, 0, button.width, button.height), "#d50000") > 0.4
    assert next(r for r in records if r["event"] == "remote")["source"] == "page"
    after = records[records.index(stopped) :]
    assert not [r for r in after if r["event"] == "primitive"], "nothing moved after the stop"


async def settled(browser: Browser, promise: str) -> Any:
    """The value a JavaScript promise settles to."""
    reply = await browser.send("Runtime.evaluate", {"expression": promise, "awaitPromise": True,
                                                    "returnByValue": True}, page=True)  # fmt: skip
    return reply["result"].get("value")


async def test_a_heard_segment_plays_in_the_browser(tmp_path: Path) -> None:
    segment = tone_segment(speech_end=2.5, seconds=0.75, preroll=4800)
    async with served() as page, Browser(tmp_path / "profile") as browser:
        page.page.exchanges.publish(segment, None, None)
        page.events.emit(ev.Utterance("add bread", audio_t=2.6, speech_end=2.5), "c1")
        page.page.exchanges.publish(tone_segment(speech_end=5.0), None, "no wake word")
        page.events.emit(ev.Rejected("no wake word", "", 5.3))
        await browser.goto(page.url)
        await browser.wait_for("document.querySelectorAll('.exchange audio').length === 2")
        # Chromium decodes the WAV itself: its duration is the segment's.
        duration = await settled(
            browser,
            'new Promise(done => { const a = document.querySelector(\'.exchange[data-id="1"] '
            "audio'); a.onloadedmetadata = () => done(a.duration);"
            " a.preload = 'auto'; a.load(); })",
        )
        # The waveform is drawn from the same WAV, the pre-roll shaded.
        drawn = await browser.wait_for(
            "(() => { const c = document.querySelector('.exchange[data-id=\"1\"] canvas');"
            " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            " let blue = 0, shade = 0; for (let i = 0; i < d.length; i += 4) {"
            " if (d[i + 2] > 150 && d[i] < 60) blue++;"
            " if (d[i] === 0xec && d[i + 1] === 0xef && d[i + 2] === 0xf1) shade++; }"
            " return blue > 100 && shade > 100 && {blue, shade, width: c.width}; })()"
        )
        await browser.screenshot(tmp_path / "heard.png")
        rejected = await browser.evaluate(
            "document.querySelector('.exchange[data-id=\"2\"] .outcome').textContent"
        )
    assert duration == pytest.approx(len(segment.samples) / 16000, abs=0.01)
    assert drawn["width"] == 256
    assert rejected == "rejected (no wake word)"
