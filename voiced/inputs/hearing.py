"""What the recogniser's hypotheses are held to: the live cell's grammar.

The recogniser offers several hypotheses for a segment (`[stt] hypotheses`), best first. The
first one the daemon can act on whole is kept: a frame word ("yes", "stop", "always listen"),
or a command the offline interpreter reads without guessing (`Interpreter.understands`), with
the wake word in front where one is needed. A command that names something the cell does not
have ("add avocado") stops the search where it stands: it is kept and refused aloud, never
swapped for a lower hypothesis or a repair that names something the cell has (where the
cell's sentences are closed, what decoding held to them makes of the audio is said back as a
question instead: "a bit of sweet" is mostly a bit of sweetener misheard). When no
hypothesis is either, the best two are offered to the near-miss repair
(`voiced.interpreter.repair`), which may replace one or two words with cell words that sound
alike. Dictation decodes freely: a note is not a command.

A hypothesis that is one sentence written over and over (Whisper does this to a short segment
in a long window) is read once, when the grammar reads it so. With `[stt] judge`, a command the
grammar reads goes to the recogniser with the other readings it would accept as well (lower
hypotheses; every other value of each slot of the cell's templates), and the recogniser keeps
the one the audio supports best (`voiced.audio.judge`).

Runs on the transcription worker thread; it only reads the router, the interpreter and the
daemon's belief.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import structlog

from voiced.audio.grammar_decode import WordGraph, like_a_sentence
from voiced.audio.guards import once
from voiced.audio.transcribe import Choice, Slot
from voiced.audio.wake import matches_wake_word
from voiced.commands.belief import Belief
from voiced.frames.router import CommandRouter
from voiced.interpreter.repair import Repairer, kind_heads, name_words, vocabulary_phrases
from voiced.interpreter.templategraph import graph_of
from voiced.interpreter.tiers import Interpreter
from voiced.rules.negation import NEGATIONS, takes_back, undoes
from voiced.rules.normalize import normalize, words
from voiced.rules.question import is_question
from voiced.rules.sounds import Sounds

log = structlog.get_logger(__name__)

REPAIR_FROM = 2
"""Only the recogniser's best hypotheses are repaired: lower ones are mostly noise."""
SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
"""Where the recogniser ended a sentence."""
SHORT_WORD = 4
"""Longest word of the templates that a repair may put in where the recogniser dropped it
("a", "an", "me", "with", "and"): short words are what noise swallows."""


