"""The pre-roll ring buffer: reads by absolute index, sample-exact at the splice."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from voiced.audio.ringbuffer import RingBuffer


def ramp(n: int, start: int = 0) -> np.ndarray:
    # A ramp makes any gap or duplicate visible: consecutive samples differ by exactly 1.
    return ((np.arange(start, start + n) % 60000) - 30000).astype(np.int16)


def test_preroll_plus_live_is_the_original_contiguous_run() -> None:
    signal = ramp(50_000)
    ring = RingBuffer(8000)
    for i in range(0, 20_000, 333):  # odd block size: wraps at awkward places
        ring.write(signal[i : i + 333])
    trigger = 19_000
    preroll = ring.read(trigger - 4800, trigger)
    live = ring.read(trigger, ring.end)
    spliced = np.concatenate([preroll, live])
    assert len(preroll) == 4800
    np.testing.assert_array_equal(spliced, signal[trigger - 4800 : ring.end])
    assert set(np.diff(spliced.astype(np.int32))) == {1}


def test_read_before_the_oldest_sample_is_clipped_not_padded() -> None:
    ring = RingBuffer(100)
    ring.write(ramp(250))
    assert ring.start == 150
    np.testing.assert_array_equal(ring.read(0, 160), ramp(10, 150))


def test_preroll_at_stream_start_is_shorter() -> None:
    ring = RingBuffer(1000)
    ring.write(ramp(300))
    assert len(ring.read(-500, 100)) == 100


def test_a_write_longer_than_capacity_keeps_the_tail() -> None:
    ring = RingBuffer(64)
    ring.write(ramp(10))
    ring.write(ramp(1000, 10))
    np.testing.assert_array_equal(ring.read(ring.start, ring.end), ramp(64, 1010 - 64))


def test_negative_capacity_is_refused() -> None:
    with pytest.raises(ValueError):
        RingBuffer(-1)


@given(
    capacity=st.integers(1, 500),
    blocks=st.lists(st.integers(0, 700), min_size=1, max_size=30),
    back=st.integers(0, 600),
)
def test_any_window_held_reads_back_exactly(capacity: int, blocks: list[int], back: int) -> None:
    total = sum(blocks)
    signal = ramp(total)
    ring = RingBuffer(capacity)
    pos = 0
    for size in blocks:
        ring.write(signal[pos : pos + size])
        pos += size
    start = max(ring.start, total - back)
    np.testing.assert_array_equal(ring.read(start, total), signal[start:total])
