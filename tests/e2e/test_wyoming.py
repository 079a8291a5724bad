"""The daemon in a Wyoming plant, against the real programs: a shared speech server
(wyoming-faster-whisper) that goes away and comes back, and a wyoming-satellite as the
operator's microphone and loudspeaker."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from voiced.audio.settings import TtsSettings
from voiced.audio.tts import EspeakSpeaker

from bench.spoken import speak
from tests.audio.clips import HAVE_TOOLS
from tests.e2e.helpers import (
    final_state,
    kinds,
    notify_socket,
    parse_events,
    statuses,
    voiced,
    voiced_env,
)
from tests.wyomingservers import Satellite, SpeechServer, free_port, satellite, satellite_python

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed"),
]

RATE = 16000
WAIT_S = 60.0
"""Longest wait for the daemon to hear something on a loaded two-core machine."""


def pcm(*parts: str | float, rate: int = 160) -> bytes:
    """Raw s16le 16 kHz: each text spoken by espeak-ng at `rate` words a minute, each number
    that many seconds of silence."""
    pieces = [
        np.zeros(round(part * RATE), dtype=np.int16)
        if isinstance(part, float)
        else speak(part, "en-us", rate)
        for part in parts
    ]
    return np.concatenate(pieces).astype("<i2").tobytes()


def read_events(path: Path) -> list[dict[str, Any]]:
    return parse_events(path.read_text(encoding="utf-8")) if path.exists() else []


def wait_for(
    path: Path, done: Callable[[list[dict[str, Any]]], bool], daemon: subprocess.Popen[bytes]
) -> list[dict[str, Any]]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        events = read_events(path)
        if done(events):
            return events
        assert daemon.poll() is None, "the daemon exited"
        time.sleep(0.1)
    raise AssertionError(f"not seen within {WAIT_S} s: {[e['event'] for e in read_events(path)]}")


def start(tmp: Path, config: str, audio: str, **env: str) -> subprocess.Popen[bytes]:
    cfg = tmp / "config.toml"
    cfg.write_text(config, encoding="utf-8")
    cmd = voiced("run", "--config", str(cfg), "--cell", "sandwich", "--audio", audio,
                 "--controller", "sim", "--events", str(tmp / "events.jsonl"))  # fmt: skip
    return subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=(tmp / "stderr").open("wb"),
        env=voiced_env(tmp, **env),
    )  # fmt: skip


def utterances(n: int) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda events: len(kinds(events, "utterance")) >= n


def test_the_local_model_stands_in_while_the_speech_server_is_gone(tmp_path: Path) -> None:
    server = SpeechServer(tmp_path / "wyoming-data")
    server.start()
    config = f'[stt]\nengine = "wyoming"\nuri = "{server.uri}"\nretry_s = 0.5\n'
    # At 145 tiny.en reads it confidently; at 160 it falls under faster-whisper's -1.0 nats a
    # token, and the server (which keeps the temperature fallback) samples a reading.
    command = pcm(0.3, "computer, go home", 1.5, rate=145)
    events_file = tmp_path / "events.jsonl"
    with notify_socket(tmp_path) as sock:
        daemon = start(tmp_path, config, "-", NOTIFY_SOCKET=str(tmp_path / "notify.sock"))
        assert daemon.stdin is not None
        try:
            daemon.stdin.write(command)
            daemon.stdin.flush()
            wait_for(events_file, utterances(1), daemon)
            server.stop()
            daemon.stdin.write(command)
            daemon.stdin.flush()
            wait_for(events_file, utterances(2), daemon)
            while_gone = statuses(sock)
            server.start()
            time.sleep(1.0)  # past retry_s
            daemon.stdin.write(command)
            daemon.stdin.close()
            assert daemon.wait(timeout=WAIT_S) == 0
        finally:
            server.stop()
            daemon.kill()
        when_back = statuses(sock)
    events = read_events(events_file)
    heard = [e["text"] for e in kinds(events, "utterance")]
    assert len(heard) == 3 and all("go home" in text.lower() for text in heard), heard
    assert len(kinds(events, "primitive")) == 3
    switches = kinds(events, "speech_server")
    assert [(s["up"], s["uri"]) for s in switches] == [(False, server.uri), (True, server.uri)]
    gone = "speech server unusable, local model transcribes"
    assert any(gone in status for status in while_gone), while_gone
    assert when_back and gone not in when_back[-1], when_back
    log = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert log.count("speech server unusable") == 1
    assert log.count("speech server back") == 1


@pytest.fixture
def satellite_py() -> Path:
    python = satellite_python()
    if python is None:
        pytest.skip("no .venv-satellite with wyoming-satellite (`.ci/dev install` makes it)")
    return python


Check = Callable[[list[dict[str, Any]]], bool]


def linked(events: list[dict[str, Any]]) -> bool:
    return bool(kinds(events, "satellite"))


def moving(events: list[dict[str, Any]]) -> bool:
    return bool(kinds(events, "primitive"))


def run_with_satellite(
    tmp: Path, python: Path, said: list[tuple[Check, bytes]], done: Check
) -> tuple[list[dict[str, Any]], Satellite]:
    """The daemon listening to a satellite whose microphone says each clip once its check
    holds on the daemon's events; SIGTERM once `done` holds."""
    raws = [tmp / f"mic-{i}.raw" for i in range(len(said))]
    for raw, (_, clip) in zip(raws, said, strict=True):
        raw.write_bytes(clip)
    events_file = tmp / "events.jsonl"
    with satellite(python, tmp, raws, speaker_rate=22050) as sat:
        daemon = start(tmp, "[simulator]\ntime_scale = 1.0\n", sat.uri)
        try:
            for check, _ in said:
                wait_for(events_file, check, daemon)
                sat.trigger.touch()
            wait_for(events_file, done, daemon)
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=30) == 0
        finally:
            daemon.kill()
    return read_events(events_file), sat


