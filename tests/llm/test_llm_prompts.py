"""Prompts from the live cell (static vs dynamic parts), the output schema, the deterministic
validator's rules 1-6, and the [llm] settings."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.view import scene_from_view

from tests.llm.llmfakes import step
from voiced.configschema import parse
from voiced.errors import ConfigError
from voiced.llm import prompts
from voiced.llm.context import sequence_schema, validator_schema
from voiced.llm.creative import Axes, CreativeAssignment
from voiced.llm.settings import LlmSettings
from voiced.llm.validate import validate_steps

SANDWICH = load_cell("sandwich")
SECTIONS = (
    "OUTPUT FORMAT",
    "RULES",
    "CREATIVE COMMANDS",
    "RECOVERY COMMANDS",
    "SPEED + ACTION COMBINED",
    "UNKNOWN / IMPOSSIBLE COMMANDS",
    "SECONDARY / LEARNING COMMANDS",
    "EXAMPLES",
)


def test_the_static_block_does_not_change_with_the_scene() -> None:
    other = scene_from_view(SANDWICH, {"zones": {"assembly_right": ["meat"]}}, "test")
    first = prompts.pass1_system(SANDWICH, SANDWICH.initial_scene)
    second = prompts.pass1_system(
        SANDWICH, other, creative=CreativeAssignment(Axes("inverted", "doubled"), (), 9)
    )
    assert first[0] == second[0] and first[0].cache
    assert first[1] != second[1] and not first[1].cache
    for section in SECTIONS:
        assert f"━━━ {section} ━━━" in first[0].text
    assert "━━━ CURRENT SCENE ━━━" in first[1].text
    assert "━━━ CURRENT SCENE ━━━" not in first[0].text
    assert "inverted: the LAST step before go_home() must be add_layer" in second[1].text


@pytest.mark.parametrize(
    ("cell", "present", "absent"),
    [
        ("weld", ['"all" / "full"', "run_routine_at", "Pos_3 (work)", "Welder"], ["add_layer"]),
        ("blocks", ["move_object", "Buffer sites: B1, B2, B3", "red cube"], ["CREATIVE COMMANDS"]),
    ],
)
def test_other_cells_get_their_own_vocabulary(
    cell: str, present: list[str], absent: list[str]
) -> None:
    loaded = load_cell(cell)
    static = prompts.pass1_static(loaded)
    for text in present:
        assert text in static
    for text in absent:
        assert text not in static


def _objects(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found += _objects(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _objects(value)
    return found


@pytest.mark.parametrize("cell", ["sandwich", "weld", "blocks", "barista"])
def test_the_output_schema_fits_the_structured_output_subset(cell: str) -> None:
    for schema in (sequence_schema(load_cell(cell)), validator_schema(load_cell(cell))):
        assert all(obj.get("additionalProperties") is False for obj in _objects(schema))
        assert anthropic.transform_schema(schema)["required"] == schema["required"]


def test_the_validator_prompt_lists_the_valid_names_and_rules() -> None:
    text = prompts.validator_static(SANDWICH)
    assert 'valid_items: ["bread", "meat", "cheese", "lettuce", "tomato"]' in text
    assert '"add_layer"' in text and '"supply_bread"' in text and '"home"' in text
    for rule in range(1, 7):
        assert f"\n{rule}. " in text
    assert "assembly_fixture, assembly_left" in text or "assembly_left, assembly_fixture" in text


# (raw sequence) -> (kept steps, issue fragments, compiles)
VALIDATION = [
    pytest.param(
        [step("move_absolute", x=1), step("add_layer", item="bread")],
        [step("add_layer", item="bread")],
        ["move_absolute is not a valid instruction"],
        id="rule1-unknown-instruction",
    ),
    pytest.param(
        [step("add_layer", item="avocado")], [], ["I don't have avocado"], id="rule2-unknown-item"
    ),
    pytest.param(
        [step("move_relative", direction="sideways")], [], ["unknown direction"], id="rule4"
    ),
    pytest.param(
        [step("transfer", item="cheese", to="fixture")],
        [step("add_layer", item="cheese")],
        ["transfer used for the assembly zone — should be add_layer"],
        id="rule5-transfer",
    ),
    pytest.param(
        [step("set_active_zone", zone="top shelf")], [], ["unknown zone"], id="rule6-zone"
    ),
    pytest.param(
        [step("set_active_zone", zone="Right"), step("add_layer", item="Tomato", colour="red")],
        [step("set_active_zone", zone="assembly_right"), step("add_layer", item="tomato")],
        ["has no parameter 'colour'"],
        id="canonical-names-and-dropped-param",
    ),
    pytest.param([step("add_layer")], [], ["add_layer needs 'item'"], id="missing-param"),
    pytest.param(["go_home", {"params": {}}], [], ["step 1 is not", "step 2 is not"], id="bad"),
    pytest.param(
        [step("place_on_zone")], [step("place_on_zone")], ["step 1 (place_on_zone)"], id="compile"
    ),
]


@pytest.mark.parametrize(("raw", "kept", "issues"), VALIDATION)
def test_deterministic_validator(
    raw: list[Any], kept: list[dict[str, Any]], issues: list[str]
) -> None:
    checked = validate_steps(SANDWICH, SANDWICH.initial_scene, raw)
    assert [s.to_dict() for s in checked.sequence] == kept
    for fragment in issues:
        assert any(fragment in issue for issue in checked.issues), checked.issues
    assert not checked.clean


def test_a_clean_sequence_has_no_issues() -> None:
    checked = validate_steps(SANDWICH, SANDWICH.initial_scene, [step("go_home")])
    assert checked.clean and checked.issues == ()


def test_settings_parse_like_every_config_section() -> None:
    settings = parse(LlmSettings, {"model": "claude-haiku-5-5", "retries": 1}, "config.toml")
    assert settings.model == "claude-haiku-5-5" and settings.retries == 1
    assert not settings.llm_validation and settings.structured_output
    with pytest.raises(ConfigError, match="tempreature"):
        parse(LlmSettings, {"tempreature": 0}, "config.toml")
    with pytest.raises(ConfigError, match="base_url"):
        parse(LlmSettings, {"base_url": "localhost:8080"}, "config.toml")
