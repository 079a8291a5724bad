"""The semantic map: verb phrases -> verb keys -> composites, per cell.

A verb key means one thing to the operator ("put" = put something somewhere) and lowers to
whatever the live cell offers for it: `add_layer` in the sandwich cell, `move_object`/`place` in
the blocks cell, `release_tool` for a tool. Which composites exist decides, not the cell's name,
so a new cell that declares `add_layer` gets the sandwich grammar for free.

Coverage (verb key: sandwich / weld / blocks; "-" = a semantic failure naming what is possible):

- put: add_layer per item (set_active_zone first; every/both stacks broadcast), place_on_zone
  for "it" / - / move_object, place
- pick: pick_up ("take X off" ~ return_to_stack) / attach_tool (another tool released first)
  / pick (with a target: move_object)
- go: go_home, move_relative (a direction), set_active_zone (a zone) / move_to_position
  ("all" = every work position), go_home / go_home
- move: move_relative, set_active_zone / move_to_position / move_object, place
- nudge: move_relative / - / -
- switch: set_active_zone, set_speed / attach_tool (tool change), set_speed / set_speed
- speed: set_speed (profile, mm/s, slower/faster) in every cell
- wait: wait / - / -
- clear: [set_active_zone +] clear_assembly / - / -
- undo: return_to_stack / - / -;  restart: clear_assembly, go_home / - / -
- mistake: return_to_stack if holding else clear_assembly / - / -
- finish: go_home / release_tool_and_home / go_home
- return: return_to_stack, go_home / release_tool, move_to_position / go_home
- release: place_on_zone / release_tool / place
- routine, run: - / run_routine_at per position, run_routine "here" / -
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from voiced.interpreter.clauses import Clause
from voiced.interpreter.lexer import Token
from voiced.interpreter.vocabulary import Value, VerbSense, listed_names, plural, spoken
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.negation import NEGATIONS, NEGATIONS_SPELT

VERB_PHRASES: Mapping[str, tuple[str, ...]] = {
    "put": ("add", "put", "place", "stack", "layer", "lay", "pop", "put on", "give me",
            "i want", "i would like", "id like", "make", "make me", "top it with", "top with",
            "set", "drop on", "load", "build", "build me", "stack up", "pile up", "assemble"),
    "pick": ("pick up", "pick", "grab", "take", "get", "fetch", "lift", "grasp", "hold",
             "take hold of", "pick out", "collect"),
    "go": ("go", "go to", "move to", "visit", "head to", "head over to", "travel to", "drive to",
           "go over to", "come to", "proceed to", "get to", "go back to", "navigate to", "tour",
           "head", "come"),
    "move": ("move", "shift", "bring", "carry", "transfer", "relocate", "slide"),
    "nudge": ("nudge", "jog", "bump", "inch", "scoot", "step", "raise", "lower"),
    "switch": ("switch to", "switch", "change to", "select", "use", "work on", "build on",
               "focus on", "activate", "swap to", "change over to"),
    "speed": ("slow down", "speed up", "set speed", "set the speed", "change speed",
              "change the speed", "go slower", "go faster", "go slow", "go fast"),
    "wait": ("wait", "pause", "hold on", "hang on", "sleep", "wait for", "stay"),
    "clear": ("clear", "clear off", "empty", "clean up", "tidy up", "clean", "clear away",
              "unstack", "dismantle", "take apart", "clear the assembly", "clear assembly"),
    "undo": ("put it back", "put that back", "undo", "undo that", "take it back", "return it",
             "return that", "undo it"),
    "restart": ("start over", "start again", "never mind", "nevermind", "cancel", "cancel that",
                "scrap that", "forget it", "forget that", "start from scratch"),
    "mistake": ("i made a mistake", "made a mistake", "my mistake", "oops", "whoops", "my bad",
                "that was a mistake", "that was wrong", "thats wrong", "wrong 1", "mistake"),
    "finish": ("finish up", "wrap up", "were done", "we are done", "all done", "finish",
               "done for the day", "call it a day", "pack up", "wrap it up"),
    "return": ("return", "put back", "put away", "give back", "stow", "bring back",
               "send back", "return to"),
    "release": ("release", "let go", "let go of", "drop", "detach", "unmount", "remove",
                "take off", "unload", "disengage", "put down", "set down", "lay down",
                "place down", "drop off"),
    "attach": ("attach", "mount", "equip", "fit"),
    "swap": ("swap", "swap over", "swap round", "swap around", "exchange", "trade",
             "interchange", "swap places", "switch places", "trade places", "change places",
             "swap the places of", "swap the positions of", "switch round", "switch around"),
    "run": ("run", "do", "execute", "perform", "carry out", "start", "do a", "do an"),
}  # fmt: skip
"""Verb key -> the phrases that say it. A phrase belongs to one key; a word with other uses
("stack" is also a zone noun) gets both readings and the parser picks."""

IMPLIED: Mapping[str, tuple[tuple[str, Value], ...]] = {
    "raise": (("direction", "up"),),
    "lower": (("direction", "down"),),
    "slow down": (("speed", "slow"),),
    "go slower": (("speed", "slower"),),
    "go slow": (("speed", "slow"),),
    "speed up": (("speed", "fast"),),
    "go faster": (("speed", "faster"),),
    "go fast": (("speed", "fast"),),
}
"""What a verb phrase says on its own ("raise" = nudge up)."""

ROUTINE_VERBS: Mapping[str, tuple[str, ...]] = {
    "tack_weld": ("weld", "tack weld", "tack", "spot weld", "welding", "do a weld", "weld at",
                  "tack it", "put a weld", "put a tack", "put a tack weld", "make a weld",
                  "make a tack weld", "do a tack weld", "a tack weld"),
    "camera_inspection": ("inspect", "scan", "check", "examine", "photograph",
                          "take a picture", "take a photo", "take a picture of", "look at",
                          "inspection", "do an inspection", "inspect at", "image", "a scan"),
}  # fmt: skip
"""Routine -> verbs that run it (weld cell; used only when the cell has the routine). Every
routine's own name is a verb too ("camera inspection at position 1")."""

