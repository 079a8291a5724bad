"""Talking over the daemon: commands said 0.5 s after the operator's previous line,
while the daemon answers it, with the answer in the microphone as echo; and answers with nobody
talking, counted for self-triggers.

    python -m bench.talkover [--quick] [--json PATH] [--out DIR] [--jobs N]

The real daemon runs on a rendered session (`voiced run --audio FILE --fast --room-echo DB`):
the echo is the daemon's own synthesised reply through a simulated room (`voiced.audio.room`), mixed
into the input on the audio clock, so a run gives the same result at any pace. A talk-over run
is correct when its final state is the text version's. Figures only: nothing asserts a target.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any

from bench import corpus, corpus_cli, daemon_run, metrics
from bench.corpus import Condition
from bench.evaluate import expected_state
from bench.machine import machine_info
from bench.sessions import (
    FIRST_REPLY,
    REPLIES,
    REPLIES_DEV,
    TALK_OVER,
    TALK_OVER_DEV,
    Session,
)

DAEMON_VOICES = ("Alex", "Annie", "Michael", "Linda", "Andy")
"""The daemon's own voice is varied too: the echo is its voice."""


@dataclass(frozen=True)
class Run:
    session: Session
    condition: Condition
    echo_db: float
    daemon_voice: str
    reply: bool = True
    """False: the same audio with the daemon silent (what the recogniser gets right on its own,
    the ceiling for talking over a reply)."""


def _conditions(
    noises: Iterable[tuple[str | None, float | None]], voices: tuple[str, ...] = corpus.VOICES
) -> list[Condition]:
    return [Condition(v, corpus.RATES[i % 3], n, s)
            for n, s in noises for i, v in enumerate(voices)]  # fmt: skip


def dev_plan() -> list[Run]:
    """For tuning: other sessions, other voices, clean and 20 dB babble, echo 0 dB; replies
    under four noises at echo 0 and +6 dB."""
    noises = [(None, None), ("babble", 20.0)]
    runs = [Run(session, cond, 0.0, DAEMON_VOICES[(i + j) % 5])
            for j, session in enumerate(TALK_OVER_DEV)
            for i, cond in enumerate(_conditions(noises, corpus.DEV_VOICES[::2]))]  # fmt: skip
    quiet = [(None, None), ("pink", 20.0), ("babble", 20.0), ("brown", 10.0)]
    for j, session in enumerate(REPLIES_DEV):
        for i, (noise, snr) in enumerate(quiet):
            for echo in (0.0, 6.0):
                voice = corpus.DEV_VOICES[(i + j) % len(corpus.DEV_VOICES)]
                cond = Condition(voice, 160, noise, snr)
                runs.append(Run(session, cond, echo, DAEMON_VOICES[(i + j + int(echo)) % 5]))
    return runs


def plan(quick: bool) -> list[Run]:
    """Talk-over: every session, every operator voice, clean and at 20 dB pink and babble, echo
    as loud as the operator (0 dB); the echo at -6 and +6 dB on clean audio. Replies: each
    session under five noises and two echo levels, the daemon's voice rotating."""
    if quick:
        cond = Condition("en-us", 160)
        return [Run(TALK_OVER[0], cond, 0.0, "Alex"), Run(REPLIES[1], cond, 0.0, "Annie")]
    runs = []
    for j, session in enumerate(TALK_OVER):
        for i, cond in enumerate(_conditions([(None, None), ("pink", 20.0), ("babble", 20.0)])):
            runs.append(Run(session, cond, 0.0, DAEMON_VOICES[(i + j) % 5]))
        for echo in (-6.0, 6.0):
            for i, cond in enumerate(_conditions([(None, None)])):
                runs.append(Run(session, cond, echo, DAEMON_VOICES[(i + j) % 5]))
    runs += [replace(r, reply=False) for r in runs if r.echo_db == 0]
    for j, session in enumerate(FIRST_REPLY):
        for i, cond in enumerate(_conditions([(None, None), ("pink", 20.0)])):
            runs.append(Run(session, cond, 0.0, DAEMON_VOICES[(i + j) % 5]))
    noises = [(None, None), ("pink", 20.0), ("babble", 20.0), ("white", 10.0), ("brown", 10.0)]
    for j, session in enumerate(REPLIES):
        for i, (noise, snr) in enumerate(noises):
            for echo in (0.0, 6.0):
                voice = corpus.VOICES[(i + j) % len(corpus.VOICES)]
                daemon = DAEMON_VOICES[(i + 2 * j + int(echo)) % 5]
                runs.append(Run(session, Condition(voice, 160, noise, snr), echo, daemon))
    return runs


def config_for(run: Run, settings: tuple[str, ...] = ()) -> str:
    """The run's config: fast motion, the daemon's voice, and `section.key=value` settings."""
    voice = f'voice = "{run.daemon_voice}"' if run.reply else 'engine = "null"'
    return daemon_run.FAST_SIM + daemon_run.settings_toml(settings, {"tts": [voice]})


def one_by_one(session: Session) -> Session:
    """The text version in which every line is an utterance of its own. The audio says each
    line while the daemon answers the one before; typed back to back, lines would join one
    query ("where are you computer add cheese" is a question, and no cheese is added)."""
    lines = [part for line in session.lines for part in ((line, "") if line else ("",))]
    return replace(session, lines=tuple(lines))


