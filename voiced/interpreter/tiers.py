"""Cheap before expensive: phrase bank, the cell's sentence templates, then grammar, then the
language model only when needed.

`Interpreter` is the one entry point the daemon uses. Exact phrasings come first: a phrase bank
entry, then a template the integrator wrote in the cell file (`voiced.interpreter.templates`).
Creative commands are recognised next (the grammar would otherwise call "make something
delicious" an unknown item). A grammar failure says
what could help (`Failure.fallback`): an unknown verb goes to seed 003's resolver, which maps the
phrase onto a composite (the grammar then parses it; once the command has run, the verb joins the
grammar's semantic map); a structure the grammar cannot place goes to seed 000's three passes;
anything the model cannot add (an item the cell lacks) keeps the grammar's spoken reason.
Offline, these tiers and the creative generator are all there is.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import structlog

from voiced.errors import LlmError
from voiced.eventtypes import Event, Failure, IntentUnreadable, LlmResolution, LlmUsage, Planned
from voiced.interpreter.arrangement import ArrangementParse, describe_target, parse_arrangement
from voiced.interpreter.grammar import Failure as GrammarFailure
from voiced.interpreter.grammar import Grammar, from_parse, remember
from voiced.interpreter.learnedverbs import LearnedVerbs
from voiced.interpreter.learning import Learning, MemoryWriter, match_directive
from voiced.interpreter.lexer import Lexer
from voiced.interpreter.lowering import NOT_BY_A_DISTANCE
from voiced.interpreter.numbers import DISTANCE_UNITS
from voiced.interpreter.phrasebank import PhraseBank
from voiced.interpreter.repair import NAMED, uses_every_name
from voiced.interpreter.result import Interpretation, unknown
from voiced.interpreter.semantic import VERB_PHRASES, example_hint
from voiced.interpreter.templategraph import off_the_sentences
from voiced.interpreter.templates import Templates
from voiced.interpreter.vocabulary import normal_words
from voiced.llm import creative
from voiced.llm.classifier import Intent, IntentClassifier
from voiced.llm.client import LlmClient
from voiced.llm.creative_gen import offline_interpretation, supported
from voiced.llm.rearrange import understand_target
from voiced.llm.resolver import PhraseResolver
from voiced.llm.sequence import SequenceInterpreter, usage_event
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir
from voiced.robot.cell import Cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.rearrange import alike_objects, plan_rearrangement, plan_to_sequence
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.negation import NEGATIONS
from voiced.rules.normalize import normalize

log = structlog.get_logger(__name__)

LEARNED_VERBS = "learned_verbs"
"""The `error` event's kind when learned verbs cannot be read or saved."""

Emit = Callable[[Event], None]


@dataclass(frozen=True)
class Understood:
    """An interpretation and what came with it."""

    interpretation: Interpretation
    resolved_verb: tuple[str, str] | None = None
    """(phrase, composite) the resolver supplied: learned into the grammar once used."""
    intent: str = "action"
    """Seed 001's router class: "action", "question" (the model's reading of words the
    grammar could not place) or "unknown" (what neither the grammar nor the model could read)."""


DANGLING = frozenset(
    ("a", "an", "the", "on", "onto", "to", "at", "of", "in", "into", "with", "and", "then",
     "from", "by", "for", "under", "over")
)  # fmt: skip
"""Words a command does not end on: the operator has paused mid-sentence."""
CREATIVE_MAX_WORDS = 15
"""Longer utterances with a creative cue word are conversation, not creative commands."""
PLACING = frozenset(("put", "place", "move", "set", "stack", "lay"))
"""Verbs whose destination may still be coming ("put meat ... on the left")."""
DESTINATION = frozenset(("on", "onto", "to", "at", "in", "into", "under", "over", "left", "right"))
"""Words that say where: with one of them a placing command is whole."""
SELF_CONTAINED = frozenset(
    phrase for key in ("restart", "undo", "mistake", "finish") for phrase in VERB_PHRASES[key]
)
"""Verb phrases that need nothing after them, though some end on a word that usually does
("start over", "put it back")."""


