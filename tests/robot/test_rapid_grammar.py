"""Every shipped RAPID file passes an independent grammar (rapidchecker), and that check can fail.

The rewrites that bridge the grammar's gaps (`tests/robot/rapidgrammar.py`) are tested here too:
each keeps the module's meaning (the tokens, with string values resolved, are the same but for
what the rewrite names) and each is still needed (without it the grammar rejects a shipped file;
when a newer rapidchecker reads that RAPID, this test says the rewrite can go).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.robot import rapidgrammar as grammar
from tests.robot.test_rapid import Token, lex

ROOT = Path(__file__).resolve().parents[2]
RAPID = ROOT / "robot" / "rapid"
SHIPPED = sorted([*RAPID.glob("*.mod"), *RAPID.glob("*.sys")])
CONTROL = RAPID / "VoicedControl.mod"
MOTION = RAPID / "VoicedMotion.mod"


@cache
def text(path: Path) -> str:
    return path.read_text(encoding="ascii")


def test_the_shipped_files_are_the_two_modules() -> None:
    # A new module (or a .sys) is picked up by the glob; this pins that the glob finds them.
    assert [path.name for path in SHIPPED] == ["VoicedControl.mod", "VoicedMotion.mod"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_every_shipped_rapid_file_passes_the_grammar(path: Path) -> None:
    assert grammar.problems(text(path)) == []


# -- the check can fail ------------------------------------------------------------------------


def first_line(source: str, pick: Callable[[str], bool]) -> int:
    return next(i for i, line in enumerate(source.split("\n")) if pick(line.strip()))


def broken(source: str, pick: Callable[[str], bool], change: Callable[[str], str]) -> str:
    """The source with `change` applied to the first line that `pick` picks."""
    lines = source.split("\n")
    at = first_line(source, pick)
    lines[at] = change(lines[at])
    return "\n".join(lines)


@dataclass(frozen=True)
class Breakage:
    path: Path
    pick: Callable[[str], bool]
    """Picks the line to break (its text without indentation)."""
    change: Callable[[str], str]
    reported_below: int = 0
    """How many lines below the broken one the grammar notices (a missing end shows later)."""


BREAKAGES = {
    "an ENDIF dropped": Breakage(CONTROL, lambda s: s == "ENDIF", lambda line: "", 1),
    "a statement without its ;": Breakage(
        CONTROL, lambda s: s.startswith("TPWrite "), lambda line: line.rstrip(";"), 1
    ),
    "a lower-case keyword": Breakage(
        CONTROL,
        lambda s: s.startswith("IF ") and s.endswith(" THEN"),
        lambda line: line.replace("IF ", "if ", 1),
    ),
    "ENDPROC misspelt": Breakage(
        CONTROL, lambda s: s == "ENDPROC", lambda line: line.replace("ENDPROC", "ENDPRC"), 2
    ),
    "= for :=": Breakage(
        CONTROL, lambda s: s.startswith("bConnected:="), lambda line: line.replace(":=", "=", 1)
    ),
    "an unclosed call": Breakage(
        CONTROL,
        lambda s: "StrLen(" in s and s.endswith(";"),
        lambda line: line.replace(")", "", 1),
    ),
    "an unterminated string": Breakage(
        CONTROL, lambda s: s.startswith('TPWrite "'), lambda line: line[: line.index('"') + 4]
    ),
    "trailing space": Breakage(
        CONTROL, lambda s: s.startswith("TPWrite "), lambda line: line + " "
    ),
    "an empty index (set aside)": Breakage(
        MOTION,
        lambda s: "qArg{VD_QUEUE,8}" in s,
        lambda line: line.replace("VD_QUEUE,8", "VD_QUEUE,,8"),
    ),
    "a bad second CASE label (set aside)": Breakage(
        CONTROL,
        lambda s: s.startswith('CASE "PONG",'),
        lambda line: line.replace('"ERR",', '"ERR" "X",'),
    ),
    "a keyword as a FUNC's type (set aside)": Breakage(
        CONTROL,
        lambda s: s.startswith("LOCAL FUNC bool "),
        lambda line: line.replace("FUNC bool ", "FUNC ENDIF ", 1),
    ),
}


@pytest.mark.parametrize("name", BREAKAGES)
def test_a_broken_copy_is_rejected_at_its_line(name: str) -> None:
    breakage = BREAKAGES[name]
    source = text(breakage.path)
    at = first_line(source, breakage.pick) + 1
    copy = broken(source, breakage.pick, breakage.change)
    assert copy != source, "the breakage found nothing to break"
    found = grammar.problems(copy)
    assert found, f"{name}: accepted"
    assert found[0].split(":")[0] == str(at + breakage.reported_below), found


# -- the rewrites keep the meaning and are still needed ---------------------------------------


def rewritten(path: Path, step: grammar.Rewrite) -> tuple[list[Token], grammar.Rewritten]:
    """The tokens of the module as the earlier rewrites leave it, and what `step` makes of it."""
    earlier = grammar.REWRITES[: grammar.REWRITES.index(step)]
    before = grammar.rewrite(text(path), earlier).text
    return lex(before), step(before)


def words(source: str) -> list[str]:
    return [t.text for t in lex(source)]


def assert_same(after: grammar.Rewritten, expected: list[Token]) -> None:
    """The rewritten text has exactly the expected tokens, each on its original line."""
    assert lex(after.text) == expected


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_doubled_quotes_keep_every_string_value(path: Path) -> None:
    before, after = rewritten(path, grammar.doubled_quotes)
    assert_same(after, before)  # string tokens carry their values, escapes resolved
    assert not after.set_aside


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_local_routines_lose_only_local(path: Path) -> None:
    before, after = rewritten(path, grammar.local_routines)
    routine = {"PROC", "FUNC", "TRAP"}
    assert_same(
        after,
        [
            t
            for t, then in zip(before, before[1:] + before[:1], strict=True)
            if not (t.text == "LOCAL" and then.text in routine)
        ],
    )
    assert "LOCAL VAR" in after.text  # on data the grammar reads LOCAL: it stays


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_compound_subscripts_set_aside_exactly_their_indexes(path: Path) -> None:
    before, after = rewritten(path, grammar.compound_subscripts)
    expected, taken, i = [], [], 0
    while i < len(before):
        tok = before[i]
        expected.append(tok)
        i += 1
        if tok.text != "{" or tok.kind != "symbol":
            continue
        close = next(j for j in range(i, len(before)) if before[j].text == "}")
        inner = before[i:close]
        if len(inner) > 1:  # a plain index is one name, number or *
            expected.append(Token("word", grammar.PLACEHOLDER, tok.line))
            taken.append((tok.line, [t.text for t in inner]))
            i = close
    assert_same(after, expected)
    assert [(p.line, words(p.text)) for p in after.set_aside] == taken
    assert {p.rule for p in after.set_aside} <= {"indexes"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_funcs_with_error_handlers_read_as_procs(path: Path) -> None:
    before, after = rewritten(path, grammar.func_error_handlers)
    expected, types, i = [], [], 0
    while i < len(before):
        tok = before[i]
        if tok.text == "FUNC":
            end = next(j for j in range(i, len(before)) if before[j].text == "ENDFUNC")
            if "ERROR" in (t.text for t in before[i:end]):
                types.append((tok.line, before[i + 1].text))  # the return type, set aside
                expected += [Token("word", "PROC", tok.line), *before[i + 2 : end]]
                expected.append(Token("word", "ENDPROC", before[end].line))
                i = end + 1
                continue
        expected.append(tok)
        i += 1
    assert_same(after, expected)
    assert [(p.line, p.text) for p in after.set_aside] == types
    # Only those with an ERROR section: the others stay FUNCs for the grammar to read.
    assert words(after.text).count("FUNC") == words(text(path)).count("FUNC") - len(types)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_case_lists_keep_their_first_label(path: Path) -> None:
    before, after = rewritten(path, grammar.case_lists)
    expected, taken, i = [], [], 0
    while i < len(before):
        tok = before[i]
        expected.append(tok)
        i += 1
        if tok.text == "CASE" and before[i + 1].text == ",":
            expected.append(before[i])  # the first label stays
            colon = next(j for j in range(i, len(before)) if before[j].text == ":")
            taken += [(tok.line, t.text) for t in before[i + 1 : colon] if t.text != ","]
            i = colon
    assert_same(after, expected)
    assert [(p.line, lex(p.text)[0].text) for p in after.set_aside] == taken


@pytest.mark.parametrize("step", grammar.REWRITES, ids=lambda step: step.__name__)
def test_every_rewrite_is_still_needed(step: grammar.Rewrite) -> None:
    without = [other for other in grammar.REWRITES if other is not step]
    rejected = [path.name for path in SHIPPED if grammar.problems(text(path), without)]
    assert rejected, f"rapidchecker now reads what {step.__name__} bridged: drop the rewrite"