class GrammarChooser:
    """A `voiced.audio.transcribe.Chooser` over the live cell."""

    def __init__(
        self,
        interpreter: Interpreter,
        belief: Belief,
        router: CommandRouter,
        wake_word: str,
        frame_words: Sequence[str],
        is_global: Callable[[str], bool],
        *,
        repair: bool,
        judge: bool = False,
        held: bool = False,
        sounds: Sounds | None = None,
    ) -> None:
        self.interpreter = interpreter
        self.belief = belief
        self.router = router
        self.wake_word = wake_word
        self.frame_words = frozenset(normalize(w) for w in frame_words)
        self.is_global = is_global
        """Stop, pause: the router acts on them anywhere; never repaired into anything else."""
        self.judge = judge
        """Offer the readings the grammar accepts to the acoustic judge (`[stt] judge`)."""
        self.sounds = (sounds or Sounds()) if repair else None
        if self.sounds is not None and not self.sounds.available:
            log.warning("espeak-ng not found: transcripts are not repaired by sound")
        self._repairers: dict[int, Repairer] = {}
        self.held = held
        """Offer the cell's sentences to decode held to (`[stt] held`)."""

    def __call__(self, texts: Sequence[str]) -> Choice | None:
        if not texts or self.router.top.name == "dictation":
            return None
        needs_wake = self.router.mode == "wake" and self.router.top is self.router.stack[0]
        if NEGATIONS & set(words(texts[0])):
            # "Computer, don't slap cheese on it": kept as heard, and refused. Never repaired,
            # held to the sentences or swapped for a lower hypothesis, each of which can lose
            # the "don't" and move the arm for the command it took back.
            return Choice(0)
        if undoes(texts[0]):
            # "Oops, can I get a large hot chocolate ..." is never swapped for a lower
            # hypothesis without the "oops" ("Can I get a large coffee ..."); repairs keep it.
            texts = texts[:1]
        for i, text in enumerate(texts):
            # A sentence Whisper wrote twice is judged as said once by every check below:
            # twice, "Give me a large latte." passes for a question ("give me ...") nobody
            # can answer, and "Give me 8 ounce, dark roast coffee." is never repaired.
            said = once(text)
            if self._acts_on(said, needs_wake, best=i == 0, questions=False):
                if said == text:
                    return self._offered(i, texts, needs_wake) if self.judge else Choice(i)
                log.info("repetition read once", heard=text, kept=said)
                return self._kept(i, texts, said, needs_wake)
            if self._asks(said, needs_wake) or self._names_what_is_missing(said, needs_wake):
                # A question, or a command naming what the cell lacks (refused aloud), is kept
                # as heard, never swapped for a lower hypothesis; unless one of the cell's own
                # sentences is a word or two away ("ice mocha" is no drink, "iced mocha" is;
                # "give me a latte with sugar" is an order, though it starts like a question).
                # Held to a closed cell's sentences it is only ever asked about ("Did you say:
                # ... with a bit of sweetener?"): "a hot chocolate" could become a hot coffee.
                by_template = self._fixed_by_template(i, texts, needs_wake)
                if by_template is not None:
                    return by_template
                # Kept as heard (said once), never offered to the judge with other readings.
                if said != text:
                    log.info("repetition read once", heard=text, kept=said)
                refused = self._misheard(said, needs_wake)
                return Choice(i, said if said != text else None, refused=refused)
        for i, text in enumerate(texts[:REPAIR_FROM]):
            fixed = self._repaired(once(text), needs_wake)
            if fixed is not None:
                log.info("transcript repaired", heard=text, repaired=fixed)
                return self._kept(i, texts, fixed, needs_wake)
        for i in range(min(REPAIR_FROM, len(texts))):
            edited = self._edits_kept(i, texts, needs_wake) or self._tail(i, texts, needs_wake)
            if edited is not None:
                return edited
        return None

    def sentences(self) -> WordGraph | None:
        """The cell's template sentences, with the wake word in front where one is needed,
        for the recogniser to hold its decoding to when it reads nothing else; only where they
        are every command the cell takes (`[sentences] closed`): holding an everyday command
        to a cell's few extra phrasings would make it one of them. None in dictation or with
        `[stt] held` off."""
        templates = self.interpreter.templates
        if not self.held or not templates.sentences.closed or self.router.top.name == "dictation":
            return None
        needs_wake = self.router.mode == "wake" and self.router.top is self.router.stack[0]
        return graph_of(templates, tuple(words(self.wake_word)) if needs_wake else ())

    def _misheard(self, text: str, needs_wake: bool) -> bool:
        """Whether a command the grammar reads only to refuse, or a question, may be an order
        misheard, to hold to the cell's sentences and ask about: one that names what the cell
        lacks ("ice coffee with a bit of sweet", "large vocal"), or a question that begins as
        one of the cell's sentences begins ("give me a triple shot ... milk and water"; not
        "do you have oat milk?", which is answered). Only where the sentences are closed, and
        never words that take something back ("... a bit of sweet, oops, wrong one": held, the
        question would leave the take-back out, and a truthful yes make the drink)."""
        graph = self.sentences()
        if graph is None or takes_back(text):
            return False
        return self._names_what_is_missing(text, needs_wake) or like_a_sentence(graph, text)

    def _tail(self, index: int, texts: Sequence[str], needs_wake: bool) -> Choice | None:
        """The last sentences of hypothesis `index`, when they are one of the cell's template
        sentences and what comes before is not: talk nearby ran into the segment ("I'll see
        you later. Can I have a large latte?"). Only the integrator's own sentences are taken
        from a longer text, never a looser reading of the grammar."""
        sentences = [s for s in SENTENCE_END.split(texts[index]) if s.strip()]
        templates = self.interpreter.templates
        for start in range(1, len(sentences)):
            tail = " ".join(sentences[start:]).strip()
            command = self._command(tail, needs_wake)
            ours = command is not None and templates.match(command[1]) is not None
            if ours and self._acts_on(tail, needs_wake, best=True, questions=False):
                log.info("command after talk", heard=texts[index], kept=tail)
                return self._kept(index, texts, tail, needs_wake)
        return None

    def _fixed_by_template(
        self, index: int, texts: Sequence[str], needs_wake: bool
    ) -> Choice | None:
        """Hypothesis `index` made one of the cell's template sentences by a repair or a
        short word in or out, or None."""
        text = texts[index]
        fixed = self._repaired(once(text), needs_wake, templates_only=True)
        if fixed is not None:
            log.info("transcript repaired", heard=text, repaired=fixed)
            return self._kept(index, texts, fixed, needs_wake)
        return self._edits_kept(index, texts, needs_wake)

    def _edits_kept(self, index: int, texts: Sequence[str], needs_wake: bool) -> Choice | None:
        edits = self._edited(once(texts[index]), needs_wake)
        if not edits:
            return None
        log.info("transcript repaired", heard=texts[index], repaired=edits[0])
        chosen = self._kept(index, texts, edits[0], needs_wake)
        return replace(chosen, rivals=(*chosen.rivals, *edits[1:])) if chosen.form else chosen

    def _kept(self, index: int, texts: Sequence[str], fixed: str, needs_wake: bool) -> Choice:
        """Hypothesis `index` read as `fixed` (repaired, or a repetition read once), offered to
        the judge like a hypothesis the grammar read as it was."""
        if not self.judge:
            return Choice(index, fixed)
        offered = self._offered(index, [*texts[:index], fixed, *texts[index + 1 :]], needs_wake)
        return replace(offered, text=fixed)

    def _edited(self, text: str, needs_wake: bool) -> list[str]:
        """One of the cell's template sentences a short word away from `text` (a word too
        many or too few): every such version, with the wake word as configured in front."""
        templates = self.interpreter.templates
        split = self._command(text, needs_wake)
        if (
            self.sounds is None
            or not templates
            or split is None
            or not split[1].strip()
            or self.is_global(text)
        ):
            return []
        wake, command = split
        short = [p for p in templates.phrases() if " " not in p and len(p) <= SHORT_WORD]
        edits = self._repairer().edited(command, self._accepts(templates_only=True), short)
        return [f"{wake} {e}".strip() for e in edits]

    def _accepts(self, templates_only: bool) -> Callable[[str], bool]:
        """What a repair must make of a command: one the grammar reads whole (`templates_only`:
        one of the cell's own template sentences)."""
        belief, interpreter = self.belief, self.interpreter

        def accepts(candidate: str) -> bool:
            if templates_only and interpreter.templates.match(candidate) is None:
                return False
            return interpreter.understands(candidate, belief.planned, belief.last_goals)

        return accepts

    def _offered(self, index: int, texts: Sequence[str], needs_wake: bool) -> Choice:
        """Hypothesis `index` with the other readings the grammar accepts as well (lower
        hypotheses, other values of its template's slots), for the acoustic judge."""
        kept = self._reading(texts[index], needs_wake)
        if kept is None:
            return Choice(index)
        form, spans = kept
        rivals: dict[str, None] = {}
        for text in texts[index + 1 :]:
            other = self._reading(text, needs_wake)
            if other is not None and other[0] != form and self._acts_on(text, needs_wake, False):
                rivals[other[0]] = None
        return Choice(index, form=form, rivals=tuple(rivals), slots=spans)

    def _reading(self, text: str, needs_wake: bool) -> tuple[str, tuple[Slot, ...]] | None:
        """A command as its template reads it (or its words), with the wake word as heard in
        front, and its template's slots; None for what is not a command (a frame word, a
        stop, a question)."""
        split = self._command(text, needs_wake)
        if split is None or not split[1].strip() or self.is_global(text):
            return None
        wake, command = split
        if normalize(command) in self.frame_words:
            return None
        found = self.interpreter.templates.slots(command)
        if found is None and is_question(normalize(command)):
            return None  # a template the integrator wrote is a command, whatever its words
        said = found.form if found is not None else " ".join(words(command))
        lead = f"{wake} " if wake else ""
        spans = found.spans if found is not None else ()
        slots = tuple(Slot(s.start + len(lead), s.end + len(lead), s.others) for s in spans)
        return f"{lead}{said}", tuple(s for s in slots if s.values)

    def _command(self, text: str, needs_wake: bool) -> tuple[str, str] | None:
        """(the wake word when it was heard, the command after it); None when a wake word is
        needed and not there. A repair is written with the wake word as configured."""
        match = matches_wake_word(text, self.wake_word)
        if match is not None:
            return self.wake_word, match.rest
        return None if needs_wake else ("", text)

    def _acts_on(self, text: str, needs_wake: bool, best: bool, questions: bool = True) -> bool:
        """Whether the daemon acts on `text` as heard: a frame word, a stop, the wake word
        alone, a command the grammar reads whole, or (`questions`) a question."""
        if normalize(text) in self.frame_words or self.is_global(text):
            return True
        split = self._command(text, needs_wake)
        if split is None:
            return False
        command = split[1]
        if not command.strip():
            # The wake word alone opens a query; as a lower hypothesis it is mostly the start
            # of the best one cut short ("Computer," under "Computer, what positions ...").
            return bool(split[0]) and best
        if normalize(command) in self.frame_words:
            return True
        if questions and is_question(normalize(command)):
            return True  # a question is answered: the daemon acts on it as heard
        return self.interpreter.understands(command, self.belief.planned, self.belief.last_goals)

    def _asks(self, text: str, needs_wake: bool) -> bool:
        """A question (answered as heard), where `_acts_on` without questions said no."""
        split = self._command(text, needs_wake)
        return split is not None and is_question(normalize(split[1]))

    def _names_what_is_missing(self, text: str, needs_wake: bool) -> bool:
        """A command naming something the cell lacks is kept as heard, and refused aloud."""
        split = self._command(text, needs_wake)
        if split is None:
            return False
        belief = self.belief
        return self.interpreter.names_what_is_missing(split[1], belief.planned, belief.last_goals)

    def _repaired(self, text: str, needs_wake: bool, templates_only: bool = False) -> str | None:
        """A version of `text` with a word or two swapped for ones that sound alike, that the
        grammar reads whole; where the cell's sentences are every command it takes, one of them
        ("With lots of speed pill." is no "with lots of speed up", a speed change)."""
        if self.sounds is None or not self.sounds.available:
            return None
        templates_only = templates_only or self.interpreter.templates.sentences.closed
        split = self._command(text, needs_wake)
        if split is None or not split[1].strip():
            return None
        if is_question(normalize(split[1])) and not templates_only:
            return None  # a question becomes a command only as one of the cell's sentences
        if any(self.is_global(t) for t in texts_of(split)):
            return None
        wake, command = split
        fixed = self._repairer().repair(command, self._accepts(templates_only))
        if fixed is None:
            return None
        return f"{wake} {fixed.text}".strip()

    def _repairer(self) -> Repairer:
        grammar = self.interpreter.grammar  # replaced when a phrase is learned
        repairer = self._repairers.get(id(grammar))
        if repairer is None:
            assert self.sounds is not None
            vocabulary = grammar.vocabulary
            phrases = [*vocabulary_phrases(vocabulary), *self.interpreter.templates.phrases()]
            heads = kind_heads(self.interpreter.cell)
            repairer = Repairer(phrases, self.sounds, name_words(vocabulary), heads)
            self._repairers = {id(grammar): repairer}
        return repairer


def texts_of(split: tuple[str, str]) -> tuple[str, str]:
    """A transcript as heard and without its wake word."""
    wake, command = split
    return f"{wake} {command}".strip(), command
