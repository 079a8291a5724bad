"""`[page]` in config.toml: the old section's name is refused with what to write instead; the
STOP token is read from its file (relative to the config file) or refused naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from voiced.config import load_config, resolve_config_path
from voiced.errors import ConfigError
from voiced.page.server import read_token


def test_the_old_debug_viewer_section_names_its_new_name(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[debug_viewer]\nenabled = true\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(str(path))
    assert str(raised.value) == (
        f"{path}: debug_viewer: renamed [page]: the segments are shown on the cell's page "
        "(same keys: enabled, host, port, keep)"
    )


def test_the_token_is_read_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "stop.token").write_text("  a-long-enough-token-0123\n", encoding="utf-8")
    path = tmp_path / "config.toml"
    path.write_text('[page]\nenabled = true\ntoken_file = "stop.token"\n', encoding="utf-8")
    config = load_config(str(path))
    token = read_token(config.page, lambda value: resolve_config_path(config, value))
    assert token == "a-long-enough-token-0123"


@pytest.mark.parametrize(
    ("content", "why"), [(None, "cannot read"), ("short", "token shorter than 16")]
)
def test_a_missing_or_short_token_names_the_key(
    tmp_path: Path, content: str | None, why: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[page]\ntoken_file = "stop.token"\n', encoding="utf-8")
    if content is not None:
        (tmp_path / "stop.token").write_text(content, encoding="utf-8")
    config = load_config(str(path))
    with pytest.raises(ConfigError, match=f"page.token_file: {why}"):
        read_token(config.page, lambda value: resolve_config_path(config, value))
