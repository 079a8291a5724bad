"""The benchmark's command sessions, as data: text sessions (one utterance per line, a blank line
for a pause) per cell. Several blank lines follow a command the daemon answers aloud (an unknown
item, a question), because the daemon mutes its input while it speaks.

`kind` says what a session measures: "command" sessions are scored on their final state (the
text version's final state is the ground truth); "stop" sessions say "stop" while the arm moves
and are scored on stop time only, since where the arm halts depends on timing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Session:
    cell: str
    name: str
    lines: tuple[str, ...]
    kind: str = "command"
    pause_s: float = 2.5

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _s(cell: str, name: str, *lines: str, kind: str = "command") -> Session:
    return Session(cell, name, tuple(lines), kind)


COMMANDS: tuple[Session, ...] = (
    _s("sandwich", "layers", "computer add bread", "cheese and tomato", "",
       "computer put meat on the left", "", "computer go home", ""),
    _s("sandwich", "unknown", "computer add avocado", "", "", "", "",
       "computer add lettuce", "", "computer add bread", ""),
    _s("sandwich", "counted", "computer three layers of cheese", "",
       "computer put tomato on the right", ""),
    _s("sandwich", "every", "computer bread on every stack", "", "computer go home", ""),
    _s("weld", "weld", "computer weld at position 1 and 2", ""),
    _s("weld", "goto", "computer go to position 3", "", "computer go home", ""),
    _s("weld", "inspect", "computer inspect position 1", ""),
    _s("weld", "tool", "computer grab the camera", "", "computer return the tool and go home", ""),
    _s("blocks", "stack", "computer stack the blue cube on the red cube", ""),
    _s("blocks", "home", "computer go home", ""),
    _s("blocks", "green", "computer put the green cube on the yellow cube", ""),
    _s("blocks", "two", "computer stack the orange cube on the purple cube", "",
       "computer go home", ""),
)  # fmt: skip

COMMANDS_DEV: tuple[Session, ...] = (
    _s("sandwich", "dev-layers", "computer add lettuce", "", "computer put cheese on the right",
       "", "computer add tomato and bread", ""),
    _s("sandwich", "dev-more", "computer two layers of meat", "",
       "computer add meat on the fixture", "", "computer put bread on the left", "",
       "computer add cheese then lettuce", ""),
    _s("sandwich", "dev-home", "computer clear the assembly", "", "computer go home", ""),
    _s("weld", "dev-weld", "computer go to position 2", "", "computer weld at position 3", "",
       "computer weld at positions 2 and 3", ""),
    _s("weld", "dev-tools", "computer pick up the welder", "", "computer return the tool", "",
       "computer inspect position 2", ""),
    _s("blocks", "dev-stack", "computer put the red cube on the green cube", "",
       "computer stack the green cube on the blue cube", "", "computer go home", ""),
    _s("blocks", "dev-move", "computer move the red cube onto the blue cube", "",
       "computer put the green cube on the left", ""),
    _s("sandwich", "dev-absent", "computer add pineapple", "", "", "", "",
       "computer add cheese", ""),
    _s("blocks", "dev-absent", "computer put the red cube on the orange cube", "", "", ""),
)  # fmt: skip
"""Development commands: other sentences, for tuning (`bench.levers`, `bench.evaluate --dev`).
Nothing is tuned on `COMMANDS`."""

STOPS: tuple[Session, ...] = (
    _s("sandwich", "stop", "computer add bread cheese and tomato", "", "stop", "", kind="stop"),
    _s("weld", "stop", "computer weld at position 1 and 2", "", "stop", "", kind="stop"),
    _s("blocks", "stop", "computer stack the blue cube on the red cube", "", "stop", "",
       kind="stop"),
)  # fmt: skip

STOP_RUNS: tuple[Session, ...] = (
    _s("weld", "stops", "computer weld at position 1 and 2", "", "stop", "",
       "computer go to position 3", "", "halt", "", "computer inspect all positions", "",
       "stop it", "", kind="stop"),
    _s("sandwich", "stops", "computer add bread, cheese and tomato", "", "stop", "",
       "computer put meat on the left", "", "freeze", "", "computer add lettuce and bread", "",
       "computer stop", "", kind="stop"),
    _s("blocks", "stops", "computer stack the blue cube on the red cube", "", "stop", "",
       "computer build a tower red green blue", "", "emergency stop", "",
       "computer go home", "", "stop stop", "", kind="stop"),
)  # fmt: skip
"""The stop benchmark (bench/stops.py): each stop is said while the arm moves, the command
before it clears the halt. Test data: nothing is tuned on it."""

STOP_RUNS_DEV: tuple[Session, ...] = (
    _s("weld", "dev-stops", "computer weld at position 2 and 3", "", "stop now", "",
       "computer go to position 1", "", "freeze", "", "computer inspect position 2", "",
       "halt", "", kind="stop"),
    _s("sandwich", "dev-stops", "computer add meat, lettuce and tomato", "", "stop", "",
       "computer put cheese on the right", "", "computer halt", "",
       "computer add bread and cheese", "", "stop!", "", kind="stop"),
)  # fmt: skip
"""The stop path is tuned on these (`bench.stops --dev`), with the development voices."""

WARM_UP = {
    "sandwich": ("computer add avocado", "", "", ""),
    "blocks": ("computer add avocado", "", "", ""),
    "weld": ("computer what positions are available", "", "", ""),
}
"""A command with a long answer first: at a running cell the echo canceller has heard the
daemon before (about 5 s here)."""


def _over(cell: str, name: str, *lines: str, warm: bool = True) -> Session:
    return _s(cell, name, *(WARM_UP[cell] if warm else ()), *lines)


TALK_OVER: tuple[Session, ...] = (
    _over("sandwich", "always", "computer always listen", "add bread", "", "wake word mode", ""),
    _over("sandwich", "help", "computer where are you", "computer add cheese", ""),
    _over("sandwich", "confirm", "computer add bread", "", "computer start over", "yes", ""),
    _over("weld", "where", "computer where are you", "computer go to position 2", ""),
    _over("weld", "mode", "computer mode query", "computer weld at position 1", ""),
    _over("blocks", "which", "computer which tool are you holding",
          "computer stack the blue cube on the red cube", ""),
)  # fmt: skip
"""Talking over the daemon (bench/talkover.py): after a warm-up question, each command is said
0.5 s after the line before it, while the daemon answers that line; the text version's final
state is the truth."""

FIRST_REPLY: tuple[Session, ...] = (
    _over("sandwich", "first-always", "computer always listen", "add bread", "", warm=False),
    _over("weld", "first-where", "computer where are you", "computer go to position 2", "",
          warm=False),
)  # fmt: skip
"""Talking over the first reply after start-up, before the canceller has heard the daemon."""

TALK_OVER_DEV: tuple[Session, ...] = (
    _over("sandwich", "dev-always", "computer always listen", "put cheese on the left", "",
          "wake word mode", ""),
    _over("sandwich", "dev-mode", "computer mode query", "computer add tomato", ""),
    _over("sandwich", "dev-confirm", "computer add meat", "", "computer start over",
          "yes please", ""),
    _over("weld", "dev-positions", "computer what positions are available",
          "computer go to position 1", ""),
    _over("blocks", "dev-where", "computer where are you", "computer put the red cube on the left",
          ""),
)  # fmt: skip
"""The same situations in other words, for tuning (`bench.talkover --dev`)."""

REPLIES: tuple[Session, ...] = (
    _s("sandwich", "replies", "computer where are you", "", "", "computer mode query", "", "",
       "computer add avocado", "", "", "", "", "computer what did you do", "", "",
       "computer what is on the left stack", "", "", "computer always listen", "", "",
       "wake word mode", "", "", "computer which tool are you holding", "", "",
       "computer what can I say", "", "", "", "", "computer read back", "", "", "",
       kind="replies"),
    _s("weld", "replies", "computer what positions are available", "", "", "",
       "computer where are you", "", "", "computer mode query", "", "",
       "computer which tool are you holding", "", "", "computer what did you do", "", "",
       "computer always listen", "", "", "wake word mode", "", "",
       "computer what can I say", "", "", "", "", kind="replies"),
)  # fmt: skip
"""Replies with nobody talking over them: self-triggers (bench/talkover.py)."""

REPLIES_DEV: tuple[Session, ...] = (
    _s("sandwich", "dev-replies", "computer mode query", "", "", "computer where are you", "", "",
       "computer add pineapple", "", "", "", "", "computer what is on the right stack", "", "",
       "computer switch voice", "", "", "", "cancel", "", "", "computer what did you do", "", "",
       "computer read back", "", "", kind="replies"),
    _s("blocks", "dev-replies", "computer where are you", "", "", "computer mode query", "", "",
       "computer what can I say", "", "", "", "", "computer always listen", "", "",
       "wake word mode", "", "", "computer what did you do", "", "", kind="replies"),
)  # fmt: skip
"""The same, other questions and cells, for tuning."""

NEAR_STOP_PROSE = (
    "Put the spare gripper on top of the cabinet and check the stock of screws before lunch. "
    "The line in hall two ran non-stop all week, so the night shift topped up the oil twice. "
    "We should shop for new sensors; the old ones are a stop-gap at best. Step back from the "
    "conveyor while it moves, and mind the step by the door. The stopwatch on the wall is five "
    "seconds slow. Stock levels are low on bolts, washers and all that stuff. The top shelf "
    "holds the gloves, the bottom one the safety glasses. Stopped by the workshop this morning "
    "and the shop floor was spotless. Tap the screen twice to see the top speed of the belt. "
    "The stockroom closes at six; drop the parts at the front desk if it is shut. Somebody "
    "left a mop and a bucket by the loading dock. It stops raining by noon, they say, and the "
    "trucks can unload on top of the ramp. Top marks to the team for the shipping figures."
)
"""Talk full of words near the stop words, without the stop words themselves: false stops."""

PROSE = (
    "The lighthouse on the northern cape was built in eighteen sixty and painted white with a "
    "single red band. Its keeper wrote the weather into a ledger twice a day, noting the wind, "
    "the height of the waves and the ships that passed before sunset. In winter the supply boat "
    "came once a month, and the family lived on salted fish, potatoes and letters from the "
    "mainland. The lamp burned paraffin until the nineteen twenties, when an engineer arrived "
    "with a generator and a crate of glass. Today the tower is a small museum. Visitors climb "
    "one hundred and twelve steps to see the lens, which still turns slowly on a bath of mercury. "
    "Birdwatchers come in autumn for the migrating geese, and painters set up their easels on "
    "the rocks below the keeper's cottage, waiting for the evening light over the water."
)
"""Non-command speech for the false-activation runs: no cell vocabulary, no wake word."""
