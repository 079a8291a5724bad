"""The grammar benchmark runs and writes its JSON (figures are never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_quick_grammar_benchmark_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.grammar_parse", "--quick", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Grammar.parse" in proc.stdout
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["phrasings"] >= 60
    for name in ("parse", "interpret"):
        assert figures[name]["p95_us"] > 0 and figures[name]["samples"] > 0
    assert set(figures["build_ms"]) == {"sandwich", "weld", "blocks"}
