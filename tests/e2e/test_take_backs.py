"""Always listening, words that may take a command back are the operator's to answer, never
the daemon's to guess: a command beside them is asked about with them quoted, and a correction
that holds a command of its own is refused with the one it corrects (the sandwich cell, typed
sessions on the simulator)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.helpers import final_state, kinds, run_text


def asked(events: list[dict[str, object]]) -> list[str]:
    return [
        str(e["text"]) for e in kinds(events, "feedback") if str(e["text"]).startswith("I heard")
    ]


def test_a_dont_between_two_commands_leaves_each_asked_about_on_its_own(tmp_path: Path) -> None:
    """ "add bread" ... "Don't." ... "add cheese" had asked about the bread, then taken "add
    cheese" for a change to its plan ("I will add bread, then add cheese. Proceed?"), and a
    yes made both, the "Don't." no longer quoted."""
    said = ("always listen\n\n"
            "add bread\n"
            "Don't.\n"
            "add cheese\n\n"
            "yes\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "sandwich", said)
    assert proc.returncode == 0, proc.stderr
    assert asked(events) == [
        'I heard "Don\'t." after "add bread". Shall I do it?',
        'I heard "Don\'t." before "add cheese". Shall I do it?',
    ]
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese"]


def test_a_correction_that_holds_a_command_is_refused_with_the_one_it_corrects(
    tmp_path: Path,
) -> None:
    """ "add bread" ... "no, add cheese" had asked 'I heard "no, add cheese" after "add
    bread"', and a yes added the bread the operator had corrected."""
    said = ("always listen\n\n"
            "add bread\n"
            "no, add cheese\n\n"
            "yes\n\n")  # fmt: skip
    events, proc = run_text(tmp_path, "sandwich", said)
    assert proc.returncode == 0, proc.stderr
    assert asked(events) == []
    assert final_state(events)["zones"]["assembly_fixture"] == []
