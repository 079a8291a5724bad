"""What the daemon does with one typed utterance before its interpreter, for `voiced interpret`:
a question is answered, "what can I say" is answered from the cell, a pause word pauses, a speed
change or an undo is worked out from the state, "continue" finishes what was cut short. The
frames' part (stop, help, pause) is checked here; the acceptance worker's part, and its order,
is `voiced.commands.early`'s, which the daemon follows too. Without this, `voiced interpret
"hold on"` printed the grammar's "wait" step and "undo that" the grammar's "put back what is
held", neither of which the daemon does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from voiced.commands.acceptance import NOTHING_TO_CONTINUE, checked_plan
from voiced.commands.early import worked_out_first
from voiced.commands.pausing import PAUSED
from voiced.commands.pending import dropped_sentence
from voiced.config import Config
from voiced.frames.base import HELP_WORDS, after_wake_word, help_sentence
from voiced.frames.pause import PauseWords
from voiced.frames.stop import StopWords, said_with_stop
from voiced.interpreter.result import Interpretation
from voiced.interpreter.tiers import Interpreter
from voiced.llm.client import LlmClient
from voiced.paths import DataDir
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.rules import NO_MATCH, Utterance, normalize
from voiced.words.examples import help_examples
from voiced.words.questions import Questions


def without_wake_word(text: str, wake_words: Sequence[str]) -> str:
    """`text` as the daemon's base frame hands it on: a leading wake word taken off ("computer,
    add bread" -> "add bread"), near misses too ("compute her add bread"); "" when that was
    all."""
    rest = after_wake_word(text, wake_words)
    while rest:  # "computer computer add bread": the base frame takes each one off
        again = after_wake_word(rest, wake_words)
        if again is None:
            break
        rest = again
    return text if rest is None else rest


@dataclass(frozen=True)
class Explained:
    """The JSON `voiced interpret` prints, and whether the daemon would act on it."""

    shown: dict[str, Any]
    done: bool


def before_the_interpreter(
    cell: Cell, scene: Scene, text: str, wake_word: str
) -> Explained | Interpretation | None:
    """A stop, a question's answer or a pause (`Explained`); a speed change or an undo (an
    `Interpretation` to check as any other); None when the interpreter decides (a question
    the daemon cannot answer goes there too). `text` comes without the wake word
    (`without_wake_word`)."""
    if not normalize(text):
        # The wake word alone: the daemon opens a query and waits for the command.
        return Explained({"behaviour": "listen", "waits_for": "the command"}, True)
    if StopWords().match(Utterance(text)) is not NO_MATCH:
        # The global stop, heard anywhere in what is said ("oh no, stop it").
        said = dropped_sentence(said_with_stop(text, (wake_word,)))
        return Explained({"behaviour": "stop", "sends": "STOP", "said": said}, True)
    if normalize(text) in HELP_WORDS:
        said = help_sentence(wake_word, help_examples(cell), wake=True)
        return Explained({"behaviour": "help", "said": said}, True)
    if PauseWords().match(Utterance(text)) is not NO_MATCH:
        return Explained({"behaviour": "pause", "said": PAUSED}, True)
    # Then what the acceptance worker works out itself, in its order. Nothing was put down or
    # run in a fresh scene, so an undo or a replay is refused, as the daemon would.
    early = worked_out_first(text, cell, scene, (), Questions(cell, None), None, None)
    if early is None:
        return None
    if early.answer is not None:
        answer = early.answer
        shown = {"question": text, "topic": answer.topic, "answer": answer.brief,
                 "full": answer.full}  # fmt: skip
        return Explained(shown, True)
    if early.resume:  # nothing is paused or cut short in a fresh scene
        return Explained({"behaviour": "continue", "said": NOTHING_TO_CONTINUE}, False)
    return early.meant


async def explain_command(
    cell: Cell, scene: Scene, data: DataDir, config: Config, said: str
) -> tuple[dict[str, Any], bool]:
    """What `voiced interpret` shows for one command (without the wake word), and whether the
    daemon would act on it: the behaviours it knows before its interpreter, else the
    interpreter's reading checked against `scene` (the language model only if configured)."""
    early = before_the_interpreter(cell, scene, said, config.daemon.wake_word)
    if isinstance(early, Explained):
        return early.shown, early.done
    if early is not None:
        meant = early
    else:
        client = LlmClient.from_env(config.llm)
        interpreter = Interpreter(cell, data, client, config.llm, lambda event: None)
        try:
            understood = await interpreter.interpret(said, scene, (), None)
        finally:
            if client is not None:
                await client.aclose()
        meant = understood.interpretation
    checked = checked_plan(cell, scene, meant) if meant.sequence else None
    shown = (checked.interpretation if checked is not None else meant).with_changes(
        sequence=meant.sequence
    )
    return shown.to_dict(), shown.validated
