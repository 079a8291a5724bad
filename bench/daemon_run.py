"""Running the real daemon (`python -m voiced run ...`) in a subprocess on one audio file or text
session, with what the benchmark needs from the outside: the events, the child's peak RSS
(VmHWM sampled from /proc/<pid>/status) and, on request, its CPU time sampled from
/proc/<pid>/stat.

Not wait4's ru_maxrss: on Linux the child inherits, at exec, the high-water mark of the memory
it was forked from, so every daemon reported the benchmark process's own size once that was
larger (a constant 493 MB in one full run while a daemon peaks at 250-300 MB)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

FAST_SIM = "[simulator]\ntime_scale = 0.02\n"


def settings_toml(settings: tuple[str, ...], sections: dict[str, list[str]] | None = None) -> str:
    """TOML for `section.key=value` settings (values in TOML syntax), merged into `sections`."""
    merged = {name: list(lines) for name, lines in (sections or {}).items()}
    for setting in settings:
        name, value = setting.split("=", 1)
        section, key = name.strip().split(".", 1)
        merged.setdefault(section, []).append(f"{key} = {value.strip()}")
    return "".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in merged.items())


"""Motion 50x faster than real time: the accuracy and latency runs only need the arm to finish,
and a busy arm would delay the next command's first primitive. Stop runs use the default (1.0)
so that "stop" lands while the arm is still moving."""
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    events: list[dict[str, Any]]
    returncode: int
    wall_s: float
    max_rss_kb: int
    stderr_tail: str = ""
    cpu: list[tuple[float, float]] = field(default_factory=list)
    """(wall seconds since launch, CPU seconds used by the daemon) samples."""


def run(
    cell: str,
    *,
    audio: Path | None = None,
    text: str | None = None,
    fast: bool = True,
    mode: str | None = None,
    config: str = FAST_SIM,
    sample_cpu: bool = False,
    timeout: float = 900,
    extra: tuple[str, ...] = (),
) -> Run:
    """One daemon run; audio file or text session (exactly one); `extra` more arguments."""
    with tempfile.TemporaryDirectory(prefix="voiced-bench-") as tmp:
        cfg = Path(tmp) / "config.toml"
        cfg.write_text(config, encoding="utf-8")
        events = Path(tmp) / "events.jsonl"
        cmd = [sys.executable, "-m", "voiced", "run", "--config", str(cfg), "--cell", cell,
               "--controller", "sim", "--events", str(events)]  # fmt: skip
        cmd += ["--audio", str(audio)] if audio is not None else ["--text", "-"]
        cmd += ["--fast"] if fast and audio is not None else []
        cmd += ["--mode", mode] if mode else []
        cmd += list(extra)
        return _execute(cmd, _env(Path(tmp)), text, events, sample_cpu, timeout)


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VOICED_", "NOTIFY_", "WATCHDOG_"))}  # fmt: skip
    env.pop("ANTHROPIC_API_KEY", None)  # offline, as the targets say
    env["VOICED_DATA_DIR"] = str(tmp / "data")
    return env


def _execute(
    cmd: list[str], env: dict[str, str], text: str | None, events: Path, sample_cpu: bool,
    timeout: float,
) -> Run:  # fmt: skip
    began = time.monotonic()
    with open(events.with_suffix(".err"), "w+b") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=err, env=env)  # fmt: skip
        cpu: list[tuple[float, float]] = []
        hwm: list[int] = []
        # VmHWM only grows, so its last sample is the peak up to 0.1 s before exit.
        samplers = [_poll(lambda: peak_rss_kb(proc.pid), hwm.append, 0.1)]
        if sample_cpu:
            stamped = lambda c: cpu.append((time.monotonic() - began, c))  # noqa: E731
            samplers.append(_poll(lambda: cpu_seconds(proc.pid), stamped, 0.5))
        assert proc.stdin is not None
        proc.stdin.write((text or "").encode())
        proc.stdin.close()
        status, rusage = _wait(proc, timeout)
        for sampler in samplers:
            sampler.join()
        rusage = max(hwm, default=rusage)
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
    return Run(_read_events(events), status, time.monotonic() - began, rusage, tail, cpu)


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, int]:
    """Exit status and wait4's ru_maxrss (kB) of the child: an upper bound only (see above)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, int(usage.ru_maxrss)
        if time.monotonic() > deadline:
            proc.kill()
        time.sleep(0.05)


def _poll(read: Callable[[], T | None], keep: Callable[[T], object], period: float
          ) -> threading.Thread:  # fmt: skip
    """A thread that keeps `read()` every `period` seconds until it gives None (the process
    has gone)."""

    def loop() -> None:
        while (value := read()) is not None:
            keep(value)
            time.sleep(period)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def peak_rss_kb(pid: int) -> int | None:
    """VmHWM of `pid` in kB, None once it has gone (a zombie has no memory lines)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of `pid` (fields 14 and 15 of /proc/<pid>/stat), None once it has gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def final_state(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    finals = [e["state"] for e in events if e["event"] == "final_state"]
    return finals[-1] if finals else None
