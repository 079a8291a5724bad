"""A stack described rather than listed, put back into the order it is built in.

Operators describe a stack in the order they think of it: "with bread at the bottom, then
cheese, then tomato on top", "tomato on top, cheese in the middle, bread at the bottom", "from
the top down: tomato, cheese, bread", and say where a whole list goes once, at its end: "ham,
then cheese, then lettuce, all over on the right". Both passes work on the lexer's tokens before
they are split into clauses: the first puts the objects in bottom-to-top order and drops the
level words; the second makes a list that ends in a collective destination ("all", "both of
them", "the lot", "put them") one clause, so the destination applies to every object in it.
"""

from __future__ import annotations

from collections.abc import Sequence

from voiced.interpreter.lexer import Token
from voiced.interpreter.ordering import LEVEL_RANK

_WEAK = {"conn": "weak"}
_LIST_VERBS = frozenset({"put"})
"""The only verb a described stack or a list with one destination may have."""
_IN_A_LIST = frozenset({"item", "number", "noun", "conn", "prep", "zone", "site", "quant",
                        "pron", "again", "level", "order", "ordinal"})  # fmt: skip
"""Kinds of words a plain list of objects (with one destination) is made of."""


def in_stack_order(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    """Objects placed by level words, bottom first; the level words dropped. A command with
    no level word (or only "middle", which is a place too) is returned as it is."""
    if not any(_level(t) not in (None, "middle") or t.has("order") for t in tokens):
        return tokens
    if not _is_list(tokens):
        return tokens
    kept: list[Token] = []
    ranks: dict[int, int] = {}
    """kept index of an object -> its level's rank."""
    pending: int | None = None
    downward = False
    for token in tokens:
        level = _level(token)
        if token.has("order"):
            downward = token.text_value("order") == "down"
        elif level is not None:
            if kept and kept[-1].has("prep") and not kept[-1].has("item"):
                kept.pop()  # "at" the bottom
            before = _last_object(kept)
            if before is not None and before not in ranks:
                ranks[before] = LEVEL_RANK[level]
            else:
                pending = LEVEL_RANK[level]
        else:
            if token.has("item") and pending is not None:
                ranks[len(kept)], pending = pending, None
            kept.append(token)
    slots = [i for i, t in enumerate(kept) if t.has("item")]
    order = _bottom_up(slots, ranks, downward)
    placed = dict(zip(slots, [kept[i] for i in order], strict=True))
    return as_one_list(tuple(placed.get(i, t) for i, t in enumerate(kept)), force=True)


def as_one_list(tokens: tuple[Token, ...], *, force: bool = False) -> tuple[Token, ...]:
    """A list of objects whose destination is said once, at its end, for all of them ("all",
    "both", "the lot", "put them"; `force`: a described stack): one clause ("then" becomes
    "and"), the collective words dropped."""
    at = _collective(tokens)
    if (at is None and not force) or not _is_list(tokens):
        return tokens
    out: list[Token] = []
    for i, token in enumerate(tokens):
        if at is not None and i >= at and _collective_word(token, out):
            continue
        if token.has("again") and out:
            continue  # "then bread again": again is the list's word, not a repeat
        if token.has("conn") and token.readings["conn"] == "strong":
            token = Token(token.text, token.start, _WEAK)
        out.append(token)
    return tuple(out)


def _collective(tokens: Sequence[Token]) -> int | None:
    """Where "all / both / them" starts, when objects come before it and only a destination
    after it."""
    for i, token in enumerate(tokens):
        if not (token.has("quant") or _is_them(tokens, i)):
            continue
        before, after = tokens[:i], tokens[i + 1 :]
        objects = sum(1 for t in before if t.has("item"))
        places = any(t.has("zone") or t.has("site") for t in after)
        if objects >= 2 and places and not any(t.has("item") for t in after):
            return i
    return None


def _is_them(tokens: Sequence[Token], i: int) -> bool:
    verb = tokens[i].verb()
    return verb is not None and verb.key in _LIST_VERBS and i + 1 < len(tokens) and (
        tokens[i + 1].has("pron"))  # fmt: skip


def _collective_word(token: Token, out: list[Token]) -> bool:
    """Words of "all three of them", "put them", "both of them": dropped after the list."""
    if token.has("zone") or token.has("site"):
        return False
    if token.has("quant") or token.has("pron") or token.has("number"):
        return True
    verb = token.verb()
    if verb is not None and verb.key in _LIST_VERBS:
        return True
    return token.text == "of" and bool(out) and not out[-1].has("item")


def _is_list(tokens: Sequence[Token]) -> bool:
    """Objects, their counts and one destination, and at most the verb "put": nothing else
    happens in this command."""
    for token in tokens:
        verb = token.verb()
        if verb is not None:
            if verb.key not in _LIST_VERBS and not token.has("item"):
                return False
        elif token.unknown or not any(token.has(kind) for kind in _IN_A_LIST):
            return False
    return True


def _level(token: Token) -> str | None:
    return token.text_value("level") if token.has("level") else None


def _last_object(kept: Sequence[Token]) -> int | None:
    """The object just said (before any preposition), if the last words were one."""
    for i in range(len(kept) - 1, -1, -1):
        if kept[i].has("item"):
            return i
        if not kept[i].has("prep"):
            return None
    return None


def _bottom_up(slots: list[int], ranks: dict[int, int], downward: bool) -> list[int]:
    """The objects' slots in building order."""
    if downward:
        return slots[::-1]
    if len(slots) >= 2 and all(s in ranks for s in slots):
        return sorted(slots, key=lambda s: ranks[s])  # stable: "two in the middle" keep order
    placed = [s for s in slots if s in ranks]
    if not placed:
        return slots
    first, last = ranks[placed[0]], ranks[placed[-1]]
    if len(placed) == 1:
        alone = placed[0]
        said_from_top = (alone == slots[0] and first == 2) or (alone == slots[-1] and first == 0)
        return slots[::-1] if said_from_top and len(slots) > 1 else slots
    return slots[::-1] if first > last else slots
