"""Words that take a command back ("don't", "never", "nope"), as normalised words (no
apostrophes): one list for the interpreter (a refusal, never a reading that skips them), the
recogniser (a hypothesis holding one is kept as heard) and the stop (a command said with a stop
and one of these is not named as dropped)."""

from __future__ import annotations

NEGATIONS = frozenset((
    "dont", "not", "no", "never", "without", "except", "nope", "nor", "neither", "cannot",
    "doesnt", "didnt", "cant", "wont", "shouldnt", "wouldnt", "couldnt", "mustnt", "neednt",
    "isnt", "arent", "wasnt", "werent", "havent", "hasnt", "hadnt", "aint", "shant",
))  # fmt: skip
"""Every form the normaliser leaves of them (it drops apostrophes: "didn't" -> "didnt")."""

NEGATIONS_SPELT = {
    "dont": "don't", "doesnt": "doesn't", "didnt": "didn't", "cant": "can't", "wont": "won't",
    "shouldnt": "shouldn't", "wouldnt": "wouldn't", "couldnt": "couldn't", "mustnt": "mustn't",
    "neednt": "needn't", "isnt": "isn't", "arent": "aren't", "wasnt": "wasn't",
    "werent": "weren't", "havent": "haven't", "hasnt": "hasn't", "hadnt": "hadn't",
    "aint": "ain't", "shant": "shan't", "i": "I",
}  # fmt: skip
"""How a refusal quotes them back."""


def negated(words: set[str] | frozenset[str] | list[str]) -> bool:
    """Whether any of the (normalised) `words` takes a command back."""
    return not NEGATIONS.isdisjoint(words)
