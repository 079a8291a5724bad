"""Interpretation: words to a validated sequence of composites (phrase bank, grammar, LLM)."""

from voiced.interpreter.result import Interpretation

__all__ = ["Interpretation"]
