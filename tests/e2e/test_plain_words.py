"""What the operator hears, from the outside: help with examples from the cell that is loaded,
a controller's refusal without protocol, names without identifiers (the `feedback` events)."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import (
    FAST_CONFIG,
    REPO,
    kinds,
    parse_events,
    standalone_sim,
    voiced,
    voiced_env,
)

PROTOCOL = re.compile(r"\b(ERR|RESUME|HELLO|ACK|SEQ|HALTED|SPEED|mm/s)\b")


def session(tmp: Path, cell: str, lines: str, config: str = "") -> list[dict[str, object]]:
    path = tmp / "config.toml"
    path.write_text(FAST_CONFIG + config, encoding="utf-8")
    proc = subprocess.run(
        voiced("run", "--config", str(path), "--cell", cell, "--text", "-",
               "--controller", "sim", "--events", "-"),
        input=lines, capture_output=True, text=True, env=voiced_env(tmp), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return parse_events(proc.stdout)


def heard(events: list[dict[str, object]]) -> list[str]:
    return [str(e["text"]) for e in kinds(events, "feedback")]


@pytest.mark.parametrize("cell", ["sandwich", "weld", "blocks", "barista"])
def test_help_examples_come_from_the_loaded_cell_and_work_there(tmp_path: Path, cell: str) -> None:
    wake = '[daemon]\nwake_word = "robot"\n'
    [help_text] = heard(session(tmp_path, cell, "what can I say\n", wake))
    examples = re.findall(r'"robot, ([^"]+)"', help_text)
    assert len(examples) == 2, help_text
    assert "computer" not in help_text
    if cell != "sandwich":
        assert "bread" not in help_text
    # Each example, said as the help says it, is a command this cell carries out.
    said = "".join(f"robot, {example}\n\n" for example in examples)
    events = session(tmp_path, cell, said, wake)
    meant = kinds(events, "interpretation")
    assert [m["validated"] for m in meant] == [True, True], heard(events)
    assert kinds(events, "primitive")


def test_a_word_the_cell_does_not_know_is_answered_with_the_cells_own_examples(
    tmp_path: Path,
) -> None:
    """A barista asked for a pumpkin spice frappuccino heard 'Try: "go home"'."""
    [said] = heard(session(tmp_path, "barista", "computer a pumpkin spice frappuccino\n\n"))
    assert said.startswith("I don't know the word 'pumpkin spice'"), said
    assert 'Try: "can I get a medium latte with milk"' in said


def test_help_without_the_wake_word_in_always_listen_mode(tmp_path: Path) -> None:
    said = heard(session(tmp_path, "weld", "always listen\nwhat can I say\n"))
    assert said[-1].startswith('Say a command, for example "go to position 1"'), said


def test_help_after_the_wake_word_gives_the_examples_too(tmp_path: Path) -> None:
    said = heard(session(tmp_path, "weld", "computer what can I say\n"))
    assert len(said) == 1 and 'For example: "go to position 1" or "inspect' in said[0], said


def test_names_are_spoken_as_words_not_identifiers(tmp_path: Path) -> None:
    events = session(tmp_path, "weld", "computer go to position 1\n\ncomputer where are you\n\n"
                     "computer what positions are available\n\n")  # fmt: skip
    said = heard(events)
    assert any(line.endswith("I am at Pos 1.") for line in said), said  # now, or once done
    assert not [line for line in said if "_" in line], said


def test_a_controller_refusal_is_said_in_plain_words(tmp_path: Path) -> None:
    """A controller set up slower than the cell file the daemon was given: it refuses the
    speed; the operator hears what happened, the events keep the controller's words."""
    source = (REPO / "robot" / "cells" / "sandwich.toml").read_text(encoding="utf-8")
    quick = source.replace("max_speed = 500", "max_speed = 900").replace(
        "normal = 250, fast = 500", "normal = 800, fast = 900"
    )
    assert quick != source
    cell = tmp_path / "quick.toml"
    cell.write_text(quick, encoding="utf-8")
    with standalone_sim(tmp_path, 0.02) as sim:
        proc = subprocess.run(
            voiced("run", "--config", str(sim.config), "--cell", str(cell), "--text", "-",
                   "--controller", sim.address, "--events", "-"),
            input="computer add bread\n\n", capture_output=True, text=True,
            env=voiced_env(tmp_path), timeout=120,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    events = parse_events(proc.stdout)
    [refused] = [e for e in kinds(events, "error") if e.get("kind") == "controller"]
    assert refused["error"]["code"] == "SPEED"  # the integrator's record keeps the code
    said = heard(events)
    assert "The controller would not move that fast: it is above the arm's speed limit." in said
    assert not [line for line in said if PROTOCOL.search(line)], said


def test_a_note_that_cannot_be_saved_is_said_without_its_path(tmp_path: Path) -> None:
    (tmp_path / "data" / "notes" / "notes.jsonl").mkdir(parents=True)  # not writable as a file
    said = heard(session(tmp_path, "sandwich", "start dictation\nshelf A3 has bolts\nsave note\n"))
    assert said[-1] == "Could not save the note: Is a directory.", said


def test_an_empty_store_says_so(tmp_path: Path) -> None:
    for command, said in (("notes", "No notes yet."), ("history", "No history yet."),
                          (("queue", "list"), "The queue is empty.")):  # fmt: skip
        args = command if isinstance(command, tuple) else (command,)
        proc = subprocess.run(voiced(*args), capture_output=True, text=True,
                              env=voiced_env(tmp_path), timeout=30)  # fmt: skip
        assert (proc.returncode, proc.stdout.strip()) == (0, said), proc.stderr
    proc = subprocess.run(voiced("notes", "--json"), capture_output=True, text=True,
                          env=voiced_env(tmp_path), timeout=30)  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, "")  # JSON lines: none


