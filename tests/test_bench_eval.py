"""The spoken-command benchmark harness (bench/evaluate.py): its pure metrics, and a quick run
through the real daemon as a smoke check. The figures depend on the machine and are never
asserted against the targets (bench/README.md has them); only that they exist and are sane."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_stop_time_counts_only_stops_during_motion() -> None:
    truth = {"utterances": [{"text": "computer add bread", "speech_end": 1.0},
                            {"text": "Stop.", "speech_end": 5.0}]}  # fmt: skip
    stop = {"event": "controller", "direction": "tx", "channel": "control", "line": "STOP"}
    moving = [{"event": "primitive", "t": 3.0}, {**stop, "t": 5.4}]
    assert metrics.stop_times(moving, 0.0, truth) == [pytest.approx(0.4)]
    assert metrics.stop_times([{**stop, "t": 5.4}], 0.0, truth) == []
    done = {"event": "controller", "direction": "rx", "channel": "motion", "line": "1 DONE"}
    finished = [{"event": "primitive", "t": 3.0}, {**done, "t": 4.0}, {**stop, "t": 5.4}]
    assert metrics.stop_times(finished, 0.0, truth) == []  # the arm had already stopped


def test_idle_cpu_is_the_slope_after_the_warm_up() -> None:
    samples = [(0.0, 0.0), (5.0, 2.0), (10.0, 2.1), (15.0, 2.2)]
    assert metrics.idle_cpu_percent(samples, 5.0) == pytest.approx(2.0)
    assert metrics.idle_cpu_percent(samples[:1], 5.0) is None


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")
def test_quick_evaluation_writes_sane_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.evaluate", "--quick", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "spoken-command benchmark" in proc.stdout
    f = json.loads(out.read_text(encoding="utf-8"))
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
