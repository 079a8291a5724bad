"""`--json` on the listing commands: one JSON document on stdout, the shape README documents."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.helpers import voiced, voiced_env
from voiced.paths import DataDir
from voiced.targets import DeferredQueue


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(voiced(*args), capture_output=True, text=True, env=voiced_env(tmp),
                          timeout=60)  # fmt: skip


def test_cells_json_lists_name_and_description(tmp_path: Path) -> None:
    proc = run(tmp_path, "cells", "--json")
    assert proc.returncode == 0
    cells = json.loads(proc.stdout)["cells"]
    assert [cell["name"] for cell in cells] == ["barista", "blocks", "sandwich", "weld"]
    assert all(set(cell) == {"name", "description"} and cell["description"] for cell in cells)


def test_queue_list_json_of_an_empty_queue(tmp_path: Path) -> None:
    proc = run(tmp_path, "queue", "list", "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"items": []}


def test_queue_list_json_in_the_order_said(tmp_path: Path) -> None:
    queue = DeferredQueue(DataDir(tmp_path / "data").queue)
    (tmp_path / "data").mkdir()
    for text in ("add bread", "add cheese", "go home"):
        queue.put(text, correlation_id=None)
    proc = run(tmp_path, "queue", "list", "--json")
    assert proc.returncode == 0
    items = json.loads(proc.stdout)["items"]
    assert [item["text"] for item in items] == ["add bread", "add cheese", "go home"]
    assert set(items[0]) == {
        "id", "text", "created_at", "correlation_id", "status", "attempts", "finished_at", "result"
    }  # fmt: skip
    assert {item["status"] for item in items} == {"pending"}
