"""The controller a run drives: the in-process simulator or the configured one, linked and
authenticated, with every line on the link reported as an event."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import structlog

from voiced import eventtypes as ev
from voiced.config import Config
from voiced.errors import ControllerAuthError, ControllerConnectionError
from voiced.events import EventLog
from voiced.link.key import controller_key
from voiced.robot.cell import Cell
from voiced.robot.link import ControllerLink
from voiced.robot.scene import Scene
from voiced.robot.simulator import Simulator

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Controller:
    """The controller the daemon drives."""

    link: ControllerLink
    sim: Simulator | None
    """The in-process simulator when the controller is one (its scene is the ground truth)."""


@contextlib.asynccontextmanager
async def open_controller(
    config: Config, cell: Cell, scene: Scene, events: EventLog
) -> AsyncIterator[Controller]:
    """The controller of this run, linked and authenticated: the in-process simulator (with a
    new key of its own) or the configured one. Every line on the link becomes an event."""
    cfg = config.controller
    async with contextlib.AsyncExitStack() as stack:
        sim: Simulator | None = None
        if cfg.is_simulated:
            # Its own key, new per run: the in-process simulator is authenticated too.
            key: bytes | None = secrets.token_hex(32).encode("ascii")
            allow = False
            sim = Simulator(
                cell,
                scene,
                time_scale=config.simulator.time_scale,
                heartbeat_timeout=cfg.heartbeat_timeout,
                key=key,
            )
            await stack.enter_async_context(sim)
            host, motion, control = "127.0.0.1", sim.motion_port, sim.control_port
            log.info("simulator started", motion_port=motion, control_port=control)
        else:
            endpoint = cfg.endpoint
            assert endpoint is not None  # the config validated the address
            host, motion = endpoint
            control = cfg.control_port_for(motion)
            key, allow = controller_key(config), cfg.allow_unauthenticated
        link = ControllerLink(
            host,
            motion,
            control,
            connect_timeout=cfg.connect_timeout,
            heartbeat_interval=cfg.heartbeat_interval,
            heartbeat_timeout=cfg.heartbeat_timeout,
            window=cfg.window,
            on_line=_lines_as_events(events),
            key=key,
            allow_unauthenticated=allow,
        )
        try:
            entered = await stack.enter_async_context(link)
        except ControllerConnectionError as exc:
            auth = isinstance(exc, ControllerAuthError)
            events.emit(ev.AuthRefused(str(exc)) if auth else ev.LinkLost(str(exc)))
            raise
        yield Controller(entered, sim)


def _lines_as_events(events: EventLog) -> Callable[[str, str, str], None]:
    """Every line on the link as an event (a motion line sent as the primitive it carries),
    but the heartbeat's chatter."""

    def on_line(direction: str, channel: str, line: str) -> None:
        if line.startswith(("PING", "PONG")):
            return
        seq = line.split(" ", 1)[0]
        if direction == "tx" and channel == "motion" and seq.isdigit():
            events.emit(ev.Primitive(int(seq), line))
        else:
            events.emit(ev.ControllerLine(direction, channel, line))

    return on_line
