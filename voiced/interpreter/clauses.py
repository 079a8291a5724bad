"""Clauses: a command's tokens split into actions, each with its slots filled.

"add bread and cheese on the left then go home" is two clauses: a `put` with the objects bread
and cheese and the target left, and a `go` home. A clause without a verb of its own ("then
cheese") borrows the previous clause's verb (grammar.py decides which verb a clause has before
its slots are filled, because the verb decides whether "left" is a place or a direction).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voiced.interpreter.lexer import Token
from voiced.interpreter.numbers import UNIT_DIMENSIONS, UNIT_FACTORS, tidy
from voiced.interpreter.ordering import RANGE_PREPOSITIONS
from voiced.interpreter.vocabulary import Value, VerbSense

TARGET_PREPS = frozenset(
    {"on", "onto", "on to", "on top of", "in", "into", "at", "over", "to", "up to", "toward",
     "towards", "in front of"}
)  # fmt: skip
"""Prepositions after which a place word is where something goes."""
TARGET_VERBS = frozenset({"put", "switch", "clear", "release", "return", "attach"})
"""Verbs whose place words are targets even without objects ("switch to the left")."""
_NOT_A_VERB_AFTER = frozenset({"prep", "quant", "zone", "site", "number", "item"})


@dataclass(frozen=True)
class ObjectRef:
    """An object (item or unique object) the clause acts on."""

    name: str
    """The cell's object name."""
    count: int
    """How many ("three layers of cheese" -> 3)."""
    token: Token
    """Where it was said."""


@dataclass(frozen=True)
class Group:
    """Objects and where they go: "bread on the left" (targets may come first or be absent)."""

    objects: tuple[ObjectRef, ...]
    """In the order said."""
    targets: tuple[Token, ...]
    """Place tokens (zone, site, or an object to stack on), in the order said."""
    quant: str | None = None
    """`all` / `both` for "on every stack", "on both stacks"."""


@dataclass(frozen=True)
class Clause:
    """One action of a command, its slots filled."""

    tokens: tuple[Token, ...]
    """Its tokens (fillers already dropped)."""
    link: str
    """How it joins the previous clause: start, weak ("and"), strong ("then"), none."""
    verb: VerbSense | None
    """Its verb (own or inherited); None when it has none."""
    verb_token: Token | None
    """The token that said the verb (None when inherited or absent)."""
    groups: tuple[Group, ...] = ()
    """Objects with their targets, in the order said."""
    positions: tuple[tuple[str, Token], ...] = ()
    """Named poses, in order."""
    quant: str | None = None
    """`all`/`both` not attached to a place ("inspect all", "do a full inspection")."""
    routine: str | None = None
    """The routine named or implied ("weld" -> tack_weld)."""
    tools: tuple[str, ...] = ()
    """Tools named ("grab the camera")."""
    any_tool: bool = False
    """"the tool": whichever is attached."""
    directions: tuple[str, ...] = ()
    """Ways to move, in order ("up and left")."""
    distance: Value | None = None
    """A distance alias or millimetres."""
    speed: Value | None = None
    """A profile, `slower`/`faster`, or mm/s."""
    seconds: float | None = None
    """A duration ("3 seconds", "a moment")."""
    times: int = 1
    """"twice", "three times"."""
    more: int | None = None
    """"two more" (no objects): repeat the last step this many times."""
    pronoun: bool = False
    """"it", "that", "there": the held thing, or the previous clause's positions."""
    home: bool = False
    """"home", "back home"."""
    here: bool = False
    """"here": where the arm is ("weld here")."""
    again: bool = False
    """"again", "do it again": repeat the previous clause, or the last sequence."""
    learned: tuple[str, ...] = ()
    """Tier-2 composites called by name."""
    sandwich: bool = False
    """The noun "sandwich" ("a cheese sandwich": bread around the items)."""
    words: frozenset[str] = frozenset()
    """Every word said, for particles ("put it back", "take the cheese off")."""
    numbers: tuple[Token, ...] = ()
    """Numbers that fit no slot."""
    missing_positions: tuple[Token, ...] = ()
    """Position numbers the cell does not have ("position 7")."""
    unknown: tuple[Token, ...] = ()
    """Words the cell does not know."""

    def objects(self) -> tuple[ObjectRef, ...]:
        return tuple(o for g in self.groups for o in g.objects)

    def targets(self) -> tuple[Token, ...]:
        return tuple(t for g in self.groups for t in g.targets)

    @property
    def key(self) -> str | None:
        return self.verb.key if self.verb is not None else None


