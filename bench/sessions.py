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

STOPS: tuple[Session, ...] = (
    _s("sandwich", "stop", "computer add bread cheese and tomato", "", "stop", "", kind="stop"),
    _s("weld", "stop", "computer weld at position 1 and 2", "", "stop", "", kind="stop"),
    _s("blocks", "stop", "computer stack the blue cube on the red cube", "", "stop", "",
       kind="stop"),
)  # fmt: skip

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
