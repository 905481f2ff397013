"""Real Redis and PostgreSQL servers for the tests, started from the machine's own binaries.

No mocks: each server is the real program on a free port of 127.0.0.1, its data
in a temporary folder, ended when the test session (or the test that owns it)
ends. PostgreSQL refuses to run as root, so as root it runs as the ``postgres``
user (``runuser -u postgres``), as the Debian package sets it up.

Where a program is missing the tests that need it skip with a message saying how to
get it; under ``CI=true`` they fail instead (``.ci/run`` installs both).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

INSTALL_HINT = (
    "install it (Debian: apt-get install -y redis-server postgresql); "
    "under CI=true these tests fail instead of skipping"
)
POSTGRES_USER = "postgres"
"""The system account PostgreSQL runs as when the tests run as root."""
START_WITHIN = 30.0


def missing(what: str) -> None:
    """Skip (or, under CI, fail) the test for want of ``what``."""
    message = f"{what} not found: {INSTALL_HINT}"
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    """Until something accepts connections on ``port`` (or ``process`` exits)."""
    deadline = time.monotonic() + START_WITHIN
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{what} did not listen on port {port} within {START_WITHIN} s")


def _stop(process: subprocess.Popen[bytes], kill: bool = False) -> None:
    if process.poll() is None:
        if kill:
            process.kill()
        else:
            process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class RedisServer:
    """``redis-server`` without persistence on a free port; ``restart`` keeps the port."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            missing("redis-server")
        self.binary = str(binary)
        self.port = free_port()
        self.folder = tempfile.mkdtemp(prefix="quoridor-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.folder,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process, "redis-server")
        return self

    def stop(self, kill: bool = False) -> None:
        if self.process is not None:
            _stop(self.process, kill)
            self.process = None

    def restart(self) -> None:
        """Stop and start again on the same port: everything it held is gone, as after a
        crash of a Redis without persistence."""
        self.stop(kill=True)
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def _postgres_bin() -> Path | None:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``: Debian keeps them out of the
    PATH, under /usr/lib/postgresql/VERSION/bin (the newest wins)."""
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda f: int(Path(f).parent.name))
    for folder in reversed(folders):
        if (Path(folder) / "initdb").exists():
            return Path(folder)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PostgresServer:
    """A PostgreSQL cluster in a temporary folder, served on a free port.

    ``fsync=off``: the tests kill the server process, never the machine, and a
    killed process loses nothing the kernel already has; commits stay synchronous.
    """

    def __init__(self) -> None:
        folder = _postgres_bin()
        if folder is None:
            missing("PostgreSQL (initdb)")
        assert folder is not None
        self.bin = folder
        self.as_root = os.geteuid() == 0
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="quoridor-pg-"))
        self.data = self.folder / "data"
        self.user = POSTGRES_USER if self.as_root else (os.environ.get("USER") or "postgres")
        self.process: subprocess.Popen[bytes] | None = None
        if self.as_root:
            shutil.chown(self.folder, POSTGRES_USER, POSTGRES_USER)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            self.user,
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )

    def _command(self, *argv: str) -> list[str]:
        return ["runuser", "-u", POSTGRES_USER, "--", *argv] if self.as_root else list(argv)

    def _run(self, *argv: str) -> None:
        subprocess.run(self._command(*argv), check=True, capture_output=True, timeout=60)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A fresh, empty database ``name`` (dropped first if it exists): its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}".encode())
            admin.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)

    def pids(self) -> list[int]:
        """The postmaster and its children (the backends, the background workers)."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as stat:
                        parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                if parent == postmaster:
                    found.append(int(entry))
        return found

    def start(self) -> PostgresServer:
        self.process = subprocess.Popen(
            self._command(
                str(self.bin / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-h",
                "127.0.0.1",
                "-k",
                str(self.folder),
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ),
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "log", "ab"),  # noqa: SIM115 (the child keeps it)
        )
        wait_for_port(self.port, self.process, "postgres")
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        """Accepting connections is not accepting queries (recovery after a kill)."""
        deadline = time.monotonic() + START_WITHIN
        isready = str(self.bin / "pg_isready")
        while time.monotonic() < deadline:
            done = subprocess.run(
                [isready, "-h", "127.0.0.1", "-p", str(self.port), "-q"], check=False
            )
            if done.returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("postgres did not become ready")

    def stop(self, kill: bool = False) -> None:
        """Stop (fast shutdown), or with ``kill`` SIGKILL the postmaster as a crash would."""
        if self.process is not None:
            if kill:
                # runuser forwards signals it can; SIGKILL it cannot, so kill the server.
                pid = int((self.data / "postmaster.pid").read_text().split()[0])
                os.kill(pid, 9)
            else:
                subprocess.run(
                    self._command(
                        str(self.bin / "pg_ctl"), "-D", str(self.data), "stop", "-m", "fast"
                    ),
                    check=False,
                    capture_output=True,
                    timeout=60,
                )
            _stop(self.process)
            self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
