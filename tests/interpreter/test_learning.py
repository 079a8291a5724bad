"""Learning commands (seed 000): the directive, the memory writer, and the learned phrase on the
next utterance and after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from voiced.robot.compiler import compile_sequence
from voiced.robot.sequence import SequenceStep, steps

from tests.interpreter.helpers import cell, grammar
from tests.interpreter.phrases import layers
from tests.killing import run_and_kill
from voiced.errors import CellError
from voiced.interpreter.grammar import Grammar, interpret, is_learning, remember
from voiced.interpreter.learning import (
    LEARNING_FEEDBACK,
    Learning,
    LearningRefused,
    MemoryWriter,
    composite_name,
)
from voiced.interpreter.phrasebank import PhraseBank
from voiced.paths import DataDir

LUNCH = tuple(SequenceStep(n, dict(p)) for n, p in layers("bread", "cheese", "bread"))


def lunch(confidence: float = 0.95, creative: bool = False) -> Learning:
    return Learning("lunch", "lunch", LUNCH, confidence, creative)


DIRECTIVES = [
    # (said, name, phrase, sequence)
    ("when I say lunch make bread cheese bread", "lunch", "lunch", LUNCH),
    ("When I say lunch, I mean bread, cheese and bread.", "lunch", "lunch", LUNCH),
    ("lunch means bread cheese bread", "lunch", "lunch", LUNCH),
    ("when I say my usual add meat and cheese", "my_usual", "my usual",
     tuple(SequenceStep(n, dict(p)) for n, p in layers("meat", "cheese"))),
    ("remember bread and cheese as a snack", "snack", "snack", LUNCH[:2]),
]  # fmt: skip


@pytest.mark.parametrize(("said", "name", "phrase", "sequence"), DIRECTIVES,
                         ids=[d[0] for d in DIRECTIVES])  # fmt: skip
def test_a_directive_becomes_a_learning(
    said: str, name: str, phrase: str, sequence: tuple[SequenceStep, ...]
) -> None:
    parsed = grammar("sandwich").parse(said)
    assert parsed.learning == Learning(name, phrase, sequence, 0.95)
    result = interpret(grammar("sandwich"), said)
    assert result.composite_name == name and result.sequence == sequence
    assert result.user_feedback == LEARNING_FEEDBACK
    assert is_learning(result)
    assert Learning.from_interpretation(result) == Learning(name, phrase, sequence, 0.95)


def test_call_that_names_the_last_sequence() -> None:
    last = steps(("set_active_zone", {"zone": "assembly_left"}), ("add_layer", {"item": "meat"}))
    for said in ("call that a BLT", "remember this as a BLT", "let's call it BLT"):
        result = interpret(grammar("sandwich"), said, last_sequence=last)
        assert (result.composite_name, result.sequence) == ("blt", last), said
        assert result.confidence == 0.9


def test_ordinary_commands_are_not_learning() -> None:
    assert not is_learning(interpret(grammar("sandwich"), "add bread"))


def test_names_are_identifiers() -> None:
    assert composite_name("my usual") == "my_usual"
    assert composite_name("B.L.T.") == "b_l_t"
    assert composite_name("2 breads") == "learned_2_breads"


def test_save_then_the_phrase_works_on_the_next_utterance(tmp_path: Path) -> None:
    writer = MemoryWriter(DataDir(tmp_path))
    g = Grammar(cell("sandwich"), PhraseBank.packaged(cell("sandwich")))
    learning = Learning.from_interpretation(
        interpret(g, "when I say lunch make bread cheese bread")
    )
    g = remember(g, writer, learning)
    result = interpret(g, "lunch")
    assert result.source == "phrase_bank"
    assert [s.instruction for s in result.sequence] == ["lunch"]
    compiled = compile_sequence(g.cell, g.cell.initial_scene, result.sequence)
    assert compiled.ok and len(compiled.program.steps) == 1  # type: ignore[union-attr]
    assert compiled.program.expected.stacks["assembly_fixture"] == ("bread", "cheese", "bread")  # type: ignore[union-attr]
    on_left = interpret(g, "make lunch on the left then go home")
    assert [s.instruction for s in on_left.sequence] == ["set_active_zone", "lunch", "go_home"]


def test_saved_composites_and_aliases_survive_a_restart(tmp_path: Path) -> None:
    MemoryWriter(DataDir(tmp_path)).save(lunch(), cell("sandwich"))
    writer = MemoryWriter(DataDir(tmp_path))
    restarted = writer.load(cell("sandwich"))
    assert writer.last_error is None
    assert restarted.composites["lunch"].tier == 2
    g = Grammar(restarted, PhraseBank.load(restarted, DataDir(tmp_path)))
    for said in ("lunch", "lunch please", "make lunch"):
        result = interpret(g, said)
        assert [s.instruction for s in result.sequence] == ["lunch"], said
    other = MemoryWriter(DataDir(tmp_path)).load(cell("weld"))
    assert "lunch" not in other.composites


def test_saving_is_refused_below_the_threshold_and_for_creative_results(tmp_path: Path) -> None:
    writer = MemoryWriter(DataDir(tmp_path))
    with pytest.raises(LearningRefused, match=r"below the learning threshold 0\.80"):
        writer.save(lunch(confidence=0.79), cell("sandwich"))
    with pytest.raises(LearningRefused, match="creative"):
        writer.save(lunch(creative=True), cell("sandwich"))
    assert list(tmp_path.iterdir()) == []
    writer.save(lunch(confidence=0.80), cell("sandwich"))  # the threshold itself is enough


def test_a_built_in_name_cannot_be_learned(tmp_path: Path) -> None:
    with pytest.raises(CellError, match="already exists"):
        MemoryWriter(DataDir(tmp_path)).save(Learning("go_home", "go home", LUNCH, 0.95),
                                              cell("sandwich"))  # fmt: skip


def test_relearning_a_name_replaces_it(tmp_path: Path) -> None:
    writer = MemoryWriter(DataDir(tmp_path))
    first = writer.save(lunch(), cell("sandwich"))
    second = writer.save(Learning("lunch", "lunch", LUNCH[:1], 0.95), first)
    assert len(second.composites["lunch"].steps) == 1
    assert len(writer.load(cell("sandwich")).composites["lunch"].steps) == 1


def test_a_malformed_learned_file_is_reported_not_fatal(tmp_path: Path) -> None:
    data = {"learned_composites": {"sandwich": {
        "lunch": {"description": "ok", "sequence": [{"instruction": "add_layer",
                                                     "params": {"item": "bread"}}]},
        "brunch": {"description": "bad", "sequence": [{"instruction": "add_layer",
                                                       "params": {"item": "avocado"}}]},
        "snack": "not an object"}}}  # fmt: skip
    path = tmp_path / "learned_composites.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    writer = MemoryWriter(DataDir(tmp_path))
    loaded = writer.load(cell("sandwich"))
    assert "lunch" in loaded.composites
    assert "brunch" not in loaded.composites and "snack" not in loaded.composites
    assert writer.last_error is not None
    problems = {p.path: p for p in writer.last_error.problems}
    assert all(p.source == str(path) for p in problems.values())
    assert "learned_composites.sandwich.brunch.sequence[0].params.item" in problems
    assert (
        "avocado" in problems["learned_composites.sandwich.brunch.sequence[0].params.item"].message
    )
    assert "learned_composites.sandwich.snack" in problems


def test_unreadable_json_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "learned_composites.json"
    path.write_text("{torn", encoding="utf-8")
    writer = MemoryWriter(DataDir(tmp_path))
    assert writer.load(cell("sandwich")) is cell("sandwich")
    assert writer.last_error is not None and str(path) in str(writer.last_error)
    with pytest.raises(CellError, match="cannot update"):
        writer.save(lunch(), cell("sandwich"))
    assert path.read_text(encoding="utf-8") == "{torn"
    assert not (tmp_path / "phrase_bank.json").exists()


_WRITER = """
import sys
from pathlib import Path
import structlog
structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
from voiced.robot.cellfile import load_cell
from voiced.interpreter.learning import Learning, MemoryWriter
from voiced.robot.sequence import SequenceStep
from voiced.paths import DataDir

