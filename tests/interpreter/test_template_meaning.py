"""What a template's interpretation says: the step as it is read back, with the values the
read-back leaves out, and the template it came from; never the raw call."""

from __future__ import annotations

import pytest

from tests.interpreter.helpers import cell, grammar
from voiced.interpreter.templates import Templates


@pytest.mark.parametrize(
    ("name", "said", "meaning"),
    [
        ("sandwich", "slap some cheese on top",
         "Add cheese, from the template '(slap|pop|stick) <some> {item} on [it|top]'"),
        ("weld", "tack the second seam",
         "Tack weld at Pos 2, from the template '(tack|weld) {seam:position}'"),
        ("weld", "weld seam three",
         "Tack weld at Pos 3, from the template '(tack|weld) {seam:position}'"),
        ("barista", "can I get a medium latte with almond milk",
         "Make a latte with almond milk (cup: medium cup), "
         "from the template '<ask> <what> {drink} with <milk_added>'"),
    ],
)  # fmt: skip
def test_a_template_interpretation_reads_as_the_read_back_does(
    name: str, said: str, meaning: str
) -> None:
    templates = Templates(cell(name), grammar(name).vocabulary)
    found = templates.match(said)
    assert found is not None
    assert templates.interpret(found, None).interpretation == meaning


@pytest.mark.parametrize(
    ("said", "steps"),
    [
        # The cell's own words for its positions ([sentences.lists.seam]) name them in every
        # command, not only in the templates that use the list: two seams in one breath, a
        # verb no template has.
        ("weld seam 3 and seam 1", [("tack_weld", "Pos_3"), ("tack_weld", "Pos_1")]),
        ("weld seam three and weld seam one", [("tack_weld", "Pos_3"), ("tack_weld", "Pos_1")]),
        ("inspect seam three", [("camera_inspection", "Pos_3")]),
        ("go to the second seam", [(None, "Pos_2")]),
    ],
)
def test_the_cells_own_names_for_its_positions_work_in_any_command(
    said: str, steps: list[tuple[str | None, str]]
) -> None:
    weld = cell("weld")
    parsed = grammar("weld").parse(said, weld.initial_scene, ())
    assert parsed.success, parsed.error
    got = [(s.params.get("routine"), s.params["position"]) for s in parsed.sequence]
    assert got == steps
