"""A minimal Chrome DevTools Protocol client over `--remote-debugging-pipe` (stdlib only).

Chromium reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4, so no
WebSocket library is needed. `--dump-dom --virtual-time-budget` cannot be used for the cell page:
its open server-sent-events stream keeps virtual time from advancing.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
"""Debian's chromium (apt-get install chromium)."""
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)


class Browser:
    """One headless Chromium with one page, driven over the debugging pipe."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.StreamReader | None = None
        self._write_fd = -1
        self._next_id = 0
        self.session = ""

    async def __aenter__(self) -> Browser:
        assert CHROMIUM is not None
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def child_fds() -> None:
            # Chromium expects the pipe on fds 3 (commands in) and 4 (replies out). Copies above
            # 9 first, in case either end already is fd 3 or 4.
            commands, replies = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
                                 for fd in (to_chrome_r, from_chrome_w))  # fmt: skip
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self._proc = await asyncio.create_subprocess_exec(
            CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            # 3 and 4 are listed so the child's fd clean-up (after preexec_fn) keeps them.
            pass_fds=(3, 4, to_chrome_r, from_chrome_w), preexec_fn=child_fds,
        )  # fmt: skip
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._write_fd = to_chrome_w
        loop = asyncio.get_running_loop()
        self._reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(self._reader), os.fdopen(from_chrome_r, "rb")
        )
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        self.session = attached["sessionId"]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._write_fd >= 0:
            os.close(self._write_fd)
        if self._proc is not None and self._proc.returncode is None:
            self._proc.kill()
            await self._proc.wait()

    async def send(self, method: str, params: dict[str, Any] | None = None, page: bool = False
                   ) -> dict[str, Any]:  # fmt: skip
        """Send a command (to the page when `page`) and wait for its reply."""
        assert self._reader is not None
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self.session
        os.write(self._write_fd, json.dumps(message).encode() + b"\0")
        while True:
            raw = await asyncio.wait_for(self._reader.readuntil(b"\0"), 30)
            reply = json.loads(raw[:-1])
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url}, page=True)
        await self.wait_for(
            f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
        )

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        reply = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, page=True
        )
        return reply["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Poll until the expression is truthy; returns its value."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if loop.time() > deadline:
                raise TimeoutError(f"page never satisfied: {expression}")
            await asyncio.sleep(0.1)

    async def screenshot(self, path: Path) -> Path:
        import base64

        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            page=True,
        )
        shot = await self.send("Page.captureScreenshot", {"format": "png"}, page=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path
