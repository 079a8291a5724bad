"""Sentence templates of a cell: integrators add phrasings as data (hassil's template language).

A cell file may carry a `[sentences]` table (docs/CELLS.md): intents named after the cell's
composites, each with sentence templates in Home Assistant's hassil syntax ("run a weld at
{position}", "(grab|fetch) [the] {item}"), fixed slot values, lists of the integrator's own and
expansion rules. Lists named after the parameter types (`item`, `zone`, `position`...) come
from the cell, so the templates never repeat the cell's names.

This module reads and checks the table; `voiced.interpreter.templates` matches utterances
against it. A template that is wrong is a problem of its own (file, line, intent, sentence),
never a problem of the cell: the cell loads without that template, with its others, and the
daemon runs on (docs/CELLS.md says why), while `voiced check-config` reports it and fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from voiced.robot.cell import Cell, ValueProblem
from voiced.robot.program import PARAM_TYPES, Composite
from voiced.robot.sentencetypes import CellSentences, SlotValue, TemplateBlock, TemplateList
from voiced.robot.tomlcheck import join, type_name

from voiced.errors import Problem

if TYPE_CHECKING:
    # hassil itself is imported where a template is read: it takes a fifth of a second to
    # import, which `voiced --help` and a cell without templates need not pay.
    from hassil.expression import ListReference, Sentence

CELL_LISTS = tuple(kind for kind in PARAM_TYPES if kind != "text")
"""Lists every cell provides, named after the parameter type whose values they hold."""
NUMERIC_TYPES = frozenset(("number", "distance", "speed"))
"""Parameter types a number (a `range` list, `{number}`) may fill."""
SECTION = "sentences"
_SECTION_KEYS = ("intents", "lists", "expansion_rules", "closed")
_BLOCK_KEYS = ("sentences", "slots")
_LIST_KEYS = ("values", "range")
_RANGE_KEYS = ("from", "to", "step")
_STANDS_FOR = frozenset((("zone", "site"), ("item", "object")))
"""(list, parameter type): a name of the first kind is also one of the second."""
_HEADER = re.compile(r"\s*\[+\s*sentences\b")


def read_sentences(data: object, cell: Cell, text: str = "") -> CellSentences:
    """The cell file's `[sentences]` table (`data`, None when absent) checked against `cell`;
    `text` is the file's text, searched for the line of each problem."""
    if data is None:
        return CellSentences(source=cell.source)
    reader = _Reader(cell, text)
    if not isinstance(data, dict):
        reader.add(SECTION, f"expected a table, got {type_name(data)}", SECTION)
        return reader.result({}, {}, [])
    reader.unknown_keys(data, SECTION, _SECTION_KEYS)
    rules = reader.rules(data.get("expansion_rules", {}))
    lists = reader.lists(data.get("lists", {}))
    blocks = reader.intents(data.get("intents", {}), rules, lists)
    closed = data.get("closed", False)
    if not isinstance(closed, bool):
        reader.add(join(SECTION, "closed"), f"expected true or false, got {type_name(closed)}",
                   "closed", "=")  # fmt: skip
        closed = False
    return replace(reader.result(lists, rules, blocks), closed=closed)


