"""The `voiced` command line.

Each command imports what only it needs inside its own function, so that `voiced --help`,
`voiced cells` or `voiced check-config` start without loading the daemon, the audio stack or the
model client.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import select
import signal
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import structlog

from voiced import __version__
from voiced.checks.files import CheckReport, config_relative
from voiced.config import (
    Config,
    load_config,
    with_overrides,
)
from voiced.errorpath import EXIT_NOT_DONE, EXIT_USAGE, report_error
from voiced.errors import ConfigError, InputError, Problem, UsageError, describe
from voiced.keywordcli import add_keyword_commands
from voiced.logs import configure_logging
from voiced.paths import DataDir, atomic_write_json, ensure_data_dir, resolve_data_dir
from voiced.robot.auth import load_key, new_key
from voiced.robot.cell import Cell
from voiced.robot.cellfile import list_cells, load_cell
from voiced.robot.protocol.wire import is_name
from voiced.robot.scene import Scene
from voiced.robot.view import load_scene_file
from voiced.service.unit_files import SYSUSERS, UNIT, config_template, systemd_file

if TYPE_CHECKING:
    from voiced.audio.transcribe import BiasVocabulary
    from voiced.events import Listener
    from voiced.history import Run

log = structlog.get_logger(__name__)


DATA_DIR_HELP = (
    "where the daemon keeps its data (default: $VOICED_DATA_DIR, $STATE_DIRECTORY, "
    "$XDG_DATA_HOME/voiced or ~/.local/share/voiced, the first set)"
)
CONFIG_HELP = "the configuration file (default: the one `run` would use)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code = int(args.handler(args))
        sys.stdout.flush()  # a reader that has gone (`| head`) shows here, not at exit
        return code
    except BaseException as error:  # the one place every error is reported
        if _only_broken_pipes(error) and _stdout_closed():
            return 0  # the reader stopped early: as Unix tools do, end quietly
        debug = getattr(args, "debug", False) or os.environ.get("VOICED_DEBUG", "") not in ("", "0")
        return report_error(error, debug=bool(debug))


def _only_broken_pipes(error: BaseException) -> bool:
    """A broken pipe, or a task group's errors that are all broken pipes (the daemon's)."""
    if isinstance(error, BaseExceptionGroup):
        pipes, rest = error.split(BrokenPipeError)
        return pipes is not None and rest is None
    return isinstance(error, BrokenPipeError)


def _stdout_closed() -> bool:
    """Whether standard output is a pipe nobody reads any more (then it is pointed at devnull,
    so the flush at exit does not fail again). A broken pipe elsewhere (a socket) is an error."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poll = select.poll()
    poll.register(fd, select.POLLOUT)
    if not any(flags & select.POLLERR for _, flags in poll.poll(0)):
        return False
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    return True


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="voiced", description="Voice control for an ABB GoFa robot cell."
    )
    parser.add_argument("--version", action="version", version=f"voiced {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, print the full traceback too")  # fmt: skip
    sub = parser.add_subparsers(metavar="COMMAND")

    _add_running(sub)
    _add_checks(sub)
    _add_records(sub)
    _add_tools(sub)
    _add_sim(sub)
    _add_installing(sub)
    add_keyword_commands(sub)
    _add_debug(sub)
    return parser