def test_every_option_of_every_command_says_what_it_is_for() -> None:
    from voiced.cli import _parser

    def bare(parser: argparse.ArgumentParser, path: str) -> list[str]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += bare(sub, f"{path} {name}")
            elif not action.help and not isinstance(action, argparse._HelpAction):
                found.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
        return found

    assert bare(_parser(), "voiced") == []


def test_an_empty_history_in_json_is_no_lines(tmp_path: Path) -> None:
    proc = subprocess.run(voiced("history", "--json"), capture_output=True, text=True,
                          env=voiced_env(tmp_path), timeout=30)  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, "")


def test_start_over_clears_everything_built_and_says_so(tmp_path: Path) -> None:
    """Cheese on the fixture, tomato on the right stack: "start over" used to ask "I will clear
    the assembly, then go home" and leave the cheese where it was (then read back every zone
    switch: "I will switch to assembly fixture, then clear the assembly, then switch to ...")."""
    events = session(tmp_path, "sandwich", "computer add cheese\n\ncomputer put the tomato on "
                     "the right stack\n\ncomputer start over\n\nyes\n\n")  # fmt: skip
    asked = [said for said in heard(events) if said.endswith("Proceed?")]
    assert asked == ["I will clear what is on the fixture and on the right, then go home. Proceed?"]
    (final,) = kinds(events, "final_state")
    assert final["state"]["zones"] == {"assembly_left": [], "assembly_fixture": [],
                                       "assembly_right": []}  # fmt: skip
    assert final["state"]["active_zone"] == "assembly_fixture", "the zone the cell starts with"


def test_after_start_over_the_next_command_goes_where_the_cell_starts(tmp_path: Path) -> None:
    """After "put the cheese on the left", "start over" left the left zone active: the next
    "add tomato" went on the left."""
    events = session(tmp_path, "sandwich", "computer put cheese on the left\n\ncomputer start "
                     "over\n\nyes\n\ncomputer add tomato\n\n")  # fmt: skip
    asked = [said for said in heard(events) if said.endswith("Proceed?")]
    assert asked == ["I will clear what is on the left, then go home. Proceed?"]
    (final,) = kinds(events, "final_state")
    assert final["state"]["zones"]["assembly_fixture"] == ["tomato"]


@pytest.mark.parametrize(
    "said",
    [
        "computer add bread and tomato. Computer, add meat on the left\n\n",
        # A line apart, within the silence timer: it joined the open query.
        "computer add bread and tomato\ncomputer, add meat on the left\n\n",
    ],
)
def test_a_wake_word_said_again_in_the_same_breath_starts_the_next_command(
    tmp_path: Path, said: str
) -> None:
    """The README's own example: it was refused as "I don't have computer"."""
    events = session(tmp_path, "sandwich", said)
    assert [e["text"] for e in kinds(events, "submit")] == [
        "add bread and tomato",
        "add meat on the left",
    ]
    (final,) = kinds(events, "final_state")
    zones = final["state"]["zones"]
    assert (zones["assembly_fixture"], zones["assembly_left"]) == (["bread", "tomato"], ["meat"])
