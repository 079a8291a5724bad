"""Every prompt the LLM tier sends, built from the live cell and scene.

Pass 1 (seed 000) is two system blocks: a static one (role, the cell's catalogue, OUTPUT FORMAT,
RULES, CREATIVE COMMANDS, RECOVERY COMMANDS, SPEED+ACTION COMBINED, UNKNOWN/IMPOSSIBLE,
SECONDARY/LEARNING, EXAMPLES) marked for prompt caching, and a dynamic one (learned composite
names, the current scene, the CREATIVE MODE — AXES assignment, the CORRECTION REQUIRED list).
The seed prepends the correction section; here it follows the cached prefix, which a prepended
section would invalidate on every pass 3. The command itself is the user message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voiced.llm import context
from voiced.llm.client import PromptBlock
from voiced.llm.creative import INGREDIENT_LOGIC, SPATIAL, CreativeAssignment
from voiced.llm.creative_gen import supported as creative_supported
from voiced.llm.examples import examples_section
from voiced.robot.cell import DIRECTIONS, Cell
from voiced.robot.scene import Scene

OUTPUT_FORMAT = """━━━ OUTPUT FORMAT ━━━
Respond with ONLY a JSON object — no prose, no markdown fence:
{
  "interpretation": "one sentence describing what the command means",
  "sequence": [
    {"instruction": "composite_name", "params": {"key": "value"}}
  ],
  "composite_name": "snake_case_name_or_null",
  "confidence": 0.95,
  "user_feedback": null,
  "creative_reasoning": null
}
confidence: 0.9–1.0 clear · 0.7–0.9 interpreted · 0.5–0.7 best guess · below 0.5 unclear.
Answer deterministically: the same command in the same scene always gets the same sequence
(creative commands excepted)."""

_RECOVERY = {
    "return_to_stack": '- "put it back" / "undo" → return_to_stack() (safe no-op if not holding)',
    "clear_assembly": '- "start over" / "never mind" / "cancel" → clear_assembly() then go_home()\n'
    '- "I made a mistake" → return_to_stack() if holding, else clear_assembly()\n'
    '- "take the X off" → return_to_stack() as the best approximation (removing one layer from '
    "the middle is not supported: say so in user_feedback)",
    "release_tool": '- "put the tool back" → release_tool()',
    "release_tool_and_home": '- "start over" / "cancel" / "never mind" → release_tool_and_home()',
}

SPEED_AND_ACTION = """━━━ SPEED + ACTION COMBINED ━━━
A speed word applies to the moves after it: "slowly add cheese" → set_speed(speed="slow") first,
then the action; "quickly go home" → set_speed(speed="fast"), go_home(). Numbers in mm/s are
allowed up to the speed limit."""

UNKNOWN = """━━━ UNKNOWN / IMPOSSIBLE COMMANDS ━━━
If the command needs an item, zone, position, tool or routine that is not listed above
(avocado, pickles, a fourth zone...), or is not about the robot at all: "sequence": [],
"confidence": 0.1, and "user_feedback" saying what is missing and what IS available, e.g.
"I don't have avocado — available ingredients are: ..." (list the real ones)."""

SECONDARY = """━━━ SECONDARY / LEARNING COMMANDS ━━━
Commands that define a new name ("when I say lunch, make bread cheese bread", "call that a BLT"):
produce the sequence for the underlying action, set "composite_name" to the requested name in
snake_case (lunch, blt) and "user_feedback" to "Mapping/composite noted — will be saved to memory
system". Otherwise composite_name is null."""

CREATIVE_COMMANDS = """━━━ CREATIVE COMMANDS ━━━
"impress me", "go wild", "surprise me", "make something beautiful", "build a tower"... are
creative. Python assigns each one a combination of two axes (see CREATIVE MODE — AXES below when
present): follow it literally. composite_name is ALWAYS null for creative commands. Explain the
build in creative_reasoning as "Axis 1: <choice> × Axis 2: <choice> — <explanation>"."""

