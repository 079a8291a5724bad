"""Sentence templates from the outside: `voiced check-config` on a cell's templates, and text
sessions where a template phrasing moves the simulated arm."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import final_state, kinds, run_text, voiced, voiced_env
from tests.robot.test_sentences import bare


def shop_cell(tmp: Path, templates: str) -> Path:
    """The weld cell as an integrator's copy, with `templates` as its `[sentences]`."""
    path = tmp / "shop" / "weld.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(bare("weld") + templates, encoding="utf-8")
    return path


def check_config(tmp: Path, cell: Path) -> subprocess.CompletedProcess[str]:
    config = tmp / "config.toml"
    config.write_text(f'[cell]\nname = "{cell}"\n', encoding="utf-8")
    return subprocess.run(voiced("check-config", str(config)), capture_output=True, text=True,
                          env=voiced_env(tmp), timeout=60)  # fmt: skip


BAD = [
    ("syntax", '[sentences.intents.attach_tool]\nsentences = ["mount (the {tool}"]\n',
     2, "attach_tool.sentences[0]: sentence 'mount (the {tool}': template syntax error"),
    ("not a composite", '[sentences.intents.weld_everything]\nsentences = ["weld it all"]\n',
     1, "sentences.intents.weld_everything: 'weld_everything' is not a composite"),
    ("slot not a parameter",
     '[sentences.intents.release_tool]\nsentences = ["stow the {tool:gadget}"]\n',
     2, "sentence 'stow the {tool:gadget}': slot 'gadget' is not a parameter of release_tool"),
    ("list value unknown",
     '[sentences.lists.seam]\nvalues = [{ in = "the last seam", out = "Pos_7" }]\n'
     '[sentences.intents.move_to_position]\nsentences = ["go to {seam:position}"]\n',
     4, "sentence 'go to {seam:position}'"),
    ("fixed slot value unknown",
     '[[sentences.intents.run_routine_at]]\nsentences = ["braze {position}"]\n'
     'slots = { routine = "braze" }\n',
     3, "run_routine_at[0].slots.routine: 'braze' is not a routine this cell knows"),
    ("stop word", '[sentences.intents.move_to_position]\nsentences = ["halt at {position}"]\n',
     2, "sentence 'halt at {position}' holds the stop word 'halt'"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "templates", "line", "says"), BAD, ids=[b[0] for b in BAD])
def test_check_config_names_file_line_and_sentence_of_a_bad_template(
    tmp_path: Path, case: str, templates: str, line: int, says: str
) -> None:
    cell = shop_cell(tmp_path, templates)
    proc = check_config(tmp_path, cell)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [problem] = proc.stdout.strip().splitlines()
    assert problem.startswith(f"{cell}:{bare('weld').count(chr(10)) + line}: "), problem
    assert says in problem, problem


def test_check_config_accepts_good_templates(tmp_path: Path) -> None:
    cell = shop_cell(
        tmp_path, '[sentences.intents.attach_tool]\nsentences = ["mount the {tool}"]\n'
    )
    proc = check_config(tmp_path, cell)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("OK")


def test_a_template_phrasing_moves_the_arm(tmp_path: Path) -> None:
    """The weld cell's own templates: "tack the second seam" is this shop's word for a tack
    weld at Pos_2; the welder is fetched on the way, as for any tack weld."""
    events, proc = run_text(tmp_path, "weld", "computer tack the second seam\n\n")
    assert proc.returncode == 0, proc.stderr
    [meant] = kinds(events, "interpretation")
    assert meant["source"] == "template"
    state = final_state(events)
    assert state["log"] == [{"routine": "tack_weld", "position": "Pos_2"}]
    assert state["tool"] == "Welder"


def test_a_template_phrasing_builds_on_the_sandwich(tmp_path: Path) -> None:
    events, proc = run_text(
        tmp_path,
        "sandwich",
        "computer build on the left one\n\ncomputer slap some cheese on top\n\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert [e["source"] for e in kinds(events, "interpretation")] == ["template", "template"]
    assert final_state(events)["zones"]["assembly_left"] == ["cheese"]


def test_a_bad_template_is_reported_and_the_daemon_runs_on_the_others(tmp_path: Path) -> None:
    templates = (
        '[sentences.intents.fly]\nsentences = ["fly"]\n'
        '[sentences.intents.attach_tool]\nsentences = ["gear up with the {tool}"]\n'
    )
    cell = shop_cell(tmp_path, templates)
    said = "computer gear up with the camera\n\ncomputer go to position 2\n\n"
    events, proc = run_text(tmp_path, str(cell), said)
    assert proc.returncode == 0, proc.stderr
    [failure] = [e for e in kinds(events, "error") if e["kind"] == "sentences"]
    assert failure["error"].startswith(f"{cell}:") and "sentences.intents.fly" in failure["error"]
    # Only the wrong template is left out (one typo used to take every template with it):
    # "gear up with" is still the integrator's, and the grammar knows the rest.
    sources = [e["source"] for e in kinds(events, "interpretation") if e["sequence"]]
    assert sources == ["template", "grammar"]
    assert final_state(events)["tool"] == "Camera"


def test_a_stop_word_in_a_template_still_stops(tmp_path: Path) -> None:
    """The stop rule hears "halt" before any template: the integrator cannot take it."""
    cell = shop_cell(tmp_path, '[sentences.intents.move_to_position]\n'
                               'sentences = ["halt at {position}"]\n')  # fmt: skip
    events, proc = run_text(tmp_path, str(cell), "computer halt at position 2\n\n")
    assert proc.returncode == 0, proc.stderr
    assert kinds(events, "stopped")
    assert kinds(events, "interpretation") == [] and kinds(events, "primitive") == []


def interpret(tmp: Path, cell: str, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(voiced("interpret", "--cell", cell, text), capture_output=True,
                          text=True, env=voiced_env(tmp), timeout=60)  # fmt: skip


def test_interpret_reads_a_template_phrasing(tmp_path: Path) -> None:
    proc = interpret(tmp_path, "blocks", "park the red cube in the spare spot")
    assert proc.returncode == 0, proc.stderr
    meant = json.loads(proc.stdout)
    assert meant["source"] == "template"
    assert meant["sequence"] == [
        {"instruction": "move_object", "params": {"object": "red cube", "to": "B1"}}
    ]


def test_interpret_warns_of_bad_templates_and_goes_on_without_them(tmp_path: Path) -> None:
    cell = shop_cell(tmp_path, '[sentences.intents.fly]\nsentences = ["fly"]\n')
    proc = interpret(tmp_path, str(cell), "go to position 2")
    assert proc.returncode == 0, proc.stderr
    assert f"sentence template left out: {cell}:" in proc.stderr
    assert json.loads(proc.stdout)["source"] == "grammar"
