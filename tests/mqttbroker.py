"""A real mosquitto on a free loopback port, and a small aiomqtt reader, for the MQTT tests.

`.ci/dev` installs mosquitto; where it is missing the tests that need it are skipped."""

from __future__ import annotations

import asyncio
import getpass
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiomqtt
import pytest

from tests.ports import free_port

MOSQUITTO = shutil.which("mosquitto") or (
    "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
)
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd")
needs_mosquitto = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed")


@dataclass
class Mosquitto:
    """One broker; `restart()` keeps its port (a broker that went away and came back)."""

    directory: Path
    port: int
    password_file: Path | None = None
    tls: tuple[Path, Path] | None = None
    """The server's certificate and key: the listener speaks TLS only."""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        path = self.directory / "mosquitto.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self) -> None:
        assert MOSQUITTO is not None
        conf = self.directory / "mosquitto.conf"
        auth = (
            f"allow_anonymous false\npassword_file {self.password_file}\n"
            if self.password_file is not None
            else "allow_anonymous true\n"
        )
        if self.tls is not None:
            auth += f"certfile {self.tls[0]}\nkeyfile {self.tls[1]}\n"
        conf.write_text(
            # Run as root, mosquitto would switch to its own user, who cannot read this directory.
            f"user {getpass.getuser()}\nlistener {self.port} 127.0.0.1\n{auth}persistence false\n"
            f"log_dest file {self.directory / 'mosquitto.log'}\nlog_type all\n",
            encoding="utf-8",
        )
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.process.poll() is not None:
                assert self.process.stderr is not None
                raise RuntimeError(f"mosquitto exited: {self.process.stderr.read()!r} {self.log}")
            time.sleep(0.02)
        raise RuntimeError("mosquitto did not listen within 10 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def mosquitto(
    directory: Path, users: dict[str, str] | None = None, tls: tuple[Path, Path] | None = None
) -> Iterator[Mosquitto]:
    """A broker for one test; with `users`, only they may connect (a password file); with
    `tls` (certificate, key), over TLS only."""
    directory.mkdir(parents=True, exist_ok=True)
    broker = Mosquitto(directory, free_port(), tls=tls)
    if users:
        assert MOSQUITTO_PASSWD is not None, "mosquitto_passwd comes with mosquitto"
        broker.password_file = directory / "passwords"
        broker.password_file.touch()
        for user, password in users.items():
            subprocess.run([MOSQUITTO_PASSWD, "-b", str(broker.password_file), user, password],
                           check=True, capture_output=True)  # fmt: skip
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


async def retained(port: int, topics: list[str], settle: float = 0.5) -> dict[str, bytes]:
    """What the broker holds under `topics` (filters) right now: retained messages only."""
    found: dict[str, bytes] = {}
    async with aiomqtt.Client("127.0.0.1", port) as client:
        for topic in topics:
            await client.subscribe(topic)
        try:
            async with asyncio.timeout(settle):
                async for message in client.messages:
                    if message.retain and isinstance(message.payload, bytes):
                        found[message.topic.value] = message.payload
        except TimeoutError:
            pass
    return found


async def wait_for(
    client: aiomqtt.Client, topic: str, want: bytes | None = None, timeout: float = 20
) -> bytes:
    """The next message on `topic` (that is `want`, if given); the client must subscribe."""
    async with asyncio.timeout(timeout):
        async for message in client.messages:
            payload = message.payload
            mine = message.topic.value == topic and isinstance(payload, bytes)
            if mine and (want is None or payload == want):
                assert isinstance(payload, bytes)
                return payload
    raise AssertionError(f"nothing on {topic}")


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1 signed by it (openssl):
    (ca.pem, server.pem, server.key)."""
    ca, ca_key = directory / "ca.pem", directory / "ca.key"
    cert, key, request = (
        directory / "server.pem",
        directory / "server.key",
        directory / "server.csr",
    )
    ext = directory / "server.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")  # fmt: skip
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for command in (
        ["req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", "/CN=test CA"],
        ["req", *ec, "-keyout", key, "-out", request, "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", ext],
    ):  # fmt: skip
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True)
    return ca, cert, key
