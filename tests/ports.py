"""A loopback port nothing listens on: bound and released (for a server a test starts, or a
connection that must be refused)."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
