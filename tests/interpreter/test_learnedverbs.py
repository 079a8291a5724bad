"""The learned-verbs file: saved atomically, merged with other cells' verbs, never overwritten
when it is not ours to read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voiced.interpreter.learnedverbs import LearnedVerbs


def test_saved_verbs_come_back_per_cell(tmp_path: Path) -> None:
    path = tmp_path / "learned_verbs.json"
    LearnedVerbs(path, "sandwich").save("slap", "add_layer")
    LearnedVerbs(path, "weld").save("zap", "weld_seam")
    assert LearnedVerbs(path, "sandwich").load() == {"slap": "add_layer"}
    assert LearnedVerbs(path, "weld").load() == {"zap": "weld_seam"}
    assert [p.name for p in tmp_path.iterdir()] == ["learned_verbs.json"]  # no temp file left


def test_a_verb_another_process_saved_meanwhile_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "learned_verbs.json"
    mine, theirs = LearnedVerbs(path, "sandwich"), LearnedVerbs(path, "sandwich")
    assert mine.load() == theirs.load() == {}
    theirs.save("plonk", "add_layer")
    mine.save("slap", "add_layer")
    assert LearnedVerbs(path, "sandwich").load() == {"plonk": "add_layer", "slap": "add_layer"}


@pytest.mark.parametrize(
    "spoiled",
    [
        b"\xff\xfe not text",
        b'{"learned_verbs": {"sandwich": {"slap": ',
        b"[1, 2]",
        b'{"learned_verbs": {"sandwich": {"slap": 3}}}',
    ],
)
def test_a_spoiled_file_is_moved_aside_not_overwritten(tmp_path: Path, spoiled: bytes) -> None:
    path = tmp_path / "learned_verbs.json"
    path.write_bytes(spoiled)
    verbs = LearnedVerbs(path, "sandwich")
    assert verbs.load() == {}
    (aside,) = tmp_path.glob("learned_verbs.json.corrupt-*")
    assert aside.read_bytes() == spoiled
    assert verbs.problem is not None and aside.name in verbs.problem
    verbs.save("slap", "add_layer")  # learning goes on, in a new file
    assert json.loads(path.read_text("utf-8"))["learned_verbs"] == {
        "sandwich": {"slap": "add_layer"}
    }
    assert aside.read_bytes() == spoiled


def test_a_file_spoiled_while_running_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "learned_verbs.json"
    verbs = LearnedVerbs(path, "sandwich")
    verbs.save("slap", "add_layer")
    path.write_bytes(b"{ torn")
    with pytest.raises(ValueError, match="not JSON"):
        verbs.save("plonk", "add_layer")
    assert path.read_bytes() == b"{ torn"


def test_an_unreadable_file_is_neither_used_nor_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "learned_verbs.json"
    path.mkdir()  # reading it fails with an OSError, as a file without permission would
    verbs = LearnedVerbs(path, "sandwich")
    assert verbs.load() == {}
    assert verbs.problem is not None and "cannot read" in verbs.problem
    with pytest.raises(OSError, match="not overwriting"):
        verbs.save("slap", "add_layer")
    assert path.is_dir()
