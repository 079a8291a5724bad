"""Lowering: one clause to composite calls, using what the live cell offers (see semantic.py's
table). Problems raise `Unparsed`, which grammar.py turns into seed 003's failure objects."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from voiced.interpreter.clauses import Clause, ObjectRef
from voiced.interpreter.lexer import Token
from voiced.interpreter.numbers import tidy
from voiced.interpreter.places import clause_positions, group_zones, on_zones, site_of
from voiced.interpreter.semantic import (
    PLACE_PREPS,
    Context,
    Steps,
    Unparsed,
    example_hint,
    items_hint,
    join,
    places_of,
    positions_hint,
    routines_hint,
    sites_hint,
    step,
    unsupported,
)
from voiced.interpreter.swap import swap
from voiced.interpreter.vocabulary import Value
from voiced.robot.cell import Cell

MAX_REPEATS = 100
"""The most one command may ask for by a count, "N times" or "N more": "add 3000000 layers of
cheese" planned three million steps (the daemon stalled for 6 s, a stop waiting behind it;
10^12 ran out of memory)."""


def _too_many(c: Clause) -> Unparsed | None:
    counts = [o.count for o in c.objects()]
    asked = max(c.times, 1) * max(c.more or 1, 1) * max(counts, default=1) * max(len(counts), 1)
    if asked <= MAX_REPEATS:
        return None
    token = max(c.objects(), key=lambda o: o.count).token if counts else c.verb_token
    return Unparsed("semantic_failure", token, f"That is {asked} times: I do at most "
                    f"{MAX_REPEATS} in one command", "ask for fewer", "none")  # fmt: skip


def lower(c: Clause, ctx: Context) -> Steps:
    """The clause's composite calls (speed modifier first, then the action times N)."""
    if (refused := _too_many(c)) is not None:
        raise refused
    key = c.key
    moved = bool(c.objects() or c.pronoun) and key in _OBJECT_MOVERS
    way = any(t.has("direction") for t in c.tokens)
    if moved and c.numbers and way and not c.positions:  # "move the red cube 5 to the left"
        number = c.numbers[0]
        raise Unparsed("syntax_error", number, f"I don't know what {number.text} is for",
                       _where_hint(ctx.cell), "none")  # fmt: skip
    if moved and (c.distance is not None or _nudged(c)):
        # "move the red cube a little to the left": the thing goes to a place, never by a
        # distance; read as "to the left" it went to the site named left, the other way.
        raise Unparsed("semantic_failure", c.verb_token or c.tokens[0],
                       NOT_BY_A_DISTANCE,
                       _where_hint(ctx.cell), "none")  # fmt: skip
    if (moved or c.tools or c.any_tool) and key in _OBJECT_MOVERS:
        place = _direction_as_place(c)
        if place is not None:
            # "add cheese to the back": read as "put it back" it put away what was held and
            # never added the cheese; the cell has no place of that name.
            noun = "stack" if ctx.has("add_layer") else "place"
            raise Unparsed("semantic_failure", place, f"I don't have a {place.text} {noun}",
                           _where_hint(ctx.cell), "none")  # fmt: skip
    if c.missing_positions:
        token = c.missing_positions[0]
        raise Unparsed("semantic_failure", token, f"I don't have position {token.text}",
                       positions_hint(ctx.cell), "none")  # fmt: skip
    if c.again:
        body = _again(c, ctx)
    elif c.learned:  # "make lunch on the left"
        group = c.groups[0] if c.groups else None
        body = on_zones(c, ctx, group, [step(name) for name in c.learned])
    elif c.more is not None and not c.objects():
        body = _more(c, ctx)
    else:
        key = key or implicit_verb(c, ctx)
        if c.numbers and key not in _NUMBER_USERS:
            number = c.numbers[0]
            raise Unparsed("syntax_error", number, f"I don't know what {number.text} is for",
                           example_hint(ctx.cell))  # fmt: skip
        handler = HANDLERS.get(key)
        if handler is None:
            raise unsupported(c, ctx.cell, "do that")
        body = handler(c, ctx)
    prefix = []
    if c.speed is not None and key not in ("speed", "switch"):
        prefix = [step("set_speed", speed=_speed_value(c.speed, ctx))]  # "slowly add bread"
    return prefix + body * max(c.times, 1)


