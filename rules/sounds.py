"""How words sound: espeak-ng's phonemes, and a similarity of two phrases by sound.

A recogniser's mistakes are mostly words that sound alike ("art bread" for "add bread",
"layer this" for "lettuce", "free" for "three"), so the near-miss repair compares sounds, not
spellings. espeak-ng (already the daemon's voice) spells any English word in phonemes
(`espeak-ng -q -x`: "lettuce" -> `l'EtIs`). Two keys are compared: the phonemes themselves,
and a coarse key that keeps the consonant skeleton, merges voiced and voiceless pairs (t/d,
s/z, T/D...) and turns every run of vowels into one `V`, because a noisy recogniser keeps a
word's rhythm and consonants better than its vowels.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Iterable

from rapidfuzz.distance import Levenshtein

ESPEAK = "espeak-ng"
TIMEOUT_S = 5.0
_STRESS = re.compile(r"[',\-_:;#!=|]")
_VOWELS = frozenset("aAeEiIoOuUV@30yY&")
_VOICING = str.maketrans("bdgvzDZ", "ptkfsTS")
_VOWEL_CASE = str.maketrans("AEIOUV", "aeiouv")


def coarse(phonemes: str) -> str:
    """Consonant skeleton with vowel runs as `V` and voicing merged: `l'EtIs` -> `lVtVs`."""
    out: list[str] = []
    for char in _STRESS.sub("", phonemes).replace(" ", ""):
        symbol = "V" if char in _VOWELS else char.translate(_VOICING)
        if symbol == "V" and out and out[-1] == "V":
            continue
        out.append(symbol)
    return "".join(out)


def fine(phonemes: str) -> str:
    """The phonemes without stress, length or word breaks, vowels in one case (`A`/`a`)."""
    return _STRESS.sub("", phonemes).replace(" ", "").translate(_VOWEL_CASE)


def similarity(a: str, b: str) -> float:
    """0..1: how alike two phoneme strings sound (half fine phonemes, half coarse key)."""
    close = Levenshtein.normalized_similarity(fine(a), fine(b))
    rough = Levenshtein.normalized_similarity(coarse(a), coarse(b))
    return (close + rough) / 2


class Sounds:
    """Phonemes of phrases, from espeak-ng, cached. Unavailable without espeak-ng: then
    `available` is False and nothing is compared by sound."""

    def __init__(self, program: str = ESPEAK) -> None:
        self.program = shutil.which(program)
        self._cache: dict[str, str] = {}
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        return self.program is not None

    def of(self, phrases: Iterable[str]) -> dict[str, str]:
        """Phonemes of each phrase (plain lower-case words); one espeak-ng call for the new."""
        wanted = list(dict.fromkeys(p for p in phrases if p))
        with self._lock:
            new = [p for p in wanted if p not in self._cache]
            if new and self.program is not None:
                self._cache.update(zip(new, self._speak(new), strict=True))
            return {p: self._cache.get(p, "") for p in wanted}

    def _speak(self, phrases: list[str]) -> list[str]:
        assert self.program is not None
        text = "".join(f"{p}.\n" for p in phrases)
        try:
            done = subprocess.run([self.program, "-q", "-x"], input=text, capture_output=True,
                                  text=True, timeout=TIMEOUT_S, check=True)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return [""] * len(phrases)
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        return lines if len(lines) == len(phrases) else [""] * len(phrases)
