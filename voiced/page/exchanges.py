"""Each utterance's story for the page: what was heard (with its audio), how it was
interpreted, what was said back, and how it ended.

The story is told by following the event stream (`EventLog.subscribe`), tied together by the
correlation id every event of one utterance carries: `utterance` opens it, `interpretation`,
`answer` and `feedback` add to it, `run` (the command's history row changed: planned, running,
how it ended, and what the operator was told) moves it on, `stopped` ends the stop's own,
`dropped` ends a command the stop withdrew (found by its words, newest first).

Audio arrives from the listener (`publish`, its segment sink) just before the `utterance` it
was heard as; the two are matched by the segment's speech end, which the event carries.
Segments the listener rejected are stories of their own (no utterance follows).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field, replace
from typing import Any

from voiced import eventtypes as ev
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SAMPLE_RATE
from voiced.audio.transcribe import Transcript
from voiced.eventtypes import Record
from voiced.page.wav import wav_bytes
from voiced.words.plain import as_words

PENDING_CLIPS = 8
"""Heard segments kept while waiting for their utterance (a wake word alone has none)."""
KEYWORDS_SHOWN = 10
"""What the keyword models heard: the last this many hits."""


@dataclass(frozen=True)
class Clip:
    """One segment's audio and what the listener knew of it."""

    id: int
    wav: bytes
    """16-bit PCM WAV, pre-roll included (served as /segments/<id>.wav)."""
    preroll: int
    """Samples of pre-roll before the live part."""
    samples: int
    speech_end: float
    raw: str
    """The recogniser's text as produced (special tokens included)."""
    meta: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": f"/segments/{self.id}.wav",
            "preroll": self.preroll,
            "samples": self.samples,
            "duration_ms": round(1000 * self.samples / SAMPLE_RATE, 1),
            "raw": self.raw,
            **self.meta,
        }