CREATIVE_RULES = """You MUST follow both axes literally when building the sequence.
- palindrome: write out your planned layer order first in creative_reasoning, verify it reads
  the same backwards, THEN generate the JSON steps.
- inverted: the LAST step before go_home() must be add_layer(item="bread"). Bread goes last.
- three_zone_split / two_zone_contrast: set_active_zone(zone) before each zone's layers.
- Never use more of an ingredient than its supply holds (CURRENT SCENE).
- composite_name must be null; creative_reasoning must name both axes."""


def _rules(cell: Cell) -> str:
    lines = [
        "━━━ RULES ━━━",
        "- Use ONLY instruction names from AVAILABLE COMPOSITE INSTRUCTIONS or LEARNED "
        "COMPOSITES; never primitives (move_to, gripper_set, ...) or invented names "
        "(move_absolute, transfer, place_at).",
        "- Give only the parameters an instruction declares; names (items, zones, sites, "
        "positions, tools, routines) must come from the lists above.",
        "- Check the CURRENT SCENE: what is held, what each supply still holds, where the arm is.",
    ]
    if cell.composite("add_layer") is not None:
        lines.append(
            "- To build on a zone use add_layer(item) — one call per layer; not transfer or "
            "place_at. End a build with go_home() unless told otherwise."
        )
    if cell.zones():
        lines.append(
            "- Zones: set_active_zone(zone) before the layers that go there; for several zones: "
            "set_active_zone, add_layer..., go_home, then set_active_zone for the next."
        )
    if cell.composite("move_relative") is not None:
        lines.append(f"- move_relative direction is one of: {', '.join(DIRECTIONS)}.")
    if cell.work_positions():
        lines.append(
            '- "all" / "full" / "every position" means every work position: '
            f"{', '.join(cell.work_positions())}."
        )
    return "\n".join(lines)


def _recovery(cell: Cell) -> str:
    found = [text for name, text in _RECOVERY.items() if cell.composite(name) is not None]
    if not found:
        return ""
    return "━━━ RECOVERY COMMANDS ━━━\n" + "\n".join(found)


def pass1_static(cell: Cell) -> str:
    """The cacheable part of the pass-1 prompt: the same for every command in this cell."""
    head = (
        f'You are the sequence interpreter of a voice-controlled ABB GoFa robot arm in the "'
        f"{cell.name}\" cell ({cell.description}). Convert the operator's spoken command (it "
        "comes from speech-to-text and may contain mishearings) into a JSON sequence of "
        "composite instructions that the instruction compiler executes."
    )
    sections = [head, context.catalogue(cell), OUTPUT_FORMAT, _rules(cell)]
    if creative_supported(cell):
        sections.append(CREATIVE_COMMANDS)
    sections += [_recovery(cell), SPEED_AND_ACTION, UNKNOWN, SECONDARY, examples_section(cell)]
    return "\n\n".join(s for s in sections if s)


def creative_section(assignment: CreativeAssignment) -> str:
    axes = assignment.axes
    lines = [
        "━━━ CREATIVE MODE — AXES ━━━",
        f"This is a creative command (variation #{assignment.variation}: make this build your "
        "own; it need not match any earlier answer).",
        "YOUR ASSIGNED COMBINATION FOR THIS COMMAND:",
        "",
        f"  AXIS 1 (spatial structure): {axes.spatial}",
        f"  → {SPATIAL[axes.spatial]}",
        "",
        f"  AXIS 2 (ingredient logic): {axes.ingredient}",
        f"  → {INGREDIENT_LOGIC[axes.ingredient]}",
    ]
    if assignment.named_items:
        lines.append(f"  Named ingredients: {', '.join(assignment.named_items)}")
    return "\n".join([*lines, "", CREATIVE_RULES])


