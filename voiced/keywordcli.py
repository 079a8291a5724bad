"""`voiced train-keyword`: make a keyword model for a wake phrase (or a stop word) from speech
this machine synthesises (see `voiced.audio.keyword.training.recipe`).

Kept apart from `voiced.cli`, which only registers it: training needs voices and libraries
(`pyroomacoustics`, `pyworld`, Piper's joe voice: the `train` extra) that the daemon does not.
"""

from __future__ import annotations

import argparse
import glob
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from voiced.errors import InputError, UsageError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def add_keyword_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`voiced train-keyword` and `voiced enroll`."""
    _add_train(sub)
    _add_enroll(sub)


def _add_train(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    train = sub.add_parser(
        "train-keyword",
        help="train a keyword model (a wake phrase of your own) from synthetic speech",
        description="Train a keyword model for PHRASE from speech synthesised on this machine "
        "(espeak-ng, flite, Festival, Piper's joe voice), in rooms, through microphones, in "
        "noise. Takes 20 to 30 minutes on two cores at --size full.",
    )
    train.add_argument("phrase", help='what is said, e.g. "hey gofa"')
    train.add_argument(
        "--out", type=Path, required=True, metavar="FILE", help="the model file to write (.npz)"
    )
    train.add_argument(
        "--size",
        choices=("full", "small", "tiny"),
        default="full",
        help="how much speech to make: full (the shipped models), small (a "
        "quick try), tiny (a smoke test)",
    )
    train.add_argument("--seed", type=int, default=1, help="the same seed makes the same model")
    train.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="processes that render speech (default: 2)",
    )
    _add_train_material(train)
    train.set_defaults(handler=_cmd_train)


def _add_train_material(train: argparse.ArgumentParser) -> None:
    """What training may use besides synthetic speech: real talk, the place's noise, cells."""
    train.add_argument(
        "--negatives",
        action="append",
        default=[],
        metavar="GLOB",
        help="recordings of real speech that never says the phrase (repeatable)",
    )
    train.add_argument(
        "--noise",
        action="append",
        default=[],
        metavar="FILE",
        help="a noise recording of the place (its first half is used; repeatable)",
    )
    train.add_argument(
        "--cell",
        action="append",
        default=[],
        metavar="NAME|PATH",
        help="cells whose commands are said after a wake phrase and as negatives "
        "(default: every bundled cell)",
    )
    train.add_argument(
        "--cache",
        type=Path,
        metavar="DIR",
        help="keep rendered clips here, so a second run with other settings is "
        "faster (never needed for the same result)",
    )


def _add_enroll(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    enroll = sub.add_parser(
        "enroll",
        help="adapt a keyword model to the operators' own voices (a few takes of the phrase)",
        description="Adapt a keyword model to the people who will say the phrase: give a few "
        "recordings of them saying it alone (or record takes from the microphone), and the "
        "model is fitted further on them in rooms and noise, against synthetic near words and "
        "talk. Point [wake] keyword_model (or [audio] stop_models) at the file it writes.",
    )
    enroll.add_argument("phrase", help='the phrase, e.g. "computer" or "stop"')
    enroll.add_argument(
        "takes",
        nargs="*",
        type=Path,
        metavar="RECORDING",
        help="recordings of the phrase said alone (any format; none: record from the microphone)",
    )
    enroll.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="where the adapted model is written")  # fmt: skip
    enroll.add_argument(
        "--base",
        metavar="NAME|PATH",
        help="the model to adapt (default: the shipped model of the phrase)",
    )
    enroll.add_argument(
        "--record",
        type=int,
        default=5,
        metavar="N",
        help="takes to record from the microphone when no recording is given",
    )
    enroll.add_argument("--device", help="the microphone (as [audio] device)")
    enroll.add_argument(
        "--seed", type=int, default=1, help="the same seed makes the same model (default: 1)"
    )
    enroll.add_argument(
        "--size",
        choices=("full", "tiny"),
        default="full",
        help="tiny: a tenth of the work (a smoke test)",
    )
    enroll.set_defaults(handler=_cmd_enroll)


def _recordings(patterns: list[str]) -> tuple[str, ...]:
    found: list[str] = []
    for pattern in patterns:
        matches = sorted(glob.glob(os.path.expanduser(pattern)))
        if not matches:
            raise InputError(f"--negatives {pattern}", "no file matches")
        found += matches
    return tuple(found)


def _said_in_cells(refs: list[str]) -> tuple[str, ...]:
    """Commands an operator gives in these cells (every bundled one by default)."""
    from voiced.inputs.audio import typical_commands
    from voiced.robot.cellfile import list_cells, load_cell

    names = refs or [name for name, _ in list_cells()]
    said: list[str] = []
    for ref in names:
        said += typical_commands(load_cell(ref), "").copy()
    return tuple(dict.fromkeys(s.strip() for s in said if s.strip()))


