"""Issue 5 through the real daemon: spoken sessions (espeak-ng voices, made at test time) reach
the same final states as their text versions; silence and noise dispatch nothing; the daemon's
own voice in its input is not dispatched."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from voiced.audio.convert import read_audio

from bench.noise import mix
from bench.spoken import _write as write_wav
from bench.spoken import render_session
from tests.audio.clips import HAVE_TOOLS, Clips
from tests.e2e.helpers import fast_config, final_state, parse_events, run_text, voiced, voiced_env

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")

SESSIONS = {
    "sandwich": ["computer add bread", "", "computer put cheese on the left", ""],
    "weld": ["computer weld at position 1 and 2", ""],
    "blocks": ["computer stack the blue cube on the red cube", ""],
}


def run_audio(
    tmp: Path, cell: str, wav: Path, *args: str, config: str = "", real_speed: bool = False
) -> tuple[list[dict[str, Any]], str]:
    """The daemon on `wav`, as fast as it goes; the simulated arm at 50 times its speed unless
    `real_speed`."""
    tmp.mkdir(parents=True, exist_ok=True)
    path = fast_config(tmp, config)
    if real_speed:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("time_scale = 0.02", "time_scale = 1.0"), encoding="utf-8")
    cmd = voiced("run", "--config", str(path), "--cell", cell,
                 "--audio", str(wav), "--fast", "--controller", "sim", "--events", "-",
                 *args)  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=voiced_env(tmp), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return parse_events(proc.stdout), proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("cell", "voice"), [("sandwich", "en-us"), ("sandwich", "en-gb"),
                                            ("weld", "en+f3"), ("blocks", "en-us")])  # fmt: skip
def test_spoken_session_matches_its_text_version(tmp_path: Path, cell: str, voice: str) -> None:
    lines = SESSIONS[cell]
    wav = tmp_path / f"{cell}-{voice}.wav"
    render_session(lines, wav, voice=voice)
    spoken_events, _ = run_audio(tmp_path / "spoken", cell, wav)
    (tmp_path / "text").mkdir()
    text_events, proc = run_text(tmp_path / "text", cell, "\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    heard = [e["text"] for e in spoken_events if e["event"] == "utterance"]
    assert final_state(spoken_events) == final_state(text_events), heard
    # Each phrase carries how loud it was at the microphone (espeak-ng renders near -10 dBFS).
    levels = [e.get("level_db") for e in spoken_events if e["event"] == "utterance"]
    assert levels and all(lv is not None and -30 < lv < 0 for lv in levels), levels


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["silence", "white", "pink", "brown"])
def test_sixty_seconds_of_silence_or_noise_dispatch_nothing(tmp_path: Path, kind: str) -> None:
    clips = Clips(tmp_path / "clips")
    clips.root.mkdir()
    wav = clips.silence(60.0) if kind == "silence" else clips.noise(kind, 60.0, volume=0.3)
    events, _ = run_audio(tmp_path, "sandwich", wav, "--mode", "always")
    assert not [e for e in events if e["event"] in ("utterance", "submit", "primitive")]


@pytest.mark.slow
def test_the_daemons_own_voice_is_not_dispatched(tmp_path: Path) -> None:
    """After "add avocado" the daemon says "I don't have avocado — …", and the room brings
    that sentence back into its input (`--room-echo 0`: as loud as the operator). It keeps
    listening, yet it must not come back as an utterance (always-listen mode, so any words
    would be a command)."""
    wav = tmp_path / "echo.wav"
    render_session(["add avocado", "", "", "", ""], wav)
    events, _ = run_audio(tmp_path, "sandwich", wav, "--mode", "always", "--room-echo", "0")
    heard = [e["text"] for e in events if e["event"] == "utterance"]
    spoken = [e["text"] for e in events if e["event"] == "feedback"]
    assert any("avocado" in text for text in spoken)
    assert len(heard) == 1 and "avocado" in heard[0], heard
    assert not [e for e in events if e["event"] == "barge_in"]


@pytest.mark.slow
def test_stop_while_the_arm_moves_is_spotted_and_stops_it_once(tmp_path: Path) -> None:
    """The stop spotter through the real daemon: the arm moves at real speed (time_scale 1),
    "stop" is heard in the pause after it, the arm stops once, and the segment's full
    transcript is not dispatched as a second stop."""
    wav = tmp_path / "stop.wav"
    render_session(["computer weld at position 1 and 2", "", "stop", ""], wav, pause_s=1.0)
    config = tmp_path / "config.toml"
    config.write_text("[simulator]\ntime_scale = 1.0\n", encoding="utf-8")
    cmd = voiced("run", "--config", str(config), "--cell", "weld", "--audio", str(wav), "--fast",
                 "--controller", "sim", "--events", "-")  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=voiced_env(tmp_path),
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    events = parse_events(proc.stdout)
    spotted = [e for e in events if e["event"] == "spotted"]
    assert len(spotted) == 1 and "stop" in spotted[0]["text"].lower()
    assert spotted[0]["audio_t"] - spotted[0]["speech_end"] < 0.2
    by_operator = [e for e in events
                   if e["event"] == "stopped" and e["reason"].startswith("operator")]  # fmt: skip
    assert len(by_operator) == 1
    # "Stopping." mutes the input, which drops the rest of the segment; were it transcribed
    # all the same, it would be marked and not dispatched (one stop above).
    heard = [e for e in events if e["event"] == "utterance" and "stop" in e["text"].lower()]
    assert all(e.get("spotted") is True for e in heard)


@pytest.mark.slow
def test_the_grammar_picks_the_hypothesis_it_can_read(tmp_path: Path) -> None:
    """The New York voice's "lettuce" is heard as "layer this" by the recogniser's best
    hypothesis; among the beam's others is "add lettuce", which the sandwich grammar reads
    whole, so lettuce goes on the stack. With the re-ranking and the repair turned off the same
    audio is not understood."""
    wav = tmp_path / "lettuce.wav"
    render_session(["computer add lettuce", ""], wav, voice="en-us-nyc", rate=160)
    events, _ = run_audio(tmp_path / "on", "sandwich", wav)
    (heard,) = [e for e in events if e["event"] == "utterance"]
    assert "lettuce" in heard["text"].lower(), heard
    assert "lettuce" in str(final_state(events))
    off = "[stt]\nhypotheses = 1\nrepair = false\n"
    events, _ = run_audio(tmp_path / "off", "sandwich", wav, config=off)
    (plain,) = [e for e in events if e["event"] == "utterance"]
    assert "lettuce" not in plain["text"].lower(), plain
    assert "lettuce" not in str(final_state(events))


KEYWORD_STOP = '[audio]\nstop_engine = "keyword"\n'
"""Only the keyword models spot stops (Whisper's spotter left out)."""


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["pink", "brown"])
def test_stop_in_noise_stops_the_moving_arm_at_once(tmp_path: Path, noise: str) -> None:
    """The keyword stop spotter through the real daemon, the session under noise at 10 dB below
    the speech (pink or brown; in babble the shipped model hears a quarter of the stops:
    README): the arm moves at real speed, "stop" is heard by the keyword model (not by a
    transcription), within a quarter of a second of the end of the word on the audio clock,
    and STOP goes to the controller."""
    wav = tmp_path / "stop.wav"
    said = render_session(["computer weld at position 1 and 2", "", "stop", ""], wav, pause_s=1.0)
    write_wav(wav, mix(read_audio(wav), noise, 10.0, seed=5))
    events, _ = run_audio(tmp_path / "run", "weld", wav, config=KEYWORD_STOP, real_speed=True)
    spotted = [e for e in events if e["event"] == "spotted"]
    assert len(spotted) == 1 and spotted[0]["engine"] == "keyword", spotted
    assert 0.0 <= spotted[0]["audio_t"] - said[-1].speech_end < 0.25
    assert 0.0 < spotted[0]["score"] <= 1.0
    stopped = [e for e in events if e["event"] == "stopped" and e["reason"].startswith("operator")]
    assert len(stopped) == 1
    sent = [e["line"] for e in events if e["event"] == "controller" and e["direction"] == "tx"]
    assert any("STOP" in line.split()[:2] for line in sent), sent


