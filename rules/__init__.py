"""Rules: how a frame recognises an utterance.

A rule's `match` is synchronous and pure: it returns `Handled` (with the action to run and why it
matched), `NO_MATCH`, or `CHECK_PARENT` (hand the utterance to the frame below). Only the LLM
classifier is async. Every match explains itself for the logs.
"""

from voiced.rules.catchall import CatchAll
from voiced.rules.exact import ExactSet
from voiced.rules.guard import When
from voiced.rules.llm import Classifier, LlmClassifier
from voiced.rules.normalize import normalize, words
from voiced.rules.pattern import Pattern, Prefix
from voiced.rules.rule import (
    CHECK_PARENT,
    NO_MATCH,
    Action,
    CheckParent,
    Handled,
    Match,
    NoMatch,
    Rule,
    RuleResult,
    Utterance,
    check_parent,
    heard_as,
    heard_in,
    words_after,
    words_around,
    words_before,
)

__all__ = [
    "CHECK_PARENT",
    "NO_MATCH",
    "Action",
    "CatchAll",
    "CheckParent",
    "Classifier",
    "ExactSet",
    "Handled",
    "LlmClassifier",
    "Match",
    "NoMatch",
    "Pattern",
    "Prefix",
    "Rule",
    "RuleResult",
    "Utterance",
    "When",
    "check_parent",
    "heard_as",
    "heard_in",
    "normalize",
    "words",
    "words_after",
    "words_around",
    "words_before",
]