def _cmd_train(args: argparse.Namespace) -> int:
    from voiced.audio.keyword.training import recipe as training

    phrase = " ".join(args.phrase.lower().split())
    if not phrase or not all(
        part.replace("-", "").replace("'", "").isalpha() for part in phrase.split()
    ):
        raise UsageError("train-keyword", f"{args.phrase!r}: a phrase is words (letters only)")
    if args.jobs < 1:
        raise UsageError("train-keyword", f"--jobs {args.jobs}: at least 1")
    _check_out(args.out)
    for path in args.noise:
        if not Path(path).is_file():
            raise InputError(f"--noise {path}", "no such file")
        _check_audio("--noise", path)
    negatives = _recordings(args.negatives)
    for path in negatives:
        _check_audio("--negatives", path)
    commands = _said_in_cells(args.cell)
    recipe = training.Recipe(
        phrase,
        size=args.size,
        seed=args.seed,
        commands=commands,
        negative_texts=commands,
        real_negatives=negatives,
        noise_recordings=tuple(args.noise),
        jobs=args.jobs,
    )
    command = "voiced train-keyword " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    model = training.train(recipe, args.out, command=command, cache=args.cache)
    made = model.info.made
    print(
        f"{args.out}: {phrase!r}, threshold {model.threshold:.3f}, "
        f"validation recall {made['validation']['recall']:.1%}, {made['seconds']} s"
    )
    return 0


def _cmd_enroll(args: argparse.Namespace) -> int:
    from voiced.audio.convert import read_audio
    from voiced.audio.keyword.model import KeywordModel, resolve
    from voiced.audio.keyword.training.enroll import enroll, take_problems

    phrase = " ".join(args.phrase.lower().split())
    path = resolve(args.base or phrase)
    if not args.base and not path.exists():
        raise UsageError(
            "enroll",
            f"no model of {phrase!r} ships with voiced: give the one you trained with --base FILE",
        )
    base = KeywordModel.load(path)
    if base.phrase != phrase:
        raise UsageError("enroll", f"{args.base}: a model of {base.phrase!r}, not of {phrase!r}")
    _check_out(args.out)
    takes = [read_audio(path) for path in args.takes] if args.takes else _record(args, phrase)
    if len(takes) < 2:
        raise UsageError("enroll", "at least two takes of the phrase")
    problems = take_problems(takes)
    if problems:
        raise InputError("enroll", "; ".join(problems))
    command = "voiced enroll " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    model = enroll(
        base,
        takes,
        args.out,
        seed=args.seed,
        command=command,
        size=args.size,
        say=lambda text: print(text, file=sys.stderr, flush=True),
    )
    print(f"{args.out}: {phrase!r} adapted to {len(takes)} takes, threshold {model.threshold:.3f}")
    return 0


def _check_audio(option: str, path: str) -> None:
    """Before the work: a recording given to train on is audio (not empty, not another file)."""
    from voiced.audio.convert import AudioFileError, read_audio

    try:
        seconds = len(read_audio(path)) / 16000
    except AudioFileError as exc:
        raise InputError(f"{option} {path}", str(exc)) from None
    if seconds < 0.1:
        raise InputError(f"{option} {path}", "no audio in it (not a sound file, or empty)")


def _check_out(out: Path) -> None:
    """Before the work: the model file can be written where it is asked for."""
    if out.is_dir():
        raise InputError(f"--out {out}", "is a folder: give the model file's name (FILE.npz)")
    if not out.parent.is_dir():
        raise InputError(f"--out {out}", "its folder does not exist")


def _record(args: argparse.Namespace, phrase: str) -> list[npt.NDArray[np.int16]]:
    """`args.record` takes of 2.5 s from the microphone, each after a prompt."""
    import numpy as np
    import sounddevice as sd  # type: ignore[import-untyped]

    takes = []
    for i in range(1, args.record + 1):
        try:
            input(f"Take {i} of {args.record}: press Enter, then say {phrase!r} once. ")
        except EOFError:
            raise InputError("enroll --record", "needs a terminal to prompt for each take "
                             "(or give recordings of the phrase)") from None  # fmt: skip
        try:
            audio = sd.rec(
                int(2.5 * 16000), samplerate=16000, channels=1, dtype="int16", device=args.device
            )
            sd.wait()
        except sd.PortAudioError as exc:
            raise InputError(
                "enroll --record", f"cannot open the microphone ({exc}); set --device"
            ) from None
        takes.append(np.asarray(audio, dtype=np.int16).reshape(-1))
    return takes
