"""The controller handshake's shared secret and challenge-response (docs/PROTOCOL.md).

On every connection the controller greets with a fresh nonce; the daemon answers with
HMAC-SHA256(key, "voiced1 <channel> <controller> <nonce>") cut to 128 bits, in hex. The key
never travels, an answer is good for one channel of one connection of one controller, and a
client without the key is refused (`ERR AUTH`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from voiced.errors import ControllerConnectionError

MIN_KEY_BYTES = 16
"""A key file must hold at least this much (a new one holds 32 random bytes, as hex)."""


def load_key(path: str | Path) -> bytes:
    """The key in `path` (its text without surrounding whitespace). Raises
    ControllerConnectionError naming the file when it cannot be read or is too short."""
    try:
        key = Path(path).read_bytes().strip()
    except OSError as exc:
        raise ControllerConnectionError(f"controller key {path}: {exc.strerror or exc}") from None
    if len(key) < MIN_KEY_BYTES:
        raise ControllerConnectionError(
            f"controller key {path}: {len(key)} bytes; a key needs at least {MIN_KEY_BYTES} "
            "(make one with `voiced keygen PATH`)"
        )
    return key


def new_key() -> str:
    """A new key: 32 random bytes as 64 hex digits."""
    return secrets.token_hex(32)


def new_nonce() -> str:
    return secrets.token_hex(8)


def mac(key: bytes, channel: str, controller: str, nonce: str) -> str:
    message = f"voiced1 {channel} {controller} {nonce}".encode("ascii")
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]


def verify(key: bytes, channel: str, controller: str, nonce: str, answer: str | None) -> bool:
    if answer is None:
        return False
    return hmac.compare_digest(mac(key, channel, controller, nonce), answer)