COMPOSITE_VERBS: Mapping[str, str] = {
    "add_layer": "put", "place_on_zone": "release", "pick_up": "pick", "pick": "pick",
    "place": "release", "move_object": "move", "go_home": "go", "move_to_position": "go",
    "move_relative": "nudge", "set_active_zone": "switch", "set_speed": "speed", "wait": "wait",
    "clear_assembly": "clear", "return_to_stack": "undo", "attach_tool": "attach",
    "release_tool": "release", "release_tool_and_home": "finish", "run_routine": "run",
    "run_routine_at": "run",
}  # fmt: skip
"""Composite -> the verb key that produces it (for phrases the LLM resolver maps to a composite,
seed 003: "a resolution confirmed by use is learned into the grammar's semantic map")."""


def verb_phrases(cell: Cell) -> dict[str, VerbSense]:
    """Every verb phrase the cell understands, with its sense."""
    table: dict[str, VerbSense] = {}
    for key, phrases in VERB_PHRASES.items():
        for phrase in phrases:
            table.setdefault(phrase, VerbSense(key, IMPLIED.get(phrase, ())))
    for routine in cell.routines:
        implied = (("routine", routine),)
        for phrase in (*ROUTINE_VERBS.get(routine, ()), spoken(routine)):
            table[phrase] = VerbSense("routine", implied)
    return table


def verb_for_composite(cell: Cell, instruction: str) -> VerbSense | None:
    """The sense a phrase resolved to `instruction` should get: a composite without required
    parameters is simply called; others get the verb key that fills their parameters. None
    when the grammar has no verb for it."""
    composite = cell.composite(instruction)
    if composite is None:
        return None
    if all(p.default is not None for p in composite.params):
        return VerbSense("call", (("learned", composite.name),))  # nothing to fill: call it
    key = COMPOSITE_VERBS.get(composite.name)
    return VerbSense(key) if key is not None else None


