"""bench/audio_latency.py runs and writes its JSON. A smoke check only: the figures depend on
the machine and are never asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(300)  # about 60 s on two idle cores; it overran 120 s on a loaded machine
def test_quick_audio_benchmark_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "audio.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.audio_latency", "--quick", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["mode"] == "quick" and figures["utterances"] == 9
    assert figures["model_load_s"] > 0
    for trial in figures["trials"].values():
        assert trial["transcribe_p50_ms"] > 0 and trial["ready_p95_ms"] > 0
    assert "tiny.en" in proc.stdout