def split(tokens: tuple[Token, ...]) -> list[tuple[list[Token], str]]:
    """Tokens -> (clause tokens, link) at strong connectives, at "and" before a new action, and
    where a second verb starts."""
    clauses: list[tuple[list[Token], str]] = []
    current: list[Token] = []
    link = "start"
    for i, token in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if token.has("conn"):
            if token.readings["conn"] == "strong" or (nxt is not None and starts_action(nxt)):
                if current:
                    clauses.append((current, link))
                current = []
                link = str(token.readings["conn"])
                continue
            current.append(token)
            continue
        if current and verb_index(current) is not None and _verb_here(token, current[-1]):
            sense = token.verb()
            says_routine = token.has("routine") or (sense is not None and sense.key == "routine")
            if not (says_routine and _key_of(current) == "run"):  # "run the tack weld at 1"
                clauses.append((current, link))
                current, link = [], "none"
        current.append(token)
    if current:
        clauses.append((current, link))
    return clauses


def starts_action(token: Token) -> bool:
    """Whether "and <token>" begins a new action rather than continuing a list."""
    return token.verb() is not None or any(token.has(kind) for kind in ("home", "again", "learned"))


def verb_index(tokens: list[Token]) -> int | None:
    """Index of the clause's own verb token."""
    for i, token in enumerate(tokens):
        if token.verb() is not None and (i == 0 or _verb_here(token, tokens[i - 1])):
            return i
    return None


def _verb_here(token: Token, previous: Token) -> bool:
    """A noun reading wins after a preposition or a name: "on the stack" is not the verb."""
    if token.verb() is None:
        return False
    other_uses = set(token.readings) - {"verb"}
    return not (other_uses and previous.readings.keys() & _NOT_A_VERB_AFTER)


def _key_of(tokens: list[Token]) -> str | None:
    index = verb_index(tokens)
    sense = tokens[index].verb() if index is not None else None
    return sense.key if sense is not None else None


@dataclass
class _Builder:
    """Fills a clause's slots token by token (the mutable twin of Clause)."""

    verb: VerbSense | None
    numbered_positions: dict[int, str]
    groups: list[Group] = field(default_factory=list)
    objects: list[ObjectRef] = field(default_factory=list)
    targets: list[Token] = field(default_factory=list)
    group_quant: str | None = None
    positions: list[tuple[str, Token]] = field(default_factory=list)
    quant: str | None = None
    routine: str | None = None
    tools: list[str] = field(default_factory=list)
    any_tool: bool = False
    directions: list[str] = field(default_factory=list)
    distance: Value | None = None
    speed: Value | None = None
    seconds: float | None = None
    times: int = 1
    more: int | None = None
    flags: set[str] = field(default_factory=set)
    learned: list[str] = field(default_factory=list)
    numbers: list[Token] = field(default_factory=list)
    missing_positions: list[Token] = field(default_factory=list)
    unknown: list[Token] = field(default_factory=list)
    count: int | None = None
    """A number waiting for what it counts ("three" in "three layers of cheese")."""
    count_token: Token | None = None
    prep: str | None = None
    """The preposition just said ("on" before "the left")."""
    position_context: bool = False
    """Bare numbers are positions here ("weld at 1 and 3", "positions 1, 2")."""
    range_open: bool = False
    """A range word followed a position: the next position closes it ("1 through 3")."""

    def close_group(self) -> None:
        if self.objects or self.targets or self.group_quant:
            self.groups.append(Group(tuple(self.objects), tuple(self.targets), self.group_quant))
        self.objects, self.targets, self.group_quant = [], [], None

    def imply(self, kind: str, value: Value) -> None:
        """A reading a verb carries ("raise" -> up, "weld" -> tack_weld)."""
        if kind == "direction":
            self.directions.append(str(value))
        elif kind == "routine":
            self.routine = str(value)
        elif kind == "speed":
            self.speed = value
        elif kind == "learned":
            self.learned.append(str(value))


