"""The segmenter: boundaries on synthetic tone bursts, sample-exact splices, gates, chunking."""

from __future__ import annotations

import numpy as np
import pytest
from voiced.audio.convert import Pcm
from voiced.audio.segmenter import Activity, Dropped, NoiseFloor, Segment, Segmenter, SegmenterEvent
from voiced.audio.settings import AudioSettings

from tests.audio.clips import Clips, samples_of

FRAME_S = 0.03
BURSTS = [(0.5, 0), (0.8, 440), (0.7, 0), (1.2, 300), (1.0, 0), (0.4, 600), (0.8, 0)]
"""(seconds, Hz): tones at 0.5-1.3 s, 2.0-3.2 s and 4.2-4.6 s."""
EXPECTED = [(0.5, 1.3), (2.0, 3.2), (4.2, 4.6)]


def run(segmenter: Segmenter, samples: Pcm, block: int) -> list[SegmenterEvent]:
    events: list[SegmenterEvent] = []
    for i in range(0, len(samples), block):
        events += segmenter.feed(samples[i : i + block])
    return events + segmenter.finish()


def segments(events: list[SegmenterEvent]) -> list[Segment]:
    return [e for e in events if isinstance(e, Segment)]


@pytest.fixture(scope="module")
def bursts(clips: Clips) -> Pcm:
    return samples_of(clips.tone_bursts(BURSTS))


@pytest.mark.parametrize("frame_ms", [10, 20, 30])
def test_tone_bursts_give_one_segment_each_with_boundaries_within_two_frames(
    bursts: Pcm, frame_ms: int
) -> None:
    settings = AudioSettings(frame_ms=frame_ms, hangover_ms=300, silero_gate=False)
    found = segments(run(Segmenter(settings), bursts, 320))
    assert len(found) == len(EXPECTED)
    tolerance = 2 * frame_ms / 1000
    for segment, (start, end) in zip(found, EXPECTED, strict=True):
        assert segment.start == pytest.approx(start, abs=tolerance)
        assert segment.vad.speech_end == pytest.approx(end, abs=tolerance)
        # The segment ends one hangover after the speech.
        assert segment.end - segment.vad.speech_end == pytest.approx(0.3, abs=frame_ms / 1000)
        assert segment.closed_by == "silence"


def test_activity_brackets_each_segment(bursts: Pcm) -> None:
    events = run(Segmenter(AudioSettings(silero_gate=False)), bursts, 480)
    activity = [(e.voiced, e.t) for e in events if isinstance(e, Activity)]
    assert [v for v, _ in activity] == [True, False] * 3
    starts = [t for v, t in activity if v]
    assert starts == pytest.approx([s for s, _ in EXPECTED], abs=2 * FRAME_S)


def test_segment_samples_are_the_input_exactly_preroll_included(bursts: Pcm) -> None:
    settings = AudioSettings(preroll_ms=300)
    for segment in segments(run(Segmenter(settings), bursts, 777)):
        first = segment.first_sample
        assert segment.preroll == 4800
        np.testing.assert_array_equal(segment.samples, bursts[first : first + len(segment.samples)])


def test_ramp_splice_is_continuous_across_the_preroll_boundary() -> None:
    # A ramp (+1 per sample) through the real segmenter, with a hand-written VAD that calls
    # frames 100..199 voiced: any off-by-one at the splice shows as a step other than 1.
    ramp = (np.arange(60000) - 30000).astype(np.int16)
    settings = AudioSettings(frame_ms=20, preroll_ms=250, start_frames=1, start_window=1)
    frame = 320

    def voiced(samples: Pcm) -> bool:
        index = (int(samples[0]) + 30000) // frame  # the ramp value says where the frame is
        return 100 <= index < 150

    found = segments(run(Segmenter(settings, is_voiced=voiced), ramp, 1234))
    assert len(found) == 1
    segment = found[0]
    assert segment.preroll == 4000
    assert segment.start == pytest.approx(100 * frame / 16000)
    assert segment.samples[segment.preroll] == ramp[100 * frame]
    assert set(np.diff(segment.samples.astype(np.int32))) == {1}


def test_chunking_does_not_change_the_result(bursts: Pcm) -> None:
    settings = AudioSettings()

    def summary(block: int) -> list[tuple[str, float]]:
        return [
            (type(e).__name__, round(getattr(e, "t", getattr(e, "end", 0.0)), 4))
            for e in run(Segmenter(settings), bursts, block)
        ]

    assert summary(160) == summary(480) == summary(4096) == summary(len(bursts))


def test_short_blip_is_dropped_as_too_short(clips: Clips) -> None:
    blip = samples_of(clips.tone_bursts([(0.5, 0), (0.08, 440), (1.0, 0)]))
    events = run(Segmenter(AudioSettings(min_segment_ms=150)), blip, 480)
    assert not segments(events)
    assert next(e.reason for e in events if isinstance(e, Dropped)).startswith("too short")


