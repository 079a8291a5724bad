"""The audio debug viewer in a real headless Chromium (Debian's chromium), driven over the
DevTools pipe: the page loads, shows segments with their pre-roll/live boundary marker and the
raw transcript, and a segment published later arrives live over server-sent events."""

from __future__ import annotations

from pathlib import Path

import pytest
from voiced.audio.segmenter import Segment, Segmenter
from voiced.audio.settings import AudioSettings, ViewerSettings
from voiced.audio.transcribe import Transcript
from voiced.audio.viewer import AudioViewer

from tests.audio.cdp import CHROMIUM, Browser
from tests.audio.clips import Clips, samples_of

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian: apt-get install chromium)"
)


@pytest.fixture(scope="module")
def segments(clips: Clips) -> list[Segment]:
    audio = samples_of(clips.concat([
        clips.silence(0.5), clips.speech("computer add bread"), clips.silence(0.8),
        clips.speech("stop", "en-gb"), clips.silence(0.8),
    ]))  # fmt: skip
    segmenter = Segmenter(AudioSettings())
    return [e for e in segmenter.feed(audio) + segmenter.finish() if isinstance(e, Segment)]


MARKERS = """Array.from(document.querySelectorAll('.segment')).map(s => {
  const m = s.querySelector('.preroll-boundary'), c = s.querySelector('canvas.waveform');
  return {id: s.dataset.id, left: parseFloat(m.style.left), width: c.width,
          visible: m.offsetHeight > 0 && getComputedStyle(m).display !== 'none',
          raw: s.querySelector('.raw-transcript').innerHTML,
          meta: s.querySelector('dl.meta').textContent};
})"""


async def test_viewer_page_shows_segments_markers_and_live_updates(
    segments: list[Segment], tmp_path: Path
) -> None:
    first, second = segments
    async with AudioViewer(ViewerSettings(port=0)) as viewer:
        viewer.publish(first, Transcript("Computer, add bread.", "Computer, add bread.", 0.01,
                                         -0.2, None, 0.35))  # fmt: skip
        async with Browser(tmp_path / "profile") as browser:
            await browser.goto(viewer.url)
            assert await browser.wait_for("document.querySelectorAll('.segment').length === 1")
            # Published after the page loaded: it can only arrive over SSE.
            blank = Transcript("", "[BLANK_AUDIO]", 0.9, -1.5, "blank ([BLANK_AUDIO])", 0.3)
            viewer.publish(second, blank, "blank ([BLANK_AUDIO])")
            assert await browser.wait_for("document.querySelectorAll('.segment').length === 2")
            shown = {s["id"]: s for s in await browser.evaluate(MARKERS)}
            await browser.screenshot(tmp_path / "viewer.png")
            # Zoom: the waveform (and the marker with it) doubles in width.
            await browser.evaluate("document.querySelector('.segment .zoom-in').click()")
            zoomed = {s["id"]: s for s in await browser.evaluate(MARKERS)}
    for segment, record in zip((first, second), (shown["1"], shown["2"]), strict=True):
        expected = segment.preroll / len(segment.samples) * record["width"]
        assert record["visible"]
        assert record["left"] == pytest.approx(expected, abs=1.0)
        assert "4800 samples" in record["meta"] and "VAD trigger" in record["meta"]
    assert '<span class="special-token">[BLANK_AUDIO]</span>' in shown["2"]["raw"]
    assert "Computer, add bread." in shown["1"]["raw"]
    assert zoomed["2"]["width"] == 2 * shown["2"]["width"]
    assert zoomed["2"]["left"] == pytest.approx(2 * shown["2"]["left"], abs=1.0)
