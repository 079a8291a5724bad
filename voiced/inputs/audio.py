"""`voiced run --audio mic|FILE|-|wyoming://HOST:PORT`: the audio front end, owned by the daemon.

Builds the listener (source, segmenter, wake gate, transcriber), the speaker, the playback
timeline the daemon's speech goes on (played by the microphone's device, and heard past by the
listener: full duplex), from the configuration; every segment goes to `segments` (the cell's
page) when given. The vocabulary
bias comes from the live cell: its words, the phrase bank, the frame keywords and the wake word.
Utterances enter the frame router exactly as typed lines do; every timer runs on the audio
clock.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from dataclasses import replace

import structlog

from voiced import eventtypes as ev
from voiced.audio.aec import make_canceller
from voiced.audio.convert import peak_level_db
from voiced.audio.duplex import Duplex, EchoGate
from voiced.audio.engines import make_transcriber
from voiced.audio.feedback import SpokenFeedback
from voiced.audio.keywords import Keywords
from voiced.audio.listener import (
    BargeIn,
    Heard,
    KeywordHeard,
    Listener,
    ListenerEvent,
    Rejected,
    SegmentSink,
    Tick,
)
from voiced.audio.playback import Playback
from voiced.audio.room import RoomEcho, RoomSettings
from voiced.audio.satellite import LinkChange, SatelliteSource, is_satellite
from voiced.audio.segmenter import Activity
from voiced.audio.settings import AudioSettings
from voiced.audio.source import AudioSource, MicSource, open_source
from voiced.audio.stopspot import KeywordStopSpotter, Spotted, StopSpotter
from voiced.audio.transcribe import BiasVocabulary
from voiced.audio.tts import NullSpeaker, Speaker, make_speaker
from voiced.audio.wake import make_wake_gate
from voiced.audio.wyomingstt import ServerSwitch
from voiced.config import Config
from voiced.events import EventLog
from voiced.inputs.keywords import keyword_models
from voiced.robot.cell import Cell

log = structlog.get_logger(__name__)

FRAME_WORDS = (
    "go", "done", "send", "cancel", "abort", "read back", "always listen", "wake word mode",
    "mode query", "switch voice", "start dictation", "end dictation", "save note", "yes", "no",
    "proceed", "stop", "halt", "what can I say", "do that again", "skip", "instead of",
)  # fmt: skip
"""Words the frames listen for, so the transcriber expects them too."""


def typical_commands(cell: Cell, wake_word: str) -> list[str]:
    """Commands as an operator says them, built from the cell's own composites and names:
    Whisper follows a prompt that sounds like earlier speech far better than a word list."""
    items, zones = list(cell.items()), list(cell.zone_aliases)
    said: list[str] = []
    if cell.composite("add_layer"):
        # The forms the grammar knows, each once, before the plain list: counts, pairs, every
        # stack and places (single-word zone names read naturally after "on the").
        places = [z for z in zones if " " not in z] or ["stack"]
        first, second = (items + items)[:2]
        said += [f"{wake_word} add {items[0]}", f"add {second} and {items[-1]}",
                 f"three layers of {items[2 % len(items)]}", f"{first} on every stack"]  # fmt: skip
        said += [f"put {item} on the {places[i % len(places)]}" for i, item in enumerate(items)]
        said += [f"{wake_word} add {item}" for item in items[1:]]
        said += ["put it back", "start over"]
    if cell.composite("run_routine_at") or cell.composite("move_to_position"):
        positions = [p.name.replace("_", " ").lower() for p in cell.poses.values()]
        said += [f"go to {p}" for p in positions]
        said += ["weld at position 1 and 2", "inspect all positions", "grab the camera",
                 "return the tool and go home"]  # fmt: skip
    if cell.composite("move_object"):
        objects = list(cell.objects)
        said += [f"stack the {a} on the {b}" for a, b in itertools.pairwise(objects)]
        said += ["build a tower", "make a pyramid", "put the red cube on the left"]
    return [*said, f"{wake_word} go home", "what can I say"]


def bias_for(cell: Cell, phrases: Iterable[str], config: Config) -> BiasVocabulary:
    """The live cell's vocabulary for the transcriber."""
    words = [
        config.daemon.wake_word,
        *cell.objects,
        *cell.zones(),
        *cell.zone_aliases,
        *cell.poses,
        *cell.tools,
        *cell.routines,
        *cell.instructions(),
        *FRAME_WORDS,
        *config.tts.voices,
    ]
    return BiasVocabulary.build(words, [*typical_commands(cell, config.daemon.wake_word), *phrases])


