"""The words a cell understands: one phrase table built from the live cell plus general English.

Every phrase maps to its *readings*, one per kind of word it can be: "left" is a zone (sandwich),
a site (blocks) and a direction at once, and the parser picks the reading the sentence needs.
Verb phrases come from the semantic map (semantic.py); names come from the cell (items, zones,
sites, positions, tools, routines, learned composites), so a new cell file needs no code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hassil.parse_expression import parse_sentence
from hassil.sample import sample_expression

from voiced.interpreter.numbers import split_glued
from voiced.interpreter.ordering import (
    COLLECTIVES,
    ITEM_SYNONYMS,
    LEVELS,
    ORDERS,
    ORDINALS,
    PACING,
    RANGES,
)
from voiced.robot.cell import Cell
from voiced.rules.normalize import numbers_to_digits
from voiced.rules.normalize import words as plain_words

Value = str | float
"""A plain reading value: a cell name, a keyword or a number."""


@dataclass(frozen=True)
class VerbSense:
    """What a verb phrase means: a verb key of the semantic map, with anything it implies."""

    key: str
    """The verb key (`put`, `pick`, `go`, `routine`...); semantic.py lowers it to composites."""
    implied: tuple[tuple[str, Value], ...] = ()
    """Readings the phrase carries on its own: "raise" implies direction up, "weld" the
    tack_weld routine, "slow down" the slow speed."""


Reading = Value | VerbSense
"""What one phrase means as one kind of word."""


@dataclass(frozen=True)
class Entry:
    """A phrase of the table."""

    readings: Mapping[str, Reading]
    """Kind -> meaning, in order of preference (kinds: see KINDS)."""
    canonical: str | None = None
    """For a known mishearing ("position to"): the words it stands for ("position 2"); the lexer
    records it as a snap."""


KINDS = (
    "verb", "item", "zone", "site", "position", "tool", "routine", "learned", "home", "here",
    "number", "unit", "duration", "times", "speed", "distance", "direction", "conn", "quant",
    "prep", "pron", "more", "again", "noun", "particle", "filler", "level", "order", "range",
    "ordinal",
)  # fmt: skip
"""Every kind of reading."""

# -- general English -------------------------------------------------------------------------

FILLERS = (
    "please", "the", "a", "an", "some", "can", "could", "would", "will", "you", "me", "us",
    "robot", "just", "now", "kindly", "ok", "okay", "alright", "um", "uh", "er", "erm", "hmm",
    "so", "well", "hey", "thanks", "thank you", "for", "for me", "go ahead and", "i want you to",
    "i need you to", "i would like you to", "id like you to", "lets", "maybe", "actually",
    "right now", "all right", "yeah", "arm", "gripper", "your", "my", "if you can", "if you could",
    "when you can", "very", "can i", "could i", "may i", "i want", "i would like", "id like",
    "i need",
)  # fmt: skip
"""Words that carry no meaning in a command. Never snapped to anything (see lexer.py)."""

CONNECTIVES = {
    "then": "strong", "and then": "strong", "after that": "strong", "and after that": "strong",
    "afterwards": "strong", "afterward": "strong", "next": "strong", "finally": "strong",
    "and finally": "strong", "followed by": "strong", "and": "weak", "also": "weak",
    "plus": "weak", "as well as": "weak", "and also": "weak", "as well": "weak",
    "when you are done": "strong", "and when you are done": "strong", "when done": "strong",
    "once you are done": "strong", "when finished": "strong", "when youre done": "strong",
}  # fmt: skip
QUANTIFIERS = {
    "all": "all", "every": "all", "each": "all", "all the": "all", "all of the": "all",
    "all three": "all", "every single": "all", "full": "all", "complete": "all",
    "everything": "all", "everywhere": "all", "all of them": "all", "both": "both",
    "both of the": "both", "both of them": "both",
}  # fmt: skip
PREPOSITIONS = (
    "on", "onto", "on to", "on top of", "to", "into", "in", "at", "over", "from", "of", "with",
    "towards", "toward", "by", "off of", "up to", "in front of",
)  # fmt: skip
PRONOUNS = ("it", "that", "this", "them", "those", "these", "there", "that one", "this one")
MORE = ("more", "another", "extra", "additional", "an extra", "one more")
AGAIN = (
    "again", "do it again", "do that again", "repeat", "repeat that", "repeat it", "same again",
    "one more time", "once more", "the same again", "same thing", "same thing again",
    "do the same", "do the same thing",
)  # fmt: skip
HERE = ("here", "right here", "where you are", "in place", "current position", "where it is")
HOME = (
    "home", "home position", "back home", "home base", "starting position", "start position",
    "rest position", "park", "park position",
)  # fmt: skip
NOUNS = {
    "stack": "zone", "stacks": "zone", "zone": "zone", "zones": "zone", "pile": "zone",
    "piles": "zone", "side": "zone", "sides": "zone", "assembly": "zone", "assemblies": "zone",
    "area": "zone", "layer": "classifier", "layers": "classifier", "slice": "classifier",
    "slices": "classifier", "piece": "classifier", "pieces": "classifier",
    "portion": "classifier", "portions": "classifier", "leaf": "classifier",
    "leaves": "classifier", "position": "position", "positions": "position", "pos": "position",
    "station": "position", "stations": "position", "point": "position", "points": "position",
    "location": "position", "locations": "position", "tool": "tool", "tools": "tool",
    "cube": "object", "cubes": "object", "block": "object", "blocks": "object",
    "speed": "speed", "pace": "speed", "velocity": "speed", "routine": "routine",
    "routines": "routine", "program": "routine", "sandwich": "sandwich",
    "sandwiches": "sandwich", "ingredient": "item", "ingredients": "item",
    "active": "active", "the active one": "active", "current one": "active",
}  # fmt: skip
PARTICLES = ("off", "away", "over", "stand", "its stand", "the stand", "its place", "its holder")
SAFE_PLACES = ("safe", "safe pos", "safe spot", "safe place", "safe position", "safety position")
UNITS = {
    "mm": "mm", "millimetre": "mm", "millimetres": "mm", "millimeter": "mm",
    "millimeters": "mm", "millis": "mm", "cm": "cm", "centimetre": "cm", "centimetres": "cm",
    "centimeter": "cm", "centimeters": "cm", "inch": "in", "inches": "in", "second": "s",
    "seconds": "s", "sec": "s", "secs": "s", "minute": "min", "minutes": "min",
    "ms": "ms", "milliseconds": "ms", "millisecond": "ms", "mm per second": "mm/s",
    "mm s": "mm/s", "millimetres per second": "mm/s", "millimeters per second": "mm/s",
    "mm per sec": "mm/s", "mm a second": "mm/s",
}  # fmt: skip
DURATIONS = {
    "a second": 1.0, "a sec": 1.0, "a moment": 1.0, "1 moment": 1.0, "a minute": 60.0,
    "half a second": 0.5, "a bit": 1.0,
}  # fmt: skip
COUNTS = {
    "a couple of": 2.0, "a couple": 2.0, "couple of": 2.0, "a pair of": 2.0, "double": 2.0,
    "triple": 3.0, "a single": 1.0, "single": 1.0,
}  # fmt: skip
MULTIPLIERS = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
TIMES = ("times", "time")
DIRECTIONS = {
    "left": "left", "right": "right", "up": "up", "down": "down", "forward": "forward",
    "forwards": "forward", "ahead": "forward", "front": "forward", "away from me": "forward",
    "backward": "backward", "backwards": "backward", "back": "backward",
    "towards me": "backward", "toward me": "backward", "upwards": "up", "upward": "up",
    "higher": "up", "downwards": "down", "downward": "down",
}  # fmt: skip
SPEED_WORDS = {
    "slow": "slow", "slowly": "slow", "carefully": "slow", "gently": "slow",
    "slow speed": "slow", "fast": "fast", "quickly": "fast", "rapidly": "fast",
    "fast speed": "fast", "full speed": "fast", "top speed": "fast", "max speed": "fast",
    "maximum speed": "fast", "normal": "normal", "normally": "normal", "normal speed": "normal",
    "regular speed": "normal", "default speed": "normal", "medium": "normal",
    "medium speed": "normal", "slower": "slower", "faster": "faster", "more slowly": "slower",
    "more quickly": "faster",
}  # fmt: skip
"""Speed words -> a profile name, or `slower`/`faster` (relative to the scene's speed)."""
DISTANCE_WORDS = {
    "a tiny bit": "a little", "a touch": "a little", "a smidge": "a little",
    "just a little": "a little", "a little bit": "a little", "little": "a little",
    "a fair bit": "a bit", "a good bit": "a bit", "some more": "a bit", "quite a bit": "a lot",
    "a long way": "a lot", "far": "a lot", "lots": "a lot",
}  # fmt: skip
"""Synonyms of the cells' distance aliases (used only where the alias exists)."""
ZONE_NOUNS = ("stack", "zone", "side", "pile", "assembly", "1", "area")
"""Nouns that may follow a zone word ("the left stack", "the left one" -> "left 1")."""
SITE_SYNONYMS = {"b": ("buffer", "slot", "buffer slot", "b"), "s": ("spot", "scatter", "s",
                 "scatter spot")}  # fmt: skip
"""Spoken prefixes of numbered blocks sites: B1 is "buffer 1", "slot 1"; S1 is "spot 1"."""
COLOUR_NOUNS = ("cube", "block", "box", "cubes", "blocks", "boxes", "1")
"""How a "<colour> cube" object may be said besides "red": "red block", "red one" ("red 1")."""
HEARD_AS = {
    "team": "cheese", "key": "cheese", "keys": "cheese", "cheesy": "cheese", "jeez": "cheese",
    "attack": "stack", "tack": "stack", "stock": "stack", "stuck": "stack", "meet": "meat",
    "bred": "bread", "read": "red", "blew": "blue", "tomahto": "tomato", "tomatos": "tomato",
    "welled": "weld", "inspector": "inspect", "ad": "add",
    "cheat": "cheese", "cheen": "cheese", "cheem": "cheese", "instax": "inspect",
    "instac": "inspect", "chees": "cheese", "cheeses": "cheese",
    "impact": "inspect", "expect": "inspect", "port": "put", "putt": "put",
}  # fmt: skip
"""Known speech-to-text confusions (FIELD-NOTES: "cheese" came out "team"/"key", "stack"
"attack"/"tack"; the spoken benchmark: "cheat"/"cheen", "impact" for "inspect", "port" for
"put"). Used only where the right-hand word is in the cell's vocabulary and the heard
word is not: in the weld cell "tack" is a verb and stays one."""
MISHEARD_BEFORE = {("well", "at"): "weld", ("well", "position"): "weld"}
"""Confusions that depend on the next word: "well" is a filler, but "well at position 1" is
tiny.en's "weld at position 1" (applied only where the right-hand word is in the vocabulary)."""
COUNT_MISHEARD = {"free": 3.0, "tree": 3.0}
"""tiny.en hears "three layers" as "free layers": a count only right before "layer(s)"."""
POSITION_MISHEARD = {"to": 2, "too": 2, "for": 4, "fore": 4, "won": 1, "tree": 3, "free": 3}
""""position to" is "position 2" (when the cell has Pos_2)."""
_NUMBERED = re.compile(r"^(?P<prefix>[A-Za-z]+(?:_[A-Za-z]+)*?)_?(?P<number>\d+)$")


@dataclass
class _Table:
    """The phrase table under construction; merged readings per phrase."""

    phrases: dict[tuple[str, ...], dict[str, Reading]] = field(default_factory=dict)
    canonical: dict[tuple[str, ...], str] = field(default_factory=dict)

    def add(self, phrase: str, kind: str, value: Reading, canonical: str | None = None) -> None:
        key = tuple(phrase.split())
        if not key:
            return
        readings = self.phrases.setdefault(key, {})
        readings.setdefault(kind, value)  # the first meaning of a kind wins
        if canonical is not None:
            self.canonical[key] = canonical

    def add_all(self, phrases: Iterable[str], kind: str, value: Reading) -> None:
        for phrase in phrases:
            self.add(phrase, kind, value)


@dataclass(frozen=True)
class Vocabulary:
    """The precompiled phrase table of one cell."""

    phrases: Mapping[tuple[str, ...], Entry]
    """Phrase (as a tuple of normalised words) -> its readings."""
    longest: int
    """Words in the longest phrase: the lexer's look-ahead."""
    snap_targets: Mapping[str, Entry]
    """Single content words a near miss may snap to (no fillers, connectives or numbers)."""
    heard_as: Mapping[str, str]
    """Mishearing -> vocabulary word, restricted to this cell."""
    position_numbers: Mapping[int, str]
    """N -> the numbered work pose (`Pos_N`), for "positions 1, 2 and 3"."""

    @classmethod
    def from_cell(cls, cell: Cell, verbs: Mapping[str, VerbSense]) -> Vocabulary:
        table = _Table()
        for phrase, sense in verbs.items():
            table.add(phrase, "verb", sense)
        _add_names(table, cell)
        _add_general(table, cell)
        phrases = {
            key: Entry(readings, table.canonical.get(key))
            for key, readings in table.phrases.items()
        }
        return cls(
            phrases=phrases,
            longest=max(len(key) for key in phrases),
            snap_targets=_snap_targets(phrases),
            heard_as={w: t for w, t in HEARD_AS.items() if (t,) in phrases and (w,) not in phrases},
            position_numbers=_position_numbers(cell),
        )


def spoken(name: str) -> str:
    """A cell name as words: `assembly_left` -> "assembly left", `Pos_1` -> "pos 1"."""
    words = re.sub(r"([a-z])([0-9])", r"\1 \2", name.lower().replace("_", " "))
    return " ".join(words.split())


def plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh", "o")):
        return word + "es"
    return word + "s"


def _add_names(table: _Table, cell: Cell) -> None:
    for name, obj in cell.objects.items():
        said = spoken(name)
        for form in (said, plural(said)):
            table.add(form, "item", name)
        colour, _, noun = said.rpartition(" ")
        if obj.supply is None and colour and " " not in colour:
            for alt in (*COLOUR_NOUNS, noun, plural(noun)):
                table.add(f"{colour} {alt}", "item", name)
            table.add(colour, "item", name)
    for word, item in ITEM_SYNONYMS.items():
        if item in cell.objects:
            table.add_all((word, plural(word)), "item", item)
    for zone in cell.zones():
        table.add(spoken(zone), "zone", zone)
    for alias, zone in cell.zone_aliases.items():
        for noun in ("", *ZONE_NOUNS):
            table.add(f"{spoken(alias)} {noun}".strip(), "zone", zone)
        if spoken(alias) == "center":
            table.add("centre", "zone", zone)
    _add_sites(table, cell)
    _add_positions(table, cell)
    for tool in cell.tools:
        table.add(spoken(tool), "tool", tool)
    for routine in cell.routines:
        table.add(spoken(routine), "routine", routine)
    for composite in cell.composites.values():
        if composite.tier == 2:
            table.add(spoken(composite.name), "learned", composite.name)
    _add_listed_names(table, cell)


def _add_listed_names(table: _Table, cell: Cell) -> None:
    """The integrator's own words for the cell's names (a template list whose values are poses,
    tools, items or zones: "seam 3" for Pos_3) name them in every command, not only in the
    templates that use the list: "weld seam 3 and seam 1" is "weld pos 3 and pos 1"."""
    for phrase, kind, name in listed_names(cell):
        table.add(phrase, kind, name)


def listed_names(cell: Cell) -> list[tuple[str, str, str]]:
    """(phrase, kind, name) for every way the cell's template lists say one of its names."""
    kinds: dict[str, str] = {name: "item" for name in cell.objects}
    kinds.update({name: "zone" for name in cell.zones()})
    kinds.update({name: "tool" for name in cell.tools})
    kinds.update({n: "home" if p.role == "home" else "position" for n, p in cell.poses.items()})
    found: list[tuple[str, str, str]] = []
    for spec in cell.sentences.lists.values():
        for said, value in spec.values:
            kind = kinds.get(str(value))
            if kind is None:
                continue
            for text in sample_expression(parse_sentence(said, keep_text=True).expression):
                found.append((" ".join(normal_words(text)), kind, str(value)))
    return found


def normal_words(text: str) -> list[str]:
    """Lower-case words, no punctuation, glued units split off, number words as digits: the
    words the lexer looks up."""
    return numbers_to_digits(split_glued(plain_words(text)), scales=True)


def _add_sites(table: _Table, cell: Cell) -> None:
    for site in cell.sites.values():
        if site.kind in ("supply", "zone"):
            continue
        said = spoken(site.name)
        table.add(said, "site", site.name)
        numbered = _NUMBERED.match(site.name)
        if numbered:
            prefix = numbered["prefix"].lower()
            for alt in SITE_SYNONYMS.get(prefix, (prefix,)):
                table.add(f"{alt} {numbered['number']}", "site", site.name)
        if site.kind == "arrangement":
            for noun in ("side", "position", "spot", "1"):
                table.add(f"{said} {noun}", "site", site.name)
            if said.startswith("pyramid "):
                table.add(f"{said.split()[1]} of the pyramid", "site", site.name)
                table.add(f"{said.split()[1]} of pyramid", "site", site.name)
    if "center" in cell.sites:
        for alias in ("centre", "middle", "the middle", "centre position", "middle spot"):
            table.add(alias, "site", "center")


def _add_positions(table: _Table, cell: Cell) -> None:
    numbers = _position_numbers(cell)
    for name, pose in cell.poses.items():
        if pose.role == "home":
            table.add(spoken(name), "home", name)
            continue
        said = spoken(name)
        table.add(said, "position", name)
        table.add(said.replace("pos", "position"), "position", name)
        if said.endswith(" 1") and sum(1 for p in cell.poses if spoken(p)[:-2] == said[:-2]) == 1:
            table.add(said[:-2].replace("pos", "position"), "position", name)  # "safe position"
        if pose.role == "safe" and sum(1 for p in cell.poses.values() if p.role == "safe") == 1:
            table.add_all(SAFE_PLACES, "position", name)  # the one safe pose, however it is said
    for number, name in numbers.items():
        for noun in ("position", "pos", "station", "point", "p"):
            table.add(f"{noun} {number}", "position", name)
    for heard, number in POSITION_MISHEARD.items():
        if number in numbers:
            for noun in ("position", "pos"):
                table.add(f"{noun} {heard}", "position", numbers[number], f"{noun} {number}")


def _add_general(table: _Table, cell: Cell) -> None:
    for phrase, strength in CONNECTIVES.items():
        table.add(phrase, "conn", strength)
    for phrase, quant in QUANTIFIERS.items():
        table.add(phrase, "quant", quant)
    for phrase in PREPOSITIONS:
        table.add(phrase, "prep", phrase)
    table.add_all(PRONOUNS, "pron", "it")
    for phrase in MORE:
        table.add(phrase, "more", 1.0 if phrase in ("another", "one more", "an extra") else 0.0)
    table.add_all(AGAIN, "again", "again")
    table.add_all(HERE, "here", "here")
    home = cell.home()
    if home is not None:
        table.add_all(HOME, "home", home.name)
    for phrase, noun in NOUNS.items():
        table.add(phrase, "noun", noun)
    table.add_all(PARTICLES, "particle", "particle")
    for phrase, unit in UNITS.items():
        table.add(phrase, "unit", unit)
    for phrase, seconds in DURATIONS.items():
        table.add(phrase, "duration", seconds)
    for phrase, count in COUNTS.items():
        table.add(phrase, "number", count)
    for phrase, times in MULTIPLIERS.items():
        table.add(phrase, "times", times)
    table.add_all(TIMES, "times", 0.0)
    for phrase, direction in DIRECTIONS.items():
        table.add(phrase, "direction", direction)
    _add_motion(table, cell)
    _add_ordering(table)
    table.add_all(FILLERS, "filler", "filler")


def _add_ordering(table: _Table) -> None:
    for phrase, level in LEVELS.items():
        table.add(phrase, "level", level)
    for phrase, order in ORDERS.items():
        table.add(phrase, "order", order)
    table.add_all(RANGES, "range", "range")
    for phrase, number in ORDINALS.items():
        table.add(phrase, "ordinal", number)
    table.add_all(COLLECTIVES, "quant", "all")
    table.add_all(PACING, "filler", "filler")


def _add_motion(table: _Table, cell: Cell) -> None:
    profiles = {name.lower() for name in cell.motion.speeds}
    for phrase, profile in SPEED_WORDS.items():
        if profile in profiles or profile in ("slower", "faster"):
            table.add(phrase, "speed", profile)
    for profile in profiles:
        table.add(profile, "speed", profile)
    aliases = {spoken(alias): alias for alias in cell.motion.distances}
    for said, alias in aliases.items():
        table.add(said, "distance", alias)
    for phrase, alias in DISTANCE_WORDS.items():
        if alias in aliases:
            table.add(phrase, "distance", aliases[alias])


def _position_numbers(cell: Cell) -> dict[int, str]:
    numbers: dict[int, str] = {}
    for name, pose in cell.poses.items():
        found = _NUMBERED.match(name)
        if found and found["prefix"].lower() == "pos" and pose.role == "work":
            numbers[int(found["number"])] = name
    return numbers


_SNAPPABLE = frozenset({"item", "zone", "site", "tool", "routine", "learned", "direction"})
"""Kinds a near miss may snap to: names and directions. Not verbs ("lunch" is not "launch"):
speech-to-text writes real words, so verb confusions are listed in HEARD_AS instead."""
_SNAPPABLE_NOUNS = frozenset({"position", "positions", "station"})


def _snap_targets(phrases: Mapping[tuple[str, ...], Entry]) -> dict[str, Entry]:
    """Single words worth snapping to: names of four letters or more."""
    return {
        key[0]: entry
        for key, entry in phrases.items()
        if len(key) == 1
        and len(key[0]) >= 4
        and entry.canonical is None
        and not key[0][0].isdigit()
        and (entry.readings.keys() & _SNAPPABLE or key[0] in _SNAPPABLE_NOUNS)
    }
