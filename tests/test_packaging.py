"""voiced installs under one top-level name.

frames/, rules/, audio/ and robot/ sit beside voiced/ in the repository and install as
voiced.frames, voiced.rules, voiced.audio and voiced.robot (pyproject's package-dir). Nothing of
ours lands at the top of site-packages, so Robot Framework (whose package is `robot`) installs
next to voiced, and either can be uninstalled without touching the other's files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip", "-q"]
MAPPED = {
    "frames": "voiced.frames",
    "rules": "voiced.rules",
    "audio": "voiced.audio",
    "robot": "voiced.robot",
}


def packages_on_disk() -> set[str]:
    found = set()
    for top, name in [("voiced", "voiced"), *MAPPED.items()]:
        for init in (REPO / top).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO / top).parts
            found.add(".".join([name, *parts]))
    return found


def test_every_package_on_disk_is_installed_under_voiced() -> None:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    assert set(setuptools["packages"]) == packages_on_disk()
    assert setuptools["package-dir"] == {name: top for top, name in MAPPED.items()}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the tree (the build writes build/ and egg-info)."""
    source = tmp_path_factory.mktemp("source")
    for name in ["pyproject.toml", "README.md", "voiced", *MAPPED]:
        item = REPO / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(item, source / name)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("voiced-*.whl")
    return built


def test_the_wheel_has_one_top_level_name(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"voiced"}
    # The package data travels with the renamed packages.
    for data in [
        "voiced/robot/cells/sandwich.toml",
        "voiced/robot/rapid/VoicedMotion.mod",
        "voiced/page/page.html",
        "voiced/demo/sandwich.flac",
    ]:
        assert data in names


def test_voiced_and_robot_framework_side_by_side(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = subprocess.run(
        [*PIP, "install", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Robot Framework comes from this environment's site-packages (a dev dependency), voiced from
    # the wheel: PYTHONPATH is searched first, and the working directory is not the repository.
    env = {**os.environ, "PYTHONPATH": str(site)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True
        )

    both = run(
        "-c",
        "import robot, robot.version, voiced.robot.cell, voiced.audio.guards;"
        "print(robot.__file__); print(voiced.robot.cell.__file__); print(robot.version.VERSION)",
    )
    assert both.returncode == 0, both.stderr
    framework, ours, version = both.stdout.split()
    assert not framework.startswith(str(site)) and Path(framework).parent.name == "robot"
    assert ours.startswith(str(site / "voiced" / "robot"))
    assert version.startswith("7.")

    framework_cli = run("-m", "robot", "--version")
    assert "Robot Framework" in framework_cli.stdout + framework_cli.stderr

    cells = run("-m", "voiced.cli", "cells")
    assert cells.returncode == 0, cells.stderr
    assert "sandwich" in cells.stdout and "weld" in cells.stdout
