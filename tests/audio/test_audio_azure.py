"""Azure Speech backend: honest configuration checks offline, and a live test that needs a key.

The SDK is the optional `azure` extra. Without it the engine fails with the install hint;
without a key or region it fails naming the setting and the environment variable."""

from __future__ import annotations

import importlib.util
import os

import pytest
from voiced.audio.azure import KEY_ENV, REGION_ENV, AzureTranscriber
from voiced.audio.engines import make_transcriber, whole_file_segment
from voiced.audio.settings import SttSettings
from voiced.audio.transcribe import BiasVocabulary, TranscriptionError
from voiced.rules.normalize import normalize

from tests.audio.clips import Clips


def _have_sdk() -> bool:
    # find_spec imports the parent packages of a dotted name, so a missing "azure" raises.
    try:
        return importlib.util.find_spec("azure.cognitiveservices.speech") is not None
    except ModuleNotFoundError:
        return False


HAVE_SDK = _have_sdk()
needs_sdk = pytest.mark.skipif(
    not HAVE_SDK,
    reason="azure-cognitiveservices-speech not installed (pip install 'voiced[azure]')",
)


def offline(**kwargs: str) -> AzureTranscriber:
    """An Azure transcriber that ignores the developer's environment."""
    settings = SttSettings(engine="azure", **kwargs)
    transcriber = AzureTranscriber(settings)
    transcriber.key = settings.azure_key
    transcriber.region = settings.azure_region
    return transcriber


def test_the_engine_setting_selects_azure() -> None:
    assert isinstance(make_transcriber(SttSettings(engine="azure")), AzureTranscriber)


@pytest.mark.skipif(HAVE_SDK, reason="the SDK is installed; this checks the message without it")
async def test_without_the_sdk_the_error_says_how_to_install_it() -> None:
    with pytest.raises(TranscriptionError, match="pip install"):
        await offline(azure_key="k", azure_region="westeurope").load()


@needs_sdk
@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [
        ({}, [KEY_ENV, REGION_ENV]),
        ({"azure_key": "k"}, [REGION_ENV]),
        ({"azure_region": "westeurope"}, [KEY_ENV]),
    ],
)
async def test_missing_key_or_region_is_named(kwargs: dict[str, str], missing: list[str]) -> None:
    with pytest.raises(TranscriptionError) as raised:
        await offline(**kwargs).load()
    for name in missing:
        assert name in str(raised.value)


@needs_sdk
def test_environment_supplies_key_and_region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "from-env")
    monkeypatch.setenv(REGION_ENV, "northeurope")
    transcriber = AzureTranscriber(SttSettings(engine="azure"))
    assert (transcriber.key, transcriber.region) == ("from-env", "northeurope")
    transcriber.check()


@needs_sdk
def test_recognizer_is_built_offline_with_the_phrase_list() -> None:
    # Building sends nothing; only recognize_once talks to the service.
    transcriber = offline(azure_key="0" * 32, azure_region="westeurope", azure_language="en-GB")
    assert transcriber.speech_config().speech_recognition_language == "en-GB"
    recognizer, stream = transcriber.recognizer(BiasVocabulary.build(["bread", "cheese"]))
    assert recognizer is not None
    stream.close()


@pytest.mark.live
@pytest.mark.skipif(
    not (os.environ.get(KEY_ENV) and os.environ.get(REGION_ENV) and HAVE_SDK),
    reason=f"live Azure test: set {KEY_ENV} and {REGION_ENV} and install the azure extra",
)
async def test_live_azure_transcribes_a_command(clips: Clips) -> None:
    transcriber = AzureTranscriber(SttSettings(engine="azure"))
    segment = whole_file_segment(clips.speech("go to position two", "en-gb"))
    transcript = await transcriber.transcribe(segment, BiasVocabulary.build(["position"]))
    assert normalize(transcript.text) == "go to position 2"
