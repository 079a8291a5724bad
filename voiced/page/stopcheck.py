"""Who may press STOP on the cell's page.

STOP moves nothing, but a stop withdraws what the operator said and halts the arm mid-move, so
it is not for anyone who can reach the port. It is accepted from this machine (the peer is a
loopback address and the request names a loopback host, so a public web page that rebinds its
DNS name to 127.0.0.1 is still refused) or with the token (`[page] token_file`, compared in
constant time). Either way the request must carry a header a cross-site form cannot send
(`X-Voiced-Stop`, or the token's `Authorization`): a browser asks first (CORS preflight)
before sending a custom header to another origin, and the page answers no such question, so
another site open in the operator's browser cannot press STOP.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping

STOP_HEADER = "x-voiced-stop"
"""The header the page's own button sends (any value)."""
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def refusal(peer: str | None, headers: Mapping[str, str], token: str | None) -> str | None:
    """None when this POST /stop may stop the arm, else the reason it may not (said in the 403).

    `peer` is the client's address, `headers` the request's (lower-case names), `token` the
    configured one (None: no token, STOP only from this machine)."""
    given = _bearer(headers.get("authorization", ""))
    if given is not None:
        if token is not None and hmac.compare_digest(given.encode(), token.encode()):
            return None
        return "wrong token"
    if STOP_HEADER not in headers:
        return f"STOP needs the {STOP_HEADER} header or a token (Authorization: Bearer)"
    if not _is_loopback(peer):
        return "STOP from another machine needs the token (Authorization: Bearer)"
    if not _names_loopback(headers.get("host", "")):
        return "STOP without the token only through localhost or 127.0.0.1"
    return None


def _bearer(value: str) -> str | None:
    scheme, _, credential = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        return None
    return credential.strip()


def _is_loopback(peer: str | None) -> bool:
    if not peer:
        return False
    try:
        address = ipaddress.ip_address(peer.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 from a dual-stack socket
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def _names_loopback(host: str) -> bool:
    name = host.strip().lower()
    # "[::1]:8765" keeps its brackets (as LOOPBACK_HOSTS has it); "localhost:8765" loses the port.
    name = name[: name.find("]") + 1] if name.startswith("[") else name.rsplit(":", 1)[0]
    return is_loopback_name(name)


def is_loopback_name(name: str) -> bool:
    """A host name or address (no port) that is this machine only."""
    return name.lower() in LOOPBACK_HOSTS or _is_loopback(name)
