"""`[page]`: the cell's page (a local web page, off by default)."""

from __future__ import annotations

from dataclasses import dataclass

from voiced.configschema import setting


@dataclass(frozen=True)
class PageSettings:
    """[page]: where the cell's page is served, what it keeps, who may press STOP."""

    enabled: bool = setting(
        False,
        "Serve the cell's page: the cell live, every utterance from transcript to outcome with "
        "its audio, and a STOP button.",
    )
    """Serve the page for every input (typed text, audio, the queue)."""
    host: str = setting(
        "127.0.0.1",
        "Address the page binds to; keep it on loopback unless the cell's audio may be heard "
        "on the network (STOP then needs the token).",
        nonempty=True,
    )
    """Bind address; loopback unless the page is meant for the network."""
    port: int = setting(8765, "TCP port of the page; 0 = any free port (logged).", min=0, max=65535)
    """TCP port; 0 = any free port (logged and in the `page` event)."""
    keep: int = setting(50, "Recent utterances (and their audio) kept for a page opened later.",
                        min=1)  # fmt: skip
    """Utterances kept, with their audio."""
    token_file: str = setting(
        "",
        "File holding the token (at least 16 characters) that lets STOP be pressed from another "
        "machine (sent as 'Authorization: Bearer TOKEN'); relative to this file; empty = STOP "
        "only from this machine.",
    )
    """Relative paths are relative to the config file."""
