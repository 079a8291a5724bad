"""Issue 16's behaviours through the real daemon and simulator: pause and continue, undo, speed
changes and counting questions, as text sessions (`voiced run --text - --controller sim`)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.helpers import (
    after,
    fast_config,
    final_state,
    kinds,
    parse_events,
    spoken,
    voiced,
    voiced_env,
)

ALWAYS = '[daemon]\nmode = "always"\n'
FIVE = "add bread, meat, cheese, lettuce and tomato"
ALL_FIVE = ["bread", "meat", "cheese", "lettuce", "tomato"]


def session(tmp: Path, cell: str, *lines: str, settings: str = "") -> list[dict[str, Any]]:
    """Each line said, then a pause (a blank line) so it is submitted on its own."""
    tmp.mkdir(exist_ok=True)
    config = fast_config(tmp, ALWAYS + settings)
    cmd = voiced("run", "--config", str(config), "--cell", cell, "--text", "-",
                 "--controller", "sim", "--events", "-")  # fmt: skip
    text = "".join(f"{line}\n\n" for line in lines)
    proc = subprocess.run(cmd, input=text, capture_output=True, text=True, env=voiced_env(tmp),
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return parse_events(proc.stdout)


def fixture(events: list[dict[str, Any]]) -> list[str]:
    stack: list[str] = final_state(events)["zones"]["assembly_fixture"]
    return stack


# -- pause -----------------------------------------------------------------------------------


def test_pause_holds_the_plan_and_continue_asks_then_finishes_it(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", FIVE, "hold on", "continue", "yes")
    (paused,) = kinds(events, "paused")
    assert paused["held"] == [FIVE]
    assert "Paused. Say continue to go on, or stop to drop it." in spoken(events)
    asked = [said for said in spoken(events) if said.startswith("Continue with ")]
    steps = ", then ".join(f"add {item}" for item in ALL_FIVE)
    assert asked == [f"Continue with {steps}?"]
    (resumed,) = kinds(events, "resumed")
    assert resumed["held"] == [FIVE]
    assert [e["why"] for e in kinds(events, "reconciled")][-1] == "paused"
    assert fixture(events) == ALL_FIVE


def history_statuses(tmp: Path) -> dict[str, str]:
    """What the history says became of each thing said (the last row of each text)."""
    from voiced.history import History

    runs = History(tmp / "data" / "history.sqlite3").last(50)
    return {run.operator_input: run.status for run in reversed(runs)}


def test_the_history_keeps_no_pause_that_is_over(tmp_path: Path) -> None:
    """A held command's row ends as the pause ends: completed by "continue", dropped by a
    stop or a new command (it used to stay "paused" for ever)."""
    session(tmp_path / "a", "sandwich", "add meat", "yes", "add bread", "yes", "hold on",
            "continue", "yes", settings='[review]\ncells = ["sandwich"]\n')  # fmt: skip
    statuses = history_statuses(tmp_path / "a")
    assert statuses["add meat"] == statuses["add bread"] == "completed", statuses
    session(tmp_path / "b", "sandwich", FIVE, "hold on", "stop")
    assert history_statuses(tmp_path / "b")[FIVE] == "dropped"
    session(tmp_path / "c", "sandwich", FIVE, "pause", "add tomato")
    statuses = history_statuses(tmp_path / "c")
    assert statuses[FIVE] == "dropped" and statuses["add tomato"] == "completed", statuses


def test_nothing_said_before_a_pause_moves_unless_continue_is_confirmed(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", FIVE, "pause", "add avocado", "continue", "no")
    assert kinds(events, "paused")
    assert not kinds(after(events, "paused"), "primitive")
    assert not kinds(events, "resumed")
    assert len(fixture(events)) < len(ALL_FIVE)
    assert spoken(events)[-1].startswith("Still paused: say continue when you are ready")


def test_continue_keeps_the_order_the_held_commands_were_said_in(tmp_path: Path) -> None:
    """Paused while the first command was about to start and the second queued: the pause
    reaches the first last, yet it runs first ("meat, then bread", not "bread, then meat")."""
    events = session(tmp_path, "sandwich", "add meat", "yes", "add bread", "yes", "hold on",
                     "continue", "yes", settings='[review]\ncells = ["sandwich"]\n')  # fmt: skip
    (paused,) = kinds(events, "paused")
    assert paused["held"] == ["add meat", "add bread"]
    assert fixture(events) == ["meat", "bread"]


def test_stop_after_a_pause_discards_the_rest(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", FIVE, "wait a second", "stop", "continue")
    (stopped,) = kinds(events, "stopped")
    assert FIVE in stopped["dropped"]
    assert not kinds(after(events, "paused"), "primitive")
    assert "There is nothing to continue." in spoken(events)


def test_a_new_command_after_a_pause_drops_what_was_held(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", FIVE, "pause", "add tomato")
    assert any(said.startswith("The pause is over. I dropped: ") for said in spoken(events))
    assert fixture(events)[-1:] == ["tomato"] and len(fixture(events)) < 6
    assert "tomato" not in fixture(events)[:-1] or fixture(events).count("tomato") == 1


def test_a_speed_change_keeps_the_pause_and_the_rest_runs_at_the_new_speed(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", FIVE, "pause", "slow down", "carry on", "yes")
    assert kinds(events, "resumed")
    assert fixture(events) == ALL_FIVE
    lines = [e["line"] for e in after(events, "paused") if e["event"] == "primitive"]
    assert lines and lines[0].endswith("SPEED 100")


def test_pause_in_the_weld_cell_and_nothing_to_pause(tmp_path: Path) -> None:
    events = session(tmp_path, "weld", "pause", "tack weld at pos 1", "hold it", "resume", "yes")
    said = spoken(events)
    assert said[0] == "Nothing is moving."
    assert [e["held"] for e in kinds(events, "paused")] == [["tack weld at pos 1"]]
    assert [run["routine"] for run in final_state(events)["log"]] == ["tack_weld"]


def test_pause_mid_motion_continues_from_the_controllers_report(tmp_path: Path) -> None:
    """At a tenth of real time, so the pause lands while the arm moves."""
    config = tmp_path / "slow.toml"
    config.write_text(ALWAYS + "[simulator]\ntime_scale = 0.1\n", encoding="utf-8")
    cmd = voiced("run", "--config", str(config), "--cell", "sandwich", "--text", "-",
                 "--controller", "sim", "--events", "-")  # fmt: skip
    pipe = subprocess.PIPE
    proc = subprocess.Popen(cmd, stdin=pipe, stdout=pipe, stderr=pipe, text=True,
                            env=voiced_env(tmp_path))  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("add bread, meat and cheese\n\n")
    proc.stdin.flush()
    seen: list[dict[str, Any]] = []
    while not any(e["event"] == "primitive" and e["seq"] >= 12 for e in seen):
        seen.append(json.loads(proc.stdout.readline()))  # into the second layer
    proc.stdin.write("hold on\n\n")
    proc.stdin.flush()
    time.sleep(0.3)
    proc.stdin.write("continue\n\nyes\n\n")
    proc.stdin.close()
    events = seen + parse_events(proc.stdout.read())
    assert proc.wait(timeout=120) == 0
    (paused,) = kinds(events, "paused")
    assert paused["moving"] is True
    reconciled = [e for e in kinds(events, "reconciled") if e["why"] == "paused"]
    assert reconciled and reconciled[0]["status"] == "halted"
    (resumed,) = kinds(events, "resumed")
    assert resumed["steps"][-1] == "add cheese"
    # However far the arm had got, nothing is fetched twice and nothing is lost.
    assert fixture(events) == ["bread", "meat", "cheese"]


# -- undo ------------------------------------------------------------------------------------


def test_undo_in_the_sandwich_cell(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", "add bread", "add cheese on the left", "undo that",
                     "add meat", "take the last one off", "remove the top layer",
                     "undo")  # fmt: skip
    said = spoken(events)
    assert "Undo: Put the cheese back on the cheese supply." in said
    assert "Undo: Put the meat back on the meat supply." in said
    assert "Undo: Put the bread back on the bread supply." in said
    assert said[-1] == "There is nothing I put down that I could take back."
    assert all(not stack for stack in final_state(events)["zones"].values())


def test_undo_in_the_blocks_cell_puts_the_cube_back_where_it_was(tmp_path: Path) -> None:
    events = session(tmp_path, "blocks", "move the red cube to B1", "put that back")
    assert final_state(events)["buffers"]["B1"] is None
    assert "red cube" in final_state(events)["scattered"]


def test_a_weld_cannot_be_undone(tmp_path: Path) -> None:
    events = session(tmp_path, "weld", "tack weld at pos 1", "undo that")
    assert any(said.startswith("A weld cannot be undone") for said in spoken(events))
    assert len(final_state(events)["log"]) == 1


# -- speed and counting ----------------------------------------------------------------------


def test_speed_phrases_send_the_speed_step(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", "go a bit slower", "faster please", "full speed",
                     "faster please", "half speed")  # fmt: skip
    speeds = [e["line"].split()[-1] for e in kinds(events, "primitive") if "SPEED" in e["line"]]
    assert speeds == ["100", "250", "500", "250"]
    assert "I am already at full speed, 500 mm/s." in spoken(events)


def test_a_speed_change_said_while_the_arm_works_comes_after_it(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", FIVE, "slow down")
    assert any("From the next command on" in said for said in spoken(events))
    lines = [e["line"].split()[1] for e in kinds(events, "primitive")]
    assert lines[-1] == "SPEED" and lines.count("SPEED") == 1
    assert fixture(events) == ALL_FIVE


def test_counting_questions_answer_from_the_confirmed_scene(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", "how many slices of bread are left", "add bread",
                     "how many slices of bread are left",
                     "how many layers are on the left")  # fmt: skip
    answers = [e["brief"] for e in kinds(events, "answer")]
    assert answers[0] == "8 slices of bread left in the supply."
    # Asked while the arm may still be adding it: what is there, and what will be.
    assert answers[1] in (
        "7 slices of bread left in the supply.",
        "8 slices of bread left in the supply now; 7 once the arm has finished.",
    )
    assert answers[2] == "No layers on the left."
    assert not [e for e in events if e["event"] == "primitive" and e["correlation_id"] !=
                kinds(events, "interpretation")[0]["correlation_id"]]  # fmt: skip


def test_counting_welds_and_cubes(tmp_path: Path) -> None:
    weld = session(tmp_path / "w", "weld", "how many welds are done")
    blocks = session(tmp_path / "b", "blocks", "how many cubes are on the table")
    assert [e["brief"] for e in kinds(weld, "answer")] == ["No tack welds done."]
    assert [e["brief"] for e in kinds(blocks, "answer")] == ["3 cubes on the table."]


def test_a_second_pause_holds_what_was_said_since_the_first(tmp_path: Path) -> None:
    """ "hold it" while paused still holds a command said before it, even one not yet
    interpreted: nothing said before a pause moves after it."""
    events = session(tmp_path, "sandwich", FIVE, "hold on", "add tomato", "hold it")
    assert len(kinds(events, "paused")) >= 1
    assert not kinds(after(events, "paused"), "primitive")
    assert fixture(events).count("tomato") <= 1  # only FIVE's own, if it got that far


def test_after_a_continue_a_new_pause_names_the_commands_it_holds(tmp_path: Path) -> None:
    events = session(tmp_path, "sandwich", FIVE, "pause", "continue", "yes", "hold on", "stop")
    first, second = kinds(events, "paused")
    assert second["held"] == first["held"] == [FIVE], second
    assert not any("dropped: continue" in said for said in spoken(events))


def test_a_command_already_done_says_so_and_moves_nothing(tmp_path: Path) -> None:
    """ "go to the welder" twice: the second finds the welder held, and the operator hears
    that instead of silence."""
    events = session(tmp_path, "weld", "go to the welder", "go to the welder", "go home",
                     "go home")  # fmt: skip
    said = spoken(events)
    # Said as what holds now, or (the first still running) as what will hold by then.
    assert {"I already hold the Welder.", "I will already hold the Welder by then."} & set(said)
    assert {"I am already home.", "I will already be home by then."} & set(said)
    lines = [e["line"].split()[1] for e in kinds(events, "primitive")]
    assert lines.count("ATTACH") == 1


def test_a_negated_command_moves_nothing_in_any_cell(tmp_path: Path) -> None:
    """From the outside, as an operator types it: nothing is sent to the controller."""
    for cell, said in (("blocks", "computer don't put red on blue"),
                       ("blocks", "computer move the red cube a little to the left"),
                       ("sandwich", "computer add cheese to the back"),
                       ("barista", "computer don't make me a latte")):  # fmt: skip
        events = session(tmp_path / cell, cell, said)
        assert kinds(events, "primitive") == [], (cell, said)
        assert any("act on" in s or "don't have" in s or "distance" in s for s in spoken(events))
