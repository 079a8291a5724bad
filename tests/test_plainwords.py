"""What the operator hears for a controller's refusal: the arm and what to say, no protocol."""

from __future__ import annotations

import re

import pytest
from voiced.robot.runreport import LineFailure

from voiced.commands.early import CONTINUE
from voiced.errors import ControllerAuthError, ProtocolError, VoicedError
from voiced.words.plain import command_failure, controller_refusal, spoken

PROTOCOL = re.compile(r"\b(ERR|RESUME|HELLO|ACK|DONE|STATE|SEQ|PARSE|HALTED|STOPPED|PROTOCOL)\b")

REFUSALS = [
    # (code, the controller's words as the simulator and the RAPID server send them, heard)
    ("HALTED", "halted by stop: send RESUME",
     "The arm is stopped by a stop, so the command did not finish. Say continue to finish it, "
     "or give a new command."),
    ("HALTED", "halted by heartbeat: send RESUME", "because it stopped hearing from me"),
    ("HALTED", "halted by something new: send RESUME", "The arm is stopped, so the command"),
    ("STOPPED", "interrupted by disconnect", "The controller cut the command short."),
    ("WORKSPACE", "target x = 912.0 mm is outside the workspace (0 to 850 mm)",
     "outside the arm's reach"),
    ("SPEED", "speed 800 mm/s is outside (0, 500] mm/s", "above the arm's speed limit"),
    ("GRIPPER", "opening 140 mm is outside 0 to 110 mm", "would not open the gripper"),
    ("SUPPORT", "bread holds others up", "it holds others up"),
    ("TOOL", "no tool attached", "could not change the tool"),
    ("ROUTINE", "no such routine", "could not run that routine"),
    ("SEQ", "no session: send HELLO first", "did not accept what I sent"),
    ("PARSE", "byte 0xff is not printable ASCII", "did not accept what I sent"),
    ("PROTOCOL", "ACK for a line never sent", "did not accept what I sent"),
    ("NEWCODE", "whatever it is", "did not accept what I sent"),
]  # fmt: skip


@pytest.mark.parametrize(("code", "reason", "heard"), REFUSALS)
def test_a_refusal_in_plain_words(code: str, reason: str, heard: str) -> None:
    said = controller_refusal(LineFailure(0, 7, code, reason))
    assert heard in said
    assert not PROTOCOL.search(said), said
    assert reason not in said


def test_the_word_it_tells_the_operator_to_say_is_one_the_daemon_accepts() -> None:
    said = controller_refusal(LineFailure(0, 7, "HALTED", "halted by stop: send RESUME"))
    word = re.search(r"Say (\w+)", said)
    assert word is not None and word.group(1) in CONTINUE


def test_a_failed_command_keeps_wire_lines_out_of_speech() -> None:
    unreadable = command_failure(ProtocolError("unexpected reply", "7 ERR SEQ bad"))
    assert "ERR" not in unreadable and "7" not in unreadable
    assert "key" in command_failure(ControllerAuthError("wrong key"))
    assert command_failure(VoicedError("the controller link is down")) == (
        "That failed: the controller link is down"
    )


@pytest.mark.parametrize(("text", "heard"), [
    ("I am at Safe_Pos_1.", "I am at Safe Pos 1."),
    ("add_layer: the bread supply is empty", "The bread supply is empty"),
    ("put: pickup_3 is full", "Pickup 3 is full"),  # the barista's counter, one-word composite
    ("Safe_Pos_1: reached", "Safe Pos 1: reached"),
    ("Could not save the note in /var/lib/voiced/notes.jsonl: No space left on device.",
     "Could not save the note: No space left on device."),
    ("Could not save it for later in /var/lib/voiced: unable to open database file.",
     "Could not save it for later: unable to open database file."),
    ("Put it on B1/B2 at 10 mm.", "Put it on B1/B2 at 10 mm."),
    ('Say "save note" to save.', 'Say "save note" to save.'),
    ("_leading and trailing_ stay", "_leading and trailing_ stay"),
])  # fmt: skip
def test_identifiers_are_read_as_words(text: str, heard: str) -> None:
    assert spoken(text) == heard


@pytest.mark.parametrize(
    ("logged", "heard"),
    [("tasks:8000/api answered HTTP 503 Service Unavailable after 3 attempts.",
      "tasks:8000/api did not take it (error 503) after 3 attempts."),
     ("the queue answered HTTP 404 Not Found.", "the queue did not take it (error 404).")],
)  # fmt: skip
def test_a_web_services_status_line_is_said_as_what_happened(logged: str, heard: str) -> None:
    assert spoken(logged) == heard


@pytest.mark.parametrize(
    ("finding", "heard"),
    [
        ("add_layer: target z = 727.5 mm is outside the workspace (-20 to 700 mm)",
         "That would take the arm out of its reach: 727.5 mm high, beyond its limit of 700 mm"),
        ("target x = -30.0 mm is outside the workspace (0 to 850 mm)",
         "That would take the arm out of its reach: -30 mm across, short of its limit of 0 mm"),
        ("set_speed: speed 2000 mm/s is outside (0, 500] mm/s",
         "That is faster than the arm may go: 2000 mm/s, at most 500 mm/s"),
    ],
)  # fmt: skip
def test_a_limit_of_the_arm_is_said_as_what_it_means(finding: str, heard: str) -> None:
    # Spoken as written it was maths ("(0, 500] mm/s") and began in lower case.
    assert spoken(finding) == heard


def test_a_part_still_held_is_answered_with_what_frees_the_gripper() -> None:
    # After a stop mid-pick, "add cheese" heard only "Already holding bread".
    assert spoken("add_layer: already holding bread") == (
        'Already holding bread. Say "put it back" first, or "continue" to finish what was cut short'
    )
