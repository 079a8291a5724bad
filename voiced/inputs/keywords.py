"""The keyword models a configuration asks for (`[wake] engine = "keyword"`, `[audio]
stop_engine = "keyword"`), loaded once for the daemon and checked by `voiced check-config`."""

from __future__ import annotations

from functools import partial

from voiced.audio.keyword.model import KeywordModel, KeywordModelError
from voiced.audio.keywords import KeywordModels, load_models, wake_model
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
