"""Training clips: what is said, by whom, in which room and noise, made into embeddings with a
label for each.

A `ClipSpec` says everything about one clip, its seeds included, so rendering it is a pure
function and clips can be rendered in any order, in several processes, and cached. A rendered
clip is its embeddings (every 80 ms) and one label per embedding: 1 where the phrase has just
been said (its end is in `positive_s` of the view's end), 0 where it has not been said, -1
where it is being said (neither: the head is not asked).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
from voiced.audio.convert import read_audio
from voiced.audio.keyword.features import SpeechEmbedding, clip_embeddings
from voiced.audio.keyword.training import rooms, voices
from voiced.audio.keyword.training.fit import HARD
from voiced.audio.keyword.training.speakers import Speaker, transform
from voiced.audio.keyword.training.voices import RATE, Audio, Delivery, Voice

CLIP_VERSION = 6
"""Changes when rendering changes, so cached clips of an older version are not used."""
TRAIN_HOP = 8
"""Training takes embeddings every 80 ms (the head's spacing); the daemon every 40 ms."""


@dataclass(frozen=True)
class Acoustics:
    """Where and how a clip is heard."""

    speaker: Speaker = Speaker(1.0, 1.0, 1.0)
    room: bool = False
    microphone: bool = False
    noise: str | None = None
    """A `rooms.NoiseSources` kind, or None for none."""
    snr_db: float = 30.0
    level_db: float = -20.0
    """Peak level of the finished clip (dBFS)."""
    mel_warp: float = 1.0
    """The mel bands stretched by this factor before the embedding (`features.warp_mels`)."""
    seed: int = 0


@dataclass(frozen=True)
class ClipSpec:
    """One clip. `pieces` are said in order with `gaps_s` of pause between them; `phrase_at`
    is the index of the phrase among them, or of the near word in a negative (None: no piece
    is singled out)."""

    voice: Voice | None
    pieces: tuple[str, ...]
    delivery: Delivery = Delivery()
    acoustics: Acoustics = Acoustics()
    phrase_at: int | None = None
    gaps_s: tuple[float, ...] = ()
    lead_s: float = 2.2
    tail_s: float = 0.6
    recording: str | None = None
    """A recording to use instead of a voice (a real negative)."""
    joined: str | None = None
    """Say the phrase and the piece after it as one utterance, joined by this (" " or ", "),
    instead of one after the other: "computer add bread" in one breath. The phrase is taken to
    end where it ends said alone."""


@dataclass
class Rendered:
    """A clip's embeddings and labels."""

    vectors: npt.NDArray[np.float32]
    labels: npt.NDArray[np.int8]
    group: str = ""
    """What the clip is ("positive", "near", "talk", ...): for weighting and reports."""
    voice: str = ""


@dataclass(frozen=True)
class Labelling:
    positive_s: tuple[float, float] = (0.06, 0.45)
    """Views ending this long after the phrase's end are positives."""


@dataclass
class Worker:
    """Per-process state: the embedding session, the rooms, the noise sources."""

    room_bank: rooms.RoomBank
    noise: rooms.NoiseSources
    labelling: Labelling
    embedding: SpeechEmbedding = field(default_factory=SpeechEmbedding)


def speaker(spec: ClipSpec) -> Speaker:
    """The clip's speaker change, with the delivery's pitch for engines that have no pitch
    control of their own."""
    s = spec.acoustics.speaker
    if spec.voice is not None and spec.voice.engine in voices.WORLD_PITCHED:
        return replace(s, f0=s.f0 * spec.delivery.pitch)
    return s


def speak(spec: ClipSpec) -> tuple[Audio, tuple[int, int] | None]:
    """The clip's dry speech, and where the phrase starts and ends in it (samples)."""
    if spec.recording is not None:
        audio = recording(spec.recording)
        lead = np.zeros(round(spec.lead_s * RATE), np.float32)
        if spec.phrase_at is None:
            return np.concatenate([lead, audio]), None
        # A take of the phrase (enrollment): the phrase is all of it.
        said = voices.trim(audio)
        tail = np.zeros(round(spec.tail_s * RATE), np.float32)
        return np.concatenate([lead, said, tail]), (len(lead), len(lead) + len(said))
    parts: list[Audio] = [np.zeros(round(spec.lead_s * RATE), np.float32)]
    span: tuple[int, int] | None = None
    pieces = list(spec.pieces)
    skip = -1
    for i, text in enumerate(pieces):
        if i == skip:
            continue
        if i > 0:
            parts.append(np.zeros(round(spec.gaps_s[i - 1] * RATE), np.float32))
        assert spec.voice is not None, "a clip with words has a voice"
        start = sum(len(p) for p in parts)
        end: int | None = None
        if i == spec.phrase_at and spec.joined is not None and i + 1 < len(pieces):
            end = start + len(voices.say(spec.voice, text, spec.delivery))
            text, skip = f"{text}{spec.joined}{pieces[i + 1]}", i + 1
        said = transform(voices.say(spec.voice, text, spec.delivery), speaker(spec))
        if i == spec.phrase_at:
            span = (start, end if end is not None else start + len(said))
        parts.append(said)
    parts.append(np.zeros(round(spec.tail_s * RATE), np.float32))
    return np.concatenate(parts), span


def hear(dry: Audio, spec: ClipSpec, worker: Worker) -> npt.NDArray[np.int16]:
    """`dry` as the microphone hears it."""
    a = spec.acoustics
    rng = np.random.default_rng(a.seed)
    x = dry
    if a.room:
        x = worker.room_bank.apply(x, rng)
    if a.microphone:
        x = rooms.microphone(x, rng)
    # A little noise always: digital silence is not what a microphone gives.
    x = rooms.add_noise(x, rooms.coloured("pink", len(x), rng), 55.0)
    if a.noise is not None:
        x = rooms.add_noise(x, worker.noise.make(a.noise, len(x), rng), a.snr_db)
    peak = float(np.abs(x).max()) or 1.0
    x = x * (32767 * 10 ** (a.level_db / 20) / peak)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def render(spec: ClipSpec, worker: Worker, group: str) -> Rendered:
    dry, span = speak(spec)
    heard = hear(dry, spec, worker)
    emb = clip_embeddings(heard, worker.embedding, TRAIN_HOP, mel_warp=spec.acoustics.mel_warp)
    labels = np.zeros(len(emb.ends), dtype=np.int8)
    if span is not None:
        lo, hi = worker.labelling.positive_s
        start, end = span
        after = (emb.ends - end) / RATE
        if group == "positive":
            labels[emb.ends > start + 0.1 * RATE] = -1
            labels[(after >= lo) & (after <= hi)] = 1
        else:  # just after a word like the phrase: the negatives that matter most
            labels[(after >= -0.1) & (after <= hi + 0.1)] = HARD
    voice = spec.voice.key if spec.voice else (spec.recording or "")
    return Rendered(emb.vectors, labels, group, voice)


_WORKER: Worker | None = None


def init_worker(
    room_seed: int, room_count: int, noise: rooms.NoiseSources, labelling: Labelling
) -> None:
    global _WORKER
    _WORKER = Worker(rooms.RoomBank(room_count, room_seed), noise, labelling)


def render_in_worker(job: tuple[ClipSpec, str]) -> Rendered | str:
    """For a process pool: the rendered clip, or why it could not be made."""
    spec, group = job
    assert _WORKER is not None
    try:
        return render(spec, _WORKER, group)
    except voices.SynthesisError as exc:
        return str(exc)


def load_cached(cache: Path, key: str) -> Rendered | None:
    path = cache / key[:2] / f"{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            return Rendered(data["vectors"], data["labels"], str(data["group"]), str(data["voice"]))
    except (OSError, ValueError, KeyError):
        return None


def store_cached(cache: Path, key: str, clip: Rendered) -> None:
    path = cache / key[:2] / f"{key}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        np.savez(
            f,
            vectors=clip.vectors,
            labels=clip.labels,
            group=np.array(clip.group),
            voice=np.array(clip.voice),
        )
    tmp.replace(path)


@functools.cache
def recording(path: str) -> Audio:
    return read_audio(path).astype(np.float32)


def gather(rendered: Sequence[Rendered]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
    """All clips' embeddings and labels, one after another."""
    return (
        np.concatenate([r.vectors for r in rendered]),
        np.concatenate([r.labels for r in rendered]),
    )
