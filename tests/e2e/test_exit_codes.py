"""Exit codes a script can branch on: `voiced interpret` and `voiced replay` say with their
exit status whether the command was carried out (README, "Exit codes")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import fast_config, kinds, parse_events, run_text, voiced, voiced_env

NOT_DONE = 3

INTERPRETED = [
    ("understood and valid", "add bread", 0, True),
    ("not understood", "put tomato on the moon", NOT_DONE, False),
    ("refused: the cell lacks it", "add avocado", NOT_DONE, False),
    ("fails validation", "add 40 slices of bread", NOT_DONE, False),
]


@pytest.mark.parametrize(("case", "text", "code", "valid"), INTERPRETED,
                         ids=[i[0] for i in INTERPRETED])  # fmt: skip
def test_interpret_exit_code(tmp_path: Path, case: str, text: str, code: int, valid: bool) -> None:
    proc = subprocess.run(voiced("interpret", text), capture_output=True, text=True,
                          env=voiced_env(tmp_path), timeout=60)  # fmt: skip
    assert proc.returncode == code, proc.stderr
    assert json.loads(proc.stdout)["validated"] is valid  # the JSON is printed either way


AS_THE_DAEMON = [
    ("hold on", 0, {"behaviour": "pause"}),
    ("how many tomatoes are left", 0, {"topic": "count",
                                       "answer": "8 layers of tomato left in the supply."}),
    ("go a bit slower", 0, {"sequence": [{"instruction": "set_speed",
                                          "params": {"speed": "slow"}}]}),
    ("undo that", NOT_DONE, {"sequence": [], "validated": False}),
    # Not the grammar's reading: nothing is paused or cut short, as the daemon would say.
    ("continue", NOT_DONE, {"behaviour": "continue", "said": "There is nothing to continue."}),
    ("What can I say?", 0, {"behaviour": "help", "said": (
        'Say "computer" and a command, for example "computer, add bread and meat" or '
        '"computer, put tomato on the left". You can also say "always listen", "wake word mode", '
        '"mode query", "switch voice", "start dictation" or "stop".')}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "code", "shown"), AS_THE_DAEMON,
                         ids=[i[0] for i in AS_THE_DAEMON])  # fmt: skip
def test_interpret_does_what_the_daemon_does(
    tmp_path: Path, text: str, code: int, shown: dict[str, object]
) -> None:
    """A pause word pauses (not the grammar's wait step), a question is answered, a speed
    change steps between profiles, an undo in a fresh scene has nothing to take back (not the
    grammar's "put back what is held")."""
    proc = subprocess.run(voiced("interpret", text), capture_output=True, text=True,
                          env=voiced_env(tmp_path), timeout=60)  # fmt: skip
    assert proc.returncode == code, proc.stderr
    printed = json.loads(proc.stdout)
    assert {key: printed.get(key) for key in shown} == shown


def replay(tmp: Path, run_id: str, cell: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        voiced("replay", run_id, "--config", str(fast_config(tmp)), "--cell", cell,
               "--controller", "sim", "--events", "-"),
        capture_output=True, text=True, env=voiced_env(tmp), timeout=120,
    )  # fmt: skip


def test_replay_of_an_unknown_id_starts_nothing_and_exits_1(tmp_path: Path) -> None:
    proc = replay(tmp_path, "deadbeef", "sandwich")
    assert proc.returncode == 1
    assert proc.stdout == "", "no daemon was started"
    assert proc.stderr.strip().splitlines()[-1] == (
        "voiced: run deadbeef: no run in the history matches it; `voiced history` lists them"
    )


def test_replay_that_completes_exits_0_and_one_that_is_refused_exits_3(tmp_path: Path) -> None:
    _, first = run_text(tmp_path, "sandwich", "computer add cheese\n\n")
    assert first.returncode == 0, first.stderr
    listed = subprocess.run(voiced("history", "--json"), capture_output=True, text=True,
                            env=voiced_env(tmp_path), timeout=60)  # fmt: skip
    run_id = json.loads(listed.stdout.splitlines()[0])["run_id"][:8]

    done = replay(tmp_path, run_id, "sandwich")
    assert done.returncode == 0, done.stderr
    assert kinds(parse_events(done.stdout), "replay")[0]["ok"] is True

    # A sandwich plan in the weld cell: refused, nothing moves.
    refused = replay(tmp_path, run_id, "weld")
    assert refused.returncode == NOT_DONE, refused.stderr
    events = parse_events(refused.stdout)
    assert kinds(events, "replay")[0]["ok"] is False
    assert not kinds(events, "primitive")
