"""The README's main job: `voiced demo` listens to the bundled recording and builds the
sandwich on the simulated GoFa."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import voiced, voiced_env


@pytest.mark.slow
@pytest.mark.parametrize("typed", [False, True], ids=["recording", "text"])
def test_demo_builds_the_sandwich(tmp_path: Path, typed: bool) -> None:
    proc = subprocess.run(
        voiced("demo", *(["--text"] if typed else []), "--events", str(tmp_path / "ev.jsonl")),
        capture_output=True, text=True, env=voiced_env(tmp_path), timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "final scene:" in proc.stdout
    events = [json.loads(line) for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    final = next(e for e in events if e["event"] == "final_state")["state"]
    assert final["zones"]["assembly_fixture"] == ["bread", "cheese", "tomato"]
    assert final["zones"]["assembly_left"] == ["meat"]
    assert final["position"] == "home"
    said = [e["text"] for e in events if e["event"] == "feedback"]
    assert any("avocado" in s for s in said)
