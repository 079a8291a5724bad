"""Questions about the cell, its state and its history, answered without moving (seed 001).

`Questions.answer` recognises a question by its words, answers briefly (spoken) with the full
text alongside (events), and remembers the last list it gave so follow-ups ("show me 10 more",
"tell me more") continue it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from voiced.history import History
from voiced.robot.cell import Cell
from voiced.robot.physics import position_name
from voiced.robot.scene import Scene
from voiced.robot.view import state_view
from voiced.rules.normalize import normalize
from voiced.words.counting import count_question, plural, singular
from voiced.words.offered import Kind, asked_for, kind_named, kinds
from voiced.words.plain import run_status
from voiced.words.review import place_said

_NUMBER = re.compile(r"\b(\d+)\b")
BRIEF_ITEMS = 5
"""How many entries a spoken answer names before it says "and N more"."""


@dataclass(frozen=True)
class Answer:
    """A spoken answer and its full text."""

    brief: str
    """Short enough to say."""
    full: str
    """Everything (shown in events, the cell's page, logs)."""
    topic: str
    """What was asked about, for follow-ups."""


@dataclass
class _Cursor:
    """The last list given, so "show me 10 more" can continue it."""

    topic: str
    shown: int


class Questions:
    """Answers questions for one cell."""

    def __init__(self, cell: Cell, history: History | None) -> None:
        self.cell = cell
        self.history = history
        self._cursor: _Cursor | None = None
        self._kinds = kinds(cell)
        nouns = "|".join(re.escape(singular(kind.noun)) for kind in self._kinds)
        self._topics: Sequence[tuple[re.Pattern[str], Callable[[Scene, str], Answer]]] = (
            (re.compile(r"\b(more|rest|next)\b"), self._more),
            (
                re.compile(r"\b(last|latest|recent)\b.*\b(tasks?|commands?|runs?)\b|\bhistory\b"),
                self._tasks,
            ),
            (re.compile(r"\bwhat did you (do|just do)\b|\blast thing\b"), self._last_done),
            (re.compile(r"\bwheres?\b"), self._where),
            (
                re.compile(r"\btool\b.*\b(holding|hold|attached|on)\b|\b(which|what) tool\b"),
                self._tool,
            ),
            (
                re.compile(r"\b(on|in)\b.*\b(stack|zone|fixture|left|right|buffer|b\d)\b"),
                self._stack,
            ),
            (re.compile(r"\bholding\b"), self._holding),
            (re.compile(r"\bpositions?\b|\bstations?\b|\bplaces\b"), self._positions),
            (re.compile(r"\btools?\b"), self._tools),
            (re.compile(r"\broutines?\b"), self._routines),
            (re.compile(r"\b(items?|ingredients?|objects?|blocks?|cubes?)\b"), self._items),
            (re.compile(r"\b(commands?|instructions?|can you do)\b"), self._instructions),
        )
        if self._kinds:
            kind_topic = re.compile(rf"^(?:and )?(?:what|which|list)\b.*\b(?:{nouns})s?\b")
            self._topics = (*self._topics, (kind_topic, self._kind))
        self._state = (self._where, self._tool, self._holding, self._stack)
        """Topics about the arm and the cell as they are: answered from what the controller has
        confirmed, and what is coming once the arm is done."""

    def answer(self, text: str, scene: Scene, confirmed: Scene | None = None) -> Answer | None:
        """The answer, or None when this is no question we can answer. `scene` is the cell once
        everything accepted has run; `confirmed` what the controller has reported done (counts
        are of what is really there; default: `scene`)."""
        said = normalize(text)
        count = count_question(self.cell, text, confirmed or scene, scene)
        if count is not None:
            return Answer(count.sentence(), count.sentence(), "count")
        wanted = asked_for(said)
        have = self._have(wanted) if wanted is not None else None
        if have is not None:
            return have
        for pattern, handler in self._topics:
            if pattern.search(said):
                if confirmed is None or handler not in self._state:
                    return handler(scene, said)
                return _now_and_later(handler(confirmed, said), handler(scene, said))
        return None

    # -- the cell ------------------------------------------------------------------------------

    def _listing(
        self, topic: str, noun: str, names: Sequence[str], details: Sequence[str] = ()
    ) -> Answer:
        """Spoken: the names; shown in full: each with its `details` (a role, a tool)."""
        self._cursor = _Cursor(topic, min(len(names), BRIEF_ITEMS))
        if not names:
            return Answer(f"There are no {noun}.", f"There are no {noun}.", topic)
        full = ", ".join(details or names)
        return Answer(f"The {noun} are {_spoken_list(names)}.", full, topic)

    def _positions(self, scene: Scene, said: str) -> Answer:
        poses = list(self.cell.poses.values())
        details = [f"{p.name} ({p.role})" if p.role != "other" else p.name for p in poses]
        return self._listing("positions", "positions", [p.name for p in poses], details)

    def _tools(self, scene: Scene, said: str) -> Answer:
        return self._listing("tools", "tools", list(self.cell.tools))

    def _routines(self, scene: Scene, said: str) -> Answer:
        routines = list(self.cell.routines.values())
        details = [f"{r.name} (needs the {r.tool})" if r.tool else r.name for r in routines]
        return self._listing("routines", "routines", [r.name for r in routines], details)

    def _items(self, scene: Scene, said: str) -> Answer:
        noun = "ingredients" if self.cell.items() else "objects"
        return self._listing("items", noun, list(self.cell.objects))

    def _instructions(self, scene: Scene, said: str) -> Answer:
        return self._listing("instructions", "instructions", list(self.cell.instructions()))

    def _kind(self, scene: Scene, said: str) -> Answer:
        kind = kind_named(self._kinds, said)
        assert kind is not None  # the topic's pattern names one
        return self._kind_listing(kind)

    def _kind_listing(self, kind: Kind) -> Answer:
        return self._listing(kind.noun, kind.noun, kind.names)

    def _have(self, wanted: str) -> Answer | None:
        """ "Do you have X?": yes, naming its kind; the kind's list, asked by its noun ("milks",
        "cups": the names that end in it); no, with the things of the kind X sounds like ("oat
        milk": the milks) when there is one; None when X mixes the cell's words with others
        ("a large latte": an order, not a thing)."""
        for kind in self._kinds:
            name = kind.named(wanted)
            if name is not None:
                text = f"Yes, {name} is one of the {kind.noun}."
                return Answer(text, text, kind.noun)
        listed = kind_named(self._kinds, wanted)
        if listed is not None and singular(wanted) == singular(listed.noun):
            return self._kind_listing(listed)
        for kind in self._kinds:
            ending = kind.ending_in(wanted)
            if ending and " " not in wanted:
                noun = wanted if wanted.endswith("s") else plural(wanted)
                return self._listing(kind.noun, noun, ending)
        no = f"No, there is no {singular(wanted)} here."
        near = next((kind for kind in self._kinds if kind.ending_in(wanted.split()[-1])), None)
        if near is None:
            known = {w for kind in self._kinds for n in kind.names for w in n.split()}
            if known & {*wanted.split(), *singular(wanted).split()}:
                return None
            return Answer(no, no, "have")
        offer = self._kind_listing(near)
        return Answer(f"{no} {offer.brief}", f"{no} {offer.full}", near.noun)

    # -- the state ---------------------------------------------------------------------------

    def _where(self, scene: Scene, said: str) -> Answer:
        named = _named_object(said, self.cell)
        if named is not None:
            return _object_place(self.cell, scene, named)
        position = position_name(self.cell, scene.pose)
        p = scene.pose
        full = f"x {p.x:.1f}, y {p.y:.1f}, z {p.z:.1f} mm"
        brief = f"I am at {position}." if position else f"I am between positions, at {full}."
        return Answer(brief, f"{brief} ({full})", "where")

    def _tool(self, scene: Scene, said: str) -> Answer:
        text = f"I hold the {scene.tool}." if scene.tool else "I have no tool on."
        return Answer(text, text, "tool")

    def _holding(self, scene: Scene, said: str) -> Answer:
        text = f"I am holding the {scene.holding}." if scene.holding else "I am holding nothing."
        return Answer(text, text, "holding")

    def _stack(self, scene: Scene, said: str) -> Answer:
        view = state_view(self.cell, scene)
        sites = {**view.get("zones", {}), **{k: [v] if v else [] for k, v in
                                             view.get("buffers", {}).items()}}  # fmt: skip
        site = _named_site(said, sites, self.cell)
        if site is None:
            return self._everything_on(sites)
        objects = sites[site]
        where = place_said(self.cell, site)
        if not objects:
            return Answer(f"Nothing is on {where}.", f"{site}: empty", "stack")
        listed = _spoken_list(objects)
        return Answer(f"On {where}, bottom to top: {listed}.", f"{site}: {objects}", "stack")

    def _everything_on(self, sites: dict[str, list[str]]) -> Answer:
        full = "; ".join(f"{site}: {', '.join(objs) or 'empty'}" for site, objs in sites.items())
        busy = [f"{place_said(self.cell, site)} has {len(objs)}" for site, objs in sites.items()
                if objs]  # fmt: skip
        brief = "Everything is empty." if not busy else _spoken_list(busy).capitalize() + "."
        return Answer(brief, full, "stack")

    # -- the history -------------------------------------------------------------------------

    def _tasks(self, scene: Scene, said: str) -> Answer:
        found = _NUMBER.search(said)
        count = int(found.group(1)) if found else BRIEF_ITEMS
        return self._task_page(count, 0)

    def _task_page(self, count: int, offset: int) -> Answer:
        runs = (
            self.history.last(count, offset=offset, cell=self.cell.name, intent="action")
            if self.history
            else []
        )
        if not runs:
            self._cursor = _Cursor("tasks", offset)
            return Answer("There are no more tasks.", "(none)", "tasks")
        said = runs[:BRIEF_ITEMS]
        # "more" goes on from the last one said ("give me the last 10 tasks" named 5 under
        # "The last 10", and "more" then skipped the other 5).
        self._cursor = _Cursor("tasks", offset + len(said))
        lines = [f"{r.run_id[:8]} {r.status}: {r.operator_input}" for r in runs]
        lead = "The last" if offset == 0 else "The next"
        brief = f"{lead} {len(runs)}: " + "; ".join(f"{r.operator_input}, {r.status}" for r in said)
        if len(runs) > len(said):
            brief += f"; and {len(runs) - len(said)} more (say more)"
        return Answer(brief + ".", "\n".join(lines), "tasks")

    def _last_done(self, scene: Scene, said: str) -> Answer:
        runs = self.history.last(1, cell=self.cell.name, intent="action") if self.history else []
        if not runs:
            return Answer("I have not done anything yet.", "(no history)", "tasks")
        run = runs[0]
        steps = ", ".join(step["instruction"] for step in run.plan) or "nothing"
        brief = f'You asked "{run.operator_input}"; {run_status(run.status)}.'
        return Answer(brief, f"{brief} Steps: {steps}.", "tasks")

    def _more(self, scene: Scene, said: str) -> Answer:
        if self._cursor is None:
            return Answer("More of what? Ask me a question first.", "(no earlier list)", "more")
        found = _NUMBER.search(said)
        count = int(found.group(1)) if found else BRIEF_ITEMS
        if self._cursor.topic == "tasks":
            return self._task_page(count, self._cursor.shown)
        return Answer("That was all of them.", "(nothing more)", self._cursor.topic)


def _spoken_list(names: Sequence[str]) -> str:
    shown = list(names[:BRIEF_ITEMS])
    rest = len(names) - len(shown)
    if rest:
        return ", ".join(shown) + f" and {rest} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _named_site(said: str, sites: dict[str, list[str]], cell: Cell) -> str | None:
    for word, zone in cell.zone_aliases.items():
        if re.search(rf"\b{re.escape(normalize(word))}\b", said) and zone in sites:
            return zone
    for site in sites:
        if normalize(site.replace("_", " ")) in said:
            return site
    return None


def _named_object(said: str, cell: Cell) -> str | None:
    """The one-of-a-kind object a question names ("where's the green one": the green cube)."""
    words = set(said.split())
    for name, obj in cell.objects.items():
        colour = name.split()[0]
        if obj.supply is None and (normalize(name) in said or colour in words):
            return name
    return None


def _object_place(cell: Cell, scene: Scene, obj: str) -> Answer:
    """Where an object is, from the tracked scene, in the cell's words for its sites."""
    if scene.holding == obj:
        text = f"I am holding the {obj}."
        return Answer(text, text, "where")
    for site, stack in scene.stacks.items():
        if obj not in stack:
            continue
        kind = cell.sites[site].kind if site in cell.sites else ""
        place = {
            "scatter": f"on the table at {site}",
            "buffer": f"in buffer slot {site}",
            "arrangement": f"at the {site.replace('_', ' ')}",
        }.get(kind, f"on {site}")
        below = stack.index(obj)
        on = f", on the {stack[below - 1]}" if below else ""
        text = f"The {obj} is {place}{on}."
        return Answer(text, f"{obj}: {site}, level {below + 1} of {len(stack)}", "where")
    text = f"The {obj} is not in the cell."
    return Answer(text, text, "where")


_NAMES_FIRST = frozenset({"I", "Pos", "Safe", "Home"})
"""Words that keep their capital inside a sentence."""


def _now_and_later(now: Answer, later: Answer) -> Answer:
    """The answer about the arm as it is; what will have changed once it has finished, too (an
    operator asking "which tool" while the arm fetches one is not told it already holds it)."""
    if now.brief == later.brief:
        return now
    brief = f"Now, {_sentence(now.brief, lower=True)} Once the arm has finished, "
    brief += _sentence(later.brief, lower=True)
    full = f"Now, {_sentence(now.full, lower=True)} Once the arm has finished, "
    full += _sentence(later.full, lower=True)
    return Answer(brief, full, now.topic)


def _sentence(text: str, lower: bool = False) -> str:
    """`text` as a sentence that follows a lead-in ("Now, on the fixture ..."): its first
    letter lower case unless it opens with a name, a full stop at its end."""
    text = text.strip()
    first = text.split()[0] if text else ""
    # A name keeps its capital: "S2", "Pos_1", "B1", "I", "Home" (only a plain word is lowered).
    if lower and first.isalpha() and first[1:].islower() and first not in _NAMES_FIRST:
        text = text[0].lower() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."