NOT_BY_A_DISTANCE = "I move things to places, not by a distance"

_NUDGE_WORDS = frozenset(("inch", "inches", "mm", "cm", "millimetre", "millimetres",
                          "millimeter", "millimeters", "centimetre", "centimetres",
                          "centimeter", "centimeters", "further", "farther", "hair",
                          "slightly", "smidge", "tad", "touch", "closer", "nearer"))  # fmt: skip
"""Words of a nudge wherever they are ("an inch to the left", "a hair left")."""


def _nudged(c: Clause) -> bool:
    """Whether the clause asks for a thing to move by an amount: a nudge word, or "more" or
    "some" next to a way ("more to the left", "left some")."""
    tokens = c.tokens
    for at, token in enumerate(tokens):
        if token.text in _NUDGE_WORDS:
            return True
        if token.text in ("more", "some"):
            near = [t for t in tokens[max(0, at - 1) : at + 3] if t is not token]
            following = tokens[at + 1 : at + 3]
            way = any(t.has("direction") for t in near[:1]) if at else False
            way = way or any(t.has("direction") for t in following if not t.has("prep"))
            if way and (at + 1 >= len(tokens) or not tokens[at + 1].has("item")):
                return True
    return False


def _direction_as_place(c: Clause) -> Token | None:
    """A way ("back", "front") said where a place belongs ("to the back", "on the front
    stack") in a cell that has no place of that name."""
    for before, token in itertools.pairwise(c.tokens):
        named = any(token.has(kind) for kind in ("zone", "site", "position", "home"))
        if before.text in PLACE_PREPS and token.has("direction") and not named:
            return token
    return None


def _where_hint(cell: Cell) -> str:
    """The places a thing may be put, in the cell's words (sites, else its stacks)."""
    places = places_of(cell)
    if places is None:
        return example_hint(cell)
    if places[0] == "places":
        return sites_hint(cell)
    return f"Say where: on the {join(list(places[1]), 'or')}"


_OBJECT_MOVERS = frozenset({"put", "move", "pick", None})
"""Verbs that take a thing somewhere (None: no verb, "the red cube a bit left")."""
_NUMBER_USERS = frozenset({"wait", "speed", "nudge", "go", "move", "switch"})


def implicit_verb(c: Clause, ctx: Context) -> str:
    """The action of a clause without a verb ("bread cheese bread", "up a bit", "position 2")."""
    if len(c.tokens) == 1 and c.tokens[0].has("direction") and c.tokens[0].has("zone"):
        word = c.tokens[0].text
        raise Unparsed("syntax_error", c.tokens[0], f"Move {word}, or use the {word} stack?",
                       f"Say move {word} a bit, or switch to the {word} stack", "none")  # fmt: skip
    if c.objects():
        if ctx.has("add_layer"):
            return "put"
        if c.targets():
            return "move"
        raise Unparsed("syntax_error", c.objects()[0].token,
                       f"What should I do with the {c.objects()[0].name}?",
                       f"Say for example: pick up the {c.objects()[0].name}", "none")  # fmt: skip
    if (c.tools or c.any_tool) and "back" in c.words:
        return "return"  # "tool back", "the camera back"
    for key, present in (
        ("go", bool(c.positions) or c.quant == "all" or c.home),
        ("nudge", bool(c.directions) or c.distance is not None),
        ("switch", bool(c.targets()) or any(g.quant for g in c.groups)),
        ("speed", c.speed is not None),
        ("wait", c.seconds is not None),
        ("routine", c.routine is not None),
    ):
        if present:
            return key
    raise Unparsed("syntax_error", c.tokens[0], "I didn't catch what to do",
                   example_hint(ctx.cell))  # fmt: skip


