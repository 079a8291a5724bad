"""The audio debug viewer over real HTTP on a loopback port: the seed's JSON payload, the page,
server-sent events."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from voiced.audio.segmenter import Segment, Segmenter
from voiced.audio.settings import AudioSettings, ViewerSettings
from voiced.audio.transcribe import Transcript
from voiced.audio.viewer import (
    AudioViewer,
    PayloadError,
    segment_payload,
    splice_jump,
    validate_payload,
)

from tests.audio.clips import Clips, samples_of


def http(method: str, url: str, body: Any = None) -> tuple[int, bytes]:
    data = (
        None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    )
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
async def viewer() -> Any:
    async with AudioViewer(ViewerSettings(port=0)) as running:
        yield running


@pytest.fixture(scope="module")
def speech_segment(clips: Clips) -> Segment:
    audio = samples_of(clips.concat([clips.silence(0.5), clips.speech("computer add bread"),
                                     clips.silence(0.8)]))  # fmt: skip
    segmenter = Segmenter(AudioSettings())
    return next(e for e in segmenter.feed(audio) + segmenter.finish() if isinstance(e, Segment))


SEED_PAYLOAD = {"samples": [0.0, 0.1, -0.1, 0.2], "preroll_length": 2,
                "transcript": "[BLANK_AUDIO]", "timestamp": 1234567890}  # fmt: skip


async def test_the_seeds_payload_is_kept_and_listed(viewer: AudioViewer) -> None:
    assert viewer.add(SEED_PAYLOAD) == 1
    status, body = await asyncio.to_thread(http, "GET", viewer.url + "segments")
    assert status == 200
    (record,) = json.loads(body)
    assert record["transcript"] == "[BLANK_AUDIO]"
    assert (record["sample_count"], record["duration_ms"]) == (4, 0.2)
    assert record["splice_jump"] == pytest.approx(0.2)  # |-0.1 - 0.1| across the splice


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**SEED_PAYLOAD, "samples": "abc"}, "samples"),
        ({**SEED_PAYLOAD, "samples": [0.1, None]}, "samples"),
        ({**SEED_PAYLOAD, "preroll_length": 9}, "preroll_length"),
        ({**SEED_PAYLOAD, "preroll_length": -1}, "preroll_length"),
        ({**SEED_PAYLOAD, "transcript": 5}, "transcript"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_payloads_are_refused_naming_the_field(body: Any, field: str) -> None:
    viewer = AudioViewer(ViewerSettings(port=0))
    with pytest.raises(PayloadError, match=field):
        viewer.add(body)
    assert viewer.segments() == []


async def test_page_and_unknown_paths(viewer: AudioViewer) -> None:
    status, page = await asyncio.to_thread(http, "GET", viewer.url)
    assert status == 200 and b"preroll-boundary" in page and b"EventSource" in page
    assert (await asyncio.to_thread(http, "GET", viewer.url + "nope"))[0] == 404


async def test_binds_to_loopback_by_default() -> None:
    assert ViewerSettings().host == "127.0.0.1"
    async with AudioViewer(ViewerSettings(port=0)) as running:
        assert running.url.startswith("http://127.0.0.1:")


async def test_events_stream_pushes_each_new_segment(
    viewer: AudioViewer, speech_segment: Segment
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", viewer.port, limit=2**24)
    writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b": hello\n\n"), 5)
    assert b"text/event-stream" in head
    transcript = Transcript("Computer, add bread.", "Computer, add bread.", 0.01, -0.2, None, 0.3)
    viewer.publish(speech_segment, transcript)
    line = await asyncio.wait_for(reader.readuntil(b"\n\n"), 5)
    record = json.loads(line.removeprefix(b"data: "))
    writer.close()
    assert record["preroll_length"] == speech_segment.preroll == 4800
    assert record["transcript"] == "Computer, add bread."
    assert record["vad_trigger_time"] == speech_segment.vad.trigger_time
    assert record["sample_count"] == len(speech_segment.samples)


def test_in_process_payload_has_the_seeds_fields_and_metadata(speech_segment: Segment) -> None:
    payload = segment_payload(speech_segment, None, "not speech (silero 0.10)")
    assert set(SEED_PAYLOAD) <= set(payload)
    assert payload["samples"][0] == pytest.approx(speech_segment.samples[0] / 32768, abs=1e-5)
    assert payload["rejected_reason"] == "not speech (silero 0.10)"
    assert validate_payload(payload)["duration_ms"] == pytest.approx(
        1000 * len(speech_segment.samples) / 16000
    )


def test_splice_jump_shows_a_broken_splice() -> None:
    smooth = list(np.sin(np.arange(100) / 5) * 0.5)
    broken = smooth[:50] + [x + 0.4 for x in smooth[50:]]
    assert splice_jump(smooth, 50) < 0.11
    assert splice_jump(broken, 50) > 0.3
    with pytest.raises(PayloadError):
        validate_payload({"samples": [0.0], "preroll_length": True})


async def test_old_segments_are_dropped_beyond_keep(speech_segment: Segment) -> None:
    async with AudioViewer(ViewerSettings(port=0, keep=2)) as running:
        ids = [running.publish(speech_segment) for _ in range(3)]
        assert [s["id"] for s in running.segments()] == ids[1:]


def test_payload_for_a_path_is_json_serialisable(speech_segment: Segment, tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps(segment_payload(speech_segment)))
