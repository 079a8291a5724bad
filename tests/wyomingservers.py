"""The real Wyoming programs the tests talk to, each a subprocess on a free loopback port.

- `SpeechServer`: wyoming-faster-whisper with the bundled tiny.en (never downloaded), from the
  test's own environment (the `dev` extra installs it).
- `Satellite`: wyoming-satellite 1.0.0 from `.venv-satellite/` (it pins wyoming 1.4, which the
  daemon's environment cannot have; `.ci/dev` makes it), its microphone a paced clip
  (`tests/e2e/pacedmic.py`) and its speaker a raw file.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.ports import free_port

REPO = Path(__file__).resolve().parents[1]
SATELLITE_VENV = REPO / ".venv-satellite"
PACED_MIC = REPO / "tests" / "e2e" / "pacedmic.py"
START_TIMEOUT_S = 60.0
"""Loading the model on a busy two-core machine can take several seconds."""


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Return once `port` accepts connections; fail if `process` dies first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited ({process.returncode}) before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listened on port {port} within {timeout} s")


def tiny_model() -> Path:
    from voiced.audio.whisper import default_model_path

    return default_model_path()


@dataclass
class SpeechServer:
    """wyoming-faster-whisper on `port`; `start` and `stop` may be called again and again."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "wyoming_faster_whisper", "--uri", self.uri,
             "--model", str(tiny_model()), "--data-dir", str(self.data_dir),
             "--local-files-only", "--stt-library", "faster-whisper", "--language", "en",
             "--beam-size", "1", "--cpu-threads", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port, self.process, START_TIMEOUT_S)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


@contextmanager
def speech_server(data_dir: Path) -> Iterator[SpeechServer]:
    server = SpeechServer(data_dir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def satellite_python() -> Path | None:
    """The side environment's interpreter, if it has wyoming-satellite."""
    python = SATELLITE_VENV / "bin" / "python"
    if not python.is_file():
        return None
    found = subprocess.run(
        [str(python), "-c", "import wyoming_satellite"], capture_output=True, check=False
    )
    return python if found.returncode == 0 else None


@dataclass(frozen=True)
class Satellite:
    process: subprocess.Popen[bytes]
    uri: str
    """`wyoming://127.0.0.1:PORT`, for `--audio`."""
    trigger: Path
    """Create this file to have the microphone say its next clip."""
    speaker: Path
    """What the satellite played: raw s16le mono at `speaker_rate`."""
    speaker_rate: int


@contextmanager
def satellite(
    python: Path, tmp: Path, clips: list[Path], speaker_rate: int = 22050, port: int | None = None
) -> Iterator[Satellite]:
    """wyoming-satellite streaming always (no wake word or VAD of its own): the daemon does.
    Its microphone says the next of `clips` (raw s16le 16 kHz) each time `trigger` is made."""
    port = port or free_port()
    trigger, speaker = tmp / "say-now", tmp / "speaker.raw"
    mic = " ".join(map(str, [python, PACED_MIC, trigger, *clips]))
    process = subprocess.Popen(
        [str(python), "-m", "wyoming_satellite", "--uri", f"tcp://127.0.0.1:{port}",
         "--name", "test satellite", "--no-zeroconf", "--mic-command", mic,
         "--snd-command", f"sh -c 'cat >> {speaker}'",
         "--snd-command-rate", str(speaker_rate)],
        stdout=subprocess.DEVNULL, stderr=(tmp / "satellite.log").open("wb"),
    )  # fmt: skip
    try:
        wait_for_port(port, process, START_TIMEOUT_S)
        yield Satellite(process, f"wyoming://127.0.0.1:{port}", trigger, speaker, speaker_rate)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