class Interpreter:
    """The three tiers for one cell and data directory."""

    def __init__(
        self,
        cell: Cell,
        data: DataDir,
        client: LlmClient | None,
        settings: LlmSettings,
        emit: Emit,
        *,
        phrase_threshold: float = 90.0,
        learn_threshold: float = 0.80,
        rng: random.Random | None = None,
    ) -> None:
        self.writer = MemoryWriter(data, threshold=learn_threshold)
        self.cell = self.writer.load(cell)
        self.grammar = Grammar(self.cell, PhraseBank.load(self.cell, data, phrase_threshold))
        self.verbs = LearnedVerbs(data.learned_verbs, cell.name)
        self._verbs = self.verbs.load()
        self._teach_verbs()
        self.templates = Templates(self.cell, self.grammar.vocabulary)
        self.emit = emit
        self.rng = rng or random.Random()
        self.client = client
        self.llm = (
            SequenceInterpreter(client, settings, rng=self.rng, emit=emit) if client else None
        )
        self.classifier = (
            # The classifier's calls counted like every other (the `llm` event).
            IntentClassifier(client, lambda reply, error: self.emit(usage_event(reply, error)))
            if client
            else None
        )
        self.resolver = (
            PhraseResolver(client, cache_path=data.root / "llm_resolutions.json")
            if client
            else None
        )

    def bias_phrases(self) -> list[str]:
        """Example utterances for the recogniser: the phrase bank's phrases and phrasings of
        the cell's templates (the words an integrator added should be heard, too)."""
        return [*self.grammar.phrase_bank.phrases(), *self.templates.examples()]

    @property
    def online(self) -> bool:
        return self.llm is not None

    def _creative_request(self, text: str) -> bool:
        """A creative command ("make something fancy") for a cell the generator supports. A long
        stretch of speech is talk, not a command, even when a cue word is in it: the spoken
        benchmark built a sandwich from prose in always-listen mode ("... a creative glass")."""
        return (
            creative.is_creative(text)
            and len(text.split()) <= CREATIVE_MAX_WORDS
            and supported(self.cell)
            # "call that fancy" names the last build, whatever the name's word suggests
            and match_directive(self.grammar.lexer.lex(text).said) is None
        )

    def continues_offline(
        self, text: str, scene: Scene, last_sequence: Sequence[SequenceStep]
    ) -> bool:
        """A whole command that does not start with a verb ("cheese and tomato"): what the
        operator adds right after a command, without the wake word. One that starts with a
        verb ("go home") is a new command and needs the wake word, so talk nearby is not
        taken for one."""
        if not text.strip() or self.starts_with_verb(text):
            return False
        return self.complete_offline(text, scene, last_sequence)

    def starts_with_verb(self, text: str) -> bool:
        """Whether `text` starts with a verb the cell knows ("go home", "add bread"): a command
        of its own, not the rest of one ("position 2", "the cheese on the left"). In a cell
        whose templates are every command it takes, each of its sentences is one of its own
        ("may I have a latte": the grammar reads "may I" as a filler and "have" as no verb)."""
        tokens = self.grammar.lexer.lex(text).tokens
        if bool(tokens) and tokens[0].verb() is not None:
            return True
        templates = self.templates
        return templates.sentences.closed and templates.match(text) is not None

    def complete_offline(
        self, text: str, scene: Scene, last_sequence: Sequence[SequenceStep]
    ) -> bool:
        """Whether `text` is already a whole command the offline tiers act on: a creative
        command the generator supports, an arrangement with a target, a phrase bank entry or
        a grammar parse (cheap, well under a millisecond). The query frame sends such a
        command after a short silence instead of waiting for more words. A command that
        ends on a word that needs another ("put meat on the") is not whole, even though the
        grammar would act on its first part, and neither is a placing verb without its
        destination ("put meat" then "on the left" is one command, not two)."""
        words = normalize(text).split()
        if " ".join(words) in SELF_CONTAINED:
            return self.grammar.parse(text, scene, last_sequence).success
        if not words or words[-1] in DANGLING:
            return False
        if words[0] in PLACING and not DESTINATION.intersection(words):
            return False
        if self.grammar.phrase_bank.exact(text) is not None:
            return True
        if self.templates.match(text) is not None:
            return True
        if self._creative_request(text):
            return True
        arranged = parse_arrangement(text, self.cell, scene)
        if arranged is not None:
            return arranged.target is not None
        return self.grammar.parse(text, scene, last_sequence).success

    def understands(self, text: str, scene: Scene, last_sequence: Sequence[SequenceStep]) -> bool:
        """Whether `text` is a whole command the offline tiers read without guessing: no
        near miss snapped, no best-effort reading, no word unknown, every thing it names
        used, and it can run from `scene` ("add this" with nothing held cannot). What the
        recogniser's hypotheses and repairs are held to: a transcript that parses only by
        dropping words, or means something impossible, is not what was said."""
        if not self.complete_offline(text, scene, last_sequence):
            return False
        exact = self.grammar.phrase_bank.exact(text) is not None
        if exact or self.templates.match(text) is not None or self._creative_request(text):
            return True
        if parse_arrangement(text, self.cell, scene) is not None:
            return True
        parsed = self.grammar.parse(text, scene, last_sequence)
        return (
            parsed.success
            and not parsed.snaps
            and not parsed.notes
            and uses_every_name(self.grammar, text, parsed.sequence)
            and compile_sequence(self.cell, scene, parsed.sequence).ok
        )

    def names_what_is_missing(
        self, text: str, scene: Scene, last_sequence: Sequence[SequenceStep]
    ) -> bool:
        """Whether `text` is a command whose shape the grammar reads but which names something
        the cell does not have ("add avocado", "the yellow cube", "position 9"): the operator
        was understood and is told what is missing. The recogniser must not swap such a name
        for one the cell has, by a lower hypothesis or a repair: that would move the arm for a
        command nobody gave."""
        arranged = parse_arrangement(text, self.cell, scene)
        failure = arranged.failure if arranged is not None else None
        if failure is None:
            parsed = self.grammar.parse(text, scene, last_sequence)
            failure = None if parsed.success else parsed.error
        if failure is None or failure.error_type != "semantic_failure" or not failure.token:
            return False
        entry = self.grammar.vocabulary.phrases.get(tuple(normalize(failure.token).split()))
        # A word the cell does not know, or a name it knows that is not here (a yellow cube
        # with none in the scene); a verb in the wrong place ("pick up the weld") is not.
        return entry is None or bool(set(NAMED) & entry.readings.keys())

    async def interpret(
        self,
        text: str,
        scene: Scene,
        last_sequence: Sequence[SequenceStep],
        correlation_id: str | None,
    ) -> Understood:
        # Exact before loose. A phrase bank entry (packaged, or taught by the operator) and then
        # an integrator's template are whole utterances written for this cell; everything after
        # them reads the words more freely (a creative cue word, a relation between objects,
        # the grammar, a fuzzy phrase), so an exact phrasing wins over a looser reading of the
        # same words. Stop and the frames' keywords never get here: the router handles them
        # before anything is submitted, so no template can shadow them.
        bank = self.grammar.phrase_bank
        hit = bank.exact(text)
        if hit is not None:
            return Understood(bank.interpret(hit, correlation_id))
        template = self.templates.match(text)
        if template is not None:
            return Understood(self.templates.interpret(template, correlation_id))
        plain = said_plainly(self.grammar.lexer, text)
        if plain and self._creative_request(text):
            return Understood(await self._creative(text, scene, correlation_id))
        arranged = parse_arrangement(text, self.cell, scene) if plain else None
        if arranged is not None:
            return Understood(await self._arrange(text, scene, arranged, correlation_id))
        parsed = self.grammar.parse(text, scene, last_sequence)
        if parsed.success and _moved_by_an_amount(text, parsed.sequence):
            # "move the red cube left some": the lexer drops "some" as a filler, and the cube
            # went to the site named left.
            return self._refused(text, NOT_BY_A_DISTANCE, "semantic_failure", correlation_id)
        off = off_the_sentences(self.templates, text) if parsed.success else None
        if off is not None:
            # A closed cell's order no sentence takes, read as something else by skipping its
            # words: "2 an iced mocha with some switch" had set the speed to 2.
            return self._refused(text, off.reason(), "syntax_error", correlation_id)
        if plain and not (parsed.success and not parsed.snaps and not parsed.notes):
            hit = bank.fuzzy(text, self.grammar.same_content)
            if hit is not None:
                return Understood(bank.interpret(hit, correlation_id))
        offline = from_parse(parsed, text, correlation_id)
        if parsed.success or parsed.error is None:
            return Understood(offline)
        return await self._unread(text, scene, last_sequence, correlation_id, parsed.error, offline)

    def _refused(self, text: str, reason: str, kind: str, correlation_id: str | None) -> Understood:
        refused = unknown(text, f"{reason} — {example_hint(self.cell)}")
        issues = (f"{kind}: {reason}",)
        return Understood(refused.with_changes(correlation_id=correlation_id,
                                               validation_issues=issues))  # fmt: skip

    async def _unread(
        self,
        text: str,
        scene: Scene,
        last_sequence: Sequence[SequenceStep],
        correlation_id: str | None,
        error: GrammarFailure,
        offline: Interpretation,
    ) -> Understood:
        """What the grammar refused: its reason, or the model's reading where the failure asks
        for one and a model is configured."""
        offline = _off_the_sentences(self.templates, text, offline, error)
        # The grammar read what the words are about ("add avocado": an action the cell cannot
        # do) unless its failure asks the model for help: then it could not classify them.
        unread = error.fallback in ("interpret", "resolve_phrase")
        if self.llm is None or not unread:
            return Understood(offline, intent="unknown" if unread else "action")
        if error.fallback == "resolve_phrase":
            resolved = await self._resolve(error.token, text, scene, last_sequence,
                                           correlation_id)  # fmt: skip
            if resolved is not None:
                return resolved
        found = await self._classify(text)
        if found.intent == "action":
            return Understood(await self._three_passes(text, scene, correlation_id, offline))
        if not found.asked:  # the operator hears that the model is out of reach
            offline = offline.with_changes(user_feedback=f"{offline.user_feedback} ({found.error})")
        return Understood(offline, intent=found.intent)

    async def _classify(self, text: str) -> Intent:
        """Seed 001's router, asked only about words the grammar (and the verb resolver) could
        not read, before the three passes: a question is answered and an unknown is told the
        grammar's reason, without asking for a plan. An answer that cannot be used is
        reported and taken as unknown."""
        assert self.classifier is not None
        found = await self.classifier.classify(text, self.cell)
        if found.error is not None:
            self.emit(IntentUnreadable(text, found.error))
        return found

    async def _arrange(
        self, text: str, scene: Scene, arranged: ArrangementParse, cid: str | None
    ) -> Interpretation:
        """Issue 8: the words give a target arrangement (the grammar, else the model — which
        gives only a target, never moves); the optimal planner gives the moves."""
        target, meaning, failure = arranged.target, arranged.meaning, arranged.failure
        feedback = failure.feedback if failure is not None else "I cannot arrange that."
        # A failure the model cannot help with (an unknown cube, a contradiction) keeps the
        # grammar's reason: the model would only guess which part the operator meant.
        helps = failure is None or failure.fallback != "none"
        if target is None and self.client is not None and helps:
            try:
                answer = await understand_target(self.client, self.cell, scene, text)
                target, feedback = answer.target, answer.feedback or feedback
                if answer.structure is not None:
                    meaning = describe_target(answer.structure)
            except LlmError as error:
                log.warning("the model could not read the arrangement", error=str(error))
        if target is None:
            return unknown(text, feedback, source="planner").with_changes(correlation_id=cid)
        plan = plan_rearrangement(self.cell, scene, target)
        self.emit(Planned(**plan.to_dict()))
        if plan.status != "success":
            reason = plan.reason or "it cannot be done with the buffers I have"
            return unknown(text, f"I cannot build that: {reason}", source="planner").with_changes(
                correlation_id=cid
            )
        steps = tuple(plan_to_sequence(self.cell, plan, alike_objects(scene)))
        return Interpretation(
            interpretation=f"{meaning} ({len(plan.steps)} moves, optimal)",
            sequence=steps, pass1_sequence=steps, confidence=0.9 if arranged.target else 0.7,
            validated=True, source="planner" if arranged.target else "llm+planner",
            correlation_id=cid,
        )  # fmt: skip

    async def _creative(self, text: str, scene: Scene, cid: str | None) -> Interpretation:
        assignment = creative.assign(text, self.rng)
        if self.llm is None:
            return offline_interpretation(text, self.cell, scene, assignment, self.rng, cid)
        outcome = await self.llm.interpret(text, self.cell, scene, cid, creative=assignment)
        self._usage(asdict(outcome.usage), outcome.error)
        return outcome.interpretation

    async def _three_passes(
        self, text: str, scene: Scene, cid: str | None, offline: Interpretation
    ) -> Interpretation:
        assert self.llm is not None
        outcome = await self.llm.interpret(text, self.cell, scene, cid)
        self._usage(asdict(outcome.usage), outcome.error)
        if outcome.error is not None and not outcome.interpretation.sequence:
            # The model was out of reach: the grammar's own reason is the better answer.
            feedback = f"{offline.user_feedback} ({outcome.error})"
            return offline.with_changes(user_feedback=feedback)
        return outcome.interpretation

    async def _resolve(
        self,
        phrase: str,
        text: str,
        scene: Scene,
        last_sequence: Sequence[SequenceStep],
        cid: str | None,
    ) -> Understood | None:
        assert self.resolver is not None
        candidates = {c.name: c.description for c in self.cell.composites.values()
                      if not c.internal}  # fmt: skip
        try:
            resolution = await self.resolver.resolve(phrase, candidates, self.cell.description)
        except LlmError as error:
            log.warning("resolver unavailable", phrase=phrase, error=str(error))
            return None
        self.emit(LlmResolution(**resolution.llm_metadata()))
        if resolution.canonical is None:
            return None
        trial = Grammar(self.cell, self.grammar.phrase_bank)
        if not trial.add_verb(phrase, resolution.canonical):
            return None
        parsed = trial.parse(text, scene, last_sequence)
        if not parsed.success:
            return None
        result = from_parse(parsed, text, cid)
        meaning = f"{result.interpretation} ('{phrase}' read as {resolution.canonical})"
        return Understood(
            result.with_changes(interpretation=meaning, source="grammar+llm"),
            (phrase, resolution.canonical),
        )

    def used(self, understood: Understood) -> None:
        """The command ran: a verb the resolver supplied now belongs to the grammar (seed 003:
        cache, then learn what use confirmed), in this run and, saved, in every later one."""
        if understood.resolved_verb is None:
            return
        phrase, composite = understood.resolved_verb
        if not self.grammar.add_verb(phrase, composite):
            return
        log.info("learned a verb", phrase=phrase, composite=composite)
        if self._verbs.get(phrase) == composite:
            return
        self._verbs[phrase] = composite
        try:
            self.verbs.save(phrase, composite)
        except (OSError, ValueError) as error:
            # Learned for this run all the same; the operator's file is left as it is.
            log.error("learned verb not saved", phrase=phrase, error=str(error))
            self.emit(Failure(LEARNED_VERBS, f"'{phrase}' not saved: {error}"))

    def _teach_verbs(self) -> None:
        """The saved verbs into the current grammar (at start, and after it is rebuilt)."""
        for phrase, composite in self._verbs.items():
            if not self.grammar.add_verb(phrase, composite):
                log.warning("learned verb not used: the cell has no such composite",
                            phrase=phrase, composite=composite)  # fmt: skip

    def remember(self, result: Interpretation) -> Interpretation:
        """Save a confirmed learning directive; returns the updated interpretation of it."""
        learning = Learning.from_interpretation(result)
        self.grammar = remember(self.grammar, self.writer, learning)
        self.cell = self.grammar.cell
        self._teach_verbs()  # a rebuilt grammar starts from the cell's own verbs
        return result

    def _usage(self, usage: dict[str, Any], error: str | None) -> None:
        self.emit(LlmUsage(**usage, error=error))


