"""A cluster on this machine, without Docker: Redis, PostgreSQL, N nodes and a load balancer.

From the repository root, in the virtual environment ``make lint`` builds::

    .venv/bin/python -m deploy.localcluster                 # 3 nodes behind ws://127.0.0.1:8765
    .venv/bin/python -m deploy.localcluster --nodes 2 --port 9300

It starts the machine's own ``redis-server`` and PostgreSQL (``initdb`` into a temporary
folder; as the ``postgres`` user when run as root, since PostgreSQL refuses root), the nodes
(``python -m server`` in cluster mode, on the ports after ``--port``), and a round-robin TCP
load balancer on ``--port`` that sends each new connection to the next node whose
``/readyz`` says ready. It prints the address to connect to, and stops everything on Ctrl-C
(SIGINT) or SIGTERM. The data lives in temporary folders and is gone when it stops: this is
for trying the cluster out and for the benchmarks, not for keeping games
(deploy/compose.cluster.yaml is the real deployment; deploy/README.md says how to run it).

It starts Redis and PostgreSQL as the tests do (``tests/services.py``): the same programs,
found the same way, installed the same way (Debian: ``apt-get install -y redis-server
postgresql``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NOT_INSTALLED: str | None = None
"""The module this launcher needs that is missing: it starts Redis and PostgreSQL with the
tests' own code, which ``make .venv/.dev`` installs. ``--help`` works without it."""
try:
    import pytest

    from tests.services import PostgresServer, RedisServer, free_port, wait_for_port
except ModuleNotFoundError as missing:
    NOT_INSTALLED = missing.name

HOST = "127.0.0.1"
HEALTH_EVERY = 0.5
"""Seconds between two ``/readyz`` probes of each node by the load balancer."""