def test_a_satellite_is_the_operators_microphone_and_loudspeaker(
    tmp_path: Path, satellite_py: Path
) -> None:
    clip = pcm(0.5, "computer, go home", 1.5, "computer, where are you", 2.5)
    speaker = tmp_path / "speaker.raw"

    def replied(events: list[dict[str, Any]]) -> bool:
        # The reply was said, and the speaker has played it whole (its file stopped growing).
        return bool(kinds(events, "feedback")) and speaker.exists() and quiet_for(speaker, 0.5)

    events, sat = run_with_satellite(tmp_path, satellite_py, [(linked, clip)], replied)
    assert sat.speaker == speaker
    (link,) = kinds(events, "satellite")
    assert (link["connected"], link["name"]) == (True, "test satellite")
    heard = [e["text"].lower() for e in kinds(events, "utterance")]
    assert "go home" in heard[0] and "where are you" in heard[1], heard
    assert kinds(events, "primitive")[0]["line"].split()[1] == "MOVEJ"
    (reply,) = [e["text"] for e in kinds(events, "feedback")]
    # What the speaker played: the reply, raw 16-bit mono at the satellite's 22.05 kHz.
    played = np.frombuffer(sat.speaker.read_bytes(), dtype="<i2")
    said = EspeakSpeaker(TtsSettings()).synthesize(reply)
    assert abs(len(played) / sat.speaker_rate - len(said) / RATE) < 0.15
    assert np.sqrt(np.mean(played.astype(np.float64) ** 2)) > 300


def quiet_for(path: Path, seconds: float) -> bool:
    """The file has not grown for `seconds` (the reply has been played whole)."""
    return time.time() - path.stat().st_mtime > seconds


def test_stop_said_to_the_satellite_stops_the_arm(tmp_path: Path, satellite_py: Path) -> None:
    # "stop" is said once the arm moves (a command takes about 6 s at real-time speed).
    said = [(linked, pcm(0.5, "computer add bread", 1.0)), (moving, pcm(0.2, "stop", 2.0))]
    events, _ = run_with_satellite(
        tmp_path, satellite_py, said, lambda events: bool(kinds(events, "stopped"))
    )
    (stopped,) = kinds(events, "stopped")
    assert "stop" in stopped["reason"].lower()
    sent = [e["line"] for e in kinds(events, "controller") if e["direction"] == "tx"]
    assert "STOP" in sent
    final = final_state(events)
    assert final["zones"]["assembly_fixture"] == [], "the command ran to its end"


def test_the_daemon_waits_for_its_satellite_and_says_so_once(
    tmp_path: Path, satellite_py: Path
) -> None:
    port = free_port()
    events_file = tmp_path / "events.jsonl"
    raw = tmp_path / "mic.raw"
    raw.write_bytes(pcm(0.1))
    seen: list[str] = []

    def links(n: int) -> Callable[[list[dict[str, Any]]], bool]:
        return lambda events: len(kinds(events, "satellite")) >= n

    with notify_socket(tmp_path) as sock:
        uri = f"wyoming://127.0.0.1:{port}"
        daemon = start(tmp_path, "", uri, NOTIFY_SOCKET=str(tmp_path / "notify.sock"))
        try:
            wait_for(events_file, links(1), daemon)
            time.sleep(1.0)  # a few attempts more, none of them said again
            with satellite(satellite_py, tmp_path, [raw], port=port):
                wait_for(events_file, links(2), daemon)
                seen += statuses(sock)
            wait_for(events_file, links(3), daemon)
            seen += statuses(sock)
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=30) == 0
        finally:
            daemon.kill()
    events = read_events(events_file)
    assert [e["connected"] for e in kinds(events, "satellite")] == [False, True, False]
    down = "satellite not linked, reconnecting"
    # Ready (the satellite is looked for once the daemon listens), not linked, linked, lost.
    marks = [down in status for status in seen]
    assert [mark for i, mark in enumerate(marks) if i == 0 or mark != marks[i - 1]] == [
        False, True, False, True,
    ], seen  # fmt: skip
    log = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert log.count("satellite unreachable; reconnecting") == 1
    assert log.count("satellite link lost; reconnecting") == 1


@pytest.mark.parametrize(
    ("config", "audio", "said"),
    [
        ('[stt]\nengine = "wyoming"\n', "-", 'stt.uri: engine "wyoming" needs the speech server'),
        ('[stt]\nengine = "wyoming"\nuri = "http://x:1"\n', "-", 'expected "tcp://HOST:PORT"'),
        (
            '[stt]\nengine = "wyoming"\nuri = "tcp://x:99999"\n',
            "-",
            "the port 99999 is out of range (1 to 65535)",
        ),
        ("", "wyoming://nohost", '--audio wyoming://nohost: expected "wyoming://HOST:PORT"'),
        ("", "wyoming://h:70000", "--audio wyoming://h:70000: the port 70000 is out of range"),
    ],
)
def test_a_wyoming_address_that_is_not_one_is_named_before_anything_starts(
    tmp_path: Path, config: str, audio: str, said: str
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(config, encoding="utf-8")
    proc = subprocess.run(
        voiced("run", "--config", str(cfg), "--cell", "sandwich", "--audio", audio,
               "--controller", "sim"),
        capture_output=True, text=True, env=voiced_env(tmp_path), timeout=60, input="",
    )  # fmt: skip
    assert proc.returncode != 0
    assert said in proc.stderr
    assert "Traceback" not in proc.stderr
