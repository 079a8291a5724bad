"""A microphone for wyoming-satellite's `--mic-command`: raw s16le 16 kHz mono on stdout, in real
time, as a sound card delivers it.

    python pacedmic.py TRIGGER CLIP.raw [CLIP.raw ...]

Silence, and the next CLIP each time the file TRIGGER appears (it is removed as the clip
starts): the test creates it once the daemon is linked (the satellite drops what its
microphone hears before a client runs it), and again when the next words are due. Standard
library only: it runs in the satellite's own virtual environment.
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


def chunks(trigger: str, clips: list[bytes]) -> Iterator[bytes]:
    silence = bytes(CHUNK_BYTES)
    for clip in clips:
        while not os.path.exists(trigger):
            yield silence
        os.remove(trigger)
        for start in range(0, len(clip), CHUNK_BYTES):
            yield clip[start : start + CHUNK_BYTES].ljust(CHUNK_BYTES, b"\0")
    while True:
        yield silence


def main() -> None:
    trigger, paths = sys.argv[1], sys.argv[2:]
    clips = []
    for path in paths:
        with open(path, "rb") as f:
            clips.append(f.read())
    out = sys.stdout.buffer
    began, sent = time.monotonic(), 0
    for chunk in chunks(trigger, clips):
        out.write(chunk)
        out.flush()
        sent += len(chunk) // 2
        time.sleep(max(0.0, began + sent / RATE - time.monotonic()))


if __name__ == "__main__":
    # The satellite stops its microphone by closing the pipe or terminating the process.
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main()
