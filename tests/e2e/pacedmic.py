"""A microphone for wyoming-satellite's `--mic-command`: raw s16le 16 kHz mono on stdout, in real
time, as a sound card delivers it.

    python pacedmic.py TRIGGER CLIP.raw

Silence, and CLIP each time the file TRIGGER appears (it is removed as the clip starts): the
test creates it once the daemon is linked, as the satellite drops what its microphone hears
before a client runs it. Standard library only: it runs in the satellite's own virtual
environment.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator

RATE = 16000
CHUNK_BYTES = 1024 * 2
"""What the satellite reads at a time (1024 samples of 16 bits)."""


def chunks(trigger: str, clip: bytes) -> Iterator[bytes]:
    silence = bytes(CHUNK_BYTES)
    while True:
        while not os.path.exists(trigger):
            yield silence
        os.remove(trigger)
        for start in range(0, len(clip), CHUNK_BYTES):
            yield clip[start : start + CHUNK_BYTES].ljust(CHUNK_BYTES, b"\0")


def main() -> None:
    trigger, clip_path = sys.argv[1], sys.argv[2]
    with open(clip_path, "rb") as f:
        clip = f.read()
    out = sys.stdout.buffer
    began, sent = time.monotonic(), 0
    for chunk in chunks(trigger, clip):
        out.write(chunk)
        out.flush()
        sent += len(chunk) // 2
        time.sleep(max(0.0, began + sent / RATE - time.monotonic()))


if __name__ == "__main__":
    # The satellite stops its microphone by closing the pipe or terminating the process.
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main()
