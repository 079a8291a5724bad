"""The interpretation result: seed 000's result dict, plus `source` and `correlation_id`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from voiced.robot.sequence import SequenceStep, steps_to_json

CREATIVE = "creative"
"""The source of a surprise build made offline; in the history, also the mark of any plan that
is one ("replay+creative"), so that it is never learned however it is repeated."""


@dataclass(frozen=True)
class Interpretation:
    """What a command means, and how sure we are (seed 000's result dict)."""

    interpretation: str
    """One sentence: what the command was understood to mean."""
    sequence: tuple[SequenceStep, ...] = ()
    """The final composite sequence after every pass."""
    pass1_sequence: tuple[SequenceStep, ...] = ()
    """The sequence as first generated, before validation (for side-by-side display)."""
    composite_name: str | None = None
    """Snake-case name worth saving this as (learning commands); always None for creative ones."""
    confidence: float = 0.0
    """0.9-1.0 clear, 0.7-0.9 interpreted, 0.5-0.7 best guess, below 0.5 unclear."""
    validated: bool = False
    """True when validation ran and found no issues."""
    validation_issues: tuple[str, ...] = ()
    """What validation found; tagged "[P3 fixed]" where regeneration fixed it."""
    user_feedback: str | None = None
    """A message to speak or show (impossible commands, learning directives)."""
    is_creative: bool = False
    creative_reasoning: str | None = None
    raw_response: str | None = None
    """The raw LLM text when its JSON could not be parsed at all."""
    source: str = "grammar"
    """Which tier produced it: phrase_bank, grammar, llm, replay, ..."""
    correlation_id: str | None = None

    def with_changes(self, **changes: Any) -> Interpretation:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "interpretation": self.interpretation,
            "sequence": steps_to_json(self.sequence),
            "pass1_sequence": steps_to_json(self.pass1_sequence),
            "composite_name": self.composite_name,
            "confidence": self.confidence,
            "validated": self.validated,
            "validation_issues": list(self.validation_issues),
            "user_feedback": self.user_feedback,
            "is_creative": self.is_creative,
            "creative_reasoning": self.creative_reasoning,
            "raw_response": self.raw_response,
            "source": self.source,
            "correlation_id": self.correlation_id,
        }


def unknown(text: str, feedback: str, source: str = "grammar") -> Interpretation:
    """Seed 000's answer to an impossible command: empty sequence, confidence 0.1, feedback."""
    return Interpretation(
        interpretation=f"Could not act on: {text}",
        confidence=0.1,
        user_feedback=feedback,
        source=source,
    )