class Balancer:
    """A round-robin TCP load balancer, as a plain TCP proxy in front of the nodes would be.

    Each new connection goes to the next node, skipping those whose ``/readyz`` did not say
    200 at the last probe (a node stopping, or one that lost Redis or PostgreSQL) and those
    that refuse the connection; its bytes are then copied both ways as they are, websocket
    frames included, until either side closes. Nothing is sticky: a client that reconnects may
    land on any node.
    """

    def __init__(self, backends: Sequence[int], port: int = 0) -> None:
        self.backends = list(backends)
        self.port = port
        self.ready: set[int] = set(backends)
        self.connections = 0
        self._turn = itertools.count()
        self._server: asyncio.Server | None = None
        self._probe: asyncio.Task[None] | None = None
        self._pipes: set[asyncio.Task[None]] = set()

    async def start(self) -> Balancer:
        self._server = await asyncio.start_server(self._accept, HOST, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._probe = asyncio.create_task(self._probe_forever())
        return self

    def close(self) -> None:
        """Accept no more connections; those open go on."""
        if self._probe is not None:
            self._probe.cancel()
        if self._server is not None:
            self._server.close()

    async def stop(self) -> None:
        """Close, and cut every open connection."""
        self.close()
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    def _order(self) -> list[int]:
        """The backends to try for one connection: the ready ones from the next in turn,
        then the others (better a node that may answer than none)."""
        start = next(self._turn)
        turned = [
            self.backends[(start + i) % len(self.backends)] for i in range(len(self.backends))
        ]
        return [p for p in turned if p in self.ready] + [p for p in turned if p not in self.ready]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._pipes.add(task)
        try:
            for port in self._order():
                try:
                    upstream = await asyncio.open_connection(HOST, port)
                except OSError:
                    self.ready.discard(port)
                    continue
                self.connections += 1
                await _pipe_both_ways((reader, writer), upstream)
                return
        except asyncio.CancelledError:
            pass  # stopped: asyncio.start_server would log a cancelled handler as an error
        finally:
            self._pipes.discard(task)
            writer.close()

    async def _probe_forever(self) -> None:
        while True:
            ready = await asyncio.gather(*(_is_ready(port) for port in self.backends))
            self.ready = {port for port, ok in zip(self.backends, ready, strict=True) if ok}
            await asyncio.sleep(HEALTH_EVERY)


async def _pipe_both_ways(
    client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    async def copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()

    copies = [
        asyncio.create_task(copy(client[0], upstream[1])),
        asyncio.create_task(copy(upstream[0], client[1])),
    ]
    try:
        # When either side is done, so is the connection: a node that died closes its client.
        await asyncio.wait(copies, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in copies:
            task.cancel()
        await asyncio.gather(*copies, return_exceptions=True)
        upstream[1].close()


async def _is_ready(port: int) -> bool:
    """Whether the node on ``port`` answers ``GET /readyz`` with 200 within a second."""
    try:
        async with asyncio.timeout(1.0):
            reader, writer = await asyncio.open_connection(HOST, port)
            try:
                writer.write(b"GET /readyz HTTP/1.1\r\nHost: lb\r\nConnection: close\r\n\r\n")
                status_line = await reader.readline()
            finally:
                writer.close()
    except (OSError, TimeoutError):
        return False
    return status_line.split(b" ")[1:2] == [b"200"]


class Node:
    """One node: ``python -m server`` in a process group of its own, its log in a file."""

    def __init__(
        self, name: str, port: int, argv: Sequence[str], log: Path, secret: str = ""
    ) -> None:
        self.name = name
        self.port = port
        self.argv = list(argv)
        self.log = log
        self.secret = secret
        """The cluster's secret, handed over in the environment (``ps`` shows the argv)."""
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"ws://{HOST}:{self.port}"

    def start(self) -> Node:
        """Start the node and wait until it listens (it has then opened its database)."""
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "server", *self.argv],
                env={**os.environ, "QUORIDOR_CLUSTER_SECRET": self.secret},
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        wait_for_port(self.port, self.process, f"{self.name} (log: {self.log})")
        return self

    def send(self, sig: signal.Signals) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)

    def stop(self, sig: signal.Signals = signal.SIGTERM, within: float = 30.0) -> int | None:
        """Send ``sig`` and wait for the exit status (SIGKILL after ``within`` seconds)."""
        if self.process is None:
            return None
        self.send(sig)
        try:
            status = self.process.wait(within)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            status = self.process.wait()
        self.process = None
        return status


@dataclass
class LocalCluster:
    """Redis, PostgreSQL, ``nodes`` server processes and a :class:`Balancer`, on 127.0.0.1.

    ``port`` is the load balancer's (0: a free one); the nodes take the ``nodes`` ports after
    it (free ones when it is 0). ``node_args`` go to every node's command line.
    """

    nodes: int = 3
    port: int = 0
    lease_ttl: float = 3.0
    node_args: Sequence[str] = ()
    secret: str = field(default_factory=lambda: secrets.token_hex(16))
    redis: RedisServer | None = None
    postgres: PostgresServer | None = None
    database: str = ""
    servers: list[Node] = field(default_factory=list)
    balancer: Balancer | None = None
    logs: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="quoridor-cluster-")))
    keep_logs: bool = False
    """Leave the nodes' logs behind when stopping (``--keep-logs``; it says where)."""
    redis_port: int = 0
    """Redis's port (0: a free one)."""
    postgres_port: int = 0
    """PostgreSQL's port (0: a free one)."""

    @property
    def url(self) -> str:
        """Where players connect: the load balancer."""
        assert self.balancer is not None
        return f"ws://{HOST}:{self.balancer.port}"

    def node_port(self, index: int) -> int:
        return self.port + 1 + index if self.port else free_port()

    def node_argv(self, index: int, port: int) -> list[str]:
        """The cluster settings of node ``index`` (deploy/README.md, "A cluster")."""
        assert self.redis is not None
        argv = [
            "--db", self.database,
            "--host", HOST,
            "--port", str(port),
            "--redis", self.redis.url,
            "--node-id", f"node{index + 1}",
            "--lease-ttl", str(self.lease_ttl),
            "--advertise", f"{HOST}:{port}",
        ]  # fmt: skip
        return argv + list(self.node_args)

    async def start(self) -> LocalCluster:
        redis, postgres = RedisServer(), await asyncio.to_thread(PostgresServer)
        redis.port = self.redis_port or redis.port
        postgres.port = self.postgres_port or postgres.port
        self.redis = await asyncio.to_thread(redis.start)
        self.postgres = await asyncio.to_thread(postgres.start)
        self.database = await asyncio.to_thread(self.postgres.create_database, "quoridor")
        ports = [self.node_port(i) for i in range(self.nodes)]
        # One at a time: the first one creates the tables (the others would wait for its lock).
        for index, port in enumerate(ports):
            name = f"node{index + 1}"
            argv, log = self.node_argv(index, port), self.logs / f"{name}.log"
            node = Node(name, port, argv, log, self.secret)
            self.servers.append(node)
            await asyncio.to_thread(node.start)
        self.balancer = await Balancer(ports, self.port).start()
        return self

    async def stop(self) -> None:
        """Every node (SIGTERM: they save their games and close their clients with 1012,
        which the balancer still passes on), the balancer, then the services."""
        if self.balancer is not None:
            self.balancer.close()
        for node in self.servers:
            node.send(signal.SIGTERM)  # all at once: each takes a few seconds
        for node in self.servers:
            await asyncio.to_thread(node.stop)
        if self.balancer is not None:
            await self.balancer.stop()
        for service in (self.postgres, self.redis):
            if service is not None:
                await asyncio.to_thread(service.close)
        if not self.keep_logs:
            shutil.rmtree(self.logs, ignore_errors=True)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[LocalCluster]:
        try:
            yield await self.start()
        finally:
            await self.stop()


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m deploy.localcluster",
        description="Run a Quoridor cluster on 127.0.0.1: Redis, PostgreSQL, N nodes and a "
        "load balancer. Ctrl-C stops everything (its data is temporary).",
    )
    parser.add_argument("--nodes", type=int, default=3, help="how many nodes (default 3)")
    parser.add_argument(
        "--port",
        type=int,
        default=8765,
        help="the load balancer's port; the nodes listen on the ports after it "
        "(default 8765; 0 picks free ports)",
    )
    parser.add_argument("--lease-ttl", type=float, default=3.0, help="each node's --lease-ttl")
    parser.add_argument(
        "--redis-port", type=int, default=0, help="Redis's port (default: a free one)"
    )
    parser.add_argument(
        "--postgres-port", type=int, default=0, help="PostgreSQL's port (default: a free one)"
    )
    parser.add_argument(
        "--keep-logs",
        action="store_true",
        help="keep the nodes' logs when it stops (by default their folder is deleted)",
    )
    parser.add_argument(
        "node_args", nargs="*", metavar="-- NODE-FLAG", help="more flags for every node"
    )
    return parser.parse_args(argv)


