"""The noise-suppression front ends bench.levers compares: each hands Whisper the crop whole,
with stationary noise taken down once it has learned it."""

from __future__ import annotations

import numpy as np
import pytest

from bench.lever_variants import FRONT_ENDS

MODULES = {"webrtc": "webrtc_noise_gain", "speex": "speexdsp_ns", "rnnoise": "pyrnnoise"}
"""The front ends were measured and not adopted, so they are not dependencies: installed by
hand to run the levers again (`pip install webrtc-noise-gain speexdsp-ns pyrnnoise`)."""


@pytest.mark.parametrize("name", sorted(FRONT_ENDS))
def test_front_end_keeps_the_length_and_lowers_steady_noise(name: str) -> None:
    pytest.importorskip(MODULES[name], reason=f"{MODULES[name]} is not installed (a bench lever)")
    rng = np.random.default_rng(5)
    noise = np.clip(rng.normal(0, 2000, 16000 * 2 + 77), -32768, 32767).astype(np.int16)
    cleaned = FRONT_ENDS[name](noise)
    assert cleaned.dtype == np.int16 and len(cleaned) == len(noise)
    tail = slice(16000, 32000)  # after a second to learn the noise
    before = float(np.sqrt(np.mean(noise[tail].astype(np.float64) ** 2)))
    after = float(np.sqrt(np.mean(cleaned[tail].astype(np.float64) ** 2)))
    assert after < before / 2, (name, before, after)
