"""Hearing past its own voice: which words of a transcript are the daemon's own reply.

The daemon knows what it was saying and when (`voiced.audio.playback`). A segment heard while it
spoke is compared with the words of the reply that were playing then (the reply's text, cut to
the stretch of time the segment covers, with some slack since words do not take equal time):

- every word of the transcript is among those words: it is the daemon hearing itself;
- runs of two or more words in the reply's order are the reply leaking into the operator's
  words (tiny.en hears both voices at once): they are removed, the rest is the operator's.

A single shared word ("bread" in "add bread" while the daemon lists the items) stays: a run of
one matches too easily to be taken away from the operator.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from voiced.audio.guards import plain_words
from voiced.audio.playback import Phrase
from voiced.audio.settings import SAMPLE_RATE
from voiced.rules.normalize import closest

SLACK = 0.2
"""Fraction of a reply added on each side of the stretch a segment covers (word timing varies)."""
SAME_WORD = 80.0
"""rapidfuzz ratio at which a heard word counts as one of the reply's ("adding"/"adding.")."""


@dataclass(frozen=True)
class OwnVoice:
    """What is left of a transcript once the daemon's own words are taken out."""

    text: str
    """The operator's words ("" when all of it was the daemon)."""
    removed: tuple[str, ...]
    """The words taken out."""

    @property
    def all_own(self) -> bool:
        return not self.text and bool(self.removed)


def said_during(phrases: list[Phrase], start: int, end: int) -> list[str]:
    """The words of `phrases` playing between input positions `start` and `end` (with slack)."""
    out: list[str] = []
    for phrase in phrases:
        words = plain_words(phrase.text)
        full = len(phrase.pcm)
        if not words or full == 0:
            continue
        lo = (start - phrase.start) / full - SLACK
        hi = (min(end, phrase.end) - phrase.start) / full + SLACK
        n = len(words)
        out += [w for i, w in enumerate(words) if lo <= (i + 0.5) / n <= hi]
    return out


def _align(heard: list[str], said: list[str]) -> list[str]:
    """`heard` with each word replaced by the reply's word it sounds like, if any."""
    out = []
    for word in heard:
        best = closest(word, said, SAME_WORD)
        out.append(word if best is None else best[0])
    return out


def separate(transcript: str, said: list[str]) -> OwnVoice:
    """Split `transcript` into the operator's words and the reply's (`said`)."""
    heard = plain_words(transcript)
    if not heard or not said:
        return OwnVoice(transcript, ())
    aligned = _align(heard, said)
    if all(word in said for word in aligned):
        return OwnVoice("", tuple(heard))
    own = [False] * len(heard)
    for block in SequenceMatcher(None, aligned, said, autojunk=False).get_matching_blocks():
        if block.size >= 2:
            own[block.a : block.a + block.size] = [True] * block.size
    if not any(own):
        return OwnVoice(transcript, ())
    kept = [w for w, mine in zip(heard, own, strict=True) if not mine]
    removed = tuple(w for w, mine in zip(heard, own, strict=True) if mine)
    return OwnVoice(" ".join(kept), removed)


def echo_window(tail_s: float) -> int:
    """Samples after a phrase ends during which its echo may still be heard."""
    return round(tail_s * SAMPLE_RATE)
