"""Near-miss repair driven by the grammar: a transcript the grammar cannot act on is tried
with one or two of its words replaced by vocabulary phrases that sound alike, and a version
the grammar accepts whole is kept ("add layer this" -> "add lettuce", "art bread" -> "add
bread", "pick up the weld" -> "pick up the welder").

The grammar decides what fits a slot: a replacement is kept only when the whole command then
parses, so "art" can become "add" in the verb slot but never an item. Candidates are ranked
by how alike they sound (`voiced.rules.sounds`), never by a list of confusions seen before.
At most two spans are replaced, each sounding at least `MIN_SIMILARITY` alike, and never by
a word next to it ("clear near assembly" is not "clear clear assembly"): a sentence of other
talk does not turn into a command. A word heard that names a thing of the cell (an item, a
place, a tool) is kept, and a span holding one may only become a phrase that holds it too
("skin milk" may become "skim milk"): the recogniser heard a real name there, and swapping it
for another word that parses moves the arm somewhere else ("put meat on the left" heard as
"both meat on the left" is not "both meat on the lift").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from voiced.interpreter.grammar import Grammar
from voiced.interpreter.vocabulary import Vocabulary
from voiced.robot.cell import Cell
from voiced.robot.sequence import SequenceStep
from voiced.rules.negation import NEGATIONS, UNDOES
from voiced.rules.normalize import normalize
from voiced.rules.sounds import Sounds, similarity
from voiced.words.offered import head_nouns

MIN_SIMILARITY = 0.62
"""Least `similarity` of a replacement ("layer this"/"lettuce" 0.70, "art"/"add" 0.75,
"weld"/"welder" 0.80; "bread"/"red" 0.62)."""
MAX_SPAN = 2
"""A span of at most this many heard words is replaced by one vocabulary phrase."""
SINGLES_TRIED = 24
"""Best single replacements parsed, before pairs of them are tried."""
PAIRS_FROM = 10
"""Pairs are made from this many of the best single replacements."""
EDITS_KEPT = 8
"""Most versions `Repairer.edited` hands on (the acoustic judge chooses among them)."""


@dataclass(frozen=True)
class Replacement:
    start: int
    """First word replaced (index into the normalised words)."""
    end: int
    """One past the last word replaced."""
    phrase: str
    """The vocabulary phrase put in."""
    score: float
    """How alike it sounds (0..1)."""


@dataclass(frozen=True)
class Repaired:
    text: str
    """The command the grammar accepts."""
    replacements: tuple[Replacement, ...]

    @property
    def score(self) -> float:
        return min(r.score for r in self.replacements)


class Repairer:
    """Repairs transcripts for one vocabulary (a cell's grammar)."""

    def __init__(
        self,
        phrases: Iterable[str],
        sounds: Sounds,
        names: Iterable[str] = (),
        heads: Iterable[str] = (),
    ):
        self.phrases = sorted({p for p in phrases if p})
        self.known = frozenset(w for p in self.phrases for w in p.split())
        """Words of the vocabulary: a span with a word outside it is tried first."""
        self.names = frozenset(names)
        """Words that name a thing of the cell: never replaced."""
        self.heads = frozenset(heads)
        """Last words of the names of things of one kind ("milk" of "soy milk", "oat milk"):
        a swap that keeps one is judged on the words before it."""
        self.sounds = sounds
        self._targets: dict[str, str] | None = None

    def targets(self) -> dict[str, str]:
        if self._targets is None:
            self._targets = {p: s for p, s in self.sounds.of(self.phrases).items() if s}
        return self._targets

    def repair(self, text: str, accepts: Callable[[str], bool]) -> Repaired | None:
        """A version of `text` that `accepts` takes, or None (also when `text` is taken as
        it is, or nothing sounds alike enough)."""
        if not self.sounds.available:
            return None
        words = normalize(text).split()
        candidates = self._candidates(words)
        for one in candidates[:SINGLES_TRIED]:
            fixed = _apply(words, (one,))
            if accepts(fixed):
                return Repaired(fixed, (one,))
        pairs = [
            (a, b) for a, b in combinations(candidates[:PAIRS_FROM], 2)
            if a.end <= b.start or b.end <= a.start
        ]  # fmt: skip
        pairs.sort(key=lambda pair: -min(r.score for r in pair))
        for pair in pairs:
            ordered = tuple(sorted(pair, key=lambda r: r.start))
            fixed = _apply(words, ordered)
            if accepts(fixed):
                return Repaired(fixed, ordered)
        return None

    def edited(
        self, text: str, accepts: Callable[[str], bool], insertable: Iterable[str]
    ) -> list[str]:
        """Versions of `text` with one word taken out or one of `insertable` put in that
        `accepts` takes, fewest changes to names first: "may i have a double shot of drip
        coffee" without "of", "make me medium roast latte" with "a" (recognisers drop and add
        short words in noise). Never takes out a word that takes the command back ("..., oops."
        is no order), one that names a thing of the cell, nor the word before the name of a
        kind ("health coffee" is no "coffee", "shot with coffee" no "shot coffee"): that is
        where the cell's names say which of the kind ("house coffee", "drip coffee"), and a
        word misheard there is the name misheard, not one too many."""
        words = normalize(text).split()
        kept = undoing(words)
        found: dict[str, None] = {}
        for i, word in enumerate(words):
            following = words[i + 1] if i + 1 < len(words) else ""
            if word not in self.names and following not in self.heads and i not in kept:
                found[" ".join([*words[:i], *words[i + 1 :]])] = None
        for i in range(len(words) + 1):
            for word in insertable:
                if words[i - 1 : i] != [word] and words[i : i + 1] != [word]:
                    found[" ".join([*words[:i], word, *words[i:]])] = None
        return [candidate for candidate in found if accepts(candidate)][:EDITS_KEPT]

    def _candidates(self, words: list[str]) -> list[Replacement]:
        spans = [
            (i, j)
            for i in range(len(words))
            for j in range(i + 1, min(len(words), i + MAX_SPAN) + 1)
        ]
        heard = self.sounds.of(" ".join(words[i:j]) for i, j in spans)
        kept = undoing(words)
        targets = self.targets()
        out: list[Replacement] = []
        partly: list[tuple[Replacement, str, str]] = []
        for i, j in spans:
            said = " ".join(words[i:j])
            sound = heard.get(said, "")
            if not sound or kept.intersection(range(i, j)):
                continue  # "wait" swapped for "with" would run what was taken back
            named = self.names.intersection(words[i:j])
            before, after = words[i - 1 : i], words[j : j + 1]
            for phrase, target in targets.items():
                put = phrase.split()
                if phrase == said or put[:1] == before or put[-1:] == after:
                    continue
                if not named.issubset(put):
                    continue  # a name heard stays ("skin milk" may be "skim milk", not "cream")
                if j - i > 1 and put == words[j - 1 : j] and put[0] in self.heads:
                    continue  # "raw sugar" is no plain "sugar": the word before says which
                changed = _changed(words[i:j], put, self.heads)
                if changed is not None:
                    partly.append((Replacement(i, j, phrase, 0.0), *changed))
                    continue
                score = similarity(sound, target)
                if score >= MIN_SIMILARITY:
                    out.append(Replacement(i, j, phrase, round(score, 3)))
        out += self._scored_on_the_change(partly)
        # A word the cell does not know is the likely mishearing; known words come after.
        strange = {i for i, word in enumerate(words) if word not in self.known}
        out.sort(key=lambda r: (not strange.intersection(range(r.start, r.end)), -r.score))
        return out

    def _scored_on_the_change(
        self, partly: list[tuple[Replacement, str, str]]
    ) -> list[Replacement]:
        """Replacements that keep the name of a kind heard ("oat milk" -> "whole milk"),
        scored on the words they change ("oat" / "whole", 0.42, not 0.73 with "milk" in
        both): "oat milk" is heard as a milk, and another milk is not what was said."""
        sounds = self.sounds.of({text for _, *pair in partly for text in pair if text})
        out: list[Replacement] = []
        for replacement, said, put in partly:
            if not (said and put and sounds.get(said) and sounds.get(put)):
                continue  # a word put in or left out: `edited`, not a swap by sound
            score = similarity(sounds[said], sounds[put])
            if score >= MIN_SIMILARITY:
                out.append(Replacement(replacement.start, replacement.end, replacement.phrase,
                                       round(score, 3)))  # fmt: skip
        return out


def _changed(said: list[str], put: list[str], heads: frozenset[str]) -> tuple[str, str] | None:
    """The words heard and the words put in their place before the name of a kind both end in
    ("oat" and "whole" of "oat milk" / "whole milk"); None when they end in none."""
    if len(said) < 2 or len(put) < 2 or said[-1] != put[-1] or said[-1] not in heads:
        return None
    return " ".join(said[:-1]), " ".join(put[:-1])


def undoing(words: list[str]) -> frozenset[int]:
    """Where in `words` a word takes the command back: a negation, or a word of an undo
    phrase ("oops", both words of "hold on"). A repair never takes these out or swaps them."""
    found = {i for i, word in enumerate(words) if word in NEGATIONS}
    text, at = " ".join(words), [0]
    for word in words:
        at.append(at[-1] + len(word) + 1)
    for match in UNDOES.finditer(text):
        found |= {i for i in range(len(words)) if match.start() <= at[i] < match.end()}
    return frozenset(found)


def kind_heads(cell: Cell) -> frozenset[str]:
    """The words that name what a thing of the cell is ("milk" of "soy milk"; see
    `voiced.words.offered.head_nouns`): the `heads` of the cell's repairer."""
    return head_nouns(cell)


def _apply(words: list[str], replacements: tuple[Replacement, ...]) -> str:
    out: list[str] = []
    at = 0
    for r in replacements:
        out += words[at : r.start]
        out.append(r.phrase)
        at = r.end
    out += words[at:]
    return " ".join(out)


SMALL_NUMBERS = range(1, 11)
"""Counts an operator says ("three layers"); the lexer reads numbers, the table has none."""


def vocabulary_phrases(vocabulary: Vocabulary) -> list[str]:
    """What a heard span may become: every phrase of the cell's vocabulary but the fillers,
    and the numbers it uses (counts, numbered positions)."""
    numbers = {*SMALL_NUMBERS, *vocabulary.position_numbers}
    return [
        *(" ".join(key) for key, entry in vocabulary.phrases.items()
          if "filler" not in entry.readings and entry.canonical is None),
        *(str(n) for n in sorted(numbers)),
    ]  # fmt: skip


NAMED = ("item", "zone", "site", "position", "tool")
"""Kinds of words that name something a command acts on: each one heard must be used."""
USED = (*NAMED, "routine")
"""The same, and a routine (a drink of the barista): "2 an iced mocha with some switch" is
no speed change that drops the mocha."""


def name_words(vocabulary: Vocabulary) -> frozenset[str]:
    """Every word of a vocabulary phrase that names something (`NAMED`): "meat", "left",
    "welder", "red" and "cube" of "red cube". Not the spellings the lexer maps onto a name
    ("free" for 3): those are guesses at a mishearing themselves."""
    return frozenset(
        word
        for key, entry in vocabulary.phrases.items()
        if entry.canonical is None and any(kind in entry.readings for kind in NAMED)
        for word in key
    )


def uses_every_name(grammar: Grammar, text: str, sequence: Sequence[SequenceStep]) -> bool:
    """Whether every thing named in `text` (an item, a place, a tool) is an argument of some
    step: "put back cheese on the right" read as "put back what is held" drops words, and a
    transcript that only parses by dropping them is not what was said."""
    lexed = grammar.lexer.lex(text)
    if any(token.unknown for token in lexed.tokens):
        return False
    used = {str(v).lower() for step in sequence for v in step.params.values()}
    for token in lexed.tokens:
        names = [str(token.readings[k]).lower() for k in USED if k in token.readings]
        if names and not used.intersection(names):
            return False
    return True