cell = load_cell("sandwich")
writer = MemoryWriter(DataDir(Path(sys.argv[1])))
items = ["bread", "meat", "cheese", "lettuce", "tomato"]
i = 0
while True:
    sequence = tuple(SequenceStep("add_layer", {"item": items[j % 5]}) for j in range(i % 7 + 1))
    writer.save(Learning(f"lunch_{i % 50}", f"lunch {i % 50}", sequence, 0.95), cell)
    if i == 0:
        print("ready", flush=True)
    i += 1
"""


@pytest.mark.parametrize("after", [0.05, 0.2, 0.5])
def test_kill_9_mid_write_leaves_whole_files(tmp_path: Path, after: float) -> None:
    run_and_kill(_WRITER, [str(tmp_path)], after)
    composites = json.loads((tmp_path / "learned_composites.json").read_text(encoding="utf-8"))
    aliases = json.loads((tmp_path / "phrase_bank.json").read_text(encoding="utf-8"))
    assert composites["learned_composites"]["sandwich"]
    assert aliases["learned_aliases"]["sandwich"]
    writer = MemoryWriter(DataDir(tmp_path))
    loaded = writer.load(cell("sandwich"))
    assert writer.last_error is None
    assert any(c.tier == 2 for c in loaded.composites.values())
    bank = PhraseBank.load(loaded, DataDir(tmp_path))
    assert bank.problems == []