# -- sandwich-style: items onto zones --------------------------------------------------------


def _put(c: Clause, ctx: Context) -> Steps:
    if c.tools and c.tokens[-1].text == "on" and ctx.has("attach_tool"):
        return _attach(c, ctx)  # "put the welder on"
    if (c.tools or c.any_tool) and ctx.has("release_tool"):
        return _return(c, ctx)
    if c.pronoun and ctx.has("release_tool") and not (ctx.has("add_layer") or ctx.has("place")):
        return _release_tool(c, ctx)  # "put it away": the only thing held is the tool
    if ctx.has("add_layer"):
        return _put_layers(c, ctx)
    if ctx.has("move_object") or ctx.has("place"):
        return _put_objects(c, ctx)
    raise unsupported(c, ctx.cell, "put things down")


def _put_layers(c: Clause, ctx: Context) -> Steps:
    if "back" in c.words and ctx.has("return_to_stack"):
        return [step("return_to_stack")]  # "put the cheese back"
    if not c.objects():
        if c.pronoun or "down" in c.words or c.groups:
            return on_zones(c, ctx, c.groups[0] if c.groups else None, [step("place_on_zone")])
        raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Put what?",
                       items_hint(ctx.cell), "none")  # fmt: skip
    steps: Steps = []
    for group in c.groups:
        steps += on_zones(c, ctx, group, _layers(group.objects, c, ctx))
    return steps


def _layers(objects: tuple[ObjectRef, ...], c: Clause, ctx: Context) -> Steps:
    items = [o.name for o in objects for _ in range(o.count)]
    for o in objects:
        if ctx.cell.objects[o.name].supply is None:
            raise Unparsed("semantic_failure", o.token, f"{o.name} has no supply here",
                           items_hint(ctx.cell), "none")  # fmt: skip
    # "a cheese sandwich": the sandwich cell's bread goes around whatever was named.
    bread = "bread" if "bread" in ctx.cell.items() else None
    if c.sandwich and bread is not None and items:
        items = ([] if items[0] == bread else [bread]) + items
        items += [] if len(items) > 1 and items[-1] == bread else [bread]
    return [step("add_layer", item=item) for item in items]


def _pick(c: Clause, ctx: Context) -> Steps:
    if c.tools or c.any_tool:
        return _release_tool(c, ctx) if "off" in c.words else _attach(c, ctx)
    if "off" in c.words and ctx.has("return_to_stack"):
        ctx.guesses.append("take X off: partial undo is not supported, putting back what is held")
        return [step("return_to_stack")]
    objects = c.objects()
    if not objects and c.positions:
        return _go(c, ctx)  # "take me to position 2"
    if not objects and c.pronoun and ctx.previous and ctx.previous[-1].instruction in _PICKS:
        return []  # "take a slice of cheese and hold it": it is held already
    if ctx.has("pick") and c.targets():
        return _put_objects(c, ctx)  # "take the red cube to B1"
    instruction = "pick_up" if ctx.has("pick_up") else "pick" if ctx.has("pick") else None
    if instruction is None:
        raise unsupported(c, ctx.cell, "pick things up")
    if not objects:
        raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Pick up what?",
                       items_hint(ctx.cell), "none")  # fmt: skip
    if len(objects) > 1 or objects[0].count > 1:
        raise Unparsed("semantic_failure", objects[-1].token, "I can only hold one thing at a time",
                       f"Say add {_names(objects)} to stack them", "none")  # fmt: skip
    key = "item" if instruction == "pick_up" else "object"
    return [step(instruction, **{key: objects[0].name})]


_PICKS = frozenset({"pick_up", "pick"})


# -- blocks-style: unique objects onto sites ---------------------------------------------------


