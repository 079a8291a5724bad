"""Words that take a command back ("don't", "never", "nope"), as normalised words (no
apostrophes): one list for the interpreter (a refusal, never a reading that skips them), the
recogniser (a hypothesis holding one is kept as heard) and the stop (a command said with a stop
and one of these is not named as dropped)."""

from __future__ import annotations

import re

from voiced.rules.normalize import words

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


BEARS_ON_NEXT = re.compile(
    r"\b(?:not|no|never|don'?t|do not|without|except|but|instead of|rather than|skip|skipping|"
    r"leave out|leave off|forget|scratch|omit|hold off)\b",
    re.IGNORECASE,
)
"""Words that change what is said after them ("don't" ... "add cheese", "don't put the bread
and" ... "cheese", "skip" ... "tack weld at position one"): words that hold one are never
dropped apart from what follows. Which words take back what follows is no list anyone can
finish: these are the common ones, and a command without a verb of its own ("cheese on the
left") always goes with the words before it."""
CORRECTS = re.compile(
    r"(?:(?:uh|um|er|oh|ah|hmm|well|okay|ok)\b[\s,.!?-]*)*"
    r"(?:no|not|nope|actually|instead|wait|sorry|rather|i mean|make (?:that|it)|change|"
    r"scratch that|on second thought)\b",
    re.IGNORECASE,
)
"""How a correction of what was just said begins ("no, make it a cappuccino", "uh, no, ...")."""
UNDO_WORDS = (
    r"wait|hold on|hang on|cancel|abort|never ?mind|scrap|scratch|undo|oops|wrong|mistake|"
    r"sorry|stop|nah|nope|forget (?:it|that|about it)|changed? (?:my|of) mind"
)
"""Words that take back what was said."""
CHANGE_WORDS = r"change|changed|mind|instead|actually|rather|i mean|second thought|make that"
"""Words that change what was said ("instead" is also what "inspect" is misheard as)."""
TAKES_BACK = re.compile(rf"\b(?:{UNDO_WORDS}|{CHANGE_WORDS})\b", re.IGNORECASE)
"""Words that take back or change what came before, wherever they stand ("oops, wrong one",
"I changed my mind"): with those of `CORRECTS` and `BEARS_ON_NEXT`, what quieter talk must
not hold for the command before it to go as it stood."""


UNDOES = re.compile(rf"\b(?:{UNDO_WORDS})\b", re.IGNORECASE)
"""Of `TAKES_BACK`, the words that take back what was said rather than change it."""


def undoes(said: str) -> bool:
    """Whether `said` holds a negation or a word that takes back what was said ("oops",
    "wait"): what a repair never takes out or swaps away to make an order of it."""
    return negated(words(said)) or bool(UNDOES.search(said))


def takes_back(said: str) -> bool:
    """Whether `said` holds words that take back or change what came before it, or bear on
    what follows ("no, I don't know", "oops, wrong one", "don't", "changed my mind")."""
    return bool(
        CORRECTS.match(said.strip()) or BEARS_ON_NEXT.search(said) or TAKES_BACK.search(said)
    )