def execute(run: Run, settings: tuple[str, ...] = ()) -> dict[str, Any]:
    session = run.session
    expected = expected_state(one_by_one(session)) if session.kind == "command" else None
    item = corpus.render(session, run.condition, expected)
    result = daemon_run.run(session.cell, audio=item.wav, config=config_for(run, settings),
                            extra=("--room-echo", f"{run.echo_db:g}"))  # fmt: skip
    final = daemon_run.final_state(result.events)
    record: dict[str, Any] = {
        "cell": session.cell, "session": session.name, "kind": session.kind,
        **asdict(run.condition), "echo_db": run.echo_db, "daemon_voice": run.daemon_voice,
        "reply": run.reply,
        "returncode": result.returncode,
        "correct": final is not None and final == expected if expected is not None else None,
        "final_state": final, "expected_state": expected,
        "replies": metrics.replies(result.events),
        "barge_ins": sum(e["event"] == "barge_in" for e in result.events),
        **{f"self_{k}": v for k, v in metrics.self_triggers(result.events, item.truth).items()},
        "heard": metrics.transcripts(result.events), "wall_s": round(result.wall_s, 1),
    }  # fmt: skip
    if result.returncode != 0:
        record["stderr_tail"] = result.stderr_tail
    print(f"  {json.dumps({k: record[k] for k in _SHOWN})}", file=sys.stderr, flush=True)
    return record


_SHOWN = ("session", "voice", "noise", "snr_db", "echo_db", "correct", "replies", "barge_ins",
          "self_barge_ins", "self_phantoms", "self_stops")  # fmt: skip


def _rate(records: list[dict[str, Any]]) -> dict[str, Any]:
    ok = sum(bool(r["correct"]) for r in records)
    return {"correct": ok, "runs": len(records),
            "rate": round(ok / len(records), 4) if records else None}  # fmt: skip


def figures(records: list[dict[str, Any]], elapsed_s: float) -> dict[str, Any]:
    silent = [r for r in records if not r.get("reply", True)]
    records = [r for r in records if r.get("reply", True)]
    first = [r for r in records if r["kind"] == "command" and r["session"].startswith("first")]
    talk = [r for r in records if r["kind"] == "command" and r not in first]
    by: dict[str, Any] = {}
    for r in talk:
        key = f"echo {r['echo_db']:+g} dB, {r['noise'] or 'clean'}" + (
            f" {r['snr_db']:g} dB" if r["noise"] else ""
        )
        by.setdefault(key, []).append(r)
    # Babble is other people talking: what it sets off is not the daemon's own voice.
    own = [r for r in records if r["noise"] != "babble"]
    babble = [r for r in records if r["noise"] == "babble"]
    kinds = ("barge_ins", "phantoms", "stops")
    triggers = {k: sum(r[f"self_{k}"] for r in own) for k in kinds}
    return {
        "machine": machine_info(), "elapsed_s": round(elapsed_s, 1),
        "talk_over": {k: _rate(v) for k, v in sorted(by.items())},
        "talk_over_at_20db": _rate([r for r in talk if r["snr_db"] == 20 and r["echo_db"] == 0]),
        "no_reply": {"clean": _rate([r for r in silent if r["noise"] is None]),
                     "20db": _rate([r for r in silent if r["snr_db"] == 20])},
        "first_reply": _rate(first),
        "replies": sum(r["replies"] for r in own),
        "replies_without_operator": sum(r["replies"] for r in own if r["kind"] == "replies"),
        "self_triggers": triggers,
        "babble": {"replies": sum(r["replies"] for r in babble),
                   **{k: sum(r[f"self_{k}"] for r in babble) for k in kinds}},
        "failed_runs": sum(r["returncode"] != 0 for r in records),
    }  # fmt: skip


def _fraction(rate: dict[str, Any]) -> str:
    return f"{rate['correct']}/{rate['runs']}"


def markdown(fig: dict[str, Any]) -> str:
    lines = ["# Talking over the daemon", "", f"Machine: {fig['machine']}; {fig['elapsed_s']} s.",
             "", "| condition | acted on |", "|---|---|"]  # fmt: skip
    for key, r in fig["talk_over"].items():
        lines.append(f"| {key} | {r['correct']}/{r['runs']} ({100 * (r['rate'] or 0):.1f} %) |")
    r20 = fig["talk_over_at_20db"]
    lines += ["", f"Commands said over a reply, 20 dB, echo 0 dB: **{r20['correct']}/{r20['runs']}"
              f"** (target ≥ 95 %). The same audio with the daemon silent: "
              f"{_fraction(fig['no_reply']['20db'])} at 20 dB and "
              f"{_fraction(fig['no_reply']['clean'])} clean, what the recogniser gets right on "
              "its own (a ceiling for talking over a reply).", "",
              f"Over the first reply after start-up (the canceller has heard nothing yet; clean "
              f"and pink 20 dB): {fig['first_reply']['correct']}/{fig['first_reply']['runs']}.",
              "",
              f"Self-triggers over {fig['replies']} spoken replies in quiet and steady noise "
              f"({fig['replies_without_operator']} with nobody talking): "
              + ", ".join(f"{k} {v}" for k, v in fig["self_triggers"].items())
              + " (target 0).", "",
              f"In babble (other people talking), over {fig['babble']['replies']} replies: "
              + ", ".join(f"{k} {v}" for k, v in fig["babble"].items() if k != "replies")
              + " (background talk, not the daemon's voice).", ""]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = corpus_cli.parser(__doc__ or "")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help='a setting for every run, e.g. "tts.barge_in_ms=0"')  # fmt: skip
    args = parser.parse_args(argv)
    began = time.monotonic()
    runs = dev_plan() if args.dev else plan(args.quick)
    settings = tuple(args.set)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        records = list(pool.map(lambda run: execute(run, settings), runs))
    fig = figures(records, time.monotonic() - began)
    corpus_cli.write(args, "talkover", markdown(fig), {"figures": fig, "runs": records})
    return 0


if __name__ == "__main__":
    sys.exit(main())
