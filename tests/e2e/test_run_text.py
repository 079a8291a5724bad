"""The end-to-end text path: typed utterances drive the simulated GoFa over real TCP."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import (
    FAST_CONFIG,
    REPO,
    fast_config,
    final_state,
    next_event,
    parse_events,
    run_text,
    spawn_text_daemon,
    voiced,
    voiced_env,
)


@pytest.mark.slow
def test_acceptance_command_at_default_settings(tmp_path: Path) -> None:
    """The issue's literal command, default config (real-time simulated motion)."""
    proc = subprocess.run(
        "printf 'computer add bread\\n\\n' | "
        + " ".join(
            voiced(
                "run", "--cell", "sandwich", "--text", "-", "--controller", "sim", "--events", "-"
            )
        ),
        shell=True,
        capture_output=True,
        text=True,
        env=voiced_env(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    events = parse_events(proc.stdout)
    assert events[-1]["event"] == "final_state"
    assert events[-1]["state"]["zones"]["assembly_fixture"] == ["bread"]


def test_events_tell_the_whole_story(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add bread\n\n")
    assert proc.returncode == 0, proc.stderr
    kinds = [e["event"] for e in events]
    for kind in ("utterance", "frame", "interpretation", "primitive", "final_state"):
        assert kind in kinds, kind
    assert all("t" in e and e["t"] >= 0 for e in events)
    interp = next(e for e in events if e["event"] == "interpretation")
    assert interp["source"] == "grammar"
    assert interp["sequence"] == [{"instruction": "add_layer", "params": {"item": "bread"}}]
    assert interp["correlation_id"]
    primitives = [e for e in events if e["event"] == "primitive"]
    assert [p["seq"] for p in primitives] == list(range(1, len(primitives) + 1))
    assert all(len(p["line"]) < 80 for p in primitives)
    replies = [e["line"] for e in events if e["event"] == "controller" and e["direction"] == "rx"]
    assert {f"{p['seq']} DONE" for p in primitives} <= set(replies)


def test_end_of_input_submits_what_is_pending(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add cheese")
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese"]


def test_a_question_asked_at_end_of_input_times_out_instead_of_hanging(tmp_path: Path) -> None:
    # The last query is sent when the input ends, and the question it asks starts its timer
    # only then: the daemon must still run it out and exit.
    session = "computer add bread\n\ncomputer start over"
    events, proc = run_text(tmp_path, "sandwich", session, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [e["answer"] for e in events if e["event"] == "confirmation"] == ["timeout"]


def test_continue_with_nothing_cut_short_says_so_and_moves_nothing(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add bread\n\ncomputer continue\n\n")
    assert proc.returncode == 0, proc.stderr
    said = [e["text"] for e in events if e["event"] == "feedback"]
    assert "There is nothing to continue." in said
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread"]


@pytest.mark.parametrize(
    ("said", "submitted", "fixture"),
    [
        ("computer add bread, cancel\n\n", [], []),  # ran "add bread, then go home"
        ("computer add bread, go\n\n", ["add bread"], ["bread"]),  # "Go where?"
        ("computer add bread. Done.\n\n", ["add bread"], ["bread"]),  # "I don't have done"
    ],
)
def test_cancel_or_send_said_after_a_command_in_one_breath(
    tmp_path: Path, said: str, submitted: list[str], fixture: list[str]
) -> None:
    events, proc = run_text(tmp_path, "sandwich", said)
    assert proc.returncode == 0, proc.stderr
    assert [e["text"] for e in events if e["event"] == "submit"] == submitted
    assert final_state(events)["zones"]["assembly_fixture"] == fixture


def test_the_answer_to_go_where_finishes_the_command(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "weld", "computer go to\n\nposition 2\n\n")
    assert proc.returncode == 0, proc.stderr
    assert [e["text"] for e in events if e["event"] == "submit"] == ["go to", "go to position 2"]
    assert final_state(events)["position"] == "Pos_2"


def test_a_new_command_or_cancel_after_put_what_is_not_taken_for_what_to_put(
    tmp_path: Path,
) -> None:
    """'computer go home' became 'put go home', and 'cancel' 'put cancel'."""
    session = "computer put\n\ncomputer go home\n\ncomputer put\n\ncancel\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert [e["text"] for e in events if e["event"] == "submit"] == ["put", "go home", "put"]
    assert [e["text"] for e in events if e["event"] == "feedback"][-1] == "Cancelled."


@pytest.mark.parametrize("answer", ["cheese", "the cheese", "computer cheese", "put the cheese"])
def test_the_answer_to_put_what_finishes_the_command(tmp_path: Path, answer: str) -> None:
    events, proc = run_text(tmp_path, "sandwich", f"computer put\n\n{answer}\n\n")
    assert proc.returncode == 0, proc.stderr
    said = [e["text"] for e in events if e["event"] == "feedback"]
    assert any(s.startswith("Put what?") for s in said), said
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese"]


def test_several_commands_build_a_sandwich_across_zones(tmp_path: Path) -> None:
    session = "computer add bread\ncheese and tomato\n\ncomputer put meat on the left\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    state = final_state(events)
    assert state["zones"]["assembly_fixture"] == ["bread", "cheese", "tomato"]
    assert state["zones"]["assembly_left"] == ["meat"]
    assert state["active_zone"] == "assembly_left"
    assert state["holding"] is None


def test_without_wake_word_nothing_moves(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "add bread\n\n")
    assert proc.returncode == 0, proc.stderr
    assert not [e for e in events if e["event"] == "primitive"]
    assert final_state(events)["zones"]["assembly_fixture"] == []


def test_always_mode_needs_no_wake_word(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "add bread\n\n", "--mode", "always")
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread"]


def test_unknown_item_is_spoken_and_nothing_moves(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add avocado\n\n")
    assert proc.returncode == 0, proc.stderr
    feedback = [e["text"] for e in events if e["event"] == "feedback"]
    assert any("avocado" in text and "bread" in text for text in feedback), feedback
    assert not [e for e in events if e["event"] == "primitive"]


def test_cancel_before_submit_moves_nothing(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add bread\ncancel\n\n")
    assert proc.returncode == 0, proc.stderr
    assert not [e for e in events if e["event"] == "primitive"]


def test_weld_cell_moves_to_a_position(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "weld", "computer go to position 2\n\n")
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["position"] == "Pos_2"


def test_blocks_cell_reports_its_arrangement(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "blocks", "computer go home\n\n")
    assert proc.returncode == 0, proc.stderr
    state = final_state(events)
    assert set(state) == {"arrangement", "scattered", "buffers", "holding"}
    assert state["buffers"] == {"B1": None, "B2": None, "B3": None}


def test_scene_file_sets_the_starting_scene(tmp_path: Path) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text('{"zones": {"assembly_fixture": ["bread"]}}', encoding="utf-8")
    events, proc = run_text(tmp_path, "sandwich", "computer add cheese\n\n", "--scene", str(scene))
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread", "cheese"]


def test_scene_is_persisted_in_the_data_dir(tmp_path: Path) -> None:
    _, proc = run_text(tmp_path, "sandwich", "computer add bread\n\n")
    assert proc.returncode == 0, proc.stderr
    (saved,) = (tmp_path / "data").glob("scene-sandwich@sim_sandwich_*.json")  # per controller
    assert '"assembly_fixture": [\n      "bread"' in saved.read_text(encoding="utf-8")
    assert list((tmp_path / "data" / "traces").glob("tcp_commands-*.json"))


def test_cell_and_scene_paths_in_a_config_file_are_relative_to_it(tmp_path: Path) -> None:
    conf_dir = tmp_path / "etc"
    conf_dir.mkdir()
    (conf_dir / "mycell.toml").write_text(
        (REPO / "robot" / "cells" / "sandwich.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (conf_dir / "start.json").write_text('{"zones": {"assembly_right": ["meat"]}}', "utf-8")
    config = conf_dir / "voiced.toml"
    config.write_text(
        FAST_CONFIG + '[cell]\nname = "mycell.toml"\nscene = "start.json"\n', encoding="utf-8"
    )
    proc = subprocess.run(
        voiced("run", "--config", str(config), "--text", "-", "--events", "-"),
        input="computer add bread\n\n", capture_output=True, text=True, cwd=tmp_path,
        env=voiced_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    state = final_state(parse_events(proc.stdout))
    assert state["zones"]["assembly_right"] == ["meat"]
    assert state["zones"]["assembly_fixture"] == ["bread"]


def test_a_new_command_after_stop_runs(tmp_path: Path) -> None:
    """STOP halts the controller; the operator's next command resumes it (the stopped plan does
    not come back)."""
    session = "computer add bread\n\nstop\n\ncomputer put it back\n\ncomputer add cheese\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert any(e["event"] == "stopped" for e in events)
    errors = [e for e in events if e["event"] == "error"]
    assert not errors, errors
    state = final_state(events)
    assert state["zones"]["assembly_fixture"][-1] == "cheese"
    assert state["holding"] is None


def test_stop_drops_the_query_being_spoken(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer add bread\nstop\n\n")
    assert proc.returncode == 0, proc.stderr
    assert not [e for e in events if e["event"] == "primitive"]
    assert not [e for e in events if e["event"] == "submit"]


def _moved(events: list[dict[str, object]]) -> bool:
    return any(e["event"] == "primitive" for e in events)


def test_confirm_yes_runs_the_plan(tmp_path: Path) -> None:
    session = "computer add bread\n\ncomputer start over\n\nyes\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    said = [e["text"] for e in events if e["event"] == "feedback"]
    assert any(s.endswith("Proceed?") for s in said), said
    assert final_state(events)["zones"]["assembly_fixture"] == []
    assert [e["answer"] for e in events if e["event"] == "confirmation"] == ["yes"]


def test_confirm_no_discards_the_plan(tmp_path: Path) -> None:
    session = "computer add bread\n\ncomputer start over\n\nno\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread"]
    assert [e["answer"] for e in events if e["event"] == "confirmation"] == ["no"]


def test_confirm_timeout_discards_with_a_spoken_notice(tmp_path: Path) -> None:
    session = "computer add bread\n\ncomputer start over\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert [e["answer"] for e in events if e["event"] == "confirmation"] == ["timeout"]
    assert any("did not" in e["text"] for e in events if e["event"] == "feedback")
    assert final_state(events)["zones"]["assembly_fixture"] == ["bread"]


async def test_typed_live_enter_sends_and_lines_typed_apart_are_separate_commands(
    tmp_path: Path,
) -> None:
    """`voiced run --text -` at a terminal: a line was submitted only at the end of input, and
    lines typed seconds apart ran together into one command."""
    proc = await spawn_text_daemon(fast_config(tmp_path), voiced_env(tmp_path))
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"computer add bread\n")  # no blank line: the pause is real
        await proc.stdin.drain()
        first, _ = await next_event(proc, "submit")
        proc.stdin.write(b"computer add cheese\n")
        await proc.stdin.drain()
        second, _ = await next_event(proc, "submit")
    finally:
        proc.stdin.close()
    await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0
    assert (first["text"], second["text"]) == ("add bread", "add cheese")