def test_max_length_cuts_a_long_segment(clips: Clips) -> None:
    long_tone = samples_of(clips.tone_bursts([(0.3, 0), (3.0, 300), (0.6, 0)]))
    found = segments(run(Segmenter(AudioSettings(max_segment_ms=1000)), long_tone, 480))
    assert found[0].closed_by == "max_length"
    assert len(found[0].samples) - found[0].preroll == pytest.approx(16000, abs=480)
    assert len(found) >= 2


def test_quiet_frames_under_the_rms_gate_never_start_a_segment(clips: Clips) -> None:
    quiet = (samples_of(clips.tone_bursts(BURSTS)) // 100).astype(np.int16)  # RMS about 116
    assert not segments(run(Segmenter(AudioSettings(rms_gate=200)), quiet, 480))
    assert segments(run(Segmenter(AudioSettings(rms_gate=0, noise_margin_db=0)), quiet, 480))


def test_end_of_stream_closes_an_open_segment(clips: Clips) -> None:
    cut = samples_of(clips.tone_bursts([(0.3, 0), (1.0, 440)]))
    found = segments(run(Segmenter(AudioSettings()), cut, 480))
    assert [s.closed_by for s in found] == ["end_of_stream"]


def test_abort_discards_the_open_segment(bursts: Pcm) -> None:
    segmenter = Segmenter(AudioSettings())
    segmenter.feed(bursts[:16000])  # inside the first burst
    assert segmenter.active
    events = segmenter.abort("muted (speaking)")
    assert [type(e) for e in events] == [Activity, Dropped]
    assert not segmenter.active


@pytest.mark.parametrize("snr_db", [20, 10])
def test_speech_in_steady_noise_is_still_cut_at_the_pauses(clips: Clips, snr_db: int) -> None:
    # webrtcvad alone calls 10 dB SNR pink noise speech and runs one segment to the end; the
    # adaptive noise floor gate keeps the three utterances apart.
    parts = [clips.silence(1.0)]
    for text in ("computer add bread", "put cheese on the left stack", "go to position two"):
        parts += [clips.speech(text), clips.silence(1.0)]
    clean = clips.concat(parts)
    utterances = segments(run(Segmenter(AudioSettings()), samples_of(clean), 480))
    assert len(utterances) == 3
    noisy = clips.mix_at_snr(clean, "pink", snr_db)
    found = segments(run(Segmenter(AudioSettings()), samples_of(noisy), 480))
    # A long utterance may split at a pause (the query frame joins the parts); no segment may
    # run from one utterance into the next.
    assert len(found) >= 3
    for segment in found:
        assert segment.closed_by == "silence"
        assert any(
            u.start - 0.4 <= segment.start and segment.vad.speech_end <= u.vad.speech_end + 0.4
            for u in utterances
        ), segment


def test_noise_floor_follows_the_room_and_ignores_digital_silence() -> None:
    floor = NoiseFloor(window_frames=100)
    assert floor.update(0.0) is None  # muted or padded input tells nothing
    for _ in range(50):
        floor.update(1000.0)  # a machine starts
    for _ in range(10):
        floor.update(0.0)  # the daemon speaks: input muted to zeros
    assert floor.level == pytest.approx(1000.0)
    for _ in range(30):
        floor.update(8000.0)  # someone talks: the floor stays at the machine
    assert floor.level == pytest.approx(1000.0)


def test_a_stretch_of_several_segments_is_recorded_as_one(bursts: Pcm) -> None:
    """From the first segment's start to the second's speech end: pre-roll before, a hangover
    after, the samples as they came in."""
    segmenter = Segmenter(AudioSettings(hangover_ms=300, silero_gate=False))
    first, second, _ = segments(run(segmenter, bursts, 320))
    stretch = segmenter.recorded(first.start, second.vad.speech_end)
    assert stretch is not None and stretch.closed_by == "recorded"
    assert stretch.start == first.start and stretch.preroll == first.preroll
    begin = first.first_sample
    assert np.array_equal(stretch.samples, bursts[begin : begin + len(stretch.samples)])
    assert stretch.end == pytest.approx(second.vad.speech_end + 0.3, abs=0.001)


def test_a_stretch_no_longer_held_is_not_recorded(bursts: Pcm) -> None:
    settings = AudioSettings(hangover_ms=300, max_segment_ms=1500, silero_gate=False)
    segmenter = Segmenter(settings)
    first, *_ = segments(run(segmenter, bursts, 320))
    assert segmenter.recorded(first.start, first.vad.speech_end) is None
    assert segmenter.recorded(4.2, 4.6) is not None
