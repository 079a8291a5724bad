"""Figures from one daemon run's events and its ground truth: word error rate, end of speech to
first primitive, stop time, idle CPU. Pure functions over event dicts, so they are testable
without the daemon."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rules.normalize import normalize

Event = dict[str, Any]


def edit_distance(ref: Sequence[str], hyp: Sequence[str]) -> int:
    """Word-level Levenshtein distance (substitutions, insertions, deletions all cost 1)."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def word_errors(references: Sequence[str], transcripts: Sequence[str]) -> tuple[int, int]:
    """(edits, reference words) of a whole session: the utterances joined in order, so a split
    or merged segment costs nothing by itself, only the words it gets wrong."""
    ref = normalize(" ".join(references)).split()
    hyp = normalize(" ".join(transcripts)).split()
    return edit_distance(ref, hyp), len(ref)


def transcripts(events: Sequence[Event]) -> list[str]:
    return [e["text"] for e in events if e["event"] == "utterance"]


def audio_origin(events: Sequence[Event]) -> float | None:
    """Event-clock time at which the audio file started playing (real-time pace only).

    An utterance is emitted no earlier than origin + decoded_at (the audio position when its
    transcription started: the segment's close, or a pause before it) + transcribe_s + a little
    queueing; the smallest `t - decoded_at - transcribe_s` over the run is therefore the origin
    plus the least of that queueing (milliseconds), which makes the latencies below at most
    that much optimistic."""
    spans = [e["t"] - e.get("decoded_at", e["audio_t"]) - e.get("transcribe_s", 0.0)
             for e in events if e["event"] == "utterance" and "audio_t" in e]  # fmt: skip
    return min(spans) if spans else None


def command_latencies(events: Sequence[Event], origin: float) -> list[float]:
    """For each submit that moved the arm: first primitive after it minus the end of the last
    word of the utterance before it (both on the event clock)."""
    return [sum(parts) for parts in latency_parts(events, origin)]


def latency_parts(events: Sequence[Event], origin: float) -> list[tuple[float, float, float]]:
    """Each command's latency in three parts: end of speech to its utterance event (hangover and
    transcription), utterance to submit (the query frame's silence timer), submit to the first
    primitive on the wire (interpretation, compile, link)."""
    out: list[tuple[float, float, float]] = []
    heard: tuple[float, float] | None = None
    pending: tuple[float, float, float] | None = None
    for e in events:
        if e["event"] == "utterance" and e.get("speech_end") is not None:
            heard = (origin + e["speech_end"], e["t"])
        elif e["event"] == "submit" and e.get("target") == "robot" and heard is not None:
            pending = (heard[0], heard[1], e["t"])
        elif e["event"] == "primitive" and pending is not None:
            end, utt, sub = pending
            out.append((utt - end, sub - utt, e["t"] - sub))
            pending = None
    return out


def stop_times(events: Sequence[Event], origin: float, truth: dict[str, Any]) -> list[float]:
    """For each "stop" in the ground truth: STOP sent on the control channel minus the end of
    the word, counted only if the arm was moving then (a primitive had gone out and not every
    one sent had been answered DONE or ERR on the motion channel)."""
    out: list[float] = []
    for utt in truth["utterances"]:
        if normalize(utt["text"]) != "stop":
            continue
        said = origin + utt["speech_end"]
        sent = [e["t"] for e in events if _is_stop(e) and e["t"] >= said - 0.5]
        if _moving(events, said) and sent:
            out.append(sent[0] - said)
    return out


def _moving(events: Sequence[Event], t: float) -> bool:
    out = sum(e["event"] == "primitive" and e["t"] < t for e in events)
    settled = sum(_is_settled(e) and e["t"] < t for e in events)
    return out > settled


def _is_settled(e: Event) -> bool:
    return (e["event"] == "controller" and e.get("direction") == "rx"
            and e.get("channel") == "motion"
            and str(e.get("line", "")).split()[1:2] in (["DONE"], ["ERR"]))  # fmt: skip


def _is_stop(e: Event) -> bool:
    return (e["event"] == "controller" and e.get("direction") == "tx"
            and e.get("channel") == "control" and e.get("line") == "STOP")  # fmt: skip


def idle_cpu_percent(samples: Sequence[tuple[float, float]], skip_s: float) -> float | None:
    """CPU used between the first sample after `skip_s` (model loaded) and the last one, as %
    of one core."""
    window = [s for s in samples if s[0] >= skip_s]
    if len(window) < 2 or window[-1][0] - window[0][0] <= 0:
        return None
    (t0, c0), (t1, c1) = window[0], window[-1]
    return 100.0 * (c1 - c0) / (t1 - t0)


def transcribe_seconds(events: Sequence[Event]) -> float:
    return sum(e.get("transcribe_s", 0.0) for e in events if e["event"] == "utterance")


def quantile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile (as bench/stats.py), None for no samples."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]
