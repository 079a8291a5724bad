"""Issue 13 through the real daemon with real audio: it keeps listening while it speaks.

The sessions are espeak-ng voices made at test time; the daemon's replies reach its input as a
loudspeaker in the room would (`--room-echo`, the reply through a simulated room at the
operator's level), so everything here is heard over the daemon's own voice.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.spoken import render_session
from tests.audio.clips import HAVE_TOOLS
from tests.e2e.helpers import FAST_CONFIG, final_state, kinds, parse_events, voiced, voiced_env

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")


WARM_UP = ["computer add avocado", "", "", ""]
"""A long answer first, as at a running cell: the echo canceller has heard the daemon before
(over the first seconds after start-up it is not trusted, and nobody can talk over it)."""


def run_audio(
    tmp: Path, cell: str, wav: Path, *args: str, config: str = FAST_CONFIG, fast: bool = True
) -> tuple[list[dict[str, Any]], str]:
    tmp.mkdir(parents=True, exist_ok=True)
    cfg = tmp / "config.toml"
    cfg.write_text(config, encoding="utf-8")
    cmd = voiced("run", "--config", str(cfg), "--cell", cell, "--audio", str(wav),
                 "--controller", "sim", "--events", "-", "--room-echo", "0", *args)  # fmt: skip
    if fast:
        cmd.append("--fast")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=voiced_env(tmp), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return parse_events(proc.stdout), proc.stderr


def heard(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in kinds(events, "utterance")]


@pytest.mark.slow
def test_a_command_said_over_a_reply_cuts_it_off_and_is_acted_on(tmp_path: Path) -> None:
    # "add bread" starts 0.5 s after "computer always listen", while the daemon says
    # "Always listening." back.
    wav = tmp_path / "over.wav"
    render_session([*WARM_UP, "computer always listen", "add bread", ""], wav, gap_s=0.5)
    events, _ = run_audio(tmp_path / "run", "sandwich", wav)
    (barge,) = kinds(events, "barge_in")
    assert barge["cut"] == ["Always listening."]
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread"], heard(events)


@pytest.mark.slow
def test_yes_said_over_the_question_answers_it(tmp_path: Path) -> None:
    # "start over" is whole at once (it ends on "over", but needs nothing more), so the
    # question is asked and the "yes" said 0.5 s later, over it, answers it: it must not join
    # the command as "start over yes".
    wav = tmp_path / "confirm.wav"
    lines = [*WARM_UP, "computer add bread", "", "", "computer start over", "yes", ""]
    render_session(lines, wav, gap_s=0.5)
    events, _ = run_audio(tmp_path / "run", "sandwich", wav)
    assert [e["text"] for e in kinds(events, "submit")][-1] == "start over", heard(events)
    assert final_state(events)["zones"]["assembly_fixture"] == [], heard(events)
    assert final_state(events)["position"] == "home"


@pytest.mark.slow
def test_its_own_replies_trigger_nothing(tmp_path: Path) -> None:
    questions = ["computer where are you", "computer what positions are available",
                 "computer mode query", "computer which tool are you holding"]  # fmt: skip
    lines = [part for q in questions for part in (q, "", "", "", "")]
    wav = tmp_path / "replies.wav"
    render_session(lines, wav)
    events, _stderr = run_audio(tmp_path / "run", "weld", wav)
    assert len(kinds(events, "feedback")) >= len(questions)
    assert not kinds(events, "barge_in"), "no reply was cut off by its own echo"
    assert not kinds(events, "stopped")
    assert len(heard(events)) == len(questions), heard(events)


@pytest.mark.slow
def test_stop_said_during_a_reply_stops_the_arm_and_the_voice(tmp_path: Path) -> None:
    # The arm moves; the operator asks something (a long answer) and says "stop" into it.
    wav = tmp_path / "stop.wav"
    warm_up = ["computer what positions are available", *[""] * 9]
    lines = [*warm_up, "computer weld at position 1 and 2", "",
             "computer what positions are available", "stop", ""]  # fmt: skip
    render_session(lines, wav, gap_s=0.8, pause_s=1.0)
    real_speed = FAST_CONFIG.replace("time_scale = 0.02", "time_scale = 1.0")
    events, _ = run_audio(tmp_path / "run", "weld", wav, config=real_speed)
    (stopped,) = [e for e in kinds(events, "stopped") if e["reason"].startswith("operator")]
    cut = stopped["silenced"] + [c for b in kinds(events, "barge_in") for c in b["cut"]]
    assert any(text.startswith("The positions are") for text in cut), (cut, heard(events))
    assert stopped["dropped_commands"] == 0
    after = events[events.index(stopped) + 1 :]
    assert not kinds(after, "primitive"), "nothing moves after the stop"


@pytest.mark.slow
def test_fast_and_real_time_pace_give_the_same_result(tmp_path: Path) -> None:
    wav = tmp_path / "over.wav"
    render_session([*WARM_UP, "computer always listen", "add bread", ""], wav, gap_s=0.5)

    def summary(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        keep = ("utterance", "barge_in", "feedback", "submit")
        return [(e["event"], e.get("text"), e.get("audio_t"), tuple(e.get("cut", ())))
                for e in events if e["event"] in keep]  # fmt: skip

    fast, _ = run_audio(tmp_path / "fast", "sandwich", wav)
    paced, _ = run_audio(tmp_path / "paced", "sandwich", wav, fast=False)
    assert summary(fast) == summary(paced)
    assert final_state(fast) == final_state(paced)


@pytest.mark.parametrize(
    ("value", "said"),
    [("nan", "out of range"), ("inf", "out of range"), ("30", "out of range"),
     ("loud", "expected a number of dB")],
)  # fmt: skip
def test_a_room_echo_that_is_no_level_is_refused(tmp_path: Path, value: str, said: str) -> None:
    cmd = voiced("run", "--cell", "sandwich", "--audio", str(tmp_path / "none.wav"),
                 "--controller", "sim", "--room-echo", value)  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=voiced_env(tmp_path), timeout=60)
    assert proc.returncode == 2
    assert "--room-echo" in proc.stderr and said in proc.stderr
    assert "Traceback" not in proc.stderr


def test_room_echo_with_typed_lines_says_why_not(tmp_path: Path) -> None:
    cmd = voiced("run", "--cell", "sandwich", "--text", "-", "--controller", "sim",
                 "--room-echo", "0")  # fmt: skip
    proc = subprocess.run(cmd, input="add bread\n", capture_output=True, text=True,
                          env=voiced_env(tmp_path), timeout=60)  # fmt: skip
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == "voiced: --room-echo: needs --audio FILE or - (typed lines have no sound)"
    )
