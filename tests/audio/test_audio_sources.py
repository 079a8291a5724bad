"""Audio sources: file conversion, pacing, raw PCM on stdin, the microphone through a fake
PortAudio module (no device here), and sounddevice staying unimported until a mic is used."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import subprocess
import sys
import threading
import time
import tracemalloc
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from voiced.audio.convert import (
    AudioFileError,
    Resampler,
    audio_blocks,
    peak_level_db,
    read_audio,
)
from voiced.audio.playback import Playback
from voiced.audio.source import (
    AudioChunk,
    MicSource,
    StdinPcmSource,
    WavSource,
    open_source,
    sounddevice_device,
)

from tests.audio.clips import Clips, samples_of


async def drain(source: Any) -> list[AudioChunk]:
    return [chunk async for chunk in source.chunks()]


def contiguous(chunks: list[AudioChunk]) -> np.ndarray:
    position = 0
    for chunk in chunks:
        assert chunk.start == position
        position = chunk.end
    return np.concatenate([c.samples for c in chunks])


def test_44k_stereo_becomes_16k_mono_with_the_same_content(clips: Clips) -> None:
    mono16 = clips.convert(clips.speech("put cheese on the left stack"), 16000, 1)
    stereo44 = clips.convert(mono16, 44100, 2)
    original, converted = samples_of(mono16), read_audio(stereo44)
    assert converted.dtype == np.int16 and converted.ndim == 1
    assert abs(len(converted) - len(original)) <= 16
    n = min(len(original), len(converted))
    correlation = np.corrcoef(original[:n].astype(float), converted[:n].astype(float))[0, 1]
    assert correlation > 0.98


def test_a_stereo_tone_keeps_its_pitch_and_level(tmp_path: Path) -> None:
    path = tmp_path / "tone.wav"
    subprocess.run(
        ["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(path), "synth", "1", "sine",
         "440", "gain", "-6"],
        check=True,
    )  # fmt: skip
    samples = read_audio(path)
    assert len(samples) == 16000
    spectrum = np.abs(np.fft.rfft(samples))
    assert np.argmax(spectrum) * 16000 / len(samples) == pytest.approx(440, abs=2)
    assert np.abs(samples).max() == pytest.approx(32767 / 2, rel=0.02)


def test_the_level_of_speech_is_its_loudest_30_ms() -> None:
    t = np.arange(16000) / 16000
    tone = (0.5 * 32767 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    quiet = (tone // 4).astype(np.int16)  # a quarter of the amplitude: 12 dB down
    said = np.concatenate([np.zeros(8000, np.int16), tone, np.zeros(8000, np.int16)])
    level = peak_level_db(said)
    assert level == pytest.approx(-9.0, abs=0.1)  # a sine's RMS is 3 dB below its peak
    assert level == peak_level_db(tone)  # pauses around it do not lower it
    assert peak_level_db(quiet) == pytest.approx(level - 12.0, abs=0.1)
    assert peak_level_db(np.zeros(100, np.int16)) is None


def test_streaming_resampler_matches_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "tone48.wav"
    subprocess.run(
        ["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", str(path), "synth", "1", "sine", "300"],
        check=True,
    )
    import wave

    with wave.open(str(path)) as wav:
        raw = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.int16)
    resampler = Resampler(48000, 1)
    blocks = [resampler.convert(raw[i : i + 960]) for i in range(0, len(raw), 960)]
    streamed = np.concatenate([*blocks, resampler.flush()])
    np.testing.assert_array_equal(streamed, read_audio(path))


def test_unreadable_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "not-audio.wav"
    bad.write_text("hello")
    with pytest.raises(AudioFileError, match=r"not-audio\.wav"):
        read_audio(bad)


async def test_wav_source_fast_and_paced(clips: Clips) -> None:
    path = clips.silence(1.0)
    loop = asyncio.get_running_loop()
    began = loop.time()
    fast = contiguous(await drain(WavSource(path, realtime=False)))
    fast_wall = loop.time() - began
    began = loop.time()
    paced = contiguous(await drain(WavSource(path, realtime=True, block_ms=50)))
    paced_wall = loop.time() - began
    assert len(fast) == len(paced) == 16000
    assert fast_wall < 0.5
    assert 0.95 <= paced_wall < 1.5


async def test_a_long_file_plays_without_being_held_whole(tmp_path: Path) -> None:
    # Two minutes at 44.1 kHz stereo: 3.84 MB once decoded to 16 kHz mono; held whole (and
    # joined from its parts) it had been twice that at once, on top of the daemon.
    rate, seconds = 44100, 120
    tone = (3000 * np.sin(np.arange(rate * seconds) * 2 * np.pi * 440 / rate)).astype("<i2")
    path = tmp_path / "long.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.repeat(tone, 2).tobytes())
    played, starts = 0, []
    tracemalloc.start()
    try:
        async for chunk in WavSource(path, realtime=False).chunks():
            assert chunk.start == played
            played += len(chunk.samples)
            starts.append(chunk.start)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert abs(played - 16000 * seconds) < 200
    assert all(b - a == 320 for a, b in itertools.pairwise(starts))
    assert peak < 1_000_000, f"{peak} bytes traced while playing a file of 3.84 MB"
    np.testing.assert_array_equal(
        contiguous(await drain(WavSource(path, realtime=False))), read_audio(path)
    )


def _flac(path: Path, samples: np.ndarray) -> None:
    import av

    with av.open(str(path), "w") as out:
        stream = out.add_stream("flac", rate=16000, layout="mono")
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = 16000
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)


async def test_a_file_damaged_part_way_plays_up_to_the_damage_and_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A cut-off download: it opens (the check before the run passes), and its first seconds
    # decode. They are heard, and the run ends there as at the end of a file, with the
    # error named, not in the middle of what it was doing.
    whole = tmp_path / "whole.flac"
    tone = (3000 * np.sin(np.arange(16000 * 8) * 2 * np.pi * 440 / 16000)).astype(np.int16)
    _flac(whole, tone)
    cut = tmp_path / "cut.flac"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(AudioFileError):
        read_audio(cut)
    played = contiguous(await drain(WavSource(cut, realtime=False)))
    readable = 0
    with contextlib.suppress(AudioFileError):
        for block in audio_blocks(cut, seconds=0.1):
            readable += len(block)
    assert 16000 < readable < 16000 * 8
    assert len(played) == readable  # all of it up to the damage, not its last whole second
    np.testing.assert_array_equal(played, tone[: len(played)])
    logged = "".join(capsys.readouterr())
    assert "unreadable from here on" in logged and "cut.flac" in logged
    # Unreadable from its start, it is an error as before.
    bad = tmp_path / "bad.flac"
    bad.write_bytes(whole.read_bytes()[:200])
    with pytest.raises(AudioFileError):
        await drain(WavSource(bad, realtime=False))


async def test_stdin_pcm_from_a_pipe_survives_odd_byte_splits() -> None:
    samples = (np.arange(5000) - 2500).astype("<i2")
    data = samples.tobytes()
    read_fd, write_fd = os.pipe()

    def writer() -> None:
        for i in range(0, len(data), 333):  # odd sizes split samples between reads
            os.write(write_fd, data[i : i + 333])
            time.sleep(0.001)
        os.close(write_fd)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        chunks = await drain(StdinPcmSource(fd=read_fd))
    finally:
        thread.join()
        os.close(read_fd)
    np.testing.assert_array_equal(contiguous(chunks), samples)


async def test_stdin_pcm_from_a_regular_file(tmp_path: Path) -> None:
    samples = np.arange(-3000, 3000).astype("<i2")
    path = tmp_path / "in.raw"
    path.write_bytes(samples.tobytes())
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = await drain(StdinPcmSource(fd=fd))
    finally:
        os.close(fd)
    np.testing.assert_array_equal(contiguous(chunks), samples)


class FakeStatus:
    def __init__(self, overflow: bool) -> None:
        self.input_overflow = overflow

    def __bool__(self) -> bool:
        return self.input_overflow


class FakeInputStream:
    """Calls the callback from its own thread like PortAudio, with 48 kHz sine blocks."""

    def __init__(self, *, samplerate: int, blocksize: int, callback: Any, **_: Any) -> None:
        self.rate, self.blocksize, self.callback = samplerate, blocksize, callback
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set() and n < 200:
            t = (np.arange(self.blocksize) + n * self.blocksize) / self.rate
            block = (8000 * np.sin(2 * np.pi * 300 * t)).astype(np.int16).reshape(-1, 1)
            self.callback(block, self.blocksize, None, FakeStatus(n == 3))
            n += 1
            time.sleep(0.0005)

    def __enter__(self) -> FakeInputStream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class FakeSoundDevice:
    """A device that cannot open at 16 kHz, like many USB microphones."""

    def check_input_settings(self, *, samplerate: int, **_: Any) -> None:
        if samplerate != 48000:
            raise ValueError("Invalid sample rate")

    def query_devices(self, device: object, kind: str) -> dict[str, Any]:
        return {"default_samplerate": 48000.0}

    InputStream = FakeInputStream


async def test_microphone_at_48k_is_resampled_and_overflows_counted() -> None:
    mic = MicSource("USB", block_ms=20, backend=FakeSoundDevice())
    received = 0
    chunks = mic.chunks()
    async for chunk in chunks:
        received += len(chunk.samples)
        assert chunk.start == received - len(chunk.samples)
        if received >= 16000:
            break
    await chunks.aclose()  # type: ignore[attr-defined]
    assert mic.overflows == 1
    assert mic.head_samples >= received - 320


async def test_microphone_queue_turns_the_oldest_into_silence_when_the_listener_falls_behind() -> (
    None
):
    mic = MicSource(queue_seconds=0.1, block_ms=20, backend=FakeSoundDevice())  # 5 blocks
    chunks = mic.chunks()
    first = await anext(chunks)
    await asyncio.sleep(0.6)  # the listener is busy; the device delivers 200 blocks meanwhile
    # (the 48 kHz resampler holds back a few samples of the last block)
    rest = [chunk async for chunk in _until(chunks, 200 * 320 - 100)]
    assert first.start == 0
    assert 190 <= mic.dropped_blocks <= 195  # 200 blocks, at most 5 + the first one kept
    # What was dropped comes back as silence: the audio clock stays the device's clock, so
    # timers and the playback timeline stay where the device is.
    assert mic.head_samples == 200 * 320
    assert rest[-1].end >= 200 * 320 - 100
    silent = sum(len(c.samples) for c in rest if not c.samples.any())
    assert silent >= (mic.dropped_blocks - 2) * 320


async def _until(chunks: Any, end: int) -> Any:
    async for chunk in chunks:
        yield chunk
        if chunk.end >= end:
            break
    await chunks.aclose()


class FakeDuplexDevice:
    """A device that runs at 16 kHz both ways; records what it was told to play."""

    def __init__(self) -> None:
        self.played: list[np.ndarray] = []

    def check_input_settings(self, **_: Any) -> None:
        return None

    def check_output_settings(self, **_: Any) -> None:
        return None

    def Stream(self, *, blocksize: int, callback: Any, **_: Any) -> FakeDuplexStream:
        return FakeDuplexStream(blocksize, callback, self.played)


class FakeDuplexStream:
    """PortAudio's duplex callback from its own thread: a block of input, a block to fill."""

    def __init__(self, blocksize: int, callback: Any, played: list[np.ndarray]) -> None:
        self.blocksize, self.callback, self.played = blocksize, callback, played
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        for n in range(100):
            if self._stop.is_set():
                return
            indata = np.full((self.blocksize, 1), n, dtype=np.int16)
            outdata = np.zeros((self.blocksize, 1), dtype=np.int16)
            self.callback(indata, outdata, self.blocksize, None, FakeStatus(False))
            self.played.append(outdata[:, 0].copy())
            time.sleep(0.0005)

    def __enter__(self) -> FakeDuplexStream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def test_a_duplex_microphone_plays_the_timeline_at_the_positions_it_captures() -> None:
    playback = Playback()
    reply = np.arange(1, 1001, dtype=np.int16)
    playback.schedule("Adding bread.", reply, at=640)  # from the third 20 ms block on
    device = FakeDuplexDevice()
    mic = MicSource(block_ms=20, backend=device, playback=playback)
    got = [chunk async for chunk in _until(mic.chunks(), 100 * 320)]
    played = np.concatenate(device.played)
    assert not played[:640].any()
    np.testing.assert_array_equal(played[640:1640], reply)
    assert not played[1640:].any()
    # What was captured at a position is what the listener gets at that position.
    assert [int(c.samples[0]) for c in got[:3]] == [0, 1, 2]