def _put_objects(c: Clause, ctx: Context) -> Steps:
    if not c.objects():
        if not c.targets() and not c.pronoun:
            # A bare "add" or "put": nothing is named to put anywhere.
            raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Put what, and where?",
                           example_hint(ctx.cell), "none")  # fmt: skip
        if not c.targets():
            raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Put it where?",
                           sites_hint(ctx.cell), "none")  # fmt: skip
        return [step("place", site=site_of(c.targets()[0], ctx))]
    steps: Steps = []
    for group in c.groups:
        if group.objects and not group.targets:
            raise Unparsed("syntax_error", group.objects[-1].token,
                           f"Where should I put the {group.objects[-1].name}?",
                           sites_hint(ctx.cell), "none")  # fmt: skip
        site = site_of(group.targets[0], ctx)
        steps += [step("move_object", object=o.name, to=site) for o in group.objects]
    return steps


def _move(c: Clause, ctx: Context) -> Steps:
    if c.objects() and ctx.has("add_layer"):
        return _put_layers(c, ctx)
    if (c.objects() or c.pronoun) and c.targets() and ctx.has("move_object"):
        return _put_objects(c, ctx)
    if c.positions or c.quant or c.home:
        return _go(c, ctx)
    if c.directions or c.distance is not None:
        return _nudge(c, ctx)
    if c.targets() and ctx.has("set_active_zone"):
        return _switch(c, ctx)
    raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Move what, or which way?",
                   example_hint(ctx.cell))  # fmt: skip


# -- motion --------------------------------------------------------------------------------------


def _go(c: Clause, ctx: Context) -> Steps:
    positions = clause_positions(c, ctx)
    if positions:
        home = ctx.cell.home()
        steps = [
            step("go_home") if home is not None and p == home.name and ctx.has("go_home")
            else step("move_to_position", position=p)
            for p in positions
        ]  # fmt: skip
        # A cell may name poses without a composite that goes to one (the barista's taps).
        if not ctx.has("move_to_position") and any(s.instruction != "go_home" for s in steps):
            raise unsupported(c, ctx.cell, "go to a named position")
        return steps
    if c.home:
        return [step("go_home")]
    if c.directions:
        return _nudge(c, ctx)
    if c.tools and not c.targets():
        return _attach(c, ctx)  # "go to the welder": fetch it
    if c.speed is not None and not c.targets():
        return []  # "go at slow speed": the speed is the whole command (set before the body)
    if c.targets() and ctx.has("set_active_zone"):
        return _switch(c, ctx)
    raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Go where?",
                   positions_hint(ctx.cell))  # fmt: skip


def _nudge(c: Clause, ctx: Context) -> Steps:
    if not ctx.has("move_relative"):
        raise unsupported(c, ctx.cell, "move the arm by a distance")
    if not c.directions:
        raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Which way?",
                       "Say left, right, up, down, forward or back", "none")  # fmt: skip
    distance = c.distance
    if distance is None and c.numbers:
        distance = tidy(c.numbers[0].number())
        ctx.guesses.append(f"{c.numbers[0].text}: taken as millimetres")
    params: dict[str, Value] = {} if distance is None else {"distance": distance}
    return [step("move_relative", direction=d, **params) for d in c.directions]


def _switch(c: Clause, ctx: Context) -> Steps:
    if c.tools:
        return _attach(c, ctx)
    if len(c.objects()) == 2 and not c.targets():
        return swap(c, ctx)  # "switch the red and the blue cube"
    zones = group_zones(c, ctx, c.groups[0] if c.groups else None)
    if zones and ctx.has("set_active_zone"):
        return [step("set_active_zone", zone=zones[0])]
    if c.speed is not None or c.numbers:
        return _speed(c, ctx)
    raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Switch to what?",
                   example_hint(ctx.cell))  # fmt: skip


