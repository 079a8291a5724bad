"""A real order said with a pause in it, through the daemon: piece by piece it is no command,
heard again as one stretch of audio it is the order (`QueryFrame._heard_whole`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from voiced.audio.convert import read_audio

from tests.audio.clips import HAVE_TOOLS, write_wav
from tests.e2e.helpers import kinds
from tests.e2e.test_spoken_sessions import run_audio

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")

ORDER = Path(__file__).resolve().parents[1] / "data" / "orders" / "order-in-two.flac"


@pytest.mark.slow
def test_an_order_said_in_two_pieces_is_made_from_the_whole(tmp_path: Path) -> None:
    speech = read_audio(ORDER)
    quiet = np.zeros(16000, dtype=np.int16)
    wav = write_wav(tmp_path / "order.wav", np.concatenate([quiet, speech, quiet, quiet, quiet]))
    events, log = run_audio(tmp_path, "barista", wav, "--mode", "always")
    heard = [e["text"] for e in kinds(events, "utterance")]
    assert len(heard) == 2, heard  # the pause splits it: two segments
    assert "heard again whole" in log
    readings = [e["interpretation"] for e in kinds(events, "interpretation")]
    assert len(readings) == 1, readings
    for part in ("iced mocha", "16 ounce cup", "dark roast", "single shot"):
        assert part in readings[0], readings
    assert not [s for s in kinds(events, "feedback") if "?" in s["text"]]  # not asked: made
    assert kinds(events, "primitive")
