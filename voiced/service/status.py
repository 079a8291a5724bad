"""The daemon's STATUS= line for systemd: one composer of its parts (the mode, the controller
link, the audio input, the broker), each part told by what knows it."""

from __future__ import annotations

from collections.abc import Callable

from voiced.eventtypes import Record
from voiced.frames.router import StackChange
from voiced.service.sdnotify import Notifier


class StatusLine:
    """`listening: wake mode, cell sandwich; controller link lost, reconnecting; ...`"""

    def __init__(self, notifier: Notifier, cell: str, mode: str) -> None:
        self.notifier = notifier
        self.cell = cell
        self.mode = mode
        self.link: str | None = None
        """The link keeper's word ("link lost, reconnecting"); None: the link is up."""
        self.broker: str | None = None
        """The MQTT service's word ("mqtt broker away, retrying"); None: up."""
        self.audio: Callable[[], str | None] = lambda: None
        """The audio front end's word (a speech server or satellite lost); None: all well."""

    def announce(self, mode: str | None = None) -> None:
        self.mode = mode or self.mode
        link = f"; controller {self.link}" if self.link else ""
        audio = f"; {words}" if (words := self.audio()) else ""
        broker = f"; {self.broker}" if self.broker else ""
        self.notifier.status(f"listening: {self.mode} mode, cell {self.cell}{link}{audio}{broker}")

    def link_status(self, text: str | None) -> None:
        self.link = text
        self.announce()

    def broker_status(self, words: str | None) -> None:
        self.broker = words
        self.announce()

    def on_event(self, record: Record) -> None:
        """A mode switch (said, or from outside) shows at once."""
        change = record.event
        if isinstance(change, StackChange) and change.mode is not None:
            self.announce(change.mode)