class _Reader:
    """Collects the problems of one `[sentences]` table, each with its line in the file."""

    def __init__(self, cell: Cell, text: str) -> None:
        self.cell = cell
        self.lines = text.splitlines()
        self.problems: list[Problem] = []

    def result(
        self, lists: Mapping[str, TemplateList], rules: Mapping[str, str],
        blocks: list[TemplateBlock],
    ) -> CellSentences:  # fmt: skip
        return CellSentences(
            self.cell.source, tuple(blocks), dict(lists), dict(rules), tuple(self.problems)
        )

    def add(self, path: str, message: str, *near: str) -> None:
        """A problem at `path`, placed on the first line holding every one of `near`."""
        line = self._line(near)
        source = f"{self.cell.source}:{line}" if line else self.cell.source
        self.problems.append(Problem(source, path, message))

    def _line(self, near: tuple[str, ...]) -> int | None:
        return line_of(self.lines, *near)

    def unknown_keys(self, data: Mapping[str, object], path: str, allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                self.add(join(path, key), f"unknown key '{key}' (expected one of "
                         f"{', '.join(allowed)})", key)  # fmt: skip

    def rules(self, data: object) -> dict[str, str]:
        path = f"{SECTION}.expansion_rules"
        if not isinstance(data, dict):
            self.add(
                path, f"expected a table of templates, got {type_name(data)}", "expansion_rules"
            )
            return {}
        rules: dict[str, str] = {}
        for name, body in data.items():
            if not isinstance(body, str):
                self.add(
                    join(path, name), f"expected a template string, got {type_name(body)}", name
                )
            elif self._parses(body, join(path, name), f"expansion rule <{name}>") is not None:
                rules[name] = body
        return rules

    def lists(self, data: object) -> dict[str, TemplateList]:
        path = f"{SECTION}.lists"
        if not isinstance(data, dict):
            self.add(path, f"expected a table of lists, got {type_name(data)}", "lists")
            return {}
        lists: dict[str, TemplateList] = {}
        for name, spec in data.items():
            where = join(path, name)
            if name in CELL_LISTS:
                self.add(where, f"list {{{name}}} comes from the cell; name yours otherwise", name)
            elif not isinstance(spec, dict) or len(spec.keys() & set(_LIST_KEYS)) != 1:
                self.add(where, "expected a table with either 'values' or 'range'", name)
            else:
                self.unknown_keys(spec, where, _LIST_KEYS)
                found = self._list(where, name, spec)
                if found is not None:
                    lists[name] = found
        return lists

    def _list(self, where: str, name: str, spec: Mapping[str, object]) -> TemplateList | None:
        if "range" in spec:
            bounds = spec["range"]
            ok = isinstance(bounds, dict) and {"from", "to"} <= bounds.keys() <= set(_RANGE_KEYS)
            numbers = [bounds.get(k, 1) for k in _RANGE_KEYS] if isinstance(bounds, dict) else []
            if not ok or not all(type(n) is int for n in numbers) or numbers[0] > numbers[1]:
                self.add(join(where, "range"), "expected { from = N, to = M } with whole "
                         "numbers, from <= to (and an optional step)", name)  # fmt: skip
                return None
            return TemplateList(range=(numbers[0], numbers[1], max(1, numbers[2])))
        values = spec["values"]
        pairs: list[tuple[str, SlotValue]] = []
        for index, value in enumerate(values if isinstance(values, list) else [None]):
            said, out = _pair(value)
            if said is None or out is None:
                self.add(f"{join(where, 'values')}[{index}]", "expected a string or "
                         "{ in = \"words\", out = \"value\" }", name)  # fmt: skip
            else:
                pairs.append((said, out))
        return TemplateList(values=tuple(pairs))

    def intents(
        self, data: object, rules: Mapping[str, str], lists: dict[str, TemplateList]
    ) -> list[TemplateBlock]:
        path = f"{SECTION}.intents"
        if not isinstance(data, dict):
            self.add(path, f"expected a table of intents, got {type_name(data)}", "intents")
            return []
        blocks: list[TemplateBlock] = []
        for name, entry in data.items():
            composite = self.cell.composites.get(name)
            header = join(path, name)
            if composite is None or composite.internal:
                choices = ", ".join(self.cell.instructions())
                self.add(header, f"'{name}' is not a composite of this cell (intents are named "
                         f"after composites: {choices})", name)  # fmt: skip
                continue
            entries = entry if isinstance(entry, list) else [entry]
            for index, block in enumerate(entries):
                where = f"{header}[{index}]" if isinstance(entry, list) else header
                found = self._block(where, composite, block, rules, lists)
                if found is not None:
                    blocks.append(found)
        return blocks

    def _block(
        self, where: str, composite: Composite, data: object, rules: Mapping[str, str],
        lists: dict[str, TemplateList],
    ) -> TemplateBlock | None:  # fmt: skip
        sentences = data.get("sentences") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(sentences, list) or not _strings(sentences):
            self.add(where, "expected a table with 'sentences', a non-empty array of templates",
                     composite.name)  # fmt: skip
            return None
        self.unknown_keys(data, where, _BLOCK_KEYS)
        before = len(self.problems)
        slots = self._slots(where, composite, data.get("slots", {}))
        if len(self.problems) > before:
            return None  # a fixed value that is wrong would be said by every sentence of it
        fixed = set(data.get("slots", {})) if isinstance(data.get("slots"), dict) else set()
        good = [
            text
            for index, text in enumerate(sentences)
            if self._sentence(f"{where}.sentences[{index}]", composite, text, fixed, rules, lists)
        ]
        return TemplateBlock(composite.name, tuple(good), slots) if good else None

    def _slots(self, where: str, composite: Composite, data: object) -> dict[str, SlotValue]:
        if not isinstance(data, dict):
            self.add(join(where, "slots"), f"expected a table, got {type_name(data)}", "slots")
            return {}
        slots: dict[str, SlotValue] = {}
        for name, value in data.items():
            param = composite.param(name)
            if param is None:
                self._not_a_param(join(where, "slots"), composite, name, "slots", name)
            elif not isinstance(value, str | int | float) or isinstance(value, bool):
                self.add(join(join(where, "slots"), name), "expected a string or a number",
                         "slots", name)  # fmt: skip
            elif self._known(join(join(where, "slots"), name), param.type, value, "slots", name):
                slots[name] = value
        return slots

    def _sentence(
        self, where: str, composite: Composite, text: str, fixed: set[str],
        rules: Mapping[str, str], lists: dict[str, TemplateList],
    ) -> bool:  # fmt: skip
        """Whether the sentence is used: a problem of its own leaves it out (and only it)."""
        sentence = self._parses(text, where, f"sentence '{text}'")
        if sentence is None:
            return False
        usable, filled = True, set(fixed)
        for ref in _references(sentence.expression, rules, set()):
            if isinstance(ref, str):
                self.add(where, f"sentence '{text}': no expansion rule <{ref}> (rules: "
                         f"{', '.join(rules) or 'none'})", text)  # fmt: skip
                usable = False
                continue
            filled.add(ref.slot_name)
            usable = self._reference(where, composite, text, ref, lists) and usable
        missing = [p.name for p in composite.params if p.default is None and p.name not in filled]
        if missing:
            self.add(where, f"sentence '{text}' never fills {', '.join(missing)}, which "
                     f"{composite.name} needs (add a {{slot}} or a fixed slot)", text)  # fmt: skip
        return usable and not missing

    def _reference(
        self, where: str, composite: Composite, text: str, ref: ListReference,
        lists: dict[str, TemplateList],
    ) -> bool:  # fmt: skip
        """Whether the reference can fill its slot. A list value the cell does not know is
        said and left out of the list: the sentence and the list's other values stay."""
        param = composite.param(ref.slot_name)
        if param is None:
            self._not_a_param(where, composite, ref.slot_name, text)
            return False
        name = ref.list_name
        own = lists.get(name)
        if ref.is_inline_range or (own is not None and own.range is not None) or name == "number":
            if param.type not in NUMERIC_TYPES:
                self.add(where, f"sentence '{text}': {{{name}}} gives a number, but "
                         f"{param.name} is a {param.type}", text)  # fmt: skip
                return False
        elif own is not None:
            known = tuple(
                (said, value)
                for said, value in own.values
                if self._known(where, param.type, value, text,
                               what=f"sentence '{text}': list {{{name}}} ('{said}' -> {value!r})")
            )  # fmt: skip
            lists[name] = TemplateList(values=known)
            return bool(known)
        elif name in CELL_LISTS or name == param.name:
            kind = param.type if name == param.name else name
            if kind != param.type and (kind, param.type) not in _STANDS_FOR:
                self.add(where, f"sentence '{text}': {{{name}}} gives {kind} names, but "
                         f"{param.name} is a {param.type}", text)  # fmt: skip
                return False
        else:
            known_lists = sorted({*CELL_LISTS, *lists, *(p.name for p in composite.params)})
            self.add(where, f"sentence '{text}': no list {{{name}}} (lists: "
                     f"{', '.join(known_lists)})", text)  # fmt: skip
            return False
        return True

    def _not_a_param(self, where: str, composite: Composite, slot: str, *near: str) -> None:
        params = ", ".join(p.name for p in composite.params) or "none"
        shown = f"sentence '{near[0]}': " if len(near) == 1 else ""
        self.add(where, f"{shown}slot '{slot}' is not a parameter of {composite.name} "
                 f"(parameters: {params})", *near)  # fmt: skip

    def _known(self, where: str, kind: str, value: SlotValue, *near: str, what: str = "") -> bool:
        try:
            self.cell.resolve(kind, value)
        except ValueProblem as problem:
            shown = what or repr(value)
            self.add(where, f"{shown} is not a {kind} this cell knows: {problem.message}", *near)
            return False
        return True

    def _parses(self, text: str, where: str, what: str) -> Sentence | None:
        from hassil.parse_expression import parse_sentence
        from hassil.parser import ParseError

        try:
            return parse_sentence(text, keep_text=True)
        except (ParseError, ValueError, IndexError, AssertionError) as error:
            # hassil refuses some templates with an assertion ("" and "{}": "Text is too short")
            reason = _syntax(error) if text.strip(" {}<>") else "the template is empty"
            self.add(where, f"{what}: template syntax error: {reason}", text or '""')
            return None


def line_of(lines: list[str], *near: str) -> int | None:
    """The number of the first line of the `[sentences...]` tables holding all of `near`."""
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line)), 0)
    for number, line in enumerate(lines[start:], start + 1):
        if near and all(word in line for word in near):
            return number
    return None