# -- failures: what is wrong, in the cell's words ----------------------------------------------


class Unparsed(Exception):
    """Why a clause has no meaning here; grammar.py makes it a `Failure`."""

    def __init__(
        self, error_type: str, token: Token | None, message: str, suggestion: str,
        fallback: str = "interpret", text: str | None = None,
    ) -> None:  # fmt: skip
        self.error_type, self.token, self.message = error_type, token, message
        self.suggestion, self.fallback = suggestion, fallback
        self.text = text if text is not None else token.text if token is not None else None
        """The words at fault (a run of unknown words, or the token's own)."""
        super().__init__(message)


Steps = list[SequenceStep]


@dataclass
class Context:
    """What lowering may consult besides the clause."""

    cell: Cell
    scene: Scene | None = None
    """The scene the command will run on, when known ("I made a mistake" depends on it)."""
    last_sequence: tuple[SequenceStep, ...] = ()
    """The last executed sequence ("again", "two more")."""
    previous: Steps = field(default_factory=list)
    """The steps of the previous clause of this command."""
    previous_positions: tuple[str, ...] = ()
    """The positions the previous clause named ("inspect position 2 then weld it")."""
    guesses: list[str] = field(default_factory=list)
    """Best-effort readings taken (each lowers the confidence)."""

    def has(self, composite: str) -> bool:
        return self.cell.composite(composite) is not None


def step(instruction: str, **params: Value) -> SequenceStep:
    return SequenceStep(instruction, params)


def unsupported(c: Clause, cell: Cell, what: str) -> Unparsed:
    return Unparsed("semantic_failure", c.verb_token or c.tokens[0],
                    f"This cell cannot {what}", example_hint(cell), "none")  # fmt: skip


def unknown_failure(c: Clause, cell: Cell, said: str) -> Unparsed:
    """A word the cell does not know (`said`: the normalised command). At the start of a clause
    it is an unknown verb (seed 003's lexical fallback: the LLM resolver may map it); where an
    object, tool or position belongs it is seed 000's unknown item ("I don't have avocado —
    available ..."); anywhere else an unknown word."""
    first = c.unknown[0]
    start = c.tokens.index(first)
    run = []
    for token in c.tokens[start:]:
        if not token.unknown:
            break
        run.append(token)
    # Seed 003: consecutive unknown words are one phrase ("build a tower", fillers included).
    phrase = said[first.start : run[-1].start + len(run[-1].text)]
    if NEGATIONS & {token.text for token in run}:
        return _negation(c, cell, start, phrase)
    if c.verb_token is None and start == 0:
        return Unparsed("lexical_failure", first, f"Unknown command '{phrase}'",
                        example_hint(cell), "resolve_phrase", phrase)  # fmt: skip
    slot = _slot(c, cell)
    before = c.tokens[start - 1] if start > 0 else None
    if slot is not None and before is not None and before.text in PLACE_PREPS and c.objects():
        slot = places_of(cell) or slot  # "move the red cube to B4": a place, not a cube
    listed = _listed_after(first.text, cell) if slot is not None else None
    if listed is not None:
        # "weld seam 4" where the cell's own list says seam 1 to 3: name the seams, not poses.
        after = c.tokens[start + 1] if start + 1 < len(c.tokens) else None
        end = after if after is not None and after.has("number") else run[-1]
        begin = before if before is not None and before.has("ordinal") else first
        named = said[begin.start : end.start + len(end.text)]
        return Unparsed("semantic_failure", first,
                        f"I don't have {'the ' if begin is before else ''}{named}", listed,
                        "none", phrase)  # fmt: skip
    if slot is not None and not slot[1]:
        return Unparsed("semantic_failure", first, f"I don't have {phrase}",
                        example_hint(cell), "none", phrase)  # fmt: skip
    if slot is not None:
        fallback = "none" if len(run) == 1 else "interpret"
        return Unparsed("semantic_failure", first, f"I don't have {_named(c, run, phrase)}",
                        f"available {slot[0]} are: {', '.join(slot[1])}", fallback,
                        phrase)  # fmt: skip
    return Unparsed("lexical_failure", first, f"I don't know the word '{phrase}'",
                    example_hint(cell), "interpret", phrase)  # fmt: skip


