"""What one run of the daemon is made of, built in one place (`Daemon._assemble`) and handed to
the input loop and the shutdown."""

from __future__ import annotations

from dataclasses import dataclass

from voiced.commands.pipeline import RobotPipeline
from voiced.frames import CommandRouter
from voiced.inputs.audio import AudioFrontEnd
from voiced.inputs.sources import Input
from voiced.link.controller import Controller
from voiced.service.cellstatus import StatusBoard
from voiced.service.frame_services import DaemonServices


@dataclass(frozen=True)
class Parts:
    """Everything one run is made of, built in one place (`Daemon._assemble`) before any of it
    runs."""

    controller: Controller
    pipeline: RobotPipeline
    services: DaemonServices
    router: CommandRouter
    front: AudioFrontEnd | None
    """The audio front end (`--audio`); None for every other input."""
    source: Input
    """What the daemon listens to."""
    board: StatusBoard
    """The cell as seen from outside (the cell page, MQTT)."""
