"""The malloc arena limit the daemon sets before it starts threads (voiced.service.arenas)."""

from __future__ import annotations

import platform

import pytest

from voiced.service.arenas import limit_arenas


def test_the_environments_setting_wins_and_is_left_to_glibc() -> None:
    assert limit_arenas(2, {"MALLOC_ARENA_MAX": "4"}) == 4


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt's arena limit is glibc's")
def test_without_one_the_limit_is_set_in_the_process() -> None:
    assert limit_arenas(2, {}) == 2
    assert limit_arenas(2, {"MALLOC_ARENA_MAX": "not a number"}) == 2