def _duplex(
    config: Config,
    audio: AudioSettings,
    speaker: Speaker,
    playback: Playback,
    room_echo_db: float | None,
) -> Duplex:
    """What the front end knows of its own voice: the echo canceller (when it speaks), the gate
    behind it, and the simulated room of a file session (`--room-echo-db`)."""
    room = RoomEcho(RoomSettings(gain_db=room_echo_db)) if room_echo_db is not None else None
    speaks = not isinstance(speaker, NullSpeaker)
    canceller = make_canceller(audio.echo_cancel) if speaks else None
    gate = EchoGate(residual_db=audio.echo_residual_db)
    return Duplex(playback, config.tts.tail_ms / 1000.0, room, canceller, gate)


def _keywords(config: Config) -> tuple[Keywords | None, str | None]:
    """The keyword models the configuration asks for (None: none), and the wake phrase among
    them (None: the wake word is heard in transcripts)."""
    models = keyword_models(config)
    wake_phrase = models.wake.phrase if models.wake is not None else None
    return (None if models.empty else Keywords(models)), wake_phrase


def _stop_spotter(
    audio: AudioSettings,
    config: Config,
    is_stop: Callable[[str], bool] | None,
    armed: Callable[[], bool],
) -> StopSpotter | KeywordStopSpotter | None:
    """The stop spotter `[audio] stop_engine` names (None: off, or no stop words to hear)."""
    if is_stop is None or not audio.stop_spotter:
        return None
    whisper = (
        StopSpotter(audio, config.stt, is_stop, armed) if audio.stop_engine != "keyword" else None
    )
    keyword = audio.stop_engine.startswith("keyword")
    return KeywordStopSpotter(armed, whisper) if keyword else whisper