def build(
    tokens: list[Token], link: str, verb: VerbSense | None, verb_at: int | None,
    numbered_positions: dict[int, str],
) -> Clause:  # fmt: skip
    """Fill the slots of one clause; `verb_at` is the index of its own verb token, if any."""
    b = _Builder(verb, numbered_positions)
    b.position_context = verb is not None and verb.key in ("go", "routine", "run", "return")
    for kind, value in verb.implied if verb is not None else ():
        b.imply(kind, value)
    for i, token in enumerate(tokens):
        if i != verb_at:
            _take(b, token, tokens[i + 1] if i + 1 < len(tokens) else None)
    b.close_group()
    if b.count_token is not None and b.more is None:
        b.numbers.append(b.count_token)  # "three layers" of nothing
    return Clause(
        tokens=tuple(tokens), link=link, verb=b.verb,
        verb_token=tokens[verb_at] if verb_at is not None else None,
        groups=tuple(b.groups), positions=tuple(b.positions), quant=b.quant, routine=b.routine,
        tools=tuple(b.tools), any_tool=b.any_tool, directions=tuple(b.directions),
        distance=b.distance,
        speed=b.speed, seconds=b.seconds, times=b.times, more=b.more,
        pronoun="pronoun" in b.flags, home="home" in b.flags, here="here" in b.flags,
        again="again" in b.flags, learned=tuple(b.learned), sandwich="sandwich" in b.flags,
        words=frozenset(w for t in tokens for w in t.text.split()),
        numbers=tuple(b.numbers), missing_positions=tuple(b.missing_positions),
        unknown=tuple(b.unknown),
    )  # fmt: skip


def _take(b: _Builder, token: Token, nxt: Token | None) -> None:
    if token.unknown:
        b.unknown.append(token)
    elif token.has("range") and b.positions:
        b.range_open = True
    elif token.has("ordinal") and (b.position_context or _is_noun(nxt, "position")):
        _number(b, Token(token.text, token.start, {"number": token.number("ordinal")}), None)
    elif token.has("number"):
        _number(b, token, nxt)
    elif token.has("item"):
        _object(b, token)
    elif token.has("zone") or token.has("site"):
        _place(b, token)
    elif token.has("direction"):
        b.directions.append(token.text_value("direction"))
    elif token.has("position"):
        _position(b, token.text_value("position"), token)
    else:
        _other(b, token)
    if not token.has("prep"):
        b.prep = None


def _number(b: _Builder, token: Token, nxt: Token | None) -> None:
    value = token.number()
    if nxt is not None and nxt.has("unit"):
        _measure(b, value, nxt.text_value("unit"))
    elif nxt is not None and nxt.has("times") and nxt.number("times") == 0.0:
        b.times = int(value)
    elif b.quant is not None and nxt is not None and (nxt.has("zone") or _is_noun(nxt, "zone")):
        pass  # "on all three stacks": the count of "all"
    elif nxt is not None and any(nxt.has(k) for k in ("more", "item", "noun")):
        b.count, b.count_token = int(value), token
    elif b.position_context and int(value) in b.numbered_positions:
        _position(b, b.numbered_positions[int(value)], token)
    elif b.position_context and value == int(value):
        b.missing_positions.append(token)
    else:
        b.numbers.append(token)


def _position(b: _Builder, name: str, token: Token) -> None:
    """A named pose; closing a range ("positions 1 through 3") adds the ones between."""
    if b.range_open and b.positions:
        numbers = {pose: n for n, pose in b.numbered_positions.items()}
        first, last = numbers.get(b.positions[-1][0]), numbers.get(name)
        if first is not None and last is not None:
            way = 1 if last > first else -1
            b.positions += [(b.numbered_positions[n], token) for n in range(first + way, last, way)
                            if n in b.numbered_positions]  # fmt: skip
    b.range_open = False
    b.positions.append((name, token))


