"""What the training voices say: the phrase in the places an operator says it, words that sound
nearly like it, and talk that has nothing to do with it.

Near words come from two places: a short list per shipped phrase (the ones the issue and the
stop rule name: "commuter", "top", "non-stop", "stopped", ...) and, for any phrase, spelling
edits ("computer" -> "compuder", "conputer", "pewter") that espeak-ng does not pronounce as the
phrase itself. Talk is random word strings from Whisper's vocabulary (23,000 English words, on
this machine already) and the cell commands the caller gives.
"""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

NEAR_WORDS: dict[str, tuple[str, ...]] = {
    "computer": (
        "commuter",
        "compute",
        "computing",
        "computed",
        "computation",
        "can you",
        "come to her",
        "commute",
        "competer",
        "composer",
        "compete",
        "complete",
        "comfort",
        "computing power",
        "come pewter",
        "copter",
        "counter",
        "commuters",
        "compost",
        "pewter",
        "puter",
        "cooper",
        "compared",
        "composure",
        "amputee",
        "a computing",
        "can pewter",
        "come here",
        "compass",
    ),
    "stop": (
        "top",
        "stock",
        "shop",
        "non-stop",
        "stop-gap",
        "stopwatch",
        "stopped",
        "stopping",
        "stops",
        "stomp",
        "step",
        "store",
        "spot",
        "swap",
        "stuff",
        "tops",
        "drop",
        "chop",
        "stack",
        "start",
        "storm",
        "stub",
        "stall",
        "slot",
        "pop",
        "hop",
        "mop",
        "stoke",
        "stove",
        "topped",
        "stockroom",
        "stopper",
        "stoppage",
        "scotch",
        "stuck",
        "stuff up",
        "stop-motion",
        "nonstop",
        "estop",
        "top up",
        "desktop",
        "laptop",
        "atop",
    ),
    "halt": (
        "hold",
        "salt",
        "fault",
        "vault",
        "hall",
        "halls",
        "halter",
        "halted",
        "halting",
        "hulk",
        "hot",
        "hurt",
        "heart",
        "halve",
        "half",
        "hauled",
        "holt",
        "malt",
        "all",
        "help",
        "health",
        "hawk",
        "haunt",
        "alt",
        "bolt",
        "colt",
    ),
    "freeze": (
        "freezer",
        "frees",
        "free",
        "breeze",
        "fries",
        "phrase",
        "froze",
        "freezing",
        "fees",
        "three",
        "trees",
        "freed",
        "frizz",
        "sneeze",
        "squeeze",
        "cheese",
        "please",
        "fierce",
        "frozen",
        "reese",
        "ease",
        "fleece",
    ),
}
"""Words near the shipped phrases. None of them is what the daemon's stop rule or wake word
would take for the phrase ("bus stop" is a stop; "frieze" sounds the same: both left out)."""

CARRIERS: dict[str, tuple[tuple[str, str], ...]] = {
    "stop": (
        ("", ""),
        ("", "stop"),
        ("emergency", ""),
        ("no no", ""),
        ("please", ""),
        ("okay", ""),
        ("hey", ""),
        ("robot", ""),
        ("", "stop stop"),
    ),
    "halt": (("", ""), ("", "halt"), ("please", ""), ("robot", ""), ("okay", "")),
    "freeze": (("", ""), ("", "freeze"), ("everybody", ""), ("robot", ""), ("okay", "")),
}
"""(before, after) the phrase, for phrases said on their own or with a word or two. A stop
word is followed by a pause, not run into the next word: "stop-gap", "stopwatch" and
"stopped" are not stops, and a model that fires before the next sound cannot tell them from
"stop it"."""
STOP_LIKE = frozenset(CARRIERS)
"""Phrases said as a command on their own: a pause follows them (`PAUSE_AFTER_S`)."""
PAUSE_AFTER_S = 0.25