async def serve(options: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    cluster = LocalCluster(
        options.nodes,
        options.port,
        options.lease_ttl,
        options.node_args,
        keep_logs=options.keep_logs,
        redis_port=options.redis_port,
        postgres_port=options.postgres_port,
    )
    async with cluster.running():
        assert cluster.redis is not None
        for node in cluster.servers:
            print(f"{node.name} {node.url}  log: {node.log}", flush=True)
        print(f"redis {cluster.redis.url}", flush=True)
        print(f"postgresql {cluster.database}", flush=True)
        print(f"connect to {cluster.url}  (Ctrl-C stops the cluster)", flush=True)
        await stop.wait()
        print("stopping", flush=True)
    if options.keep_logs:
        print(f"stopped; the nodes' logs are in {cluster.logs}", flush=True)
    else:
        print("stopped; the nodes' logs are deleted (--keep-logs keeps them)", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse(argv)
    if NOT_INSTALLED is not None:
        print(
            f"cannot start the cluster: {NOT_INSTALLED} is not installed (this launcher starts "
            "Redis and PostgreSQL with the tests' tools): run `make .venv/.dev` first",
            file=sys.stderr,
        )
        return 1
    try:
        asyncio.run(serve(options))
    except (pytest.skip.Exception, pytest.fail.Exception) as missing:
        # tests/services.py says what is missing and how to install it.
        print(f"cannot start the cluster: {missing}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