class AudioFrontEnd:
    """Everything between the microphone (or a file) and the frame router."""

    def __init__(
        self,
        config: Config,
        source: str,
        fast: bool,
        events: EventLog,
        bias: BiasVocabulary,
        wake_required: Callable[[], bool],
        *,
        is_stop: Callable[[str], bool] | None = None,
        moving: Callable[[], bool] = lambda: False,
        room_echo_db: float | None = None,
        on_status: Callable[[], None] = lambda: None,
        segments: SegmentSink | None = None,
    ) -> None:
        self.config = config
        self.events = events
        self.spec = "stdin" if source == "-" else source
        self.on_status = on_status
        """Called when `status` changes (the daemon's STATUS= line)."""
        self.troubles: dict[str, str] = {}
        """What is wrong with the front end's links now, by link (see `status`)."""
        audio = replace(config.audio, source=self.spec, realtime=not fast)
        self.transcriber = make_transcriber(config.stt, self._speech_server)
        # A file or a pipe runs on its own clock: its speech is timed on that clock, not played.
        live = self.spec == "mic" or is_satellite(self.spec)
        self.speaker: Speaker = make_speaker(config.tts, audible=live)
        self.playback = Playback()
        self.duplex = _duplex(config, audio, self.speaker, self.playback, room_echo_db)
        self.keywords, wake_phrase = _keywords(config)
        """The wake word and stop words as keyword models hear them (None: no model in use)."""

        armed = lambda: audio.stop_spotter_always or moving() or self.speaking  # noqa: E731
        self.listener = Listener(
            self._source(audio), self.transcriber, audio, bias=bias,
            wake_gate=make_wake_gate(config.wake, config.daemon.wake_word, wake_phrase),
            wake_required=wake_required, sink=segments,
            spotter=_stop_spotter(audio, config, is_stop, armed), keywords=self.keywords,
            duplex=self.duplex,
            barge_in_ms=config.tts.barge_in_ms if config.tts.barge_in else None,
        )  # fmt: skip
        self.feedback = SpokenFeedback(
            self.speaker, self.playback, self.listener.hold,
            lambda: self.listener.play_position, config.tts.lead_ms / 1000,
        )  # fmt: skip

    def _source(self, audio: AudioSettings) -> AudioSource:
        playback = self.playback if self.speaker.audible else None
        if is_satellite(self.spec):
            return SatelliteSource(self.spec, playback=playback, queue_seconds=audio.queue_seconds,
                                   on_link=self._satellite_link)  # fmt: skip
        return open_source(self.spec, device=audio.device, realtime=audio.realtime,
                           block_ms=audio.block_ms, queue_seconds=audio.queue_seconds,
                           playback=playback)  # fmt: skip

    @property
    def status(self) -> str | None:
        """What STATUS= says of the audio links while one is in trouble; None when all is well."""
        return "; ".join(self.troubles.values()) or None

    def _trouble(self, link: str, words: str | None) -> None:
        if words is None:
            self.troubles.pop(link, None)
        else:
            self.troubles[link] = words
        self.on_status()

    # STATUS= first, then the event: whoever reads the event can rely on STATUS= having moved.
    def _speech_server(self, switch: ServerSwitch) -> None:
        words = None if switch.up else "speech server unusable, local model transcribes"
        self._trouble("speech server", words)
        self.events.emit(ev.SpeechServer(switch.up, switch.uri, switch.reason))

    def _satellite_link(self, change: LinkChange) -> None:
        words = None if change.connected else "satellite not linked, reconnecting"
        self._trouble("satellite", words)
        self.events.emit(ev.SatelliteLink(change.connected, change.uri, change.reason, change.name))

    @property
    def speaking(self) -> bool:
        """Whether the daemon's own voice (or its echo) reaches the input now."""
        return bool(self.duplex.speaking(self.listener.play_position))

    def interrupt(self, why: str) -> list[str]:
        """Stop talking now (a stop, a barge-in); returns what was cut short or never said."""
        return self.feedback.interrupt(self.listener.play_position, why)

    async def start(self, stack: AsyncExitStack) -> None:
        """Check the microphone and load the models (so READY=1 means ready): the
        transcriber's first, then the stop spotter's, one after the other before anything runs."""
        del stack  # nothing of the front end outlives the run yet
        if isinstance(self.listener.source, MicSource):
            self.listener.source.check()
        await self.transcriber.load()
        if self.listener.spotter is not None:
            await self.listener.spotter.load()

    def say(self, text: str) -> None:
        self.feedback.say(text)

    def describe(self, event: ListenerEvent) -> None:
        """Events for what the router never sees: rejected audio."""
        if isinstance(event, Rejected):
            self.events.emit(ev.Rejected(event.reason, event.raw, round(event.t, 3)))


def heard_event(heard: Heard) -> ev.Utterance:
    """The `utterance` event for a transcript: what was said and when, on the audio clock."""
    return ev.Utterance(
        heard.text,
        raw=heard.raw,
        audio_t=round(heard.t, 3),
        speech_end=round(heard.segment.vad.speech_end, 3),
        decoded_at=round(heard.decoded_at, 3),
        transcribe_s=round(heard.transcript.seconds, 3),
        hypothesis=heard.transcript.hypothesis or None,
        repaired=True if heard.transcript.repaired else None,
        spotted=True if heard.spotted else None,
        level_db=heard_level(heard),
        doubt=heard.transcript.doubt,
    )


def heard_level(heard: Heard) -> float | None:
    """How loud the speech of `heard` was at the microphone (`peak_level_db`)."""
    segment = heard.segment
    return peak_level_db(segment.samples[segment.preroll :])


def spotted_event(spotted: Spotted) -> ev.Spotted:
    """The `spotted` event: a stop acted on as soon as it was heard (`voiced.audio.stopspot`)."""
    return ev.Spotted(
        spotted.text, round(spotted.t, 3), round(spotted.speech_end, 3), spotted.seconds,
        spotted.score, spotted.engine,
    )  # fmt: skip


def keyword_event(heard: KeywordHeard) -> ev.Keyword:
    """The `keyword` event: what a keyword model heard, and whether it was acted on."""
    hit = heard.hit
    return ev.Keyword(hit.phrase, hit.role, hit.score, round(hit.t, 3), heard.acted)


__all__ = [
    "Activity",
    "AudioFrontEnd",
    "BargeIn",
    "Heard",
    "Spotted",
    "Tick",
    "bias_for",
    "heard_event",
    "keyword_event",
    "spotted_event",
]
