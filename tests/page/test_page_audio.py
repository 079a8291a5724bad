"""The cell page on a real `voiced run --audio -`: each heard segment's story carries its audio,
served as 16-bit PCM WAV that decodes to the length the segmenter cut."""

from __future__ import annotations

import asyncio
import io
import json
import urllib.request
import wave
from pathlib import Path
from typing import Any

import pytest

from tests.audio.clips import HAVE_TOOLS, Clips, samples_of
from tests.e2e.helpers import voiced, voiced_env

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")

CONFIG = """
[simulator]
time_scale = 0.05
[page]
enabled = true
port = 0
"""


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as answer:
        body: bytes = answer.read()
        return body


async def next_event(stdout: asyncio.StreamReader, kind: str) -> dict[str, Any]:
    while line := await asyncio.wait_for(stdout.readline(), 120):
        record: dict[str, Any] = json.loads(line)
        if record["event"] == kind:
            return record
    raise AssertionError(f"the daemon ended before a {kind} event")


async def test_a_heard_command_is_shown_with_its_audio(tmp_path: Path) -> None:
    clips = Clips(tmp_path / "clips")
    clips.root.mkdir()
    audio = samples_of(clips.concat([clips.silence(0.5), clips.speech("computer add bread"),
                                     clips.silence(1.5)]))  # fmt: skip
    config = tmp_path / "page.toml"
    config.write_text(CONFIG, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        *voiced("run", "--config", str(config), "--cell", "sandwich", "--audio", "-", "--fast",
                "--controller", "sim", "--events", "-"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=voiced_env(tmp_path),
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    url = (await next_event(proc.stdout, "page"))["url"]
    proc.stdin.write(audio.astype("<i2").tobytes())
    await proc.stdin.drain()
    heard = await next_event(proc.stdout, "utterance")
    async with asyncio.timeout(10):
        while not (stories := json.loads(await asyncio.to_thread(get, url + "segments"))):
            await asyncio.sleep(0.1)
    (story,) = stories
    wav = await asyncio.to_thread(get, url + story["audio"]["url"].lstrip("/"))
    proc.stdin.close()
    _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    assert (story["said"], story["source"]) == (heard["text"], "heard")
    assert "add bread" in heard["text"]
    with wave.open(io.BytesIO(wav)) as file:
        assert (file.getsampwidth(), file.getframerate(), file.getnchannels()) == (2, 16000, 1)
        frames = file.getnframes()
    assert frames == story["audio"]["samples"]
    assert 1.0 < frames / 16000 < len(audio) / 16000  # the segment, pre-roll included
