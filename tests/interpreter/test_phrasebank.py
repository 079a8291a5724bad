"""The phrase bank: exact and fuzzy hits, the guards on fuzzy hits, learned aliases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from voiced.robot.compiler import compile_sequence
from voiced.robot.sequence import SequenceStep, steps

from tests.interpreter.helpers import cell, grammar
from tests.interpreter.phrases import layers
from voiced.interpreter.grammar import Grammar, interpret
from voiced.interpreter.phrasebank import PhraseBank, key
from voiced.paths import DataDir

BLT = layers("bread", "meat", "lettuce", "tomato", "bread")


def _seq(result_sequence: tuple[SequenceStep, ...]) -> list[tuple[str, dict[str, object]]]:
    return [(s.instruction, dict(s.params)) for s in result_sequence]


@pytest.mark.parametrize("name", ["sandwich", "weld", "blocks"])
def test_every_packaged_phrase_loads_and_compiles(name: str) -> None:
    bank = PhraseBank.packaged(cell(name))
    assert bank.problems == []
    assert bank.phrases()
    for phrase in bank.phrases():
        hit = bank.exact(phrase)
        assert hit is not None
        compiled = compile_sequence(cell(name), cell(name).initial_scene, hit.sequence)
        assert compiled.ok, (phrase, compiled.errors)


def test_an_exact_phrase_wins_with_fillers_dropped() -> None:
    result = interpret(grammar("sandwich"), "Could you make a BLT, please?", "c-7")
    assert result.source == "phrase_bank"
    assert _seq(result.sequence) == [(n, dict(p)) for n, p in BLT]
    assert result.confidence == 0.98
    assert result.correlation_id == "c-7"


def test_a_near_phrase_is_a_fuzzy_hit_above_the_threshold() -> None:
    result = interpret(grammar("sandwich"), "make a cheese sandwitch")
    assert result.source == "phrase_bank"
    assert _seq(result.sequence) == [(n, dict(p)) for n, p in layers("bread", "cheese", "bread")]
    assert 0.75 <= result.confidence < 0.98
    assert "sounds like 'make cheese sandwich'" in result.interpretation


def test_below_the_threshold_there_is_no_hit() -> None:
    bank = PhraseBank.packaged(cell("sandwich"))
    assert bank.fuzzy("make a sandwich with everything on it") is None
    strict = PhraseBank.packaged(cell("sandwich"), threshold=99.0)
    assert strict.fuzzy("make a cheese sandwitch") is None


def test_a_fuzzy_hit_never_changes_a_number() -> None:
    bank = PhraseBank(cell("weld"), threshold=80.0)
    bank.add_alias("go to position 1 slowly", steps(("move_to_position", {"position": "Pos_1"})))
    assert bank.fuzzy("go to position 1 slowy") is not None
    assert bank.fuzzy("go to position 2 slowly") is None


def test_a_fuzzy_hit_never_changes_a_word_the_cell_knows() -> None:
    bank = PhraseBank(cell("sandwich"), threshold=80.0)
    bank.add_alias("put cheese on the left", layers_steps("cheese"))
    g = Grammar(cell("sandwich"), bank)
    assert bank.fuzzy("put cheese on the right", g.same_content) is None
    assert bank.fuzzy("put cheese on the left pls", g.same_content) is not None


def layers_steps(*items: str) -> tuple[SequenceStep, ...]:
    return tuple(SequenceStep("add_layer", {"item": i}) for i in items)


def test_a_clean_grammar_parse_beats_a_fuzzy_phrase() -> None:
    bank = PhraseBank(cell("sandwich"), threshold=80.0)
    bank.add_alias("add bread and cheese", layers_steps("bread", "cheese"))
    result = interpret(Grammar(cell("sandwich"), bank), "add bread and meat")
    assert result.source == "grammar"
    assert _seq(result.sequence) == [(n, dict(p)) for n, p in layers("bread", "meat")]


def test_a_learned_alias_works_at_once_and_after_reload(tmp_path: Path) -> None:
    sandwich = cell("sandwich")
    bank = PhraseBank.packaged(sandwich)
    g = Grammar(sandwich, bank)
    assert interpret(g, "the usual").sequence == ()
    bank.add_alias("the usual", layers_steps("bread", "meat", "bread"))
    hit = interpret(g, "the usual please")
    assert hit.source == "phrase_bank" and len(hit.sequence) == 3
    data = {
        "learned_aliases": {
            "sandwich": {
                "the usual": {
                    "composite": "not_loaded",
                    "sequence": [s.to_dict() for s in hit.sequence],
                }
            }
        }
    }
    (tmp_path / "phrase_bank.json").write_text(json.dumps(data), encoding="utf-8")
    reloaded = PhraseBank.load(sandwich, DataDir(tmp_path))
    assert reloaded.problems == []
    found = reloaded.exact("the usual")
    assert found is not None and found.learned and found.sequence == hit.sequence


def test_aliases_of_other_cells_are_ignored(tmp_path: Path) -> None:
    data = {"learned_aliases": {"weld": {"lunch": {"sequence": [{"instruction": "go_home"}]}}}}
    (tmp_path / "phrase_bank.json").write_text(json.dumps(data), encoding="utf-8")
    assert PhraseBank.load(cell("sandwich"), DataDir(tmp_path)).exact("lunch") is None
    assert PhraseBank.load(cell("weld"), DataDir(tmp_path)).exact("lunch") is not None


def test_a_malformed_alias_file_is_reported_and_the_packaged_phrases_stay(tmp_path: Path) -> None:
    (tmp_path / "phrase_bank.json").write_text("{not json", encoding="utf-8")
    bank = PhraseBank.load(cell("sandwich"), DataDir(tmp_path))
    assert [p.source for p in bank.problems] == [str(tmp_path / "phrase_bank.json")]
    assert bank.exact("make a blt") is not None


def test_a_malformed_alias_entry_is_skipped_by_name(tmp_path: Path) -> None:
    aliases = {"good": {"sequence": [{"instruction": "go_home"}]},
               "bad": {"sequence": [{"instruction": "teleport"}]}}  # fmt: skip
    data = {"learned_aliases": {"sandwich": aliases}}
    (tmp_path / "phrase_bank.json").write_text(json.dumps(data), encoding="utf-8")
    bank = PhraseBank.load(cell("sandwich"), DataDir(tmp_path))
    assert bank.exact("good") is not None and bank.exact("bad") is None
    assert len(bank.problems) == 1
    assert "learned_aliases.sandwich.bad" in bank.problems[0].source
    assert "teleport" in bank.problems[0].message


def test_keys_drop_fillers_and_normalise_numbers() -> None:
    assert key("Could you please go to position TWO?") == "go to position 2"
