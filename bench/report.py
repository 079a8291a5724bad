"""The benchmark's figures (aggregated from the per-run records), each against the issue's
target, as JSON and Markdown; PNG plots when matplotlib is installed."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.machine import machine_info
from bench.metrics import quantile
from bench.plotting import MISSING, pyplot

Record = dict[str, Any]


def _ratio(records: Sequence[Record]) -> dict[str, Any]:
    ok = sum(bool(r["correct"]) for r in records)
    return {"correct": ok, "runs": len(records), "accuracy": ok / len(records) if records else None}


def _grouped(records: Sequence[Record], key: str) -> dict[str, Any]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        groups[_label(r[key])].append(r)
    return {k: _ratio(v) for k, v in sorted(groups.items())}


def _label(value: Any) -> str:
    if value is None:
        return "clean"
    return f"{value:g}" if isinstance(value, float | int) else str(value)


def _parts(records: Sequence[Record]) -> dict[str, Any]:
    parts = [p for r in records for p in r.get("latency_parts_s", [])]
    names = ("speech_end_to_transcript", "transcript_to_submit", "submit_to_primitive")
    return {n: _ms(quantile([p[i] for p in parts], 50)) for i, n in enumerate(names)}


def _dist(values: Sequence[float]) -> dict[str, Any]:
    return {"samples": len(values), "p50_ms": _ms(quantile(values, 50)),
            "p95_ms": _ms(quantile(values, 95)),
            "max_ms": _ms(max(values) if values else None)}  # fmt: skip


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def figures(mode: str, records: dict[str, list[Record]], elapsed_s: float) -> dict[str, Any]:
    acc, false = records["accuracy"], records["false"]
    every = [*acc, *records["latency"], *records["stops"]]
    latencies = [x for r in records["latency"] for x in r["latencies_s"]]
    stops = [x for r in records["stops"] for x in r["stop_s"]]
    hours = sum(r["audio_s"] for r in false) / 3600
    spoken = sum(r["speech_s"] for r in every)
    out: dict[str, Any] = {
        "mode": mode, "machine": machine_info(), "elapsed_s": round(elapsed_s, 1),
        "accuracy": {"all": _ratio(acc), "by_snr": _grouped(acc, "snr_db"),
                     "by_cell": _grouped(acc, "cell"), "by_voice": _grouped(acc, "voice"),
                     "by_noise": _grouped(acc, "noise"), "by_rate": _grouped(acc, "rate")},
        "wer": (sum(r["edits"] for r in every) / max(1, sum(r["ref_words"] for r in every))),
        "wer_by_snr": _wer_by_snr(acc),
        "latency": _dist(latencies), "latency_p50_parts_ms": _parts(records["latency"]),
        "stop": _dist(stops),
        "false_activations": _false(false, hours),
        "idle_cpu_percent": records["idle"][0]["idle_cpu_percent"],
        "peak_rss_mb": round(max(r["max_rss_kb"] for r in [*every, *false]) / 1024, 1),
        "rtf": sum(r["transcribe_s"] for r in every) / spoken if spoken else None,
        "failed_runs": [r for r in [*every, *false] if r["returncode"] != 0][:5],
    }  # fmt: skip
    out["targets"] = targets(out)
    return out


def _wer_by_snr(records: Sequence[Record]) -> dict[str, float]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        groups[_label(r["snr_db"])].append(r)
    return {k: sum(r["edits"] for r in v) / max(1, sum(r["ref_words"] for r in v))
            for k, v in sorted(groups.items())}  # fmt: skip


def _false(records: Sequence[Record], hours: float) -> dict[str, Any]:
    by_mode: dict[str, Any] = {}
    for mode in ("always", "wake"):
        rs = [r for r in records if r["mode"] == mode]
        h = sum(r["audio_s"] for r in rs) / 3600
        submits, prims = sum(r["submits"] for r in rs), sum(r["primitives"] for r in rs)
        by_mode[mode] = {"audio_min": round(h * 60, 1), "submits": submits, "primitives": prims,
                         "submits_per_hour": round(submits / h, 2) if h else None}  # fmt: skip
    return {"audio_min": round(hours * 60, 1), "by_mode": by_mode,
            "primitives": sum(r["primitives"] for r in records)}  # fmt: skip


def _check(name: str, value: float | None, target: float, higher: bool, unit: str) -> Record:
    if value is None:
        return {"name": name, "value": None, "target": target, "status": "NO DATA", "gap": None}
    met = value >= target if higher else value <= target
    gap = round(value - target, 3)
    return {"name": name, "value": round(value, 3), "target": target, "unit": unit,
            "status": "MET" if met else "MISSED", "gap": gap}  # fmt: skip


def targets(f: dict[str, Any]) -> list[Record]:
    snr = f["accuracy"]["by_snr"]
    acc20 = snr.get("20", {}).get("accuracy")
    acc10 = snr.get("10", {}).get("accuracy")
    return [
        _check("end-state accuracy at 20 dB", acc20, 0.97, True, "fraction"),
        _check("end-state accuracy at 10 dB", acc10, 0.90, True, "fraction"),
        _check("end of speech to first primitive p50", f["latency"]["p50_ms"], 600, False, "ms"),
        _check("end of speech to first primitive p95", f["latency"]["p95_ms"], 1000, False, "ms"),
        _check("stop time p95", f["stop"]["p95_ms"], 300, False, "ms"),
        _check("motions from non-command audio", f["false_activations"]["primitives"], 0, False,
               "primitives"),
        _check("idle CPU", f["idle_cpu_percent"], 5.0, False, "% of one core"),
        _check("peak RSS", f["peak_rss_mb"], 500, False, "MB"),
    ]  # fmt: skip


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def markdown(f: dict[str, Any]) -> str:
    m = f["machine"]
    lines = [f"# voiced spoken-command benchmark ({f['mode']} mode)", "",
             f"Machine: {m['cpu_model']}, {m['cores']} usable cores, Python {m['python']}, "
             f"{m['platform']}. Run took {f['elapsed_s']:.0f} s.", "",
             "| figure | value | target | status | gap |", "|---|---|---|---|---|"]  # fmt: skip
    for t in f["targets"]:
        lines.append(f"| {t['name']} | {_fmt(t['value'])} {t.get('unit', '')} | {t['target']} "
                     f"| **{t['status']}** | {_fmt(t['gap'])} |")  # fmt: skip
    lines += ["", "| accuracy by | group | correct / runs | accuracy |", "|---|---|---|---|"]
    for dim in ("by_snr", "by_noise", "by_cell", "by_voice", "by_rate"):
        for group, r in f["accuracy"][dim].items():
            lines.append(f"| {dim[3:]} | {group} | {r['correct']}/{r['runs']} "
                         f"| {_fmt(r['accuracy'])} |")  # fmt: skip
    fa = f["false_activations"]
    lines += ["", f"Word error rate (all runs): {_fmt(f['wer'])}; by SNR: "
              + ", ".join(f"{k}: {v:.3f}" for k, v in f["wer_by_snr"].items()),
              f"Latency (end of last word to first primitive, real-time pace): "
              f"{f['latency']['samples']} commands, p50 {_fmt(f['latency']['p50_ms'])} ms, "
              f"p95 {_fmt(f['latency']['p95_ms'])} ms, max {_fmt(f['latency']['max_ms'])} ms; "
              "median parts: " + ", ".join(f"{k} {_fmt(v)} ms"
                                          for k, v in f["latency_p50_parts_ms"].items()) + ".",
              f"Stop time (end of \"stop\" to STOP on the wire): {f['stop']['samples']} stops, "
              f"p50 {_fmt(f['stop']['p50_ms'])} ms, p95 {_fmt(f['stop']['p95_ms'])} ms.",
              f"False activations: {fa['audio_min']} min of non-command audio; "
              + "; ".join(f"{k}: {v['submits']} commands dispatched ({_fmt(v['submits_per_hour'])}"
                          f"/h) over {v['audio_min']} min, {v['primitives']} primitives"
                          for k, v in fa["by_mode"].items()) + ".",
              f"Idle CPU: {_fmt(f['idle_cpu_percent'])} % of one core. Peak RSS: "
              f"{f['peak_rss_mb']} MB. "
              f"Transcription real-time factor: {_fmt(f['rtf'])}."]  # fmt: skip
    if f["failed_runs"]:
        lines += ["", f"Runs that exited non-zero: {len(f['failed_runs'])} (see latest.json)."]
    return "\n".join(lines) + "\n"


def write(f: dict[str, Any], records: dict[str, list[Record]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    notes = plots(f, records, out)
    text = markdown(f) + ("\n" + notes + "\n" if notes else "")
    (out / "latest.md").write_text(text, encoding="utf-8")
    (out / "latest.json").write_text(json.dumps({**f, "runs": records}, indent=1), "utf-8")


def main() -> None:
    """Re-render latest.md and the plots from a latest.json (after a report change)."""
    import sys

    path = Path(sys.argv[1])
    data = json.loads(path.read_text(encoding="utf-8"))
    records = data.pop("runs")
    fresh = figures(data["mode"], records, data["elapsed_s"])
    fresh["machine"] = data["machine"]
    fresh["targets"] = targets(fresh)
    write(fresh, records, path.parent)


def plots(f: dict[str, Any], records: dict[str, list[Record]], out: Path) -> str:
    """Latency histogram and accuracy by SNR; optional (matplotlib is a bench extra)."""
    plt = pyplot()
    if plt is None:
        return f"Plots skipped: {MISSING}."
    fig, ax = plt.subplots(figsize=(5, 3), dpi=80)
    lat = [x * 1000 for r in records["latency"] for x in r["latencies_s"]]
    ax.hist(lat, bins=20, color="tab:blue")
    for x, style in ((600, "--"), (1000, ":")):
        ax.axvline(x, color="red", linestyle=style)
    ax.set(xlabel="end of speech to first primitive (ms)", ylabel="commands")
    fig.tight_layout()
    fig.savefig(out / "latency.png")
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3), dpi=80)
    groups = f["accuracy"]["by_snr"]
    ax.bar(list(groups), [g["accuracy"] for g in groups.values()], color="tab:green")
    ax.set(xlabel="SNR (dB)", ylabel="end-state accuracy", ylim=(0, 1.05))
    fig.tight_layout()
    fig.savefig(out / "accuracy_by_snr.png")
    plt.close(fig)
    return "![latency](latency.png) ![accuracy by SNR](accuracy_by_snr.png)"


if __name__ == "__main__":
    main()
