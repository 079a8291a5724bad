"""The integrator's sentence templates at work: an utterance a template matches -> one composite.

The templates come with the cell (`[sentences]`, read and checked by `voiced.robot.sentences`);
matching is hassil's `recognize`. The lists every cell provides (`{item}`, `{zone}`,
`{position}`...) hold the words the grammar's vocabulary knows for the cell's names ("red" for
the red cube, "position 2" and "pos 2" for Pos_2, "left" for assembly_left), so a template
hears a name the way the rest of the interpreter does. Inside an intent, a list named after a
parameter of its composite holds that parameter's type (`{to}` in move_object is a site).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hassil import Intents, RangeSlotList, SlotList, TextSlotList, recognize
from hassil.errors import MissingListError
from hassil.expression import Group, ListReference, RuleReference, Sentence, TextChunk
from hassil.sample import sample_expression

from voiced.errors import Problem
from voiced.frames.stop import STOP_PATTERN
from voiced.interpreter.result import Interpretation
from voiced.interpreter.vocabulary import Vocabulary, spoken
from voiced.robot.cell import Cell, norm
from voiced.robot.sentences import CELL_LISTS, line_of
from voiced.robot.sentencetypes import CellSentences, SlotValue, TemplateList
from voiced.robot.sequence import SequenceStep
from voiced.rules.normalize import numbers_to_digits, words

CONFIDENCE = 0.95
"""A template is an exact match the integrator wrote for this cell: as sure as a known phrase."""
NUMBERS = (0, 1000)
"""What `{number}` hears when a template asks for a bare number."""
SKIP_WORDS = (
    "please", "could you", "can you", "would you", "will you", "kindly",
    "um", "uh", "uhm", "er", "erm", "ah", "hmm", "oh", "yeah",
)  # fmt: skip
"""Politeness around a command and the sounds people make while they think ("um, can I get a
latte", "may I have a triple shot ... yeah, light roast iced mocha"), taken out before matching
(as the phrase bank drops them), so a template need not allow for them itself."""
RULE_SAYINGS = 40
"""Most ways an expansion rule may be said for the repair to take them all as phrases."""
EXAMPLES_PER_SENTENCE = 2
"""Phrasings of each template given to the recogniser's bias (it needs the shape, not all)."""

_VOCABULARY_KINDS: Mapping[str, tuple[str, ...]] = {
    "item": ("item",),
    "object": ("item",),
    "zone": ("zone",),
    "site": ("site", "zone"),
    "position": ("position", "home"),
    "tool": ("tool",),
    "routine": ("routine",),
    "direction": ("direction",),
    "distance": ("distance",),
    "speed": ("speed",),
}
"""List (a parameter type) -> the vocabulary's kinds of words that fill it."""


@dataclass(frozen=True)
class TemplateMatch:
    """An utterance a template matched."""

    heard: str
    """What was said."""
    sentence: str
    """The template that matched."""
    step: SequenceStep
    """The composite call it means."""
    said: Mapping[str, str] = field(default_factory=dict)
    """Each slot's words as said ("lots of" for a sugar amount of 4)."""


class Templates:
    """The matcher for one cell's templates (built once per cell: the lists are precompiled)."""

    def __init__(self, cell: Cell, vocabulary: Vocabulary) -> None:
        self.cell = cell
        self.sentences = cell.sentences
        self.lists = cell_lists(cell, vocabulary)
        self.shown = cell_lists(cell, vocabulary, canonical=True)
        own = _own_lists(self.sentences.lists)
        self.intents = _intents(cell, self.sentences, self.lists, set(own))
        self.heard = _intents(cell, self.sentences, self.lists, set(own), apostrophes=False)
        self._phrases: list[str] | None = None
        """The intents matched against what was said: without apostrophes, as the recogniser's
        words reach the grammar ("id like" is "I'd like"); `intents` keeps them, as written."""
        self.lists.update(own)

    def __bool__(self) -> bool:
        return bool(self.sentences.blocks)

    def match(self, text: str) -> TemplateMatch | None:
        """The composite a template gives `text`, if any (see `_forms`)."""
        if not self:
            return None
        for form in _forms(text):
            result = recognize(form, self.heard, slot_lists=self.lists, skip_words=list(SKIP_WORDS))
            if result is not None:
                params = {name: _value(e.value) for name, e in result.entities.items()}
                sentence = result.intent_sentence.text if result.intent_sentence else ""
                step = SequenceStep(result.intent.name, params)
                said = {name: e.text.strip() for name, e in result.entities.items() if e.text}
                return TemplateMatch(text, sentence or "", step, said)
        return None

    def slots(self, text: str) -> TemplateSlots | None:
        """Where `text` fills each slot of the template it matches, and the other values the
        slot's list holds (as said): the readings the acoustic judge may choose among."""
        if not self:
            return None
        for form in _forms(text):
            result = recognize(form, self.heard, slot_lists=self.lists, skip_words=list(SKIP_WORDS))
            if result is None:
                continue
            lists = self._lists_of(result.intent_sentence)
            spans: list[SlotSpan] = []
            for entity in result.entities_list:
                listed = lists.get(entity.name)
                slot_list = result.intent_data.slot_lists.get(listed or "", None)
                slot_list = slot_list or self.lists.get(listed or "")
                if entity.text_span is None or not isinstance(slot_list, TextSlotList):
                    continue
                start, end = entity.text_span
                others = tuple(said for said, out in _said(slot_list) if out != entity.value)
                spans.append(SlotSpan(start, end, others))
            return TemplateSlots(form, tuple(spans))
        return None

    def phrases(self) -> list[str]:
        """The words the templates hear, as phrases: their literal text ("can i get", "brew")
        and one way each value of their own lists is said ("iced mocha"), for the near-miss
        repair to put in where a word was misheard (worked out once: the templates do not
        change)."""
        if self._phrases is None:
            self._phrases = self._all_phrases()
        return list(self._phrases)

    def _all_phrases(self) -> list[str]:
        found: dict[str, None] = {}
        todo: list[Any] = [s for i in self.intents.intents.values()
                           for d in i.data for s in d.sentences]  # fmt: skip
        todo += [rule for rule in self.intents.expansion_rules.values()]
        while todo:
            node = todo.pop()
            if isinstance(node, TextChunk):
                found[" ".join(words(node.text))] = None
            elif isinstance(node, Group):
                todo += node.items
            elif isinstance(node, Sentence):
                todo.append(node.expression)
        for name in self.sentences.lists:
            listed = self.lists.get(name)
            if isinstance(listed, TextSlotList):
                found.update((said, None) for said, _ in _said(listed))
        for rule in self.heard.expansion_rules.values():
            found.update((said, None) for said in self._said_whole(rule))
        return [p for p in found if p]

    def _said_whole(self, rule: Any) -> list[str]:
        """Every way a short rule of plain words is said ("<ask>": "brew a", "can i get an"),
        so a misheard opening becomes a whole one; none for a rule with a list in it or
        with more than `RULE_SAYINGS` ways."""
        said: list[str] = []
        try:
            for text in sample_expression(
                rule.expression, slot_lists={}, expansion_rules=self.heard.expansion_rules
            ):
                if len(said) == RULE_SAYINGS:
                    return []
                said.append(" ".join(words(text)))
        except MissingListError:
            return []
        return said

    def _lists_of(self, sentence: Any) -> dict[str, str]:
        """Slot name -> the list that fills it, in a template and the rules it uses."""
        found: dict[str, str] = {}
        seen: set[str] = set()
        todo = [sentence] if sentence is not None else []
        while todo:
            node = todo.pop()
            if isinstance(node, ListReference):
                found.setdefault(node.slot_name, node.list_name)
            elif isinstance(node, RuleReference) and node.rule_name not in seen:
                seen.add(node.rule_name)
                rule = self.intents.expansion_rules.get(node.rule_name)
                todo += [rule.expression] if rule is not None else []
            elif isinstance(node, Group):
                todo += node.items
            elif isinstance(node, Sentence):
                todo.append(node.expression)
        return found

    def interpret(self, found: TemplateMatch, correlation_id: str | None) -> Interpretation:
        """The interpretation of a match (source "template"): the step as it is read back,
        with every value the template filled ("Make a latte (cup: medium cup, milk: milk),
        from the template '<ask> <what> {drink} with <milk_added>'")."""
        from voiced.words.review import describe

        said = describe(self.cell, found.step)
        plain = said.lower()
        shown = ", ".join(_shown(name, value, found.said.get(name))
                          for name, value in found.step.params.items()
                          if str(value).replace("_", " ").lower() not in plain)  # fmt: skip
        meaning = said[:1].upper() + said[1:] + (f" ({shown})" if shown else "")
        return Interpretation(
            interpretation=f"{meaning}, from the template '{found.sentence}'",
            sequence=(found.step,), pass1_sequence=(found.step,), confidence=CONFIDENCE,
            validated=True, source="template", correlation_id=correlation_id,
        )  # fmt: skip

    def examples(self) -> list[str]:
        """A few phrasings of every template, for the recogniser's bias vocabulary."""
        found: list[str] = []
        for intent in self.intents.intents.values():
            for data in intent.data:
                for sentence in data.sentences:
                    found.extend(self._samples(sentence, data.slot_lists))
        return found

    def _samples(self, sentence: Any, local: Mapping[str, SlotList]) -> Iterator[str]:
        samples = sample_expression(
            sentence.expression,
            slot_lists={**self.lists, **self.shown,
                        **{n: self.shown.get(lst.name or "", lst) for n, lst in local.items()}},
            expansion_rules=self.intents.expansion_rules,
        )  # fmt: skip
        for count, text in enumerate(samples):
            if count >= EXAMPLES_PER_SENTENCE:
                return
            yield " ".join(text.split())


def _shown(name: str, value: object, said: str | None) -> str:
    """A value the read-back leaves out: a number as the words that gave it ("sugar amount:
    lots of (4)"), never as a bare parameter ("sugar_amount: 4.0")."""
    if isinstance(value, int | float) and not isinstance(value, bool) and said:
        return f"{name.replace('_', ' ')}: {said} ({value:g})"
    return f"{name.replace('_', ' ')}: {str(value).replace('_', ' ')}"


def _forms(text: str) -> Iterator[str]:
    """`text` as matched: as said (hassil reads number words itself) and normalised ("position
    two" -> "position 2", as the lists hold it); each without its apostrophes and, for a
    template that has one ("I'd like": hassil keeps a template's apostrophe), with them."""
    forms: list[str] = []
    for apostrophes in ("drop", "keep"):
        said = words(text, apostrophes=apostrophes)
        forms += [" ".join(said), " ".join(numbers_to_digits(said, oh_after_digit=True))]
    yield from dict.fromkeys(forms)


@dataclass(frozen=True)
class SlotSpan:
    """Where a slot's words are in a matched text, and what else its list holds."""

    start: int
    end: int
    others: tuple[str, ...]
    """The list's other values, each in one way it is said."""


@dataclass(frozen=True)
class TemplateSlots:
    """A text a template matches: as it was matched, and its slots."""

    form: str
    spans: tuple[SlotSpan, ...]


def _said(slot_list: TextSlotList) -> list[tuple[str, object]]:
    """One way each value of a list is said ("(twelve|12) ounce": "twelve ounce"), with the
    value it gives."""
    said: dict[object, str] = {}
    for value in slot_list.values:
        sample = " ".join(next(iter(sample_expression(value.text_in)), "").split())
        if sample and value.value_out not in said:
            said[value.value_out] = sample
    return [(text, out) for out, text in said.items()]


def stop_words_in(cell: Cell) -> list[Problem]:
    """Templates holding a stop word: the stop rule hears it before any template, so saying
    the sentence stops the arm instead (for `voiced check-config`)."""
    try:
        lines = Path(cell.source).read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    problems: list[Problem] = []
    for block in cell.sentences.blocks:
        for text in block.sentences:
            found = STOP_PATTERN.search(text.lower())
            if found is not None:
                line = line_of(lines, text)
                source = f"{cell.source}:{line}" if line else cell.source
                message = (f"sentence '{text}' holds the stop word '{found.group(0)}': saying "
                           "it stops the arm, the template never runs")  # fmt: skip
                problems.append(Problem(source, f"sentences.intents.{block.intent}", message))
    return problems


def cell_lists(
    cell: Cell, vocabulary: Vocabulary, *, canonical: bool = False
) -> dict[str, SlotList]:
    """The lists every cell provides, by parameter type, in the vocabulary's words and the
    names as written ("b1" as well as "b 1"); `canonical`: only each name's own spoken form
    (the examples given to the recogniser, "position 2" rather than "p 2")."""
    lists: dict[str, SlotList] = {}
    names = {"item": set(cell.items()), "object": set(cell.objects)}
    for kind, sources in _VOCABULARY_KINDS.items():
        pairs: dict[str, SlotValue] = {}
        for phrase, entry in vocabulary.phrases.items():
            for source in sources:
                value = entry.readings.get(source)
                if isinstance(value, str | float) and value in names.get(kind, {value}):
                    pairs.setdefault(" ".join(phrase), value)
        named = {norm(v): v for v in pairs.values() if isinstance(v, str)}
        if canonical:
            pairs = {spoken(v): v for v in named.values() if spoken(v) in pairs}
        else:
            pairs.update({k: v for k, v in named.items() if k not in pairs})
        lists[kind] = TextSlotList.from_tuples(pairs.items(), allow_template=False, name=kind)
    lists["number"] = RangeSlotList(name="number", start=NUMBERS[0], stop=NUMBERS[1])
    assert set(lists) == set(CELL_LISTS)
    return lists


def _own_lists(own: Mapping[str, TemplateList]) -> dict[str, SlotList]:
    lists: dict[str, SlotList] = {}
    for name, spec in own.items():
        if spec.range is not None:
            start, stop, step = spec.range
            lists[name] = RangeSlotList(name=name, start=start, stop=stop, step=step)
        else:
            lists[name] = TextSlotList.from_tuples(spec.values, name=name)
    return lists


def _intents(
    cell: Cell,
    sentences: CellSentences,
    lists: Mapping[str, SlotList],
    own: set[str],
    apostrophes: bool = True,
) -> Intents:
    """hassil's intents: one block per template block, each with lists named after the
    parameters of its composite (unless the integrator has a list of that name)."""

    def kept(text: str) -> str:
        return text if apostrophes else text.replace("'", "")

    intents: dict[str, Any] = {}
    for block in sentences.blocks:
        raw = {"sentences": [kept(t) for t in block.sentences], "slots": dict(block.slots)}
        intents.setdefault(block.intent, {"data": []})["data"].append(raw)
    rules = {name: kept(rule) for name, rule in sentences.expansion_rules.items()}
    built = Intents.from_dict({"language": "en", "intents": intents, "expansion_rules": rules})
    for intent in built.intents.values():
        composite = cell.composites[intent.name]
        for data in intent.data:
            for param in composite.params:
                if param.type in lists and param.name not in own:
                    data.slot_lists[param.name] = lists[param.type]
    return built


def _value(value: object) -> SlotValue:
    """A slot value as a step parameter: names as they are, numbers as numbers."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return float(value)
