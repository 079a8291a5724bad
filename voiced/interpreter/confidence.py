"""Confidence of deterministic results, and seed 000's strict mode.

Seed 000's bands: 0.9-1.0 clear, 0.7-0.9 interpreted, 0.5-0.7 best guess, below 0.5 unclear.
The grammar and the phrase bank are calibrated into them: an exact parse is clear (0.95), every
snapped word or best-effort reading ("both stacks" chosen from the scene) makes it less so.
"""

from __future__ import annotations

from voiced.interpreter.result import Interpretation

PHRASE_EXACT = 0.98
"""An exact phrase bank hit (the operator said a known phrase word for word)."""
PHRASE_FUZZY_TOP = 0.95
"""A fuzzy hit scoring 100 (differing only in fillers or punctuation)."""
PHRASE_FUZZY_FLOOR = 0.75
"""A fuzzy hit scoring exactly the threshold."""
GRAMMAR_EXACT = 0.95
"""Every word known, nothing guessed."""
GRAMMAR_SNAPPED = 0.80
"""One word snapped to the vocabulary ("chease" -> cheese)."""
PER_EXTRA_SNAP = 0.05
"""Each further snapped word."""
PER_GUESS = 0.10
"""Each best-effort reading (a default taken, an approximation made)."""
NAMED_LAST = 0.90
"""A learning directive naming the last executed sequence ("call that a BLT"): the sequence
is exactly what ran, only the reference "that" is interpreted."""
FLOOR = 0.40
"""A parse that succeeded is never reported below this."""
UNKNOWN = 0.1
"""Seed 000: an impossible or unknown command."""
STRICT_THRESHOLD = 0.6
"""Seed 000: in strict mode a non-creative result below this asks before moving."""
LEARN_THRESHOLD = 0.80
"""Seed 000's LLM_CONFIDENCE_THRESHOLD: learned composites are saved only at or above this."""


def grammar_confidence(snaps: int, guesses: int) -> float:
    """0.95 for a clean parse; 0.80 with one snap, 0.05 less per further snap; 0.10 less per
    guess; never below FLOOR."""
    value = GRAMMAR_EXACT if snaps == 0 else GRAMMAR_SNAPPED - PER_EXTRA_SNAP * (snaps - 1)
    return round(max(FLOOR, value - PER_GUESS * guesses), 2)


def phrase_confidence(score: float, threshold: float, exact: bool) -> float:
    """Exact 0.98; a fuzzy ratio scaled linearly from [threshold, 100] to [0.75, 0.95]."""
    if exact:
        return PHRASE_EXACT
    span = max(100.0 - threshold, 1e-9)
    share = min(max((score - threshold) / span, 0.0), 1.0)
    return round(PHRASE_FUZZY_FLOOR + share * (PHRASE_FUZZY_TOP - PHRASE_FUZZY_FLOOR), 2)


def band(confidence: float) -> str:
    """Seed 000's display band: HIGH (>= 0.90), MED (0.75-0.89), LOW (< 0.75)."""
    if confidence >= 0.90:
        return "HIGH"
    return "MED" if confidence >= 0.75 else "LOW"


def needs_confirmation(result: Interpretation, strict: bool) -> bool:
    """Strict mode: a non-creative result with something to run, below 0.6, is read back and
    runs only on a yes. Creative commands are exempt (low confidence on "go wild" is fine)."""
    return (
        strict
        and not result.is_creative
        and bool(result.sequence)
        and result.confidence < STRICT_THRESHOLD
    )


def strict_warning(result: Interpretation) -> str:
    """Seed 000's banner text for a result that strict mode holds back."""
    return (
        f"Strict mode: confidence {result.confidence:.2f} — would request confirmation "
        "before executing"
    )
