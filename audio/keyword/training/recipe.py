"""`voiced train-keyword`: from a phrase to a model file, with nothing but this machine.

1. Plan the clips (`plan`): the phrase said by every kind of voice the machine has, in the
   places it is said (alone, before a command, after other words), made into other speakers
   (pitch, intonation, vocal tract), put in rooms, through microphones, under noise; near
   words, talk, real recordings and noise as negatives. Voices in `HELD_OUT` are never used:
   the benchmarks measure on them.
2. Render them (several processes; every clip has its own seeds, so the order does not matter).
3. Fit the head (`fit`), choose the threshold on the validation voices, write the model.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from voiced.audio.keyword.model import KeywordModel, ModelInfo
from voiced.audio.keyword.training import clips, fit, rooms, texts, voices
from voiced.audio.keyword.training.clips import Acoustics, ClipSpec, Labelling, Rendered
from voiced.audio.keyword.training.speakers import Speaker, random_speaker
from voiced.audio.keyword.training.voices import Delivery, Voice

HELD_OUT = frozenset(
    {
        # The voices bench.stops and bench.keywords report on (bench/corpus.py VOICES).
        "espeak:en-us",
        "espeak:en-gb",
        "espeak:en-gb-x-rp",
        "espeak:en-gb+f3",
        "espeak:en-gb+m3",
        "espeak:en-us+Alex",
        # Two voices of their own, unlike any trained one.
        "festival:ked_diphone",
        "flite:awb",
    }
)
"""Voices no shipped model was trained or tuned on."""
ENGINE_SHARE = {"espeak": 0.35, "joe": 0.35, "flite": 0.15, "festival": 0.15}
"""How often each engine speaks a clip (before leaving out the ones not installed)."""
SHIPPED_PHRASES = ("computer", "stop", "halt", "freeze")
LEAD_S = (1.6, 2.0)
"""Quiet before a clip's first word: the head's view (16 embeddings, 1.975 s) must fit before
the first positive view ends."""
TAIL_S = (0.5, 0.7)
MEL_WARP_SHARE = 0.5
"""Share of clips whose mel bands are stretched (another speaker, `features.warp_mels`)."""


@dataclass(frozen=True)
class Size:
    positives: int
    near: int
    words: int
    talk: int
    noise: int
    real_repeats: int
    steps: int
    rooms: int


SIZES = {
    "full": Size(
        positives=3000,
        near=4000,
        words=2000,
        talk=600,
        noise=200,
        real_repeats=2,
        steps=8000,
        rooms=96,
    ),
    "small": Size(1200, 1800, 800, 250, 80, 1, 3000, 32),
    "tiny": Size(40, 30, 20, 12, 6, 1, 150, 4),
}


@dataclass(frozen=True)
class Recipe:
    phrase: str
    size: str = "full"
    seed: int = 1
    commands: tuple[str, ...] = ()
    """What is said after the phrase (for a wake phrase: the cell's commands)."""
    negative_texts: tuple[str, ...] = ()
    """More things said that are not the phrase (the cell's vocabulary)."""
    real_negatives: tuple[str, ...] = ()
    """Recordings of real speech without the phrase (paths)."""
    noise_recordings: tuple[str, ...] = ()
    """Noise recordings; only the first half of each is used (`rooms.training_half`)."""
    engines: tuple[str, ...] = ("espeak", "joe", "flite", "festival")
    held_out: frozenset[str] = HELD_OUT
    jobs: int = 2
    labelling: Labelling = field(default_factory=Labelling)
    frames: int = 16
    fitting: fit.FitSettings = field(default_factory=fit.FitSettings)

    @property
    def dimensions(self) -> Size:
        return SIZES[self.size]


@dataclass
class Plan:
    train: list[tuple[ClipSpec, str]]
    validate: list[tuple[ClipSpec, str]]
    voices: list[Voice]
    validation_voices: list[Voice]


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:4], "little")


def contains(text: str, phrase: str) -> bool:
    """Whether `text` says `phrase` (as words, hyphenated forms aside)."""
    return re.search(rf"(?<![\w-]){re.escape(phrase.lower())}(?![\w-])", text.lower()) is not None


