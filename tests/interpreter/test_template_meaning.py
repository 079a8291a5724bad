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
