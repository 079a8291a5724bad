"""Pixels of a PNG screenshot, stdlib only (8-bit RGB or RGBA, not interlaced: what Chromium
writes), so tests can look at what a page drew."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    data: bytes
    """Rows of unfiltered pixels, top to bottom."""

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        at = (y * self.width + x) * self.channels
        r, g, b = self.data[at : at + 3]
        return r, g, b

    def region(self, left: int, top: int, right: int, bottom: int) -> list[tuple[int, int, int]]:
        return [self.pixel(x, y) for y in range(max(top, 0), min(bottom, self.height))
                for x in range(max(left, 0), min(right, self.width))]  # fmt: skip


def read_png(path: Path) -> Image:
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat, header = 8, b"", b""
    while at < len(raw):
        (length,) = struct.unpack(">I", raw[at : at + 4])
        kind, body = raw[at + 4 : at + 8], raw[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and not interlace, "only 8-bit RGB(A), not interlaced"
    channels = 3 if colour == 2 else 4
    return Image(width, height, channels, _unfilter(zlib.decompress(idat), width * channels,
                                                     height, channels))  # fmt: skip


def _unfilter(data: bytes, stride: int, height: int, bpp: int) -> bytes:
    out = bytearray()
    previous = bytearray(stride)
    for row in range(height):
        kind = data[row * (stride + 1)]
        line = bytearray(data[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = previous[i], previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        out += line
        previous = line
    return bytes(out)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c