class Planner:
    """Draws the clips of a recipe (deterministic for its seed)."""

    def __init__(self, recipe: Recipe, voice_pool: list[Voice]) -> None:
        self.recipe = recipe
        self.rng = np.random.default_rng(recipe.seed)
        usable = [v for v in voice_pool if v.key not in recipe.held_out]
        order = sorted(usable, key=lambda v: _seed(recipe.seed, "split", v.key))
        cut = max(1, len(order) // 10)
        self.validation_voices, self.voices = sorted(order[:cut]), sorted(order[cut:])
        self.avoid = (recipe.phrase, *SHIPPED_PHRASES)

    def _by_engine(self, pool: list[Voice]) -> tuple[list[str], np.ndarray, dict[str, list[Voice]]]:
        groups: dict[str, list[Voice]] = {}
        for voice in pool:
            groups.setdefault(voice.engine, []).append(voice)
        engines = sorted(groups)
        share = np.array([ENGINE_SHARE.get(e, 0.1) for e in engines])
        return engines, share / share.sum(), groups

    def voice(self, pool: list[Voice]) -> Voice:
        engines, share, groups = self._by_engine(pool)
        engine = engines[int(self.rng.choice(len(engines), p=share))]
        group = groups[engine]
        return group[int(self.rng.integers(0, len(group)))]

    def delivery(self) -> Delivery:
        return Delivery(
            speed=float(self.rng.uniform(0.75, 1.35)),
            pitch=float(self.rng.uniform(0.8, 1.25)),
            seed=int(self.rng.integers(0, 2**31)),
        )

    def acoustics(
        self,
        transform: float,
        room: float,
        mic: float,
        noisy: float,
        kinds: Sequence[str],
        snr: tuple[float, float],
    ) -> Acoustics:
        rng = self.rng
        return Acoustics(
            speaker=random_speaker(rng) if rng.random() < transform else Speaker(1.0, 1.0, 1.0),
            room=bool(rng.random() < room),
            microphone=bool(rng.random() < mic),
            noise=str(rng.choice(list(kinds))) if rng.random() < noisy else None,
            snr_db=float(rng.uniform(*snr)),
            level_db=float(rng.uniform(-35, -3)),
            mel_warp=float(rng.uniform(0.88, 1.12)) if rng.random() < MEL_WARP_SHARE else 1.0,
            seed=int(rng.integers(0, 2**31)),
        )

    def gaps(self, n: int, after_phrase: int | None = None) -> tuple[float, ...]:
        """Pauses between `n` pieces; the one after a stop-like phrase (piece `after_phrase`)
        is a real pause."""
        gaps = [float(g) for g in self.rng.uniform(0.03, 0.35, max(0, n - 1))]
        stop_like = self.recipe.phrase.lower() in texts.STOP_LIKE
        if after_phrase is not None and after_phrase < len(gaps) and stop_like:
            gaps[after_phrase] = float(self.rng.uniform(texts.PAUSE_AFTER_S, 0.6))
        return tuple(gaps)

    def talk(self) -> str:
        for _ in range(20):
            pick = self.recipe.negative_texts
            if pick and self.rng.random() < 0.3:
                text = pick[int(self.rng.integers(0, len(pick)))]
            else:
                text = texts.talk(self.rng, int(self.rng.integers(3, 12)), self.avoid)
            if not any(contains(text, p) for p in self.avoid):
                return text
        return texts.talk(self.rng, 6, self.avoid)

    def positive(self, pool: list[Voice], kinds: Sequence[str]) -> ClipSpec:
        r = self.rng.random()
        phrase = self.recipe.phrase
        joined: str | None = None
        commands = [c for c in self.recipe.commands if not contains(c, phrase)]
        pieces: tuple[str, ...]
        if r < 0.45:
            pieces, at = (phrase,), 0
        elif r < 0.7 or not commands:
            options = texts.carriers(phrase)
            before, after = options[int(self.rng.integers(0, len(options)))]
            pieces = tuple(p for p in (before, phrase, after) if p)
            at = 1 if before else 0
        else:
            command = commands[int(self.rng.integers(0, len(commands)))]
            before = self.talk() if self.rng.random() < 0.35 else ""
            pieces = tuple(p for p in (before, phrase, command) if p)
            at = 1 if before else 0
            # Half the time in one breath with the command (with or without a comma).
            joined = str(self.rng.choice([" ", ", "])) if self.rng.random() < 0.5 else None
        return ClipSpec(
            self.voice(pool),
            pieces,
            self.delivery(),
            self.acoustics(0.6, 0.5, 0.7, 0.85, kinds, (-3.0, 30.0)),
            phrase_at=at,
            gaps_s=self.gaps(len(pieces), at),
            lead_s=float(self.rng.uniform(*LEAD_S)),
            tail_s=float(self.rng.uniform(*TAIL_S)),
            joined=joined,
        )

    def near(
        self,
        pool: list[Voice],
        words: NearWords,
        kinds: Sequence[str],
        like: ClipSpec | None = None,
    ) -> ClipSpec:
        """A near word, alone or beside other words; `like`: said by the same voice, at the
        same speed and pitch, by the same speaker as that clip (a positive), so what tells
        them apart is the word and not the voice."""
        word = words.pick(self.rng)
        pieces: tuple[str, ...] = (word,)
        at = 0
        if self.rng.random() < 0.3:
            first = self.rng.random() < 0.5
            pieces, at = ((word, self.talk()), 0) if first else ((self.talk(), word), 1)
        acoustics = self.acoustics(0.6, 0.5, 0.7, 0.7, kinds, (0.0, 30.0))
        voice, delivery = self.voice(pool), self.delivery()
        if like is not None and like.voice is not None:
            voice, delivery = like.voice, like.delivery
            acoustics = replace(acoustics, speaker=like.acoustics.speaker)
        return ClipSpec(
            voice,
            pieces,
            delivery,
            acoustics,
            phrase_at=at,
            gaps_s=self.gaps(len(pieces), at),
            lead_s=float(self.rng.uniform(*LEAD_S)),
            tail_s=float(self.rng.uniform(*TAIL_S)),
        )

    def words(self, pool: list[Voice], kinds: Sequence[str]) -> ClipSpec:
        """A word or two on their own: what a keyword must not be confused with."""
        return ClipSpec(
            self.voice(pool),
            (texts.isolated_words(self.rng, self.avoid),),
            self.delivery(),
            self.acoustics(0.6, 0.5, 0.7, 0.7, kinds, (0.0, 30.0)),
            phrase_at=0,
            lead_s=float(self.rng.uniform(*LEAD_S)),
            tail_s=float(self.rng.uniform(*TAIL_S)),
        )

    def talking(self, pool: list[Voice], kinds: Sequence[str]) -> ClipSpec:
        pieces = tuple(self.talk() for _ in range(int(self.rng.integers(1, 4))))
        return ClipSpec(
            self.voice(pool),
            pieces,
            self.delivery(),
            self.acoustics(0.5, 0.5, 0.7, 0.6, kinds, (0.0, 30.0)),
            gaps_s=self.gaps(len(pieces)),
            lead_s=1.0,
        )

    def real(self, path: str, kinds: Sequence[str]) -> ClipSpec:
        return ClipSpec(
            None,
            (),
            acoustics=self.acoustics(0.0, 0.3, 0.5, 0.5, kinds, (0, 30)),
            lead_s=1.0,
            tail_s=0.3,
            recording=path,
        )

    def quiet(self, kinds: Sequence[str]) -> ClipSpec:
        return ClipSpec(
            None,
            (),
            acoustics=self.acoustics(0.0, 0.0, 0.5, 1.0, kinds, (-5, 25)),
            lead_s=float(self.rng.uniform(2.5, 5.0)),
            tail_s=0.0,
        )


@dataclass(frozen=True)
class NearWords:
    """Near words to draw from: the listed ones (`texts.NEAR_WORDS`) more often than edits."""

    listed: tuple[str, ...]
    edits: tuple[str, ...]

    def pick(self, rng: np.random.Generator) -> str:
        pool = self.listed if self.listed and (not self.edits or rng.random() < 0.7) else self.edits
        return pool[int(rng.integers(0, len(pool)))]


def near_words(recipe: Recipe, rng: np.random.Generator) -> NearWords:
    listed = set(texts.near_words(recipe.phrase, rng, edits=0))
    edits = set(texts.spelling_edits(recipe.phrase, rng, 40)) - listed

    def keep(words: set[str]) -> tuple[str, ...]:
        return tuple(sorted(w for w in words if not contains(w, recipe.phrase)))

    return NearWords(keep(listed), keep(edits))


def plan(recipe: Recipe, voice_pool: list[Voice], kinds: Sequence[str]) -> Plan:
    planner = Planner(recipe, voice_pool)
    size = recipe.dimensions
    near = near_words(recipe, planner.rng)
    jobs: list[tuple[ClipSpec, str]] = []
    valid: list[tuple[ClipSpec, str]] = []
    for pool, share, out in ((planner.voices, 1.0, jobs), (planner.validation_voices, 0.12, valid)):
        positives = [planner.positive(pool, kinds) for _ in range(round(size.positives * share))]
        out += [(spec, "positive") for spec in positives]
        extra = max(0, round(size.near * share) - len(positives))
        paired: list[ClipSpec | None] = [*positives, *([None] * extra)]
        out += [
            (planner.near(pool, near, kinds, like), "near")
            for like in paired[: round(size.near * share)]
        ]
        out += [(planner.words(pool, kinds), "words") for _ in range(round(size.words * share))]
        out += [(planner.talking(pool, kinds), "talk") for _ in range(round(size.talk * share))]
    jobs += [(planner.quiet(kinds), "noise") for _ in range(size.noise)]
    real = sorted(recipe.real_negatives)
    held = {p for p in real if _seed(recipe.seed, "real", p) % 10 == 0}
    for path in real:
        out = valid if path in held else jobs
        out += [(planner.real(path, kinds), "real") for _ in range(size.real_repeats)]
    return Plan(jobs, valid, planner.voices, planner.validation_voices)


NEGATIVE_WEIGHT = {
    "near": 3.0,
    "words": 2.0,
    "real": 3.0,
    "talk": 1.0,
    "noise": 0.5,
    "positive": 1.0,
}
"""How often a negative view of each kind is drawn, per view."""
HARD_WEIGHT = 10.0
"""...and a view just after a near word, this many times more."""


def render_all(
    jobs: list[tuple[ClipSpec, str]],
    recipe: Recipe,
    noise: rooms.NoiseSources,
    say: Callable[[str], None],
    cache: Path | None = None,
) -> list[Rendered]:
    """Every clip rendered (in `recipe.jobs` processes), those in `cache` taken from it."""
    size = recipe.dimensions
    args = (_seed(recipe.seed, "rooms"), size.rooms, noise, recipe.labelling)
    context = repr((clips.CLIP_VERSION, args[:2], recipe.labelling, noise.digest()))
    keys = [hashlib.sha256(repr((context, job)).encode()).hexdigest()[:24] for job in jobs]
    done: dict[int, Rendered] = {}
    if cache is not None:
        for i, key in enumerate(keys):
            if (found := clips.load_cached(cache, key)) is not None:
                done[i] = found
    todo = [i for i in range(len(jobs)) if i not in done]
    failed: list[str] = []
    began = time.monotonic()
    if todo:
        with ProcessPoolExecutor(recipe.jobs, initializer=clips.init_worker, initargs=args) as pool:
            results = pool.map(clips.render_in_worker, [jobs[i] for i in todo], chunksize=4)
            for n, (i, result) in enumerate(zip(todo, results, strict=True)):
                if isinstance(result, str):
                    failed.append(result)
                    continue
                done[i] = result
                if cache is not None:
                    clips.store_cached(cache, keys[i], result)
                if (n + 1) % 500 == 0:
                    say(f"  {n + 1}/{len(todo)} clips ({time.monotonic() - began:.0f} s)")
    if failed:
        say(f"  {len(failed)} clips could not be made, e.g. {failed[0]}")
    return [done[i] for i in sorted(done)]


def babble_sources(recipe: Recipe, pool: list[Voice]) -> list[voices.Audio]:
    """Speech for babble: real recordings and talk by training voices (dry)."""
    planner = Planner(replace(recipe, seed=recipe.seed + 7), pool)
    speech = [clips.recording(p) for p in sorted(recipe.real_negatives)[:40]]
    count = {"tiny": 4, "small": 16}.get(recipe.size, 40)
    for _ in range(count):
        try:
            speech.append(
                voices.say(planner.voice(planner.voices), planner.talk(), planner.delivery())
            )
        except voices.SynthesisError:
            continue
    return speech


NEAR_CLIPS = 0.10
"""The share of validation near-word clips allowed to reach the threshold. A near word
("commuter", "top") is chosen to sound like the phrase and is said alone, slowly, in a quiet
room: one in ten may pass, where the head has nothing but the word to go on."""
OTHER_CLIPS = 0.005
"""The share of every other validation negative clip (other words, talk, real speech, noise),
pooled: what the microphone hears all day. One in two hundred; pooled, because a group of forty
clips cannot measure one in two hundred and its single worst clip would set the threshold."""


def threshold_for(negatives: dict[str, np.ndarray]) -> float:
    """The lowest score that no more than the allowed share of the near-word clips and of the
    other negative clips reaches (their top scores), between 0.5 and 0.98."""
    near = negatives.get("near", np.zeros(0))
    others = [s for group, s in negatives.items() if group != "near"]
    other = np.concatenate(others) if others else np.zeros(0)
    top = 0.5
    for scores, allowed in ((near, NEAR_CLIPS), (other, OTHER_CLIPS)):
        if len(scores):
            top = max(top, float(np.quantile(scores, 1 - allowed)) + 1e-3)
    return float(min(0.98, top))


def clip_scores(
    model: KeywordModel, rendered: list[Rendered], frames: int
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(best score around the phrase, per positive clip), (top score per negative clip, by
    group)."""
    pos: list[float] = []
    neg: dict[str, list[float]] = {}
    for clip in rendered:
        if len(clip.vectors) < frames:
            continue
        views = np.lib.stride_tricks.sliding_window_view(clip.vectors, (frames, 96))[:, 0]
        scores = model.scores(views)
        labels = clip.labels[frames - 1 :]
        if clip.group == "positive":
            if (labels == 1).any():
                pos.append(float(scores[labels == 1].max()))
        else:
            neg.setdefault(clip.group, []).append(float(scores.max()))
    return np.array(pos), {group: np.array(s) for group, s in neg.items()}


def _usable_engines(recipe: Recipe, say: Callable[[str], None]) -> list[str]:
    """The recipe's voice engines this machine has (each one left out is named)."""
    missing = {
        e: why for e, why in voices.available_engines().items() if why and e in recipe.engines
    }
    for engine, why in missing.items():
        say(f"voice engine {engine} left out: {why}")
    engines = [e for e in recipe.engines if e not in missing]
    if not engines:
        raise voices.SynthesisError("no voice engine is usable: install espeak-ng at least")
    return engines


def _fit(recipe: Recipe, rendered: list[Rendered], say: Callable[[str], None]) -> fit.Fitted:
    weighted = [(r.vectors, r.labels, NEGATIVE_WEIGHT.get(r.group, 1.0)) for r in rendered]
    data = fit.examples(weighted, recipe.frames, HARD_WEIGHT)
    say(
        f"fitting on {int((data.labels == 1).sum())} positive and {int((data.labels == 0).sum())} "
        f"negative views"
    )
    settings = replace(recipe.fitting, steps=recipe.dimensions.steps, seed=recipe.seed)
    return fit.fit(data, settings, lambda step, loss: say(f"  step {step}: loss {loss:.4f}"))


def _validation(pos: np.ndarray, neg: dict[str, np.ndarray], threshold: float) -> dict[str, Any]:
    """How the model did on the validation clips at `threshold` (kept in the model file)."""
    recall = float((pos >= threshold).mean()) if len(pos) else 0.0
    return {
        "recall": round(recall, 4),
        "positives": len(pos),
        "negative_clips": {g: len(v) for g, v in sorted(neg.items())},
        "false_accepts": {g: int((v >= threshold).sum()) for g, v in sorted(neg.items())},
    }


def train(
    recipe: Recipe,
    out: Path,
    command: str = "",
    say: Callable[[str], None] | None = None,
    cache: Path | None = None,
) -> KeywordModel:
    say = say or (lambda text: print(text, file=sys.stderr, flush=True))
    began = time.monotonic()
    engines = _usable_engines(recipe, say)
    pool = voices.all_voices(engines)
    recordings = [rooms.training_half(clips.recording(p)) for p in recipe.noise_recordings]
    babble = babble_sources(recipe, pool)
    noise = rooms.NoiseSources(babble, recordings)
    the_plan = plan(recipe, pool, noise.kinds())
    say(
        f"{recipe.phrase!r}: {len(the_plan.train)} training clips, {len(the_plan.validate)} "
        f"validation clips, {len(the_plan.voices)} voices ({len(the_plan.validation_voices)} "
        f"more for validation), engines {', '.join(engines)}"
    )
    rendered = render_all(the_plan.train, recipe, noise, say, cache)
    validation = render_all(the_plan.validate, recipe, noise, say, cache)
    say(f"rendered in {time.monotonic() - began:.0f} s")
    fitted = _fit(recipe, rendered, say)
    info = ModelInfo(recipe.phrase.lower(), recipe.frames, 80, 0.5)
    model = KeywordModel(info, fitted.weights)
    pos, neg = clip_scores(model, validation, recipe.frames)
    threshold = threshold_for(neg)
    made: dict[str, Any] = {
        "command": command,
        "recipe": {k: v for k, v in asdict(recipe).items() if k not in ("held_out",)},
        "held_out": sorted(recipe.held_out),
        "engines": engines,
        "voices": len(the_plan.voices),
        "clips": len(rendered),
        "validation": _validation(pos, neg, threshold),
        "seconds": round(time.monotonic() - began),
    }
    model = KeywordModel(replace(info, threshold=round(threshold, 4), made=made), fitted.weights)
    model.save(out)
    say(
        f"wrote {out}: threshold {threshold:.3f}, validation recall "
        f"{made['validation']['recall']:.1%} "
        f"({len(pos)} clips), {made['seconds']} s"
    )
    return model