def _negation(c: Clause, cell: Cell, start: int, phrase: str) -> Unparsed:
    """ "don't add cheese" was "I don't have dont": a negation is not a name to look up.
    Still a semantic failure: the recogniser must not swap the words for a hypothesis without
    it ("add bread, no cheese" is never "add bread and cheese"), nor a model map "I really
    don't want" to a command. Anywhere in the unknown words: refusing talk that held a "no" is
    safe, acting on a command taken back is not. Before the verb it negates the whole command:
    nothing to do, and nothing for a model to make of it. After it ("add bread but no cheese")
    a model may read it."""
    spelt = " ".join(NEGATIONS_SPELT.get(word, word) for word in phrase.split())
    verb = c.tokens.index(c.verb_token) if c.verb_token in c.tokens else len(c.tokens)
    return Unparsed("semantic_failure", c.tokens[start],
                    f'I can\'t act on "{spelt}": say only what to do', example_hint(cell),
                    "none" if start < verb else "interpret", phrase)  # fmt: skip


def _listed_after(word: str, cell: Cell) -> str | None:
    """The cell's own names that start with `word` ("the seams are: seam 1 (Pos_1), ..."), or
    None when its lists have none."""
    names: dict[str, str] = {}
    for phrase, _kind, name in listed_names(cell):
        if phrase.split()[0] == word and name not in names:
            names[name] = phrase
    if not names:
        return None
    shown = ", ".join(f"{phrase} ({name})" for name, phrase in names.items())
    return f"the {plural(word)} are: {shown}"


def _named(c: Clause, run: Sequence[Token], phrase: str) -> str:
    """The unknown name as said: a letter and the number after it are one ("B4", read as
    "b" and "4")."""
    at = c.tokens.index(run[-1]) + 1
    after = c.tokens[at] if at < len(c.tokens) else None
    if len(run) == 1 and len(phrase) == 1 and after is not None and after.has("number"):
        return f"{phrase.upper()}{after.text}"
    return phrase


PLACE_PREPS = frozenset(("to", "on", "onto", "in", "into", "at"))
"""Words before a place ("with" is not one: "add bread with avocado")."""


def places_of(cell: Cell) -> tuple[str, tuple[str, ...]] | None:
    """Where things may be put, in the cell's names: its sites, else its stacks."""
    sites = tuple(s.name for s in cell.sites.values() if s.kind not in ("supply", "zone"))
    if sites:
        return "places", sites
    said: dict[str, str] = {}
    for alias, zone in cell.zone_aliases.items():
        if " " not in alias:
            said.setdefault(zone, alias)
    return ("stacks", tuple(said.values())) if said else None


def _slot(c: Clause, cell: Cell) -> tuple[str, tuple[str, ...]] | None:
    """What kind of name belongs where the unknown word is (None: no name slot there)."""
    key = c.key
    if key in ("pick", "attach", "release", "return", "switch") and cell.tools:
        return "tools", tuple(cell.tools)
    if key in ("put", "pick", "move", "return", "release") or c.objects():
        return things(cell)
    if key in ("go", "routine", "run") and cell.work_positions():
        return "positions", tuple(cell.poses)
    return None


# -- describing and hinting in the cell's words ---------------------------------------------

