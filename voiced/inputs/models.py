"""The models a configuration asks for beyond the bundled tiny.en, checked before anything
starts (`voiced run`) and by `voiced check-config`: the keyword models, and Whisper base."""

from __future__ import annotations

from pathlib import Path

from voiced.audio.stepdecoder import model_file_problem
from voiced.audio.whisper import BASE
from voiced.audio.whisperbase import base_model_path
from voiced.config import Config
from voiced.errors import Problem
from voiced.inputs.keywords import keyword_problems


def model_problems(config: Config) -> list[Problem]:
    """What keeps any model the configuration asks for beyond the bundled tiny.en from
    loading: the keyword models, and Whisper base (`[stt] model = "base"`, `second_opinion`),
    whose packages are the optional extra `base`."""
    problems = keyword_problems(config)
    if config.stt.engine == "azure":
        return problems  # no local model
    if config.stt.model not in ("", BASE):
        problems += _model_directory_problems(config)
    instead = {"stt.model": 'set model = "" (tiny.en)', "stt.second_opinion": "set it to false"}
    asks = {"stt.model": config.stt.model == BASE, "stt.second_opinion": config.stt.second_opinion}
    keys = [key for key, wanted in asks.items() if wanted]
    if keys:
        try:
            base_model_path()
        except OSError as exc:  # not installed, or its cache cannot be written
            install = "pip install 'voiced[base]' in voiced's environment (from a clone: "
            install += ".venv/bin/pip install -e '.[base]')"
            source = config.source or "defaults"
            for key in keys:
                problems.append(Problem(source, key, f"{exc}: {install}, or {instead[key]}"))
    return problems


def _model_directory_problems(config: Config) -> list[Problem]:
    """A model directory `[stt] model` names: it must hold a CTranslate2 Whisper model whole
    (a damaged `model.bin` had stopped the daemon at start as an internal error, a missing
    directory as a download that may not happen)."""
    directory = Path(config.stt.model).expanduser()
    source = config.source or "defaults"
    if not (directory / "model.bin").is_file():
        found = "no model.bin in it" if directory.is_dir() else "no such directory"
        return [Problem(source, "stt.model", f"{directory}: {found} (a CTranslate2 Whisper "
                        'model directory, "base", or "" for the bundled tiny.en)')]  # fmt: skip
    problem = model_file_problem(directory / "model.bin")
    return [] if problem is None else [Problem(source, "stt.model", problem)]