def said_plainly(lexer: Lexer, text: str) -> bool:
    """Whether the loose readings (a creative cue, an arrangement for the planner, a
    phrase the words are near) may read `text`: not when it takes a command back ("don't
    put red on blue", "never") or moves a thing by a distance ("a little to the left",
    "2 cm"). They read past those words and did what was not said; the grammar reads every
    word, and refuses them with its reason."""
    tokens = lexer.lex(text).tokens
    if NEGATIONS & {token.text for token in tokens}:
        return False
    measured = any(
        number.has("number") and unit.has("unit") and unit.text_value("unit") in DISTANCE_UNITS
        for number, unit in itertools.pairwise(tokens)
    )
    # "an inch", "5 to the left", "a hair", "further to the left": an amount of a move.
    amount = any(t.has("number") or t.has("distance") or t.text in _MEASURE for t in tokens)
    return not measured and not amount


_WAY = r"(?:left|right|up|down|forwards?|backwards?|back|front)"
_AMOUNT_BY_A_WAY = re.compile(rf"\b{_WAY} (?:some|more)\b|\b(?:some|more) (?:to the )?{_WAY}\b")
"""An amount said next to a way ("left some", "more to the left")."""


def _moved_by_an_amount(text: str, steps: Sequence[SequenceStep]) -> bool:
    moves = any(s.instruction in ("move_object", "place", "pick") for s in steps)
    return moves and _AMOUNT_BY_A_WAY.search(" ".join(normal_words(text))) is not None


_MEASURE = frozenset(("inch", "inches", "hair", "more", "further", "farther", "bit",
                      "little", "slightly", "some", "touch", "smidge", "tad", "closer",
                      "nearer"))  # fmt: skip
"""Words of an amount or a nudge, which the arrangement planner would read past."""


def _off_the_sentences(
    templates: Templates, text: str, refused: Interpretation, failure: GrammarFailure
) -> Interpretation:
    """A closed cell's refusal of words about its orders says where they left its sentences,
    in place of the grammar's reason ("I don't know the word 'large'"); but a negation keeps
    its own ("don't make me a latte")."""
    if failure.negates:
        return refused
    off = off_the_sentences(templates, text)
    if off is None:
        return refused
    reason = off.reason()
    return refused.with_changes(
        user_feedback=f"{reason} — {example_hint(templates.cell)}",
        validation_issues=(f"syntax_error: {reason}",),
    )
