"""Who may press STOP: one row per case (peer, headers, configured token -> refusal or None)."""

from __future__ import annotations

import pytest

from voiced.page.stopcheck import refusal

TOKEN = "0123456789abcdef-token"
OWN = {"x-voiced-stop": "1", "host": "127.0.0.1:8765"}


@pytest.mark.parametrize(
    ("peer", "headers", "token", "refused"),
    [
        ("127.0.0.1", OWN, None, None),
        ("::1", {"x-voiced-stop": "1", "host": "[::1]:8765"}, None, None),
        ("::ffff:127.0.0.1", {"x-voiced-stop": "1", "host": "localhost:8765"}, None, None),
        ("127.0.0.1", {"host": "127.0.0.1:8765"}, None, "needs the x-voiced-stop header"),
        ("127.0.0.1", {**OWN, "host": "evil.example"}, None, "only through localhost"),
        ("192.0.2.7", OWN, None, "from another machine needs the token"),
        ("192.0.2.7", OWN, TOKEN, "from another machine needs the token"),
        ("192.0.2.7", {"authorization": f"Bearer {TOKEN}"}, TOKEN, None),
        ("192.0.2.7", {"authorization": f"bearer {TOKEN}", "host": "cell7"}, TOKEN, None),
        ("192.0.2.7", {"authorization": f"Bearer {TOKEN}x"}, TOKEN, "wrong token"),
        ("192.0.2.7", {"authorization": f"Bearer {TOKEN}"}, None, "wrong token"),
        ("127.0.0.1", {"authorization": "Bearer nope", **OWN}, TOKEN, "wrong token"),
        (None, OWN, None, "from another machine"),
    ],
)
def test_who_may_stop(
    peer: str | None, headers: dict[str, str], token: str | None, refused: str | None
) -> None:
    why = refusal(peer, headers, token)
    if refused is None:
        assert why is None
    else:
        assert why is not None and refused in why