def _references(
    expression: object, rules: Mapping[str, str], seen: set[str]
) -> Iterator[ListReference | str]:
    """Every list reference in a template, following expansion rules; a rule that does not
    exist comes out as its name."""
    from hassil.expression import Group, ListReference, RuleReference
    from hassil.parse_expression import parse_sentence

    if isinstance(expression, ListReference):
        yield expression
    elif isinstance(expression, RuleReference):
        name = expression.rule_name
        if name not in rules:
            yield name
        elif name not in seen:
            body = parse_sentence(rules[name], keep_text=True)
            yield from _references(body.expression, rules, seen | {name})
    elif isinstance(expression, Group):
        for item in expression.items:
            yield from _references(item, rules, seen)


def _pair(value: object) -> tuple[str | None, SlotValue | None]:
    if isinstance(value, str):
        return value, value
    if (
        isinstance(value, dict)
        and isinstance(value.get("in"), str)
        and value.keys() <= {"in", "out"}
    ):
        out = value.get("out", value["in"])
        if isinstance(out, str | int | float) and not isinstance(out, bool):
            return value["in"], out
    return None, None


def _strings(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _syntax(error: Exception) -> str:
    """hassil's message without its own wrapping of the template in parentheses."""
    return re.sub(r" in: \((.*)\)$", r" in '\1'", str(error))
