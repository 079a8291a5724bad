"""bench.speech_to_intent: the mixing is Picovoice's, the scoring its exact-slots rule, and a
run through the real daemon on orders spoken by espeak-ng counts what it should."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.speech_to_intent import (
    AFTER_SPEECH_S,
    FRAME,
    PEAK,
    RATE,
    expected,
    labelled,
    loudest_frame,
    mixed,
    scored,
    stop_sources,
)
from tests.audio.clips import Clips, write_wav

REPO = Path(__file__).resolve().parents[2]


def test_the_snr_is_the_loudest_speech_frame_over_the_loudest_noise_frame() -> None:
    rng = np.random.default_rng(1)
    speech = np.zeros(RATE)
    speech[4 * FRAME : 5 * FRAME] = 1000.0  # one loud frame, quiet elsewhere
    noise = rng.standard_normal(RATE + 3 * RATE) * 50
    out = mixed(speech, noise, 6.0)
    # The mix is a * speech + b * noise: find a and b, then the SNR they make.
    n = len(speech)
    (a, b), *_ = np.linalg.lstsq(np.stack([speech, noise[:n]], axis=1), out[:n], rcond=None)
    snr = 20 * np.log10(a * loudest_frame(speech) / (b * loudest_frame(noise[:n])))
    assert snr == pytest.approx(6.0, abs=0.01)
    assert np.abs(out[:n]).max() == pytest.approx(PEAK)
    assert len(out) == len(noise)  # the gap after it is the same kitchen


def test_an_interpreted_order_reads_back_as_the_benchmark_labels_it() -> None:
    step = {"instruction": "order_drink_with_milk_and_sugar", "params": {
        "cup": "12 ounce cup", "roast": "dark_roast", "shots": "double_shot", "drink": "iced_mocha",
        "milk": "soy_milk", "milk_amount": 2.5, "sugar": "brown_sugar"}}  # fmt: skip
    label = {"intent": "orderDrink", "slots": {
        "size": "twelve ounce", "roast": "dark roast", "numberOfShots": "double shot",
        "coffeeDrink": "iced mocha", "milkAmount": " some soy milk",  # the file's own space
        "sugarAmount": "brown sugar"}}  # fmt: skip
    assert labelled(step) == expected(label)
    assert labelled({"instruction": "go_home", "params": {}}) is None


def test_an_order_counts_only_with_every_slot_and_nothing_more() -> None:
    label = {"intent": "orderDrink", "slots": {"coffeeDrink": "latte", "size": "large"}}
    exact = {"instruction": "order_drink", "params": {"drink": "latte", "cup": "large cup"}}
    extra = {"instruction": "order_drink", "params": {"drink": "latte", "cup": "large cup",
                                                      "roast": "dark_roast"}}  # fmt: skip

    def events(step: dict[str, object], at: float) -> list[dict[str, object]]:
        return [{"event": "utterance", "correlation_id": str(at), "speech_end": at,
                 "transcribe_s": 0.3, "text": "t"},
                {"event": "interpretation", "correlation_id": str(at),
                 "sequence": [step]}]  # fmt: skip

    spans = [(1.0, 3.0), (6.0, 8.0), (11.0, 13.0)]
    result = scored(events(exact, 2.9) + events(extra, 7.5), spans, [label] * 3)
    assert (result["right"], result["of"]) == (1, 3)
    assert [w["i"] for w in result["wrong"]] == [1, 2]
    assert result["latency_p50_s"] == pytest.approx(0.3)
    assert result["slow"] == []
    # An order read from speech ending well after the recording's (the kitchen's talk after it)
    # is a false accept, counted apart; one ending with the recording is not.
    talk = scored(events(exact, 2.9) + events(exact, 3.0 + AFTER_SPEECH_S + 0.5), spans,
                  [label] * 3)  # fmt: skip
    assert len(talk["orders_from_talk"]) == 1 and not result["orders_from_talk"]
    assert result["read_back"] == 0
    # An order right only as a guess read back first ("Proceed?") is counted, and said apart.
    unsure = events(exact, 2.9)
    unsure[0]["doubt"] = 'heard "who a large latte"'
    asked = scored(unsure, spans, [label] * 3)
    assert (asked["right"], asked["read_back"]) == (1, 1)
    # Orders understood only after more than the p95 target are listed for study.
    late = events(exact, 2.9)
    late[0]["transcribe_s"] = 1.7
    late[0]["raw"] = "T."
    slow = scored(late, spans, [label] * 3)["slow"]
    assert slow == [{"i": 0, "latency": 1.7, "raw": "T.", "text": "t"}]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")
def test_a_run_through_the_daemon_understands_clearly_spoken_orders(
    tmp_path: Path, clips: Clips
) -> None:
    sti = tmp_path / "data" / "speech-to-intent"
    (sti / "clean").mkdir(parents=True)
    orders = {"8a.flac": ("can I get a large latte with sugar",
                          {"coffeeDrink": "latte", "size": "large", "sugarAmount": "sugar"}),
              "8b.flac": ("may I have a double shot americano",
                          {"coffeeDrink": "americano",
                           "numberOfShots": "double shot"})}  # fmt: skip
    labels = {}
    for name, (said, slots) in orders.items():
        shutil.copy(clips.speech(said, "en-us", 150), sti / "clean" / name)
        labels[name] = {"intent": "orderDrink", "slots": slots}
    (sti / "label.json").write_text(json.dumps(labels), encoding="utf-8")
    rng = np.random.default_rng(3)
    write_wav(sti / "kitchen.flac", (rng.standard_normal(60 * RATE) * 300).astype(np.int16))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.speech_to_intent", "--data", str(tmp_path / "data"),
         "--snr", "clean", "--results", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((out / "speech-to-intent.json").read_text(encoding="utf-8"))
    clean = result["conditions"]["clean"]
    assert (clean["right"], clean["of"]) == (2, 2), clean["wrong"]
    assert (clean["false_stops"], clean["false_stop_sources"]) == (0, {})
    assert 100 < clean["peak_rss_mb"] < 4000  # the daemon's, not the benchmark's own
    md = (out / "speech-to-intent.md").read_text("utf-8")
    assert "| voiced: false stops | 0 |" in md
    assert f"Peak RSS of the daemon (VmHWM): clean: {clean['peak_rss_mb']} MB" in md


def test_each_false_stop_is_put_down_to_what_heard_it() -> None:
    events = [
        {"event": "spotted", "engine": "keyword", "text": "halt", "score": 0.97},
        {"event": "stopped", "reason": 'operator said "halt"'},
        {"event": "spotted", "engine": "whisper", "text": "Stop!"},
        {"event": "stopped", "reason": 'operator said "Stop!"'},
        {"event": "spotted", "engine": "keyword", "text": "halt", "score": 0.95},
        {"event": "stopped", "reason": 'operator said "halt"'},
        {"event": "utterance", "text": "No, stop."},
        {"event": "stopped", "reason": 'operator said "No, stop."'},
        {"event": "stopped", "reason": "shutdown"},
    ]
    assert stop_sources(events) == {"keyword halt": 2, "whisper stop": 1, "transcript": 1}
