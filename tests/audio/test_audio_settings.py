"""Audio settings: defaults work, impossible values are refused with the field's name."""

from __future__ import annotations

from typing import Any

import pytest

from audio.settings import (
    AudioSettings,
    FrontEndSettings,
    SttSettings,
    TtsSettings,
    ViewerSettings,
    WakeSettings,
)


def test_defaults_are_valid() -> None:
    settings = FrontEndSettings()
    assert settings.audio.frame_ms == 30 and settings.stt.beam_size == 1
    assert settings.viewer.host == "127.0.0.1" and not settings.viewer.enabled


@pytest.mark.parametrize(
    ("cls", "kwargs", "field"),
    [
        (AudioSettings, {"frame_ms": 25}, "frame_ms"),
        (AudioSettings, {"vad_aggressiveness": 4}, "vad_aggressiveness"),
        (AudioSettings, {"start_frames": 6, "start_window": 5}, "start_frames"),
        (AudioSettings, {"hangover_ms": 10}, "hangover_ms"),
        (AudioSettings, {"max_segment_ms": 100, "min_segment_ms": 200}, "max_segment_ms"),
        (AudioSettings, {"silero_threshold": 1.5}, "silero_threshold"),
        (SttSettings, {"engine": "vosk"}, "engine"),
        (SttSettings, {"bias": "both"}, "bias"),
        (SttSettings, {"temperatures": ()}, "temperatures"),
        (SttSettings, {"window_s": 10.0}, "window_s"),
        (WakeSettings, {"engine": "porcupine"}, "engine"),
        (WakeSettings, {"model": "hey_computer"}, "model"),
        (TtsSettings, {"voice": "Hal"}, "voice"),
        (TtsSettings, {"engine": "festival"}, "engine"),
        (ViewerSettings, {"port": 70000}, "port"),
    ],
)
def test_bad_values_name_the_field(cls: Any, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        cls(**kwargs)