def test_sounddevice_is_imported_only_when_a_microphone_starts() -> None:
    code = (
        "import sys, voiced.audio.listener, voiced.audio.source, voiced.audio.segmenter;"
        "import voiced.audio.whisper, voiced.audio.tts;"
        "voiced.audio.source.open_source('mic', device='', realtime=True, block_ms=20, "
        "queue_seconds=1.0);"
        "assert 'sounddevice' not in sys.modules, 'sounddevice imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_open_source_picks_by_name(tmp_path: Path) -> None:
    kwargs: dict[str, Any] = {"device": "", "realtime": False, "block_ms": 20,
                              "queue_seconds": 1.0}  # fmt: skip
    assert isinstance(open_source("mic", **kwargs), MicSource)
    assert isinstance(open_source("stdin", **kwargs), StdinPcmSource)
    wav = open_source(str(tmp_path / "x.wav"), **kwargs)
    assert isinstance(wav, WavSource) and wav.realtime is False


@pytest.mark.parametrize(
    ("setting", "expected"),
    [("", None), ("  ", None), ("3", 3), (" 12 ", 12), ("USB", "USB"), ("hw:1,0", "hw:1,0"),
     ("²", "²"), ("-1", "-1")],
)  # fmt: skip
def test_the_device_setting_becomes_what_sounddevice_takes(
    setting: str, expected: str | int | None
) -> None:
    assert sounddevice_device(setting) == expected
    assert MicSource(setting, backend=FakeSoundDevice()).device == expected


def test_open_source_passes_the_device_on_interpreted() -> None:
    kwargs: dict[str, Any] = {"realtime": True, "block_ms": 20, "queue_seconds": 1.0}
    mic = open_source("mic", device="2", **kwargs)
    assert isinstance(mic, MicSource) and mic.device == 2
