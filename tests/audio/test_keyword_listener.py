"""The listener with the shipped keyword models on real audio (espeak-ng voices held out of
training): the wake word opens the command's segment, a stop is acted on at once while
something moves, only noted while nothing does, and never taken from the daemon's own reply."""

from __future__ import annotations

from pathlib import Path

import pytest
from voiced.audio.keyword.model import KeywordModel, shipped
from voiced.audio.keywords import KeywordModels, Keywords
from voiced.audio.listener import Heard, KeywordHeard, Listener, ListenerEvent
from voiced.audio.settings import AudioSettings, WakeSettings
from voiced.audio.source import WavSource
from voiced.audio.stopspot import KeywordStopSpotter, Spotted, StopSpotter
from voiced.audio.transcribe import BiasVocabulary
from voiced.audio.wake import make_wake_gate
from voiced.audio.whisper import WhisperTranscriber
from voiced.rules.normalize import normalize

from tests.audio.clips import Clips


def _is_stop(text: str) -> bool:
    # Whisper may repeat a short phrase ("hold on hold on hold"); the router's rule is not
    # under test here.
    return normalize(text) == "stop" or normalize(text).startswith("hold on")


def _keywords() -> Keywords:
    models = KeywordModels(
        KeywordModel.load(shipped("computer")), (KeywordModel.load(shipped("stop")),)
    )
    return Keywords(models)


async def _listen(
    path: Path,
    whisper: WhisperTranscriber,
    bias: BiasVocabulary,
    armed: bool,
    wake: bool = True,
    with_whisper: bool = False,
) -> list[ListenerEvent]:
    settings = AudioSettings()
    also = (
        StopSpotter(settings, whisper.settings, _is_stop, lambda: armed) if with_whisper else None
    )
    listener = Listener(
        WavSource(path, realtime=False),
        whisper,
        settings,
        bias=bias,
        wake_gate=make_wake_gate(WakeSettings(engine="keyword"), "computer", "computer"),
        wake_required=lambda: wake,
        spotter=KeywordStopSpotter(lambda: armed, also),
        keywords=_keywords(),
    )
    return [event async for event in listener.events()]


@pytest.fixture(scope="module")
def command_then_stop(clips: Clips) -> Path:
    return clips.concat(
        [
            clips.silence(0.5),
            clips.speech("computer add bread"),
            clips.silence(1.0),
            clips.speech("stop", "en-gb"),
            clips.silence(1.0),
        ]
    )


async def test_the_wake_word_opens_the_command_and_a_stop_is_acted_on(
    command_then_stop: Path, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    events = await _listen(command_then_stop, whisper, sandwich_bias, armed=True)
    hits = [e for e in events if isinstance(e, KeywordHeard)]
    assert [(h.hit.role, h.acted) for h in hits] == [("wake", True), ("stop", True)]
    heard = [normalize(e.text) for e in events if isinstance(e, Heard)]
    assert heard[0] == "computer add bread"
    (spotted,) = [e for e in events if isinstance(e, Spotted)]
    assert spotted.text == "stop" and spotted.engine == "keyword"
    assert (
        spotted.score is not None and spotted.score >= KeywordModel.load(shipped("stop")).threshold
    )


async def test_a_stop_while_nothing_moves_is_only_noted(
    command_then_stop: Path, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    events = await _listen(command_then_stop, whisper, sandwich_bias, armed=False)
    stops = [e for e in events if isinstance(e, KeywordHeard) and e.hit.role == "stop"]
    assert stops and not any(e.acted for e in stops)
    assert not [e for e in events if isinstance(e, Spotted)]


async def test_without_the_wake_word_nothing_is_transcribed(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    talk = clips.concat(
        [clips.silence(0.5), clips.speech("add bread and cheese please"), clips.silence(1.0)]
    )
    events = await _listen(talk, whisper, sandwich_bias, armed=False)
    assert not [e for e in events if isinstance(e, Heard)]


async def test_with_whisper_too_a_stop_goes_out_once_and_a_pause_word_is_heard_early(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    said = clips.concat(
        [
            clips.silence(0.5),
            clips.speech("stop", "en-us"),
            clips.silence(1.5),
            clips.speech("hold on", "en-us"),
            clips.silence(1.5),
        ]
    )
    events = await _listen(said, whisper, sandwich_bias, armed=True, with_whisper=True)
    spotted = [(normalize(e.text), e.engine, e.t) for e in events if isinstance(e, Spotted)]
    # Whichever hears "stop" first sends it; the other does not send it again.
    assert [text for text, _, _ in spotted][:1] == ["stop"], spotted
    assert len(spotted) == 2 and spotted[1][0].startswith("hold on"), spotted
    assert spotted[1][1] == "whisper" and spotted[1][2] < 4.5
