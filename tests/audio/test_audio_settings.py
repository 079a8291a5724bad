"""Audio settings: defaults work, impossible values are refused with the field's name, both when
built directly (ValueError) and when read as config sections by voiced.configschema (ConfigError
naming the key)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest
from voiced.audio.settings import (
    AudioSettings,
    FrontEndSettings,
    SttSettings,
    TtsSettings,
    WakeSettings,
)

from voiced import configschema
from voiced.errors import ConfigError

SECTIONS = [AudioSettings, SttSettings, WakeSettings, TtsSettings]

BAD_VALUES: list[tuple[Any, dict[str, Any], str]] = [
    (AudioSettings, {"frame_ms": 25}, "frame_ms"),
    (AudioSettings, {"vad_aggressiveness": 4}, "vad_aggressiveness"),
    (AudioSettings, {"start_frames": 6, "start_window": 5}, "start_frames"),
    (AudioSettings, {"hangover_ms": 10}, "hangover_ms"),
    (AudioSettings, {"hangover_ms": 20}, "hangover_ms"),
    (AudioSettings, {"max_segment_ms": 100, "min_segment_ms": 200}, "max_segment_ms"),
    (AudioSettings, {"silero_threshold": 1.5}, "silero_threshold"),
    (AudioSettings, {"silero_threshold": 0.0}, "silero_threshold"),
    (AudioSettings, {"queue_seconds": 0.0}, "queue_seconds"),
    (AudioSettings, {"block_ms": 0}, "block_ms"),
    (AudioSettings, {"source": ""}, "source"),
    (SttSettings, {"engine": "vosk"}, "engine"),
    (SttSettings, {"bias": "both"}, "bias"),
    (SttSettings, {"temperatures": ()}, "temperatures"),
    (SttSettings, {"window_s": 10.0}, "window_s"),
    (SttSettings, {"cpu_threads": 0}, "cpu_threads"),
    (WakeSettings, {"engine": "porcupine"}, "engine"),
    (WakeSettings, {"model": "hey_computer"}, "model"),
    (WakeSettings, {"window_s": 0.0}, "window_s"),
    (TtsSettings, {"voice": "Hal"}, "voice"),
    (TtsSettings, {"engine": "festival"}, "engine"),
    (TtsSettings, {"rate": 500}, "rate"),
]


def test_defaults_are_valid() -> None:
    settings = FrontEndSettings()
    assert settings.audio.frame_ms == 30 and settings.stt.beam_size == 1
    assert settings.audio.device == ""


@pytest.mark.parametrize(("cls", "kwargs", "field"), BAD_VALUES)
def test_bad_values_name_the_field(cls: Any, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        cls(**kwargs)


@pytest.mark.parametrize(("cls", "kwargs", "field"), BAD_VALUES)
def test_bad_values_in_a_config_table_name_the_key(
    cls: Any, kwargs: dict[str, Any], field: str
) -> None:
    table = {key: list(value) if isinstance(value, tuple) else value
             for key, value in kwargs.items()}  # fmt: skip
    with pytest.raises(ConfigError) as raised:
        configschema.parse(cls, table, "voiced.toml")
    assert field in [problem.path for problem in raised.value.problems]
    assert all(problem.source == "voiced.toml" for problem in raised.value.problems)


def test_replace_is_checked_too() -> None:
    with pytest.raises(ValueError, match=r"^hangover_ms:"):
        dataclasses.replace(AudioSettings(), frame_ms=30, hangover_ms=20)


def test_every_problem_of_a_direct_construction_is_listed() -> None:
    with pytest.raises(ValueError, match=r"^block_ms: .*; frame_ms: "):
        AudioSettings(frame_ms=25, block_ms=0)


@pytest.mark.parametrize("cls", SECTIONS)
def test_an_empty_table_gives_the_defaults(cls: Any) -> None:
    assert configschema.parse(cls, {}, "voiced.toml") == cls()


@pytest.mark.parametrize("cls", SECTIONS)
def test_every_key_is_documented_and_round_trips(cls: Any) -> None:
    for item in dataclasses.fields(cls):
        assert item.metadata.get(configschema.DOC), f"{cls.__name__}.{item.name} has no doc"
    defaults = cls()
    assert configschema.parse(cls, configschema.to_dict(defaults), "x") == defaults
    rendered = configschema.render_toml(defaults)
    assert all(f"\n{key} = " in "\n" + rendered for key in configschema.field_paths(cls))


def test_a_good_table_is_read() -> None:
    audio = configschema.parse(
        AudioSettings,
        {"device": "USB", "frame_ms": 20, "hangover_ms": 20, "rms_gate": 80, "start_frames": 1,
         "start_window": 1},
        "voiced.toml",
    )  # fmt: skip
    assert (audio.device, audio.frame_ms, audio.hangover_ms) == ("USB", 20, 20)
    assert audio.rms_gate == 80.0 and isinstance(audio.rms_gate, float)
    tts = configschema.parse(TtsSettings, {"voices": ["Hal"], "voice": "Hal"}, "voiced.toml")
    assert tts.voices == ("Hal",)


def test_wrong_types_are_refused_by_the_config_reader() -> None:
    with pytest.raises(ConfigError, match="device: expected a string"):
        configschema.parse(AudioSettings, {"device": 3}, "voiced.toml")
    with pytest.raises(ConfigError, match="silero_gate: expected true or false"):
        configschema.parse(AudioSettings, {"silero_gate": 1}, "voiced.toml")


@dataclass(frozen=True)
class _Daemon:
    audio: AudioSettings = field(default_factory=AudioSettings, metadata=configschema.doc("Audio."))
    tts: TtsSettings = field(default_factory=TtsSettings, metadata=configschema.doc("Speech."))


def test_as_sections_problems_carry_the_section_and_all_are_reported() -> None:
    table = {"audio": {"hangover_ms": 20, "frame_ms": 25}, "tts": {"voice": "Hal"}}
    with pytest.raises(ConfigError) as raised:
        configschema.parse(_Daemon, table, "voiced.toml")
    # frame_ms is wrong, so [audio]'s cross-field rules are not run; [tts]'s still are.
    assert [problem.path for problem in raised.value.problems] == ["audio.frame_ms", "tts.voice"]