def _add_running(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands for running the daemon: `run`, `demo`."""
    run = sub.add_parser("run", help="run the daemon")
    _add_run_options(run)
    run.set_defaults(handler=_cmd_run)

    demo = sub.add_parser("demo", help="run the daemon on the bundled demo session")
    demo.add_argument("--events", metavar="PATH|-", help="also write JSON events here")
    demo.add_argument("--text", action="store_true", help="the typed session, not the recording")
    demo.add_argument("--realtime", action="store_true", help="listen at speaking pace")
    demo.set_defaults(handler=_cmd_demo)


def _add_checks(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands for checking files: `check-config`, `check-cell`."""
    check = sub.add_parser(
        "check-config", help="validate a configuration file and the cell it drives"
    )
    check.add_argument("path", nargs="?", help="the file (default: the one `run` would use)")
    check.add_argument("--config", dest="config_path", metavar="PATH",
                       help="the same, as `run` takes it")  # fmt: skip
    check.add_argument("--json", action="store_true", help="one JSON document on stdout")
    check.set_defaults(handler=_cmd_check_config)

    check_cell = sub.add_parser("check-cell", help="validate one cell file, its sentences too")
    check_cell.add_argument("path", metavar="NAME|PATH", help="a cell file (or a bundled name)")
    check_cell.add_argument("--json", action="store_true", help="one JSON document on stdout")
    check_cell.set_defaults(handler=_cmd_check_cell)


def _add_records(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands for what the daemon kept: notes, the deferred queue, history, replay."""
    notes = sub.add_parser("notes", help="list the saved notes, or print one")
    notes.add_argument("id", nargs="?", help="the note to print in full")
    notes.add_argument("--data-dir", metavar="PATH", help=DATA_DIR_HELP)
    notes.add_argument("--json", action="store_true", help="JSON lines instead of text")
    notes.set_defaults(handler=_cmd_notes)

    queue = sub.add_parser("queue", help="the deferred queue: list it, or work it off")
    queue_sub = queue.add_subparsers(metavar="ACTION", required=True)
    queue_list = queue_sub.add_parser("list", help="every queued command and its status")
    queue_list.add_argument("--data-dir", metavar="PATH", help=DATA_DIR_HELP)
    queue_list.add_argument("--json", action="store_true", help="one JSON document on stdout")
    queue_list.set_defaults(handler=_cmd_queue_list)
    queue_run = queue_sub.add_parser("run", help="run the pending commands on the robot")
    for option, meta, text in _RUN_OPTIONS:
        if option not in ("--text", "--mode"):
            queue_run.add_argument(option, metavar=meta, help=text)
    queue_run.set_defaults(handler=_cmd_queue_run, text=None, mode=None)

    history = sub.add_parser("history", help="the commands run so far, newest first")
    history.add_argument("--last", type=_positive, default=10, metavar="N",
                         help="how many runs to list (default: %(default)s)")  # fmt: skip
    history.add_argument("--json", action="store_true", help="JSON lines instead of text")
    history.add_argument("--data-dir", metavar="PATH", help=DATA_DIR_HELP)
    history.set_defaults(handler=_cmd_history)

    replay = sub.add_parser("replay", help="run an earlier command's plan again")
    replay.add_argument("run_id", type=_run_id, metavar="RUN_ID",
                        help="a run id (or its first 8 characters)")  # fmt: skip
    replay.add_argument("--yes", action="store_true", help="approve any question beforehand")
    for option, meta, text in _RUN_OPTIONS:
        if option not in ("--text",):
            replay.add_argument(option, metavar=meta, help=text)
    replay.set_defaults(handler=_cmd_replay, text=None, mode=None)


def _add_tools(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands for tools on one input: `transcribe`, `plan`, `cells`, `interpret`."""
    transcribe = sub.add_parser(
        "transcribe", help="print what an audio file says, an utterance a line"
    )
    transcribe.add_argument(
        "file", metavar="FILE.wav", help="a recording (WAV, or anything FFmpeg reads)"
    )
    transcribe.add_argument("--cell", default="sandwich", metavar="NAME|PATH",
                            help="bias recognition with this cell's vocabulary")  # fmt: skip
    transcribe.add_argument("--config", metavar="PATH",
                            help=CONFIG_HELP + "; its [stt] and [audio] are used")  # fmt: skip
    transcribe.add_argument("--whole", action="store_true",
                            help="transcribe the file as one piece, not cut where the daemon "
                                 "cuts the microphone's speech")  # fmt: skip
    transcribe.add_argument("--hypotheses", action="store_true",
                            help="under each utterance, the recogniser's other hypotheses (the "
                                 "daemon takes the first its cell reads)")  # fmt: skip
    transcribe.set_defaults(handler=_cmd_transcribe)

    plan = sub.add_parser("plan", help="plan a block rearrangement and print it as JSON")
    plan.add_argument("--current", required=True, metavar="FILE",
                      help="the blocks as they stand (state-view JSON)")  # fmt: skip
    plan.add_argument("--target", required=True, metavar="FILE",
                      help="the blocks as they should end up (state-view JSON)")  # fmt: skip
    plan.add_argument("--cell", default="blocks", metavar="NAME|PATH",
                      help="a bundled cell name or a cell file (default: %(default)s)")  # fmt: skip
    plan.set_defaults(handler=_cmd_plan)

    cells = sub.add_parser("cells", help="list the bundled cells")
    cells.add_argument("--json", action="store_true", help="one JSON document on stdout")
    cells.set_defaults(handler=_cmd_cells)

    interp = sub.add_parser("interpret", help="print the interpretation of one command as JSON")
    interp.add_argument(
        "--cell",
        default="sandwich",
        metavar="NAME|PATH",
        help="a bundled cell name or a cell file (default: %(default)s)",
    )
    interp.add_argument(
        "--scene",
        metavar="PATH",
        help="the scene to interpret in (state-view JSON; default: the cell's own)",
    )
    interp.add_argument("text", help='the command, as typed or said ("add bread and cheese")')
    interp.set_defaults(handler=_cmd_interpret)


def _add_sim(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands for the standalone simulator."""
    sim = sub.add_parser("sim", help="run the simulator standalone (control port = PORT + 1; "
                         "--port 0: any two free ports, printed)")  # fmt: skip
    sim.add_argument(
        "--cell",
        default="sandwich",
        metavar="NAME|PATH",
        help="the cell it simulates: a bundled name or a cell file (default: %(default)s)",
    )
    sim.add_argument(
        "--scene",
        metavar="PATH",
        help="the scene to start from (state-view JSON; default: the cell's own)",
    )
    sim.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: %(default)s, this machine only)",
    )
    sim.add_argument(
        "--port",
        type=_sim_port,
        default=1025,
        help="the motion port; the control port is PORT + 1 (default: %(default)s)",
    )
    sim.add_argument(
        "--time-scale",
        type=_time_scale,
        default=1.0,
        metavar="FACTOR",
        help="how long motion takes relative to real time: 1 = real time, "
        "0.1 = ten times faster (default: %(default)s)",
    )
    sim.add_argument("--key-file", type=Path, metavar="PATH",
                     help="check the shared secret in PATH at every connection")  # fmt: skip
    sim.add_argument("--name", metavar="NAME", type=_controller_name,
                     help="its identity in the greeting (default: new per run); a daemon "
                     "takes a simulator restarted under one name for the same world")  # fmt: skip
    sim.add_argument("--world-out", type=Path, metavar="PATH",
                     help="on exit (SIGTERM or SIGINT) write the world here as JSON")  # fmt: skip
    sim.set_defaults(handler=_cmd_sim)


def _add_installing(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands for installing and watching: `status`, `keygen`, `print-unit`,
    `print-config`."""
    status = sub.add_parser("status", help="every cell on an MQTT broker, one line each")
    status.add_argument("--mqtt", metavar="URL", help="mqtt://HOST[:PORT] or mqtts://... "
                        "(default: [mqtt] url of the configuration)")  # fmt: skip
    status.add_argument("--config", metavar="PATH", help=CONFIG_HELP)
    for option in ("--credentials-file", "--ca-file", "--cert-file", "--key-file"):
        status.add_argument(
            option, metavar="PATH", help="as [mqtt] " + option[2:].replace("-", "_")
        )
    status.add_argument("--topic-prefix", metavar="PREFIX", help="as [mqtt] topic_prefix")
    status.add_argument("--settle", type=float, default=1.0, metavar="SECONDS",
                        help="how long to collect the retained topics (default 1)")  # fmt: skip
    status.add_argument("--json", action="store_true", help="one JSON document on stdout")
    status.set_defaults(handler=_cmd_status)

    keygen = sub.add_parser("keygen", help="write a new controller key (for [controller] key_file)")
    keygen.add_argument("path", type=Path, help="the key file to write (refused if it exists)")
    keygen.set_defaults(handler=_cmd_keygen)

    unit = sub.add_parser("print-unit", help="print the systemd unit; install it with: voiced "
                          "print-unit | sudo tee /etc/systemd/system/voiced.service")  # fmt: skip
    unit.add_argument("--sysusers", action="store_true",
                      help="print the service account's sysusers.d file instead")  # fmt: skip
    unit.set_defaults(handler=_cmd_print_unit)
    template = sub.add_parser("print-config", help="print the configuration template (every "
                              "key with its default and meaning)")  # fmt: skip
    template.set_defaults(handler=_cmd_print_config)


def _add_debug(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`--debug` after the command too (`voiced run --debug`), not only before it."""
    for command in sub.choices.values():
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="on an error, print the full traceback too")  # fmt: skip
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                _add_debug(action)


def _sim_port(text: str) -> int:
    """--port: the motion port; the control port is the next one, so 65535 is out."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= port <= 65534:
        raise argparse.ArgumentTypeError(
            f"{port} is out of range: 0 to 65534 (the control port is PORT + 1)"
        )
    return port


def _positive(text: str) -> int:
    """A count of at least 1 (`history --last 0` printed nothing, as if there were no history)."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {count}")
    return count


def _run_id(text: str) -> str:
    """A run id or its start; an empty one would match every run."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a run id (`voiced history` lists them)")
    return text.strip()


def _time_scale(text: str) -> float:
    try:
        scale = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < scale <= 1000:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text} is out of range: more than 0, at most 1000")
    return scale


def _controller_name(text: str) -> str:
    if not is_name(text):
        raise argparse.ArgumentTypeError(f"{text!r}: 1 to 32 letters, digits or underscores")
    return text


_RUN_OPTIONS = (
    ("--config", "PATH", "configuration file"),
    ("--data-dir", "PATH", DATA_DIR_HELP),
    ("--cell", "NAME|PATH", "cell to drive (overrides [cell] name)"),
    ("--scene", "PATH", "initial scene JSON (state-view schema)"),
    (
        "--audio",
        "mic|PATH|-|wyoming://HOST:PORT",
        "listen: the microphone, an audio file, raw PCM on stdin, or a Wyoming satellite",
    ),
    ("--text", "PATH|-", "typed utterances, one per line"),
    ("--controller", "sim|HOST:PORT", "controller address"),
    ("--events", "PATH|-", "write JSON-lines events here"),
)


ROOM_ECHO_DB = (-60.0, 20.0)


def _room_echo_db(text: str) -> float:
    """--room-echo: a finite level in a range a loudspeaker could have."""
    low, high = ROOM_ECHO_DB
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of dB, got {text!r}") from None
    if not low <= value <= high:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text} dB is out of range, expected {low:g} to {high:g}")
    return value


def _add_run_options(run: argparse.ArgumentParser) -> None:
    for option, meta, text in _RUN_OPTIONS:
        run.add_argument(option, metavar=meta, help=text)
    run.add_argument("--mode", choices=("wake", "always"), help="listening mode")
    run.add_argument("--fast", action="store_true", help="audio files: as fast as possible")
    run.add_argument(
        "--room-echo", metavar="DB", type=_room_echo_db,
        help="audio files: put the daemon's own speech into the input as a loudspeaker in the "
        "room would, DB relative to the synthesised level (benchmarks, tests)",
    )  # fmt: skip


def _as_checked(path: str | None) -> ConfigError:
    """A configuration that does not load, with every problem `voiced check-config` names
    (the cell file it names included): one run names every mistake."""
    from voiced.checks.files import check_config_file

    found = check_config_file(path).problems
    return ConfigError([Problem(f"{p.file}:{p.line}" if p.line else p.file, p.where, p.message)
                        for p in found])  # fmt: skip


def _load_run_config(args: argparse.Namespace) -> tuple[Config, str, str | None]:
    """The merged config, the cell reference and the scene path. Paths given on the command line
    are relative to the working directory; paths in a config file to that file's directory."""
    try:
        config = load_config(args.config)
    except ConfigError as error:
        if args.cell:
            raise
        raise _as_checked(args.config) from error
    cell_ref = args.cell or config_relative(config, config.cell.name, bare_names=True)
    scene_ref = args.scene or (
        config_relative(config, config.cell.scene) if config.cell.scene else None
    )
    overrides: dict[str, dict[str, object]] = {}
    if args.controller:
        overrides.setdefault("controller", {})["address"] = args.controller
    if args.mode:
        overrides.setdefault("daemon", {})["mode"] = args.mode
    if overrides:
        config = with_overrides(config, overrides, source="the command line")
    return config, cell_ref, scene_ref


def _check_models(config: Config) -> None:
    """A model the config names that cannot be used (a keyword model, Whisper base without
    its extra) stops the run before anything starts, typed input or not (the config is wrong
    either way)."""
    from voiced.inputs.models import model_problems

    problems = model_problems(config)
    if problems:
        raise ConfigError(problems)


def _cmd_run(
    args: argparse.Namespace,
    queue: bool = False,
    replay: str | None = None,
    assume_yes: bool = False,
    listener: Listener | None = None,
) -> int:
    from voiced.events import EventLog
    from voiced.service.arenas import limit_arenas
    from voiced.service.daemon import Daemon, Session

    arenas = limit_arenas()  # before any thread starts (voiced.service.arenas)
    config, cell_ref, scene_ref = _load_run_config(args)
    configure_logging(
        config.logging.level, config.logging.format, prefix=config.logging.priority_prefix
    )
    audio = getattr(args, "audio", None)
    if args.text is not None and audio is not None:
        raise UsageError("--text and --audio", "give one of them, not both")
    if args.text is None and audio is None and not queue and replay is None:
        audio = "mic"
    room_echo = getattr(args, "room_echo", None)
    if room_echo is not None and (audio in (None, "mic") or _satellite(audio)):
        why = "a microphone hears the real room" if audio == "mic" else "typed lines have no sound"
        raise UsageError("--room-echo", f"needs --audio FILE or - ({why})")
    _check_models(config)
    cell = load_cell(cell_ref)
    data = DataDir(ensure_data_dir(resolve_data_dir(args.data_dir, os.environ)))
    scene = _starting_scene(cell, scene_ref)
    _check_inputs(args.text, audio, data)
    log.info("malloc arenas", limit=arenas)  # once what the run was given is known good
    with _event_stream(args.events) as stream:
        events = EventLog(stream)
        if listener is not None:
            events.subscribe(listener)
        session = Session(
            config, cell, scene, data, args.text, events, queue, replay, assume_yes,
            audio, bool(getattr(args, "fast", False)), room_echo, scene_given=bool(scene_ref),
        )  # fmt: skip
        return asyncio.run(Daemon(session).run())


def _check_inputs(text: str | None, audio: str | None, data: DataDir) -> None:
    """What the run reads, checked before anything connects: a typo in a file name is named
    on one line, and no controller is linked (and halted on the way out) to find it."""
    from voiced.history import History
    from voiced.inputs.typed import is_stream, read_text_file

    if text not in (None, "-") and not is_stream(text):  # a pipe is read once, as it comes
        read_text_file(text)
    if _satellite(audio):
        _check_satellite(audio)
    elif audio not in (None, "mic", "-"):
        _check_audio_file(audio)
    History(data.history)  # a damaged history is named here, and left as it is


def _check_audio_file(audio: str) -> None:
    from voiced.audio.convert import AudioFileError, probe_audio

    if not Path(audio).is_file():
        why = "is a directory" if Path(audio).is_dir() else "no such file"
        raise InputError(f"--audio {audio}", why)
    try:
        probe_audio(audio)
    except AudioFileError as error:
        raise InputError(f"--audio {audio}", str(error)) from None


def _satellite(audio: str | None) -> bool:
    from voiced.audio.satellite import is_satellite

    return audio is not None and is_satellite(audio)


def _check_satellite(audio: str | None) -> None:
    from voiced.audio.settings import address_problem

    why = address_problem(audio or "", "wyoming")
    if why is not None:
        raise InputError(f"--audio {audio}", why)


def _cmd_queue_run(args: argparse.Namespace) -> int:
    return _cmd_run(args, queue=True)


def _cmd_replay(args: argparse.Namespace) -> int:
    """Exit 1 for a run id the history does not hold (nothing is started), EXIT_NOT_DONE when
    the replay was refused or did not complete."""
    from voiced.eventtypes import Record, Replayed
    from voiced.history import History

    data = DataDir(resolve_data_dir(args.data_dir, os.environ))
    found = History(data.history).find(args.run_id) if data.history.exists() else []
    if len(found) != 1:
        why = "no run in the history matches it" if not found else f"{len(found)} runs match it"
        raise InputError(f"run {args.run_id}", f"{why}; `voiced history` lists them")
    replayed: list[bool] = []

    def outcome(record: Record) -> None:
        if isinstance(record.event, Replayed):
            replayed.append(record.event.ok)

    code = _cmd_run(args, replay=args.run_id, assume_yes=args.yes, listener=outcome)
    return code if code != 0 or replayed == [True] else EXIT_NOT_DONE


def _cmd_history(args: argparse.Namespace) -> int:
    from voiced.history import History

    data = DataDir(resolve_data_dir(args.data_dir, os.environ))
    if not data.history.exists():
        if not args.json:  # JSON lines: none
            print("No history yet.")
        return 0
    for run in History(data.history).last(args.last):
        if args.json:
            print(json.dumps(run.to_dict()))
        else:
            print(_history_line(run))
    return 0


def _history_line(run: Run) -> str:
    """One run as a line: an action with its steps, a question with what was said back, an
    unknown with what the operator was told."""
    steps = ", ".join(step["instruction"] for step in run.plan) if run.intent == "action" else ""
    # An action without steps (refused, not understood) shows why, as the operator heard it.
    outcome = steps or run.feedback or "-"
    return (f"{run.run_id[:8]}  {run.created_at[:19]}  {run.intent:8} {run.status:11} "
            f"{run.cell:8} {run.operator_input!r} -> {outcome}")  # fmt: skip


def _cmd_queue_list(args: argparse.Namespace) -> int:
    from voiced.targets import DeferredQueue

    data = DataDir(resolve_data_dir(args.data_dir, os.environ))
    try:
        items = DeferredQueue(data.queue).all() if data.queue.exists() else []
    except sqlite3.DatabaseError as error:
        from voiced.history import unreadable_store

        raise unreadable_store(data.queue, error, "queue") from None
    if args.json:
        print(json.dumps({"items": [dataclasses.asdict(item) for item in items]}, indent=2))
        return 0
    if not items:
        print("The queue is empty.")
    for item in items:
        result = f"  ({item.result})" if item.result else ""
        print(f"{item.id:5} {item.status:8} {item.created_at}  {item.text}{result}")
    return 0


def _cmd_notes(args: argparse.Namespace) -> int:
    from voiced.notes import NoteStore

    store = NoteStore(DataDir(resolve_data_dir(args.data_dir, os.environ)).notes)
    if args.id:
        note = store.get(args.id)
        if note is None:
            raise InputError(f"notes {args.id}", f"no such note in {store.path}")
        print(json.dumps(note.to_json()) if args.json else f"{note.t} ({note.source})\n{note.text}")
        return 0
    notes = store.list()
    if not notes and not args.json:
        print("No notes yet.")
    for note in notes:
        if args.json:
            print(json.dumps(note.to_json()))
        else:
            first = note.text if len(note.text) <= 60 else note.text[:57] + "..."
            print(f"{note.id}  {note.t}  {note.source:10} {first}")
    return 0


def _starting_scene(cell: Cell, scene_ref: str | None) -> Scene:
    """--scene, else the cell's initial scene. A scene saved by an earlier run is restored by
    the daemon once the controller has said who it is (saved state is kept per controller)."""
    return load_scene_file(cell, scene_ref) if scene_ref else cell.initial_scene


class _event_stream:
    """`--events PATH|-`: stdout, a file (appended), or nothing."""

    def __init__(self, target: str | None) -> None:
        self.target = target
        self.file: TextIO | None = None

    def __enter__(self) -> TextIO | None:
        if self.target is None:
            return None
        if self.target == "-":
            return sys.stdout
        try:
            self.file = open(self.target, "a", encoding="utf-8")
        except OSError as error:
            raise InputError(f"--events {self.target}", describe(error)) from None
        return self.file

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()


def _cmd_demo(args: argparse.Namespace) -> int:
    from voiced.demo import run_demo
    from voiced.service.arenas import limit_arenas

    limit_arenas()  # as for run: before any thread starts
    return run_demo(args.events, text=args.text, realtime=args.realtime)


def _cmd_check_config(args: argparse.Namespace) -> int:
    from voiced.checks.files import check_config_file

    if args.path and args.config_path and args.path != args.config_path:
        raise UsageError("check-config", "give the file once: PATH or --config PATH")
    if "" in (args.path, args.config_path):
        raise UsageError("check-config", "an empty path: give a configuration file, or none")
    given_by = "the command line" if args.path else "--config"
    return _report_check(check_config_file(args.path or args.config_path, given_by), args.json)


def _cmd_check_cell(args: argparse.Namespace) -> int:
    from voiced.checks.files import check_cell_file

    if not args.path.strip():
        raise UsageError("check-cell", "an empty cell: give a bundled cell's name or a file")
    return _report_check(check_cell_file(args.path), args.json)


def _report_check(report: CheckReport, as_json: bool) -> int:
    """Problems one a line (`file:line: problem`) on stdout, or the JSON document; 1 if any."""
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    elif report.ok:
        print("OK: " + ", ".join(report.checked))
    else:
        for problem in report.problems:
            print(problem)
    return 0 if report.ok else 1


def _cmd_print_unit(args: argparse.Namespace) -> int:
    return _print_file(systemd_file(SYSUSERS if args.sysusers else UNIT))


def _cmd_print_config(args: argparse.Namespace) -> int:
    return _print_file(config_template())


def _print_file(text: str) -> int:
    """Print a whole file (a reader that stops early, `| head`, is not an error: `main`)."""
    sys.stdout.write(text)
    return 0


def _cmd_cells(args: argparse.Namespace) -> int:
    found = list_cells()
    if args.json:
        listed = [{"name": name, "description": text} for name, text in found]
        print(json.dumps({"cells": listed}, indent=2))
        return 0
    for name, description in found:
        print(f"{name:10} {description}")
    return 0


def _cmd_interpret(args: argparse.Namespace) -> int:
    from voiced.explain import (
        Explained,
        before_the_interpreter,
        explain_command,
        without_wake_word,
    )
    from voiced.frames.base import split_at_wake_word

    config = load_config(None)
    configure_logging("warning", config.logging.format)
    cell = load_cell(args.cell)
    for problem in cell.sentences.problems:  # interpreted without it, as the daemon would
        print(f"sentence template left out: {problem}", file=sys.stderr)
    scene = load_scene_file(cell, args.scene) if args.scene else cell.initial_scene
    data = DataDir(resolve_data_dir(None, os.environ))

    if not args.text.strip():
        raise UsageError("interpret", "give the command to interpret")
    daemon = config.daemon
    text = without_wake_word(args.text, daemon.wake_words)
    stop = before_the_interpreter(cell, scene, text, daemon.wake_word)
    if isinstance(stop, Explained) and stop.shown.get("behaviour") == "stop":
        print(json.dumps(stop.shown, indent=2))  # a stop anywhere in the line is the line
        return 0
    # The wake word said again starts the next command, as the daemon's base frame splits it.
    commands = split_at_wake_word(text, daemon.wake_word) or [text]

    async def understand_all() -> list[tuple[dict[str, Any], bool]]:
        return [await explain_command(cell, scene, data, config, said) for said in commands]

    results = asyncio.run(understand_all())
    if len(results) == 1:
        print(json.dumps(results[0][0], indent=2))
    else:
        # Each against the scene given: the daemon would plan the second after the first.
        print(json.dumps({"commands": [shown for shown, _ in results]}, indent=2))
    return 0 if all(done for _, done in results) else EXIT_NOT_DONE


def _cmd_transcribe(args: argparse.Namespace) -> int:
    from voiced.audio.engines import transcribe_file
    from voiced.inputs.audio import bias_for
    from voiced.interpreter.grammar import Grammar
    from voiced.interpreter.phrasebank import PhraseBank
    from voiced.interpreter.templates import Templates

    config = load_config(args.config)
    configure_logging("warning", config.logging.format)
    cell = load_cell(args.cell)
    examples = Templates(cell, Grammar(cell).vocabulary).examples()
    bias = bias_for(cell, [*PhraseBank.packaged(cell).phrases(), *examples], config)
    if not args.whole:
        return asyncio.run(_print_utterances(args.file, bias, config, args.hypotheses))
    transcript = asyncio.run(transcribe_file(args.file, bias, config.stt))
    if transcript.rejected_reason:
        print(f"(nothing: {transcript.rejected_reason}) raw: {transcript.raw!r}")
        return 1
    print(transcript.text)
    return 0


async def _print_utterances(
    path: str, bias: BiasVocabulary, config: Config, hypotheses: bool
) -> int:
    """Each utterance the daemon's listener would cut from the file, decoded as the daemon
    decodes it, with where it is in the file (and, asked, the lower hypotheses); audio it
    would drop, and why. Exit 1 when nothing is heard."""
    from voiced.audio.engines import KeepsBest, transcribe_segments
    from voiced.audio.listener import Heard

    heard = 0
    kept = KeepsBest()
    async with contextlib.aclosing(
        transcribe_segments(path, bias, config.stt, config.audio, kept)
    ) as said:
        async for event in said:
            if isinstance(event, Heard):
                heard += 1
                print(f"{event.segment.start:7.2f} {event.segment.end:7.2f}  {event.text}")
                others = kept.others.get(event.transcript.raw.strip(), ())
                for other in _other_words(event.text, others) if hypotheses else ():
                    print(f"{'':17}  or: {other}")
            else:
                raw = f" raw: {event.raw!r}" if event.raw else ""
                print(f"{event.t:7.2f}          (dropped: {event.reason}){raw}")
    return 0 if heard else 1


def _other_words(best: str, others: Sequence[str]) -> list[str]:
    """The hypotheses whose words differ from the best's and each other's (not only in case or
    punctuation)."""
    from voiced.rules.normalize import words

    seen = {tuple(words(best))}
    kept = []
    for other in others:
        if tuple(words(other)) not in seen:
            seen.add(tuple(words(other)))
            kept.append(other)
    return kept


def _cmd_plan(args: argparse.Namespace) -> int:
    from voiced.robot.rearrange import plan_command

    print(json.dumps(plan_command(args.current, args.target, args.cell), indent=2))
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from voiced.mqtt.status import status_command

    options = ("credentials_file", "ca_file", "cert_file", "key_file", "topic_prefix")
    overrides = {key: getattr(args, key) for key in options}
    return status_command(load_config(args.config), args.mqtt, overrides, args.settle, args.json)


def _cmd_keygen(args: argparse.Namespace) -> int:
    """A new random key, readable by its owner only; an existing file is never overwritten."""
    path: Path = args.path
    if path.is_dir():
        raise InputError(str(path), "is a directory; give the path of the key file")
    if not path.parent.is_dir():
        raise InputError(str(path.parent), "no such directory (create it first)")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise InputError(str(path), "exists; remove it first to make a new key") from None
    except OSError as exc:
        raise InputError(str(path), describe(exc)) from None
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(new_key() + "\n")
    print(f"wrote a new controller key to {path}")
    return 0


def _cmd_sim(args: argparse.Namespace) -> int:
    configure_logging("info", "auto")
    cell = load_cell(args.cell)
    scene = load_scene_file(cell, args.scene) if args.scene else cell.initial_scene
    key = None if args.key_file is None else load_key(args.key_file)
    world_out: Path | None = args.world_out
    if world_out is not None and not world_out.parent.is_dir():
        # Said now, not after a whole session when the world could not be written.
        raise UsageError(f"--world-out {world_out}", f"{world_out.parent} is no directory")
    if key is None:
        log.warning("no --key-file: any client that reaches the ports may drive this simulator")
    final = asyncio.run(
        _serve_sim(cell, scene, args.host, args.port, args.time_scale, key, args.name)
    )
    if world_out is not None and final is not None:
        from voiced.robot.view import world

        try:
            atomic_write_json(world_out, world(cell, final))
        except OSError as exc:
            raise InputError(f"--world-out {world_out}", describe(exc)) from None
    return 0


async def _serve_sim(
    cell: Cell,
    scene: Scene,
    host: str,
    port: int,
    time_scale: float,
    key: bytes | None = None,
    name: str | None = None,
) -> Scene | None:
    """The standalone simulator until SIGTERM or SIGINT; prints its ports once listening.
    Returns its world's last scene (None if it never started)."""
    from voiced.robot.simulator import Simulator, serve_forever

    running: list[Simulator] = []

    def ready(sim: Simulator) -> None:
        running.append(sim)
        print(f"simulating {cell.name} on {host}: motion port {sim.motion_port}, "
              f"control port {sim.control_port}", flush=True)  # fmt: skip

    server = asyncio.create_task(
        serve_forever(cell, scene, host, port, time_scale, on_ready=ready, key=key, name=name),
        name="simulator",
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.cancel)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await server
    except OSError as error:  # the address cannot be resolved or bound
        where = f"--host {host} --port {port}"
        raise InputError(where, f"cannot listen: {describe(error)}") from error
    return running[0].scene if running else None


if __name__ == "__main__":
    raise SystemExit(main())
