"""voiced installs under one top-level name, and an installed wheel has what an integrator needs.

frames/, rules/, audio/ and robot/ sit beside voiced/ in the repository and install as
voiced.frames, voiced.rules, voiced.audio and voiced.robot (pyproject's package-dir); systemd/
installs as voiced.systemd (the unit files, data only). Nothing of ours lands at the top of
site-packages, so Robot Framework (whose package is `robot`) installs next to voiced, and either
can be uninstalled without touching the other's files. The wheel carries its licence, version and
project metadata, and `voiced print-unit` / `voiced print-config` work from it without the
repository.
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
    "systemd": "voiced.systemd",
}


def packages_on_disk() -> set[str]:
    found = set()
    for top, name in [("voiced", "voiced"), *MAPPED.items()]:
        for init in (REPO / top).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO / top).parts
            found.add(".".join([name, *parts]))
    return found


def folder_of(package: str) -> Path:
    top, _, rest = package.removeprefix("voiced.").partition(".")
    base = REPO / top if top in MAPPED else REPO / "voiced" / top
    return base.joinpath(*rest.split(".")) if rest else base


def test_every_package_on_disk_is_installed_under_voiced() -> None:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    declared = set(setuptools["packages"])
    code = packages_on_disk()
    assert code <= declared
    # The rest are folders of data (declared so the build does not warn about each), every one
    # with its files named in package-data.
    for package in declared - code:
        folder = folder_of(package)
        assert folder.is_dir() and not (folder / "__init__.py").exists(), package
        globs = setuptools["package-data"][package]
        assert any(f for glob in globs for f in folder.glob(glob)), package
    assert setuptools["package-dir"] == {name: top for top, name in MAPPED.items()}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the tree (the build writes build/ and egg-info)."""
    source = tmp_path_factory.mktemp("source")
    for name in ["pyproject.toml", "README.md", "LICENSE", "voiced", *MAPPED]:
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
        "voiced/systemd/voiced.service",
        "voiced/systemd/voiced.sysusers.conf",
        # The keyword models and the front end they are built on (with its licence notice).
        "voiced/audio/keyword/models/computer.npz",
        "voiced/audio/keyword/models/stop.npz",
        "voiced/audio/keyword/models/halt.npz",
        "voiced/audio/keyword/models/freeze.npz",
        "voiced/audio/keyword/data/speech_embedding.onnx",
        "voiced/audio/keyword/data/melspectrogram.npz",
        "voiced/audio/keyword/data/NOTICE",
    ]:
        assert data in names


@pytest.fixture(scope="module")
def site(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed on its own into an empty directory (its scripts in bin/)."""
    site = tmp_path_factory.mktemp("installed") / "site"
    proc = subprocess.run(
        [*PIP, "install", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return site


def test_voiced_and_robot_framework_side_by_side(site: Path, tmp_path: Path) -> None:
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


# -- what the wheel says about itself ------------------------------------------------------------


def metadata(wheel: Path) -> list[tuple[str, str]]:
    """The wheel's METADATA headers, in order (repeated ones kept)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        head = archive.read(name).decode("utf-8").split("\n\n", 1)[0]
    return [(key, value) for key, _, value in (line.partition(": ") for line in head.splitlines())]


def test_the_version_is_written_once() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "voiced.__version__"}


def test_the_wheel_carries_version_licence_and_urls(wheel: Path) -> None:
    from voiced import __version__

    fields = metadata(wheel)
    values = dict(fields)
    assert values["Version"] == __version__
    assert wheel.name.startswith(f"voiced-{__version__}-")
    # PEP 639: an SPDX expression and the file, no legacy License: field or licence classifier.
    assert values["License-Expression"] == "LicenseRef-Proprietary"
    assert values["License-File"] == "LICENSE"
    assert "License" not in values
    classifiers = [value for key, value in fields if key == "Classifier"]
    assert classifiers and not [c for c in classifiers if c.startswith("License ::")]
    assert "Private :: Do Not Upload" in classifiers
    urls = {value.split(", ", 1)[0] for key, value in fields if key == "Project-URL"}
    assert urls == {"Homepage", "Documentation", "Issues"}
    with zipfile.ZipFile(wheel) as archive:
        licence = archive.read(f"voiced-{__version__}.dist-info/licenses/LICENSE").decode()
    assert licence == (REPO / "LICENSE").read_text(encoding="utf-8")


def test_the_installed_wheel_prints_its_unit_and_config(site: Path, tmp_path: Path) -> None:
    """From the console script the wheel installs, away from the repository."""
    from voiced import __version__

    env = {**os.environ, "PYTHONPATH": str(site)}

    def voiced(*args: str) -> str:
        proc = subprocess.run(
            [str(site / "bin" / "voiced"), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    where = subprocess.run(
        [sys.executable, "-c", "import importlib.resources as r; print(r.files('voiced.systemd'))"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.strip() == str(site / "voiced" / "systemd"), where.stderr
    assert voiced("--version").strip() == f"voiced {__version__}"
    assert voiced("print-unit") == (REPO / "systemd" / "voiced.service").read_text("utf-8")
    sysusers = (REPO / "systemd" / "voiced.sysusers.conf").read_text("utf-8")
    assert voiced("print-unit", "--sysusers") == sysusers
    # The template is config.toml (tests/test_config.py keeps that equal to the defaults).
    assert voiced("print-config") == (REPO / "config.toml").read_text("utf-8")