@dataclass(frozen=True)
class Correction:
    """What one correction round sends back to the model (seed 000's pass 3, repeated up to
    seed 001's retry limit)."""

    issues: tuple[str, ...]
    """What the deterministic validator found in the previous sequence."""
    previous: tuple[Mapping[str, Any], ...]
    """That sequence, as the model gave it."""
    round: int = 1
    """This round, from 1."""
    rounds: int = 1
    """How many rounds there are at most."""
    earlier: tuple[tuple[str, ...], ...] = ()
    """The findings of the rounds before the previous sequence, oldest first (so that the model
    does not bring back a mistake it was already told about)."""


def correction_section(correction: Correction) -> str:
    listed = "\n".join(f"  - {issue}" for issue in correction.issues)
    lines = ["━━━ CORRECTION REQUIRED (Pass 3) ━━━"]
    if correction.rounds > 1:
        lines.append(f"Correction round {correction.round} of {correction.rounds}.")
    lines += [
        "Your previous response had these problems that the validator caught:",
        listed,
        f"Your previous sequence was: {json.dumps(list(correction.previous), ensure_ascii=False)}",
    ]
    for number, found in enumerate(correction.earlier, 1):
        lines.append(f"Attempt {number} before it was refused for: {'; '.join(found)}")
    lines += [
        "",
        "Please regenerate a corrected sequence that fixes ALL of these issues.",
        "Use ONLY valid instruction names from the list above.",
    ]
    return "\n".join(lines)


def pass1_system(
    cell: Cell,
    scene: Scene,
    *,
    creative: CreativeAssignment | None = None,
    correction: Correction | None = None,
) -> list[PromptBlock]:
    """Pass 1's system prompt (pass 3 when `correction` says what the validator found)."""
    dynamic = [context.learned_section(cell), context.scene_section(cell, scene)]
    if creative is not None:
        dynamic.append(creative_section(creative))
    if correction is not None:
        dynamic.append(correction_section(correction))
    return [PromptBlock(pass1_static(cell), cache=True), PromptBlock("\n\n".join(dynamic))]


def pass1_user(text: str) -> str:
    return f'Voice command: "{text}"'


# -- pass 2: the optional LLM validator (seed 000); its fixes are re-checked deterministically --


def validator_static(cell: Cell) -> str:
    """The validator's instructions and the cell's valid-name lists (cacheable)."""
    locations = [*cell.sites, *cell.poses]
    zones = ", ".join(cell.zones()) or "(this cell has no zones)"
    lists = {
        "valid_composites": list(cell.instructions()),
        "valid_items": list(cell.items() or cell.objects),
        "valid_locations": locations,
    }
    return (
        "You are the validator of a robot instruction sequence generated from a voice command. "
        "Check it against these lists and rules, and correct it.\n\n"
        + "\n".join(f"{key}: {json.dumps(value)}" for key, value in lists.items())
        + "\n\nRules:\n"
        "1. Every instruction must be in valid_composites — fix or remove it if not "
        "(e.g. move_absolute → remove).\n"
        "2. Every item param must be in valid_items — remove steps with unknown items.\n"
        "3. Every location param must be in valid_locations.\n"
        f"4. move_relative direction must be one of: {', '.join(DIRECTIONS)}.\n"
        "5. Assembly sequences must use add_layer, not transfer or place_at.\n"
        f"6. set_active_zone zone must be one of: {zones}.\n"
        "Also flag a sequence that does not do what the command asked.\n\n"
        'Respond with ONLY JSON: {"valid": true or false, "issues": ["what was wrong; empty '
        'if clean"], "sequence": [the corrected sequence]}'
    )


def validator_user(text: str, interpretation: str, sequence: Sequence[Mapping[str, Any]]) -> str:
    return (
        f'Voice command: "{text}"\nInterpretation: {interpretation}\n'
        f"Generated sequence: {json.dumps(list(sequence), ensure_ascii=False)}"
    )


# -- seed 003: the resolver of unknown verbs --

UNKNOWN_LABEL = "UNKNOWN"


