"""The systemd notification protocol (sd_notify) and the service watchdog, without libsystemd.

systemd passes the address of a datagram socket in `$NOTIFY_SOCKET`; the service sends
newline-separated `KEY=value` assignments to it (`READY=1`, `STATUS=...`, `WATCHDOG=1`,
`STOPPING=1`). See sd_notify(3) and systemd.service(5).

Outside systemd (a developer's shell, the test suite) `$NOTIFY_SOCKET` is unset and every
method is a cheap no-op, so callers never need to ask whether they run under systemd.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Callable, Mapping
from types import TracebackType

import structlog

__all__ = ["Notifier", "run_watchdog", "watchdog_interval"]

log = structlog.get_logger(__name__)


def _socket_address(raw: str) -> str | None:
    """Turn a `$NOTIFY_SOCKET` value into an AF_UNIX address, or None if unusable.

    sd_notify(3) accepts absolute paths and abstract names written with a leading "@"
    (the kernel wants a NUL byte there instead). Anything else (relative paths, the
    "vsock:" addresses of newer systemd) we do not support, and libsystemd rejects
    relative paths too.
    """
    if raw.startswith("/"):
        return raw
    if raw.startswith("@") and len(raw) > 1:
        return "\0" + raw[1:]
    return None


def _one_line(value: str) -> str:
    """Collapse line breaks into spaces: each assignment in the protocol is exactly one line."""
    return " ".join(value.splitlines()).strip()


class Notifier:
    """Sends sd_notify messages to the socket named by `$NOTIFY_SOCKET`.

    A failed send is logged once (until a later send succeeds again) and otherwise ignored:
    losing a status message must never take the daemon down. If systemd really stops
    hearing from us, its watchdog restarts the service, which is the right outcome.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        raw = env.get("NOTIFY_SOCKET", "")
        self._address = _socket_address(raw) if raw else None
        self._sock: socket.socket | None = None
        self._failing = False
        if raw and self._address is None:
            log.warning("sd_notify_unsupported_address", notify_socket=raw)

    @property
    def enabled(self) -> bool:
        """True when there is a notify socket to talk to (i.e. we run under systemd)."""
        return self._address is not None

    def ready(self) -> None:
        """Tell systemd that start-up is complete (`Type=notify` units wait for this)."""
        self.notify(READY=1)

    def status(self, text: str) -> None:
        """Set the free-form status line shown by `systemctl status` (line breaks removed)."""
        self.notify(STATUS=text)

    def watchdog(self) -> None:
        """Reset the service watchdog timer (`WatchdogSec=`)."""
        self.notify(WATCHDOG=1)

    def stopping(self) -> None:
        """Tell systemd that a graceful shutdown has begun."""
        self.notify(STOPPING=1)

    def notify(self, **fields: str | int) -> None:
        """Send one datagram with a `KEY=value` line per field, e.g. `notify(READY=1)`.

        Values are made single-line because a newline would start a new assignment.
        """
        if self._address is None or not fields:
            return
        lines = [f"{key}={_format_value(value)}" for key, value in fields.items()]
        self._send("\n".join(lines).encode())

    def close(self) -> None:
        """Release the socket; a later notify opens a new one."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Notifier:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _send(self, payload: bytes) -> None:
        """Send a datagram; on failure log the first error of a run of failures and go on."""
        assert self._address is not None
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                # Non-blocking: a stalled receiver must not freeze the event loop. A
                # dropped datagram is harmless; a frozen loop is a dead daemon.
                self._sock.setblocking(False)
            self._sock.sendto(payload, self._address)
        except OSError as exc:
            if not self._failing:
                self._failing = True
                log.warning(
                    "sd_notify_failed",
                    notify_socket=_printable(self._address),
                    error=str(exc),
                    hint="further failures are not logged until a send succeeds",
                )
            # A socket in an unknown state is not worth keeping; the next send reopens.
            self.close()
            return
        if self._failing:
            self._failing = False
            log.info("sd_notify_recovered", notify_socket=_printable(self._address))


def _format_value(value: str | int) -> str:
    """Render a field value; booleans become 1/0 as the protocol expects, not True/False."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return _one_line(value)


def _printable(address: str) -> str:
    """Show an abstract socket address the way systemd writes it (leading "@")."""
    return "@" + address[1:] if address.startswith("\0") else address


def watchdog_interval(environ: Mapping[str, str] | None = None) -> float | None:
    """How often to send WATCHDOG=1, in seconds, or None when the watchdog is off.

    systemd sets `$WATCHDOG_USEC` (the timeout) and `$WATCHDOG_PID` (the process meant to
    ping). A PID other than ours means the variables were inherited from a parent and are
    not for us. sd_watchdog_enabled(3) advises pinging at half the timeout.
    """
    env = os.environ if environ is None else environ
    pid = env.get("WATCHDOG_PID")
    if pid is not None:
        try:
            if int(pid) != os.getpid():
                return None
        except ValueError:
            return None
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    return usec / 2 / 1_000_000


async def run_watchdog(
    notifier: Notifier,
    interval: float,
    healthy: Callable[[], bool],
    stop: asyncio.Event,
) -> None:
    """Send WATCHDOG=1 every `interval` seconds while `healthy()` holds; return once `stop` is set.

    When `healthy()` is false (or raises) the ping is withheld, so a wedged daemon is
    restarted by systemd rather than kept alive by a timer that still happens to run.
    """
    if interval <= 0:
        raise ValueError(f"watchdog interval must be positive, got {interval}")
    was_healthy = True
    while not stop.is_set():
        is_healthy = _check(healthy, log_errors=was_healthy)
        if is_healthy:
            notifier.watchdog()
        if is_healthy != was_healthy:
            # Log transitions only: one line per incident, not one per interval.
            if is_healthy:
                log.info("watchdog_resumed")
            else:
                log.warning("watchdog_withheld", reason="daemon reports unhealthy")
            was_healthy = is_healthy
        # Waiting on the event (not sleeping) makes shutdown immediate.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


def _check(healthy: Callable[[], bool], *, log_errors: bool) -> bool:
    """Call the health probe; a probe that raises counts as unhealthy.

    The traceback is logged only when `log_errors` is set (at the start of an unhealthy run),
    so a probe that keeps failing does not flood the journal.
    """
    try:
        return bool(healthy())
    except Exception:
        if log_errors:
            log.exception("watchdog_health_check_failed")
        return False