def _is_noun(token: Token | None, noun: str) -> bool:
    return token is not None and token.has("noun") and token.text_value("noun") == noun


def _measure(b: _Builder, value: float, unit: str) -> None:
    amount = tidy(value * UNIT_FACTORS[unit])
    dimension = UNIT_DIMENSIONS[unit]
    if dimension == "distance":
        b.distance = amount
    elif dimension == "duration":
        b.seconds = float(amount)
    else:
        b.speed = amount


def _object(b: _Builder, token: Token) -> None:
    if b.prep in TARGET_PREPS and b.objects:
        b.targets.append(token)  # "stack the blue cube on the red cube"
        return
    if b.targets and b.objects:
        b.close_group()  # "bread on the left and cheese ..." starts the next group
    count = b.count if b.count is not None else 1
    b.objects.append(ObjectRef(token.text_value("item"), count, token))
    b.count, b.count_token = None, None


def _place(b: _Builder, token: Token) -> None:
    if token.has("direction") and not _is_target(b):
        b.directions.append(token.text_value("direction"))
    elif b.prep != "from":  # where it comes from: the scene knows that
        b.targets.append(token)
        if b.quant is not None:
            b.group_quant, b.quant = b.quant, None


def _is_target(b: _Builder) -> bool:
    key = b.verb.key if b.verb is not None else None
    if key == "nudge":
        return False
    if key in TARGET_VERBS or b.objects or "pronoun" in b.flags:
        return True
    return key is None and b.prep in TARGET_PREPS and b.prep != "to"


def _other(b: _Builder, token: Token) -> None:
    r = token.readings
    if "routine" in r:
        b.routine = token.text_value("routine")
    elif "tool" in r:
        b.tools.append(token.text_value("tool"))
    elif "verb" in r:
        sense = token.verb()  # not the clause's verb: what it implies is an argument
        for kind, value in sense.implied if sense is not None else ():
            b.imply(kind, value)
    elif "prep" in r:
        b.prep = token.text_value("prep")
        b.range_open = b.prep in RANGE_PREPOSITIONS and b.position_context and bool(b.positions)
    elif "quant" in r:
        b.quant = token.text_value("quant")
    elif "noun" in r:
        _noun(b, token.text_value("noun"))
    else:
        _flag(b, token)


def _noun(b: _Builder, noun: str) -> None:
    if noun == "zone" and b.quant is not None:
        b.group_quant, b.quant = b.quant, None  # "on every stack"
    elif noun == "position":
        b.position_context = True
    elif noun == "tool":
        b.any_tool = True
    elif noun == "sandwich":
        b.flags.add("sandwich")
    elif noun == "speed" and b.verb is None:
        b.verb = VerbSense("speed")
    elif noun == "active":
        b.verb = VerbSense("switch")  # "make the left one active": whatever the verb was


def _flag(b: _Builder, token: Token) -> None:
    r = token.readings
    for kind, flag in (("pron", "pronoun"), ("home", "home"), ("here", "here"),
                       ("again", "again")):  # fmt: skip
        if kind in r:
            b.flags.add(flag)
            return
    if "learned" in r:
        b.learned.append(token.text_value("learned"))
    elif "more" in r:
        said = token.number("more")
        b.more = b.count if b.count is not None else int(said) or 1
        b.count = b.more
    elif "times" in r and token.number("times"):
        b.times = int(token.number("times"))
    elif "duration" in r and ("distance" not in r or _wants_duration(b)):
        b.seconds = token.number("duration")
    elif "distance" in r:
        b.distance = token.text_value("distance")
    elif "speed" in r:
        b.speed = token.text_value("speed")


def _wants_duration(b: _Builder) -> bool:
    return b.verb is not None and b.verb.key == "wait"