def _speed(c: Clause, ctx: Context) -> Steps:
    value: Value | None = c.speed
    if value is None and c.numbers:
        value = tidy(c.numbers[0].number())
    if value is None:
        profiles = ", ".join(ctx.cell.motion.speeds)
        raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "What speed?",
                       f"Say {profiles}, or a number in mm/s", "none")  # fmt: skip
    return [step("set_speed", speed=_speed_value(value, ctx))]


def _speed_value(value: Value, ctx: Context) -> Value:
    if value not in ("slower", "faster"):
        return value
    speeds = sorted(ctx.cell.motion.speeds.items(), key=lambda kv: kv[1])
    if ctx.scene is not None:
        current = ctx.scene.speed
    else:
        current = ctx.cell.resolve_speed(ctx.cell.motion.default_speed)
        ctx.guesses.append(f"{value}: assumed the speed is {ctx.cell.motion.default_speed} now")
    if value == "slower":
        return next((n for n, v in reversed(speeds) if v < current), speeds[0][0])
    return next((n for n, v in speeds if v > current), speeds[-1][0])


def _wait(c: Clause, ctx: Context) -> Steps:
    if not ctx.has("wait"):
        raise unsupported(c, ctx.cell, "wait")
    seconds = c.seconds if c.seconds is not None else (c.numbers[0].number() if c.numbers else None)
    return [step("wait", seconds=tidy(seconds)) if seconds is not None else step("wait")]


# -- tools and routines (weld-style) -------------------------------------------------------------


def _attach(c: Clause, ctx: Context) -> Steps:
    if not ctx.has("attach_tool"):
        raise unsupported(c, ctx.cell, "change tools")
    if len(c.tools) > 1:
        raise Unparsed("semantic_failure", c.verb_token or c.tokens[0],
                       "I can only hold one tool at a time", f"Say grab the {c.tools[0]}",
                       "none")  # fmt: skip
    if not c.tools:
        tools = " or ".join(ctx.cell.tools)
        raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Which tool?",
                       f"Say the {tools}", "none")  # fmt: skip
    tool = c.tools[0]
    held = ctx.scene.tool if ctx.scene is not None else None
    first = [step("release_tool")] if held and held != tool and ctx.has("release_tool") else []
    return [*first, step("attach_tool", tool=tool)]


def _release_tool(c: Clause, ctx: Context) -> Steps:
    if not ctx.has("release_tool"):
        raise unsupported(c, ctx.cell, "put a tool back")
    return [step("release_tool")]


def _routine(c: Clause, ctx: Context) -> Steps:
    if c.routine is None:
        raise Unparsed("syntax_error", c.verb_token or c.tokens[0], "Run what?",
                       routines_hint(ctx.cell))  # fmt: skip
    positions = clause_positions(c, ctx)
    if not positions and not c.here and ctx.previous_positions:
        positions = list(ctx.previous_positions)  # "go to position 1 and weld": there
    if positions and ctx.has("run_routine_at"):
        return [step("run_routine_at", routine=c.routine, position=p) for p in positions]
    if c.here and ctx.has("run_routine"):
        return [step("run_routine", routine=c.routine)]
    raise Unparsed("semantic_failure", c.verb_token or c.tokens[0],
                   f"Where should I run {c.routine}?",
                   f"Say at {positions_hint(ctx.cell, bare=True)}, at all positions, or here",
                   "none")  # fmt: skip


# -- recovery (seed 000) --------------------------------------------------------------------------


def _fixed(*instructions: str) -> Callable[[Clause, Context], Steps]:
    def handler(c: Clause, ctx: Context) -> Steps:
        missing = [i for i in instructions if not ctx.has(i)]
        if missing:
            raise unsupported(c, ctx.cell, c.verb_token.text if c.verb_token else "do that")
        return [step(i) for i in instructions]

    return handler


