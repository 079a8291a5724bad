"""glibc's malloc arenas, limited before the daemon starts its threads.

glibc gives each thread that allocates while another holds the lock an arena of its own, up to
eight per core, and memory freed in one is kept there for that arena's next use. The daemon's
threads (CTranslate2's, the decoding workers asyncio lends, the keyword models') each keep
theirs: on six coffee orders in kitchen noise with Whisper base the daemon's peak RSS was
461-469 MB with glibc's default and 401-433 MB with two arenas (README, Whisper base).

`MALLOC_ARENA_MAX` in the environment is glibc's own setting and wins (the glibc tunable
`glibc.malloc.arena_max` does not: this call sets the same limit after it); this sets it from
inside, for a daemon started without it (`voiced run`, `voiced demo`, a test, a bench); the
limit in effect is logged at start (`malloc arenas`).
"""

from __future__ import annotations

import ctypes
import os

M_ARENA_MAX = -8
"""mallopt's parameter number for the arena limit (glibc's malloc.h)."""

ARENAS = 2


def limit_arenas(count: int = ARENAS, environ: dict[str, str] | None = None) -> int | None:
    """Limit malloc to `count` arenas for the threads started from now on; the limit set (the
    environment's, if it names one), or None where the C library has no such setting."""
    env = os.environ if environ is None else environ
    given = env.get("MALLOC_ARENA_MAX", "").strip()
    if given.isdigit():
        return int(given)  # glibc read it at start
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # no C library to ask (TypeError: Windows)
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    if mallopt(M_ARENA_MAX, count) != 1:  # 1 is success; musl's stub returns 0
        return None
    return count