EDITS = {
    **dict.fromkeys("pbtdkg", "pbtdkg"),
    **dict.fromkeys("mn", "mnl"),
    **dict.fromkeys("sz", "szf"),
    **dict.fromkeys("fv", "fvs"),
    **dict.fromkeys("lrw", "lrw"),
    **dict.fromkeys("aeiou", "aeiou"),
    "c": "gtk",
    "h": "fw",
    "j": "gy",
    "y": "ei",
}


@functools.cache
def vocabulary() -> tuple[str, ...]:
    """English words (3 to 12 letters) from the Whisper model's vocabulary, commonest first."""
    from voiced.audio.whisper import default_model_path

    path = Path(default_model_path()) / "vocabulary.txt"
    seen: dict[str, None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("Ġ") and re.fullmatch(r"[A-Za-z]{3,12}", line[1:]):
            seen.setdefault(line[1:].lower(), None)
    return tuple(seen)


def isolated_words(rng: np.random.Generator, avoid: Sequence[str]) -> str:
    """One or two short common words, said on their own (as an operator says a stop word)."""
    vocab = [w for w in vocabulary()[:8000] if len(w) <= 7]
    banned = {w.lower() for phrase in avoid for w in phrase.split()}
    picks: list[str] = []
    while len(picks) < (1 if rng.random() < 0.7 else 2):
        word = vocab[min(int(rng.exponential(1500)), len(vocab) - 1)]
        if word not in banned:
            picks.append(word)
    return " ".join(picks)


def talk(rng: np.random.Generator, words: int, avoid: Sequence[str]) -> str:
    """A string of `words` random words, common ones more often, none of them in `avoid`."""
    vocab = vocabulary()
    banned = {w.lower() for phrase in avoid for w in phrase.split()}
    picks: list[str] = []
    while len(picks) < words:
        # Ranks drawn from an exponential: most words common, some rare.
        rank = min(int(rng.exponential(3000)), len(vocab) - 1)
        if vocab[rank] not in banned:
            picks.append(vocab[rank])
    return " ".join(picks)


def phonemes(text: str, voice: str = "en-us") -> str:
    """espeak-ng's phonemes for `text`, stress and word breaks left out (for comparing)."""
    out = subprocess.run(
        ["espeak-ng", "-q", "-x", "-v", voice, text], capture_output=True, check=True, timeout=30
    ).stdout.decode()
    return re.sub(r"[\s',_!:;.]", "", out)


def spelling_edits(phrase: str, rng: np.random.Generator, count: int) -> list[str]:
    """Up to `count` one-letter changes of `phrase` (substitute a like letter, drop one, or keep
    a part) that espeak-ng says differently from the phrase."""
    word = phrase.lower()
    candidates: set[str] = set()
    for i, letter in enumerate(word):
        for other in EDITS.get(letter, ""):
            if other != letter:
                candidates.add(word[:i] + other + word[i + 1 :])
        if letter != " ":
            candidates.add(word[:i] + word[i + 1 :])
    letters = word.replace(" ", "")
    if len(letters) >= 6:
        candidates |= {word[: len(word) * 2 // 3], word[len(word) // 3 :]}
    own = phonemes(phrase)
    found = [c.strip() for c in sorted(candidates) if c.strip() and c.strip() != word]
    rng.shuffle(found)
    kept: list[str] = []
    for candidate in found:
        if len(kept) >= count:
            break
        if phonemes(candidate) != own:
            kept.append(candidate)
    return kept


def near_words(phrase: str, rng: np.random.Generator, edits: int = 30) -> list[str]:
    """The listed near words of a shipped phrase, the phrase's own words alone (for a phrase of
    several words), and spelling edits."""
    listed = list(NEAR_WORDS.get(phrase.lower(), ()))
    parts = phrase.split()
    partial = (
        [" ".join(parts[:i]) for i in range(1, len(parts))] + parts[1:] if len(parts) > 1 else []
    )
    return sorted(set(listed + partial + spelling_edits(phrase, rng, edits)))


def carriers(phrase: str) -> tuple[tuple[str, str], ...]:
    """Words said just before and after the phrase when it is said with a word or two."""
    return CARRIERS.get(phrase.lower(), (("", ""), ("hey", ""), ("", "please"), ("okay", "")))