@dataclass(frozen=True)
class Exchange:
    """One utterance from what was said to how it ended."""

    id: int
    said: str
    """What entered the frames ("" for rejected audio)."""
    source: str
    """typed, heard, queue, replay, rejected, or who sent it from outside (page, mqtt)."""
    correlation_id: str | None
    t: float
    """Seconds since the daemon started (the event stream's clock)."""
    clip: Clip | None = None
    interpretation: str | None = None
    tier: str | None = None
    """Who understood it: phrase bank, grammar, templates, llm, ..."""
    said_back: tuple[str, ...] = ()
    """What the operator heard about it."""
    outcome: str | None = None
    """done, stopped, refused, dropped, answered, rejected, ... (None while open)."""
    why: str | None = None
    """The reason for a rejection or a drop."""
    dropped: tuple[str, ...] = field(default=())
    """For a stop: the commands it withdrew."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "said": self.said,
            "source": self.source,
            "correlation_id": self.correlation_id,
            "t": self.t,
            "audio": None if self.clip is None else self.clip.to_dict(),
            "interpretation": self.interpretation,
            "tier": self.tier,
            "said_back": list(self.said_back),
            "outcome": self.outcome,
            "why": self.why,
            "dropped": list(self.dropped),
        }


class Exchanges:
    """The last `keep` stories, newest last; `on_record` is an EventLog listener."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._stories: OrderedDict[int, Exchange] = OrderedDict()
        self._pending: deque[Clip] = deque(maxlen=PENDING_CLIPS)
        self._next_id = 1
        self._next_clip = 1
        self._remote: str | None = None
        self._now = 0.0
        self.keywords: deque[dict[str, Any]] = deque(maxlen=KEYWORDS_SHOWN)
        """The keyword models' last hits (`keyword` events), oldest first."""

    def stories(self) -> list[Exchange]:
        return list(self._stories.values())

    def clip(self, clip_id: int) -> Clip | None:
        for story in self._stories.values():
            if story.clip is not None and story.clip.id == clip_id:
                return story.clip
        return next((c for c in self._pending if c.id == clip_id), None)

    def publish(self, segment: Segment, transcript: Transcript | None, reason: str | None) -> None:
        """The listener's segment sink: heard audio waits for its utterance; rejected audio is
        a story now."""
        clip = _clip(self._next_clip, segment, transcript)
        self._next_clip += 1
        if reason is None:
            self._pending.append(clip)
            return
        story = self._open("", "rejected", None, self._now)
        self._stories[story.id] = replace(story, clip=clip, outcome="rejected", why=reason)

    def on_record(self, record: Record) -> None:
        self._now = record.t
        event, cid = record.event, record.correlation_id
        if isinstance(event, ev.Keyword):
            self.keywords.append({"t": record.t, **event.to_dict()})
            return
        if isinstance(event, ev.RemoteSaid):
            self._remote = event.source
        elif isinstance(event, ev.Utterance):
            self._heard(event, cid, record.t)
        elif isinstance(event, ev.Interpreted):
            self._update(cid, interpretation=as_words(event.interpretation), tier=event.source)
        elif isinstance(event, ev.Answered):
            self._update(cid, interpretation=f"question: {event.question}", tier="questions")
        elif isinstance(event, ev.Feedback):
            story = self._by_correlation(cid)
            if story is not None:
                self._put(replace(story, said_back=(*story.said_back, event.text)))
        elif isinstance(event, ev.Stopped):
            self._update(cid, outcome="stopped", dropped=tuple(event.dropped))
        elif isinstance(event, ev.Dropped):
            self._drop(event.text, event.reason)
        elif isinstance(event, ev.RunChanged):
            self._settle(cid, event.status, event.feedback)

    def _settle(self, cid: str | None, status: str, feedback: str | None) -> None:
        """The command's history row changed (`run`): its status, and what the operator was
        told about it. A command the stop withdrew stays dropped."""
        story = self._by_correlation(cid)
        if story is None or story.outcome == "dropped":
            return
        said_back = story.said_back
        if feedback and feedback not in said_back:
            said_back = (*said_back, feedback)
        self._put(replace(story, outcome=status, said_back=said_back))

    def _heard(self, event: ev.Utterance, cid: str | None, t: float) -> None:
        clip = None
        if event.speech_end is not None:
            clip = next((c for c in self._pending if c.speech_end == event.speech_end), None)
            if clip is not None:
                self._pending.remove(clip)
        if self._remote is not None:
            source, self._remote = self._remote, None
        elif event.queued is not None or event.replay is not None:
            source = "queue" if event.queued is not None else "replay"
        else:
            source = "heard" if event.audio_t is not None else "typed"
        story = self._open(event.text, source, cid, t)
        self._stories[story.id] = replace(story, clip=clip)

    def _open(self, said: str, source: str, cid: str | None, t: float) -> Exchange:
        story = Exchange(self._next_id, said, source, cid, round(t, 3))
        self._next_id += 1
        self._stories[story.id] = story
        while len(self._stories) > self._keep:
            self._stories.popitem(last=False)
        return story

    def _by_correlation(self, cid: str | None) -> Exchange | None:
        if cid is None:
            return None
        return next((s for s in reversed(self._stories.values()) if s.correlation_id == cid), None)

    def _update(self, cid: str | None, **changes: Any) -> None:
        story = self._by_correlation(cid)
        if story is not None:
            self._put(replace(story, **changes))

    def _drop(self, text: str, reason: str) -> None:
        for story in reversed(self._stories.values()):
            if story.said == text and story.outcome in (None, "planned", "queued", "running"):
                self._put(replace(story, outcome="dropped", why=reason))
                return

    def _put(self, story: Exchange) -> None:
        if story.id in self._stories:
            self._stories[story.id] = story


def _clip(clip_id: int, segment: Segment, transcript: Transcript | None) -> Clip:
    meta: dict[str, Any] = {
        "rms": segment.vad.rms,
        "silero_prob": segment.vad.silero_prob,
        "closed_by": segment.closed_by,
    }
    if transcript is not None:
        meta.update(no_speech_prob=transcript.no_speech_prob,
                    avg_logprob=transcript.avg_logprob,
                    transcribe_s=round(transcript.seconds, 3))  # fmt: skip
    return Clip(
        clip_id,
        wav_bytes(segment.samples),
        segment.preroll,
        len(segment.samples),
        round(segment.vad.speech_end, 3),
        transcript.raw if transcript else "",
        meta,
    )