@pytest.mark.slow
def test_a_command_said_in_the_breath_a_spotted_stop_was_in_is_named_not_run(
    tmp_path: Path,
) -> None:
    """The spotter stops the arm on the burst "stop"; the segment goes on ("stop, then go
    home") and is transcribed whole. Nothing in it moves, and what it held is named, as a stop
    in a transcript names the commands said with it (it used to vanish without a word)."""
    wav = tmp_path / "stop.wav"
    render_session(["computer weld at position 1 and 2", "", "stop, then go home", ""], wav,
                   pause_s=1.0)  # fmt: skip
    events, _ = run_audio(tmp_path / "run", "weld", wav, real_speed=True)
    assert len([e for e in events if e["event"] == "spotted"]) == 1
    heard = [e for e in events if e["event"] == "utterance" and "home" in e["text"].lower()]
    assert heard and all(e.get("spotted") is True for e in heard), heard
    dropped = [e for e in events if e["event"] == "dropped"]
    assert [(e["text"].lower(), e["reason"]) for e in dropped] == [("go home", "said with a stop")]
    spoken = [e["text"] for e in events if e["event"] == "feedback"]
    assert "Heard with the stop. I dropped: go home." in spoken, spoken
    stopped_at = next(i for i, e in enumerate(events) if e["event"] == "stopped")
    assert not [e for e in events[stopped_at:] if e["event"] == "primitive"]
