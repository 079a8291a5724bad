"""The keyword models a configuration asks for (`[wake] engine = "keyword"`, `[audio]
stop_engine = "keyword"`), loaded once for the daemon and checked by `voiced check-config`; and
the optional Whisper base it may ask for, checked the same way before anything starts."""

from __future__ import annotations

from functools import partial

from voiced.audio.keyword.model import KeywordModel, KeywordModelError
from voiced.audio.keywords import KeywordModels, load_models, wake_model
from voiced.audio.whisper import BASE
from voiced.audio.whisperbase import base_model_path
from voiced.config import Config, resolve_config_path
from voiced.errors import ConfigError, Problem


def keyword_models(config: Config) -> KeywordModels:
    """The models to listen with; ConfigError names the file, the key and what is wrong (every
    problem, as `keyword_problems` finds them)."""
    file = partial(resolve_config_path, config)
    wake = None
    stops: tuple[KeywordModel, ...] = ()
    try:
        if config.wake.engine == "keyword":
            wake = wake_model(config.wake.keyword_model, config.daemon.wake_word, file)
        if config.audio.stop_spotter and config.audio.stop_engine.startswith("keyword"):
            stops = load_models(config.audio.stop_models, file)
    except KeywordModelError as exc:
        raise ConfigError(keyword_problems(config)) from exc
    return KeywordModels(
        wake,
        stops,
        config.wake.keyword_threshold,
        config.audio.stop_threshold,
        min_rms=config.audio.rms_gate,
    )


def keyword_problems(config: Config) -> list[Problem]:
    """What keeps the configured keyword models from loading, at the key that names them."""
    source = config.source or "defaults"
    file = partial(resolve_config_path, config)
    problems = []
    if config.wake.engine == "keyword":
        try:
            wake_model(config.wake.keyword_model, config.daemon.wake_word, file)
        except KeywordModelError as exc:
            problems.append(Problem(source, "wake.keyword_model", str(exc)))
    if config.audio.stop_spotter and config.audio.stop_engine.startswith("keyword"):
        wake_word = " ".join(config.daemon.wake_word.lower().split())
        for ref in config.audio.stop_models:
            try:
                (model,) = load_models((ref,), file)
            except KeywordModelError as exc:
                problems.append(Problem(source, "audio.stop_models", str(exc)))
                continue
            if model.phrase == wake_word:
                why = f"{ref!r} listens for the wake word: every wake word would stop the arm"
                problems.append(Problem(source, "audio.stop_models", why))
    return problems


def model_problems(config: Config) -> list[Problem]:
    """What keeps any model the configuration asks for beyond the bundled tiny.en from
    loading: the keyword models, and Whisper base (`[stt] model = "base"`, `second_opinion`),
    whose packages are the optional extra `base`."""
    problems = keyword_problems(config)
    if config.stt.engine == "azure":
        return problems  # no local model
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