def _clear(c: Clause, ctx: Context) -> Steps:
    if not ctx.has("clear_assembly"):
        raise unsupported(c, ctx.cell, "clear an assembly")
    return on_zones(c, ctx, c.groups[0] if c.groups else None, [step("clear_assembly")])


def _restart(c: Clause, ctx: Context) -> Steps:
    """Everything built goes back, then home, and the zone the cell starts with is the active
    one again. Where the cell builds on several zones that is every zone with something on
    it, not only the active one ("add cheese" on the fixture, "put the tomato on the right
    stack", "start over" used to leave the cheese; after "put the cheese on the left", the
    next "add tomato" went on the left)."""
    steps = _fixed("clear_assembly", "go_home")(c, ctx)
    scene = ctx.scene
    if scene is None or not ctx.has("set_active_zone"):
        return steps
    built = [zone for zone in ctx.cell.zones() if scene.stacks.get(zone)]
    start = ctx.cell.default_zone
    if not built or built == [scene.active_zone] == [start]:
        steps = [step("clear_assembly")]
    else:
        steps = []
        for zone in built:
            steps += [step("set_active_zone", zone=zone), step("clear_assembly")]
    last = built[-1] if built else scene.active_zone
    if start is not None and last != start:
        steps.append(step("set_active_zone", zone=start))
    return [*steps, step("go_home")]


def _mistake(c: Clause, ctx: Context) -> Steps:
    """Seed 000: return_to_stack if holding, else clear_assembly."""
    if not (ctx.has("return_to_stack") and ctx.has("clear_assembly")):
        raise unsupported(c, ctx.cell, "undo that")
    if ctx.scene is None:
        ctx.guesses.append("mistake: the scene is unknown, putting back what is held")
        return [step("return_to_stack")]
    return [step("return_to_stack" if ctx.scene.holding else "clear_assembly")]


def _finish(c: Clause, ctx: Context) -> Steps:
    if ctx.has("release_tool_and_home"):
        return [step("release_tool_and_home")]
    return [step("go_home")]


def _return(c: Clause, ctx: Context) -> Steps:
    if c.home or c.positions:
        return _go(c, ctx)
    if ctx.has("release_tool") and not c.objects():
        return [step("release_tool")]
    if ctx.has("return_to_stack"):
        return [step("return_to_stack")]
    raise unsupported(c, ctx.cell, "put things back")


def _release(c: Clause, ctx: Context) -> Steps:
    if ctx.has("release_tool") and not c.objects():
        return [step("release_tool")]
    if ctx.has("place_on_zone"):
        return on_zones(c, ctx, c.groups[0] if c.groups else None, [step("place_on_zone")])
    if ctx.has("place"):
        return _put_objects(c, ctx)
    raise unsupported(c, ctx.cell, "let go")


def _again(c: Clause, ctx: Context) -> Steps:
    base = ctx.previous or list(ctx.last_sequence)
    if not base:
        raise Unparsed("semantic_failure", c.tokens[0], "There is nothing to repeat yet",
                       "Say the whole command", "none")  # fmt: skip
    return list(base)


def _more(c: Clause, ctx: Context) -> Steps:
    base = ctx.previous or list(ctx.last_sequence)
    if not base:
        raise Unparsed("semantic_failure", c.tokens[0], "More of what?", items_hint(ctx.cell),
                       "none")  # fmt: skip
    return [base[-1]] * (c.more or 1)


HANDLERS: dict[str, Callable[[Clause, Context], Steps]] = {
    "put": _put, "pick": _pick, "go": _go, "move": _move, "nudge": _nudge, "switch": _switch,
    "swap": swap, "speed": _speed, "wait": _wait, "clear": _clear,
    "undo": _fixed("return_to_stack"),
    "restart": _restart, "mistake": _mistake, "finish": _finish,
    "return": _return, "release": _release, "attach": _attach, "routine": _routine, "run": _routine,
}  # fmt: skip


def _names(objects: tuple[ObjectRef, ...]) -> str:
    return join([o.name for o in objects])
