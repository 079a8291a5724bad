"""Figures from one daemon run's events and its ground truth: word error rate, end of speech to
first primitive, stop time, idle CPU. Pure functions over event dicts, so they are testable
without the daemon."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from voiced.frames.stop import STOP_PATTERN as STOP_WORDS
from voiced.rules.normalize import normalize

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
    """For each stop said and heard (see `stop_detections`): the STOP sent on the control
    channel for it minus the end of the word, counted only if the arm was moving then (a
    primitive had gone out and not every one sent had been answered DONE or ERR)."""
    out: list[float] = []
    for line, trigger in _heard_stops(events, truth).items():
        said = origin + truth["utterances"][line]["speech_end"]
        sent = [e["t"] for e in events if _is_stop(e) and e["t"] >= trigger["t"] - 0.001]
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


def _said(truth: dict[str, Any]) -> list[tuple[float, float, str]]:
    return [(u["start"], u["speech_end"], u["text"]) for u in truth["utterances"]]


def operator_speaking(truth: dict[str, Any], t: float, before: float = 0.15,
                      after: float = 0.0) -> bool:  # fmt: skip
    """Whether audio time `t` falls inside one of the operator's utterances (give or take)."""
    return any(start - before <= t <= end + after for start, end, _ in _said(truth))


def self_triggers(events: Sequence[Event], truth: dict[str, Any]) -> dict[str, int]:
    """What the daemon did on its own voice (or anything but the operator's):
    - `barge_ins`: a reply cut off while the operator was not speaking;
    - `phantoms`: an utterance whose speech ended where the operator said nothing;
    - `stops`: an operator stop where the operator never said a stop word."""
    said_stop = any(STOP_WORDS.search(u["text"].lower()) for u in truth["utterances"])
    barge = [e for e in events if e["event"] == "barge_in"]
    heard = [e for e in events if e["event"] == "utterance" and "speech_end" in e]
    stops = [e for e in events if e["event"] == "stopped"
             and str(e.get("reason", "")).startswith("operator")]  # fmt: skip
    return {
        "barge_ins": sum(not operator_speaking(truth, e["audio_t"]) for e in barge),
        "phantoms": sum(not operator_speaking(truth, e["speech_end"], after=0.3) for e in heard),
        "stops": 0 if said_stop else len(stops),
    }


def replies(events: Sequence[Event]) -> int:
    """Phrases the daemon said."""
    return sum(e["event"] == "feedback" for e in events)


def _stop_triggers(events: Sequence[Event]) -> list[Event]:
    """Utterances and spotted stops that set off an operator stop (same correlation id)."""
    stopped = {e.get("correlation_id") for e in events if e["event"] == "stopped"
               and str(e.get("reason", "")).startswith("operator")}  # fmt: skip
    return [e for e in events if e["event"] in ("utterance", "spotted")
            and e.get("correlation_id") in stopped and "speech_end" in e]  # fmt: skip


def _said_line(truth: dict[str, Any], speech_end: float) -> int | None:
    """The line whose speech ended at `speech_end` (give or take)."""
    for i, u in enumerate(truth["utterances"]):
        if u["start"] - 0.2 <= speech_end <= u["speech_end"] + 0.5:
            return i
    return None


def _heard_stops(events: Sequence[Event], truth: dict[str, Any]) -> dict[int, Event]:
    """Each line with a stop word that was heard, and the first event that stopped for it."""
    heard: dict[int, Event] = {}
    for e in _stop_triggers(events):
        line = _said_line(truth, e["speech_end"])
        if line is not None and STOP_WORDS.search(truth["utterances"][line]["text"].lower()):
            heard.setdefault(line, e)
    return heard


def stop_detections(events: Sequence[Event], truth: dict[str, Any]) -> dict[str, int]:
    """Which stops said were heard: a `stopped` event by the operator, set off (same
    correlation id) by an utterance or a spotted stop whose speech ended within a said line.
    `said`/`heard_stops`/`missed`: the lines with a stop word; `spotted`: heard first by the
    spotter; `false_stops`: stops set off by anything else."""
    heard = _heard_stops(events, truth)
    said = sum(bool(STOP_WORDS.search(u["text"].lower())) for u in truth["utterances"])
    triggers = _stop_triggers(events)
    false = sum(1 for e in triggers if e not in heard.values()
                and _said_line(truth, e["speech_end"]) not in heard)  # fmt: skip
    return {"said": said, "heard_stops": len(heard),
            "spotted": sum(e["event"] == "spotted" for e in heard.values()),
            "missed": said - len(heard), "false_stops": false}  # fmt: skip
