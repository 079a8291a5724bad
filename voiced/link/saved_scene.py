"""The scene saved between runs, kept per controller identity.

A simulator's world is never restored for a real cell, nor one simulator's for another: the
file is named by the cell and the identity the controller greeted with. Whatever is restored,
the controller's report corrects it before anything moves (`voiced.commands.reconcile`).
"""

from __future__ import annotations

import structlog

from voiced import eventtypes as ev
from voiced.events import EventLog
from voiced.history import History
from voiced.paths import DataDir, atomic_write_json
from voiced.robot.cell import Cell
from voiced.robot.link import ControllerLink
from voiced.robot.physics import position_name
from voiced.robot.saved import read_saved_scene
from voiced.robot.scene import Scene

log = structlog.get_logger(__name__)


class SceneStore:
    def __init__(
        self, cell: Cell, data: DataDir, history: History, link: ControllerLink, events: EventLog
    ) -> None:
        self.cell = cell
        self.data = data
        self.history = history
        self.link = link
        self.events = events

    def starting(self, scene: Scene, given: bool) -> Scene:
        """`scene` when it was `given` (--scene); else the scene saved when this very controller
        was last driven; else `scene` (the cell's initial scene)."""
        link, cell = self.link, self.cell
        controller = identity(link)
        saved = self.data.scene(cell.name, controller)
        if link.greeting is not None and link.greeting.kind == "sim":
            # Every simulator is a new identity: keep the scene of the latest one only.
            prefix = saved.name[: -len(f"{controller}.json")]
            for stale in saved.parent.glob(f"{prefix}sim_*.json"):
                if stale != saved:
                    stale.unlink(missing_ok=True)
        if given or not saved.exists():
            return scene
        restored = read_saved_scene(cell, saved)
        log.info("restored the saved scene", path=str(saved), controller=controller)
        return restored

    def save(self, scene: Scene) -> None:
        cell = self.cell
        self.history.save_state(cell.name, position_name(cell, scene.pose), scene.tool)
        # The controller of the moment: a reconnect may have found another.
        path = self.data.scene(cell.name, identity(self.link))
        try:
            atomic_write_json(path, scene.to_dict())
        except OSError as exc:
            self.events.emit(ev.PersistFailed(str(path), str(exc)))
            log.error("could not save the scene", path=str(path), error=str(exc))


def identity(link: ControllerLink) -> str:
    """The identity the controller greeted with (saved state is kept per identity)."""
    return link.greeting.controller if link.greeting is not None else "unknown"