def resolver_system(candidates: Mapping[str, str]) -> str:
    listed = "\n".join(f"- {name}: {description}" for name, description in candidates.items())
    return (
        "You resolve the meaning of a phrase a robot's grammar did not know. Map it to ONE "
        "canonical instruction from the list, or to UNKNOWN when none of them means the same "
        "thing. Never invent a name; never choose an instruction that only resembles the "
        "words.\n\nCanonical instructions:\n"
        f"{listed}\n\n"
        'Respond with ONLY JSON: {"composite": "<a name from the list, or UNKNOWN>", '
        '"reasoning": "one short sentence"}'
    )


def resolver_user(phrase: str, context_text: str) -> str:
    return f'Phrase: "{phrase}"\nContext: {context_text or "(none)"}'


def resolver_schema(candidates: Sequence[str]) -> dict[str, Any]:
    return _label_schema("composite", [*candidates, UNKNOWN_LABEL])


def _label_schema(key: str, labels: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {"type": "string", "enum": list(labels)},
            "reasoning": {"type": "string"},
        },
        "required": [key, "reasoning"],
        "additionalProperties": False,
    }


# -- seed 001: the intent classifier (action / question / unknown) --

INTENTS = ("action", "question", "unknown")

INTENT_TEMPLATE = """You are an intent classifier for a context-aware robot control system.

SYSTEM CAPABILITIES:
{capabilities}

Your task: Classify the operator's input into ONE of these intents:

1. "action" - Commands that require robot movement, tool operations, or routine execution
   Examples:
   - Direct commands: "Move to station 5", "Process at area B", "Pick up the gripper tool"
   - Polite requests: "Can you scan checkpoint 3?", "Please weld at position 2"
   - Repeat commands: "Do that again", "Repeat the last task", "Can you do the first task again?"
   - Confirmations: "proceed", "yes", "go ahead", "do it" (after a plan review)

2. "question" - Queries about system state, capabilities, or history (NO ACTION REQUESTED)
   Examples:
   - Information: "What stations are available?", "Where is the robot?", "Show me the tools"
   - History: "What did you do?", "Show me the history", "Give me the task list"
   - Follow-ups: "Tell me more", "What about tools?", "And the routines?"
   - Implicit context: "give me the 15 latest", "show me 10 more", "what about the rest?"

3. "unknown" - ONLY for completely unclear or out-of-scope requests
   Examples: "Hello", "What's the weather?", "asdfgh"

**CRITICAL DISTINCTION:**
- "Can you do X?" or "Do X again" = ACTION (operator wants execution)
- "What is X?" or "Show me X" = QUESTION (operator wants information)
- "proceed" / "yes" / "go ahead" = ACTION (confirmation after review)

Respond with ONLY a JSON object in this exact format:
{{
  "intent": "action|question|unknown",
  "reasoning": "Brief explanation"
}}

Do NOT include any other text, commentary, or markdown formatting."""


def intent_system(cell: Cell) -> str:
    """Seed 001's classifier prompt with this cell's capabilities (static per cell)."""
    return INTENT_TEMPLATE.format(capabilities=context.capabilities(cell))


def intent_user(text: str) -> str:
    # The seed puts the input inside the prompt; here it is the user turn, after the cacheable
    # system prompt.
    return f'OPERATOR INPUT: "{text}"'


INTENT_SCHEMA = _label_schema("intent", INTENTS)


# -- the confirm frame's classifier (rules.Classifier): any label set --

NO_LABEL = "none"


def classify_system(context_text: str, labels: Sequence[str]) -> str:
    return (
        "You classify an operator's short spoken reply for a robot control system.\n"
        f"Situation: {context_text}\n"
        f"Labels: {', '.join(labels)}\n"
        f'Choose the label the reply means, or "{NO_LABEL}" when none fits or it is unclear '
        "(never guess: a wrong yes moves a robot).\n"
        'Respond with ONLY JSON: {"label": "<label>", "reasoning": "brief"}'
    )


def classify_user(text: str) -> str:
    return f'Reply: "{text}"'


def classify_schema(labels: Sequence[str]) -> dict[str, Any]:
    return _label_schema("label", [*labels, NO_LABEL])
