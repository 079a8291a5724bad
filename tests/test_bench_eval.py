"""The spoken-command benchmark harness (bench/evaluate.py): its pure metrics, and a quick run
through the real daemon as a smoke check. The figures depend on the machine and are never
asserted against the targets (bench/README.md has them); only that they exist and are sane."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import daemon_run, metrics
from tests.audio.clips import HAVE_TOOLS

REPO = Path(__file__).resolve().parents[1]


def test_peak_rss_is_the_processs_own_high_water_mark() -> None:
    script = "print(flush=True); import time; time.sleep(5)"
    child = subprocess.Popen([sys.executable, "-c", script],
                             stdout=subprocess.PIPE)  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline()  # it is running Python
        kb = daemon_run.peak_rss_kb(child.pid)
        assert kb is not None and 1_000 < kb < 100_000  # a bare interpreter, not this process
    finally:
        child.kill()
        child.wait()
    assert daemon_run.peak_rss_kb(child.pid) is None


def test_word_error_rate_counts_edits_over_normalised_words() -> None:
    assert metrics.word_errors(
        ["computer go to position two"], ["Computer, go to position 2."]
    ) == (0, 5)
    assert metrics.word_errors(["add bread", "cheese"], ["add bed cheese please"]) == (2, 3)
    assert metrics.edit_distance([], ["a"]) == 1


def test_latency_is_first_primitive_after_submit_minus_end_of_speech() -> None:
    events = [
        {"event": "utterance", "t": 2.6, "audio_t": 2.3, "speech_end": 2.0, "transcribe_s": 0.2},
        {"event": "submit", "t": 4.2, "target": "robot"},
        {"event": "primitive", "t": 4.4},
        {"event": "primitive", "t": 4.5},
    ]
    origin = metrics.audio_origin(events)
    assert origin == pytest.approx(0.1)
    assert metrics.command_latencies(events, origin) == [pytest.approx(2.3)]
    parts = metrics.latency_parts(events, origin)[0]
    assert parts == pytest.approx((0.5, 1.6, 0.2))


STOP_TX = {"event": "controller", "direction": "tx", "channel": "control", "line": "STOP"}
STOP_TRUTH = {"utterances": [
    {"text": "computer add bread", "start": 0.2, "speech_end": 1.0},
    {"text": "Stop.", "start": 4.6, "speech_end": 5.0},
    {"text": "computer go home", "start": 8.0, "speech_end": 9.0},
    {"text": "halt", "start": 12.0, "speech_end": 12.4},
]}  # fmt: skip


def heard_stop(kind: str, cid: str, speech_end: float, t: float) -> list[dict[str, object]]:
    """A stop heard as `kind` ("utterance" or "spotted") and the daemon stopping for it."""
    return [{"event": kind, "t": t, "speech_end": speech_end, "correlation_id": cid,
             "text": "stop"},
            {**STOP_TX, "t": t + 0.01, "correlation_id": cid},
            {"event": "stopped", "t": t + 0.02, "reason": 'operator said "stop"',
             "correlation_id": cid}]  # fmt: skip


def test_stop_time_is_the_stop_sent_for_the_word_while_the_arm_moves() -> None:
    moving = [{"event": "primitive", "t": 3.0}, *heard_stop("spotted", "a", 5.0, 5.3)]
    assert metrics.stop_times(moving, 0.0, STOP_TRUTH) == [pytest.approx(0.31)]
    assert metrics.stop_times(heard_stop("spotted", "a", 5.0, 5.3), 0.0, STOP_TRUTH) == []
    done = {"event": "controller", "direction": "rx", "channel": "motion", "line": "1 DONE"}
    finished = [{"event": "primitive", "t": 3.0}, {**done, "t": 4.0},
                *heard_stop("spotted", "a", 5.0, 5.3)]  # fmt: skip
    assert metrics.stop_times(finished, 0.0, STOP_TRUTH) == []  # the arm had already stopped
    # A STOP sent earlier for something else is not this word's.
    other = [{"event": "primitive", "t": 3.0}, {**STOP_TX, "t": 4.0},
             *heard_stop("utterance", "b", 5.0, 5.6)]  # fmt: skip
    assert metrics.stop_times(other, 0.0, STOP_TRUTH) == [pytest.approx(0.61)]


def test_stops_are_attributed_to_the_lines_that_said_them() -> None:
    events = [
        *heard_stop("spotted", "a", 5.0, 5.1),
        # the same "stop" transcribed later sets off nothing more (it is marked spotted)
        {"event": "utterance", "t": 5.5, "speech_end": 5.0, "correlation_id": "c"},
        *heard_stop("utterance", "d", 9.0, 9.4),
    ]  # a stop heard in "go home": false
    found = metrics.stop_detections(events, STOP_TRUTH)
    assert found == {"said": 2, "heard_stops": 1, "spotted": 1, "missed": 1, "false_stops": 1}


def test_self_triggers_are_what_happens_where_the_operator_said_nothing() -> None:
    truth = {"utterances": [{"text": "computer always listen", "start": 0.5, "speech_end": 1.8},
                            {"text": "add bread", "start": 2.4, "speech_end": 3.0}]}  # fmt: skip
    events = [
        {"event": "utterance", "speech_end": 1.8, "audio_t": 2.1},
        {"event": "barge_in", "audio_t": 2.45},  # the operator talking over the reply
        {"event": "utterance", "speech_end": 3.0, "audio_t": 3.3},
        {"event": "barge_in", "audio_t": 6.0},  # nobody spoke: its own echo
        {"event": "utterance", "speech_end": 6.5, "audio_t": 6.8},  # ditto
        {"event": "feedback"}, {"event": "feedback"},
    ]  # fmt: skip
    assert metrics.self_triggers(events, truth) == {"barge_ins": 1, "phantoms": 1, "stops": 0}
    assert metrics.replies(events) == 2


def test_idle_cpu_is_the_slope_after_the_warm_up() -> None:
    samples = [(0.0, 0.0), (5.0, 2.0), (10.0, 2.1), (15.0, 2.2)]
    assert metrics.idle_cpu_percent(samples, 5.0) == pytest.approx(2.0)
    assert metrics.idle_cpu_percent(samples[:1], 5.0) is None


def quick_run(module: str, title: str, tmp_path: Path, timeout: int) -> dict[str, Any]:
    """`python -m bench.MODULE --quick --json`: it succeeds, prints its report, and the JSON."""
    out = tmp_path / f"{module}.json"
    proc = subprocess.run(
        [sys.executable, "-m", f"bench.{module}", "--quick", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert title in proc.stdout
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


@pytest.mark.slow
@pytest.mark.timeout(300)  # the run itself may take its 240 s on a busy machine
@pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")
def test_quick_evaluation_writes_sane_figures(tmp_path: Path) -> None:
    f = quick_run("evaluate", "spoken-command benchmark", tmp_path, 240)
    assert f["mode"] == "quick" and f["machine"]["cores"] >= 1
    acc = f["accuracy"]["all"]
    assert acc["runs"] >= 3 and 0.0 <= acc["accuracy"] <= 1.0
    assert 0.0 <= f["wer"] <= 2.0
    assert f["latency"]["samples"] >= 1 and f["latency"]["p50_ms"] > 0
    assert f["stop"]["samples"] >= 1 and f["stop"]["p95_ms"] > 0
    assert f["idle_cpu_percent"] is not None and 0.0 <= f["idle_cpu_percent"] <= 200.0
    assert 0 < f["peak_rss_mb"] < 16000
    assert f["rtf"] > 0
    assert f["false_activations"]["audio_min"] >= 0.4
    assert {t["status"] for t in f["targets"]} <= {"MET", "MISSED", "NO DATA"}
    assert not f["failed_runs"]


@pytest.mark.slow
@pytest.mark.timeout(360)  # the run itself may take its 300 s on a busy machine
@pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")
def test_quick_talk_over_run_writes_sane_figures(tmp_path: Path) -> None:
    report = quick_run("talkover", "# Talking over the daemon", tmp_path, 300)
    f, runs = report["figures"], report["runs"]
    assert len(runs) == 2 and f["failed_runs"] == 0
    talk = [r for r in runs if r["kind"] == "command"]
    assert talk and all(r["replies"] >= 1 for r in runs)
    assert f["replies"] == sum(r["replies"] for r in runs)
    assert set(f["self_triggers"]) == {"barge_ins", "phantoms", "stops"}


@pytest.mark.slow
@pytest.mark.timeout(360)  # the run itself may take its 300 s on a busy machine
@pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")
def test_quick_stop_run_writes_sane_figures(tmp_path: Path) -> None:
    report = quick_run("stops", "# Stop in noise", tmp_path, 300)
    assert len(report["stops"]) == 2 and report["talk"] == []
    recall = report["figures"]["recall"]
    assert recall["said"] >= 1 and 0 <= recall["heard"] <= recall["said"]
    assert report["figures"]["failed_runs"] == 0
