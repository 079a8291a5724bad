"""The echo cancellers: what they take out, and what they must leave alone."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from voiced.audio.aec import TEN_MS, SpeexEchoCanceller, WebRtcEchoCanceller, make_canceller
from voiced.audio.convert import rms
from voiced.audio.room import RoomEcho, RoomSettings

from tests.audio.clips import HAVE_TOOLS, Clips, samples_of
from voiced.errors import VoicedError

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")


def _run(canceller: SpeexEchoCanceller, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
    block = 3 * TEN_MS
    usable = len(mic) // block * block
    return np.concatenate([canceller.process(mic[i : i + block], reference[i : i + block])
                           for i in range(0, usable, block)])  # fmt: skip


def test_speex_passes_the_operator_untouched_while_nothing_plays(clips: Clips) -> None:
    # Speex's preprocessor cost Whisper a word of a clean command when it ran on every frame.
    operator = samples_of(clips.speech("add avocado"))
    out = _run(SpeexEchoCanceller(), operator, np.zeros_like(operator))
    assert np.array_equal(out, operator[: len(out)])


def test_speex_takes_the_echo_of_what_is_played_down(clips: Clips) -> None:
    reply = samples_of(clips.speech("The positions are home, safe position one, and three more."))
    reply = np.concatenate([reply, reply])
    room = RoomEcho(RoomSettings(gain_db=0.0))
    mic = np.concatenate([room.mix(reply[i : i + TEN_MS], reply[i : i + TEN_MS])
                          for i in range(0, len(reply) // TEN_MS * TEN_MS, TEN_MS)])  # fmt: skip
    out = _run(SpeexEchoCanceller(), mic, reply[: len(mic)])
    second_half = slice(len(out) // 2, len(out))  # converged by then
    erle_db = 20 * np.log10(rms(mic[second_half]) / max(rms(out[second_half]), 1.0))
    assert erle_db > 10.0, erle_db


def test_the_canceller_the_config_names() -> None:
    assert make_canceller("off") is None
    assert isinstance(make_canceller("speex"), SpeexEchoCanceller)


def test_webrtc_without_livekit_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "livekit", None)  # as if it were not installed
    with pytest.raises(VoicedError, match=r"aec3 extra"):
        WebRtcEchoCanceller()
