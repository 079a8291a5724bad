"""Acoustic echo cancellation: Speex's MDF filter (`pyaec`, the default) or WebRTC's AEC3
(`livekit`, the `aec3` extra).

Fed, every 10 ms, the samples being played (the reference, from `voiced.audio.playback`) and the
samples captured at the same input positions, a canceller removes the loudspeaker's echo from
the microphone signal. Measured on simulated cells (bench/README.md): AEC3 takes the echo down
by about 33 dB but, while both talk, suppresses the operator's first words with it; Speex
cancels less and leaks at onsets, but leaves the operator's voice whole, which is what
barge-in needs. Noise suppression and gain control stay off: they cost Whisper words.

The libraries are imported when the first canceller is made, so a daemon that never speaks
(text sessions, `engine = "null"`) never loads them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from voiced.audio.convert import Pcm
from voiced.audio.settings import SAMPLE_RATE

from voiced.errors import VoicedError

TEN_MS = SAMPLE_RATE // 100


def _check_lengths(mic: Pcm, reference: Pcm) -> None:
    if len(mic) != len(reference) or len(mic) % TEN_MS:
        raise ValueError(
            f"echo canceller: {len(mic)} and {len(reference)} samples; both must be the "
            f"same multiple of {TEN_MS}"
        )


class WebRtcEchoCanceller:
    """`voiced.audio.duplex.EchoCanceller` over livekit's AudioProcessingModule."""

    def __init__(self) -> None:
        try:
            from livekit import rtc  # the optional aec3 extra: imported only when chosen
        except ImportError as exc:
            raise VoicedError(
                '[audio] echo_cancel = "webrtc" needs the livekit package: install voiced '
                'with the aec3 extra (pip install "voiced[aec3]"), or use "speex"'
            ) from exc

        self._rtc: Any = rtc
        self._apm: Any = rtc.AudioProcessingModule(
            echo_cancellation=True,
            noise_suppression=False,
            high_pass_filter=False,
            auto_gain_control=False,
        )

    def process(self, mic: Pcm, reference: Pcm) -> Pcm:
        """`mic` without the echo of `reference` (same length, a multiple of 10 ms)."""
        _check_lengths(mic, reference)
        out = np.empty(len(mic), dtype=np.int16)
        for i in range(0, len(mic), TEN_MS):
            far = self._frame(reference[i : i + TEN_MS])
            self._apm.process_reverse_stream(far)
            near = self._frame(mic[i : i + TEN_MS])
            self._apm.process_stream(near)  # in place
            out[i : i + TEN_MS] = np.frombuffer(near.data, dtype=np.int16)
        return out

    def _frame(self, samples: Pcm) -> Any:
        data = bytearray(np.ascontiguousarray(samples, dtype=np.int16).tobytes())
        return self._rtc.AudioFrame(data, SAMPLE_RATE, 1, TEN_MS)


SPEEX_TAIL = 4096
"""Speex's filter length in samples (256 ms): room delay plus the reverberation it removes."""


class SpeexEchoCanceller:
    """`audio.duplex.EchoCanceller` over Speex's echo canceller (MDF, as `pyaec` ships it with
    Speex's preprocessor for the residual). A linear filter: it leaves the operator's voice
    alone while both talk, where AEC3's suppressor takes the first word with the echo; it
    converges in a second or two and leaks more, which the echo gate and the own-voice check
    behind it are there for."""

    def __init__(self, tail: int = SPEEX_TAIL, preprocess: bool = True) -> None:
        import ctypes

        # pyaec loads Speex's shared library on import: only when this canceller is made.
        from pyaec import lib  # type: ignore[import-untyped]

        self._lib = lib
        self._ptr = ctypes.POINTER(ctypes.c_int16)
        self._tail = tail
        self._quiet = tail  # samples since the reference last sounded
        # Speex's preprocessor (noise suppression, residual echo suppression) runs on every
        # frame, echo or not: it cost Whisper "avocado" in a clean "add avocado".
        self._handle = lib.AecNew(TEN_MS, tail, SAMPLE_RATE, preprocess)
        if not self._handle:
            raise RuntimeError("the Speex echo canceller could not be created")

    def process(self, mic: Pcm, reference: Pcm) -> Pcm:
        """`mic` without the echo of `reference` (same length, a multiple of 10 ms)."""
        _check_lengths(mic, reference)
        near = np.ascontiguousarray(mic, dtype=np.int16)
        far = np.ascontiguousarray(reference, dtype=np.int16)
        sounding = np.flatnonzero(far)
        self._quiet = len(far) - 1 - int(sounding[-1]) if len(sounding) else self._quiet + len(far)
        if self._quiet >= self._tail + len(far):
            # Nothing played within the filter's reach: there is no echo to take out, and
            # the operator's voice passes untouched.
            return near.copy()
        out = np.empty(len(mic), dtype=np.int16)
        for i in range(0, len(mic), TEN_MS):
            self._lib.AecCancelEcho(
                self._handle,
                near[i:].ctypes.data_as(self._ptr),
                far[i:].ctypes.data_as(self._ptr),
                out[i:].ctypes.data_as(self._ptr),
                TEN_MS,
            )
        return out

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.AecDestroy(handle)


def make_canceller(name: str) -> WebRtcEchoCanceller | SpeexEchoCanceller | None:
    """The canceller `[audio] echo_cancel` names ("off": None)."""
    if name == "webrtc":
        return WebRtcEchoCanceller()
    if name == "speex":
        return SpeexEchoCanceller()
    return None