_DESCRIBE = {
    "add_layer": "add {item}", "pick_up": "pick up {item}", "place_on_zone": "put it down",
    "return_to_stack": "put back what is held", "clear_assembly": "clear the assembly",
    "set_active_zone": "switch to {zone}", "go_home": "go home",
    "move_relative": "move {direction}", "set_speed": "set the speed to {speed}",
    "wait": "wait", "move_to_position": "go to {position}", "attach_tool": "attach the {tool}",
    "release_tool": "put the tool back", "release_tool_and_home": "put the tool back and go home",
    "run_routine": "run {routine} here", "run_routine_at": "run {routine} at {position}",
    "pick": "pick up the {object}", "place": "put it on {site}",
    "move_object": "move the {object} to {to}",
}  # fmt: skip


def describe(steps: Sequence[SequenceStep]) -> str:
    """One sentence for a sequence: "Switch to assembly_left, then add bread and cheese."."""
    phrases: list[str] = []
    layers: list[str] = []
    for s in steps:
        if s.instruction == "add_layer" and "item" in s.params:
            layers.append(str(s.params["item"]))
            continue
        if layers:
            phrases.append(f"add {join(layers)}")
            layers = []
        phrases.append(_describe_step(s))
    if layers:
        phrases.append(f"add {join(layers)}")
    text = ", then ".join(phrases) if phrases else "do nothing"
    return text[0].upper() + text[1:] + "."


def _describe_step(s: SequenceStep) -> str:
    template = _DESCRIBE.get(s.instruction)
    extra = ""
    if s.instruction == "move_relative" and "distance" in s.params:
        extra = f" {s.params['distance']}" + (" mm" if not isinstance(s.params["distance"], str)
                                               else "")  # fmt: skip
    if s.instruction == "wait" and "seconds" in s.params:
        extra = f" {s.params['seconds']} s"
    try:
        return (template.format(**s.params) if template else _call(s)) + extra
    except KeyError:
        return _call(s)


def _call(s: SequenceStep) -> str:
    return f"{s.instruction}({', '.join(str(v) for v in s.params.values())})"


def join(names: list[str], last: str = "and") -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + f" {last} " + names[-1]


def things(cell: Cell) -> tuple[str, tuple[str, ...]]:
    """What the cell's objects are called, and their names."""
    if cell.items():
        return ("ingredients" if cell.composite("add_layer") else "items"), cell.items()
    return "objects", tuple(cell.objects)


def items_hint(cell: Cell) -> str:
    noun, names = things(cell)
    return f"available {noun} are: {', '.join(names)}"


def sites_hint(cell: Cell) -> str:
    sites = [s.name for s in cell.sites.values() if s.kind not in ("supply", "zone")]
    return f"Say where, e.g. on {sites[0]}; places are: {', '.join(sites)}" if sites else "-"


def positions_hint(cell: Cell, bare: bool = False) -> str:
    names = ", ".join(p for p in cell.poses if cell.poses[p].role != "home")
    if bare:
        return next(iter(cell.work_positions()), "a position")
    return f"available positions are: {names}; or say go home" if names else "Say go home"


def routines_hint(cell: Cell) -> str:
    return f"available routines are: {', '.join(cell.routines)}" if cell.routines else "-"


HINT_EXAMPLES = 3
"""Commands a hint offers to try, at most."""


def example_hint(cell: Cell) -> str:
    return "Try: " + ", ".join(f'"{e}"' for e in examples(cell)[:HINT_EXAMPLES])


def examples(cell: Cell) -> list[str]:
    """A few commands this cell understands: the cell file's own (`[cell] examples`), then
    ones built from its names."""
    out: list[str] = list(cell.examples)
    items = cell.items()
    if cell.composite("add_layer") and items:
        out += [f"add {join(list(items[:2]))}", f"put {items[-1]} on the left"]
    if cell.composite("move_object") and cell.objects:
        out.append(f"move the {next(iter(cell.objects))} to B1")
    if cell.composite("move_to_position") and cell.work_positions():
        out += ["go to position 1", "inspect all positions"]
    if cell.composite("go_home"):
        out.append("go home")
    return out
