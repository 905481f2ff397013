"""The cluster's deployment: deploy/compose.cluster.yaml and Caddyfile.cluster checked without
Docker, and deploy/localcluster.py (its documented equivalent) run for real."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from protocol.messages import AiSpec, Create, Joined, MoveRequest
from server.config import Config
from tests.deploy.test_deploy import (
    DEPLOY,
    EXAMPLE_DOMAIN,
    ROOT,
    SERVER_VARIABLES,
    SHUTDOWN_SECONDS,
    config_from,
    interpolate,
    seconds,
)
from tests.services import RedisServer, _postgres_bin, free_port
from tests.wsclient import Client

CLUSTER_SETTINGS = ("redis", "redis_prefix", "node_id", "lease_ttl", "advertise", "cluster_secret")
SECRETS = {
    "QUORIDOR_DOMAIN": EXAMPLE_DOMAIN,
    "POSTGRES_PASSWORD": "pg-password",
    "QUORIDOR_CLUSTER_SECRET": "the cluster secret",
}
"""What deploy/.env holds (compose reads it)."""


def compose() -> dict[str, Any]:
    document = yaml.safe_load((DEPLOY / "compose.cluster.yaml").read_text())
    assert isinstance(document, dict)
    return document


def services() -> dict[str, Any]:
    found = compose()["services"]
    assert isinstance(found, dict)
    return found


def nodes() -> dict[str, Any]:
    return {name: s for name, s in services().items() if name.startswith("node")}


def environment(service: str, env: Mapping[str, str] = SECRETS) -> dict[str, str]:
    raw = services()[service].get("environment", {})
    assert isinstance(raw, dict), "environment: use the mapping form"
    return {str(key): interpolate(str(value), env) for key, value in raw.items()}


def node_config(name: str) -> Config:
    return config_from(environment(name))


def caddy_upstreams() -> tuple[list[str], str]:
    """The Caddyfile's reverse_proxy upstreams and the text of its block."""
    text = re.sub(r"#[^\n]*", "", (DEPLOY / "Caddyfile.cluster").read_text())
    match = re.search(r"\breverse_proxy\s+([^{\n]+)\{([^}]*)\}", text)
    assert match, "no reverse_proxy block"
    return match.group(1).split(), match.group(2)


# -- compose.cluster.yaml ------------------------------------------------------------------


def test_the_cluster_has_several_nodes_a_database_a_redis_and_caddy() -> None:
    assert len(nodes()) >= 2
    assert {"postgres", "redis", "caddy"} <= set(services())
    for name, node in nodes().items():
        build = node["build"]
        assert (DEPLOY / build["context"]).resolve() == ROOT, name
        assert (ROOT / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile", name
        assert "ports" not in node, f"{name}: only Caddy should be reachable from outside"
        conditions = {s: d["condition"] for s, d in node["depends_on"].items()}
        assert conditions == {"postgres": "service_healthy", "redis": "service_healthy"}


def test_every_variable_the_cluster_files_name_is_one_the_server_reads() -> None:
    for name in ("compose.cluster.yaml", "Caddyfile.cluster"):
        named = set(re.findall(r"\bQUORIDOR_[A-Z][A-Z0-9_]*", (DEPLOY / name).read_text()))
        unknown = named - SERVER_VARIABLES - {"QUORIDOR_DOMAIN"}
        assert not unknown, f"deploy/{name} names variables the server does not read: {unknown}"


def test_every_node_is_a_cluster_node_of_the_same_cluster() -> None:
    configs = {name: node_config(name) for name in nodes()}
    for name, config in configs.items():
        database = urlsplit(config.db)
        assert database.scheme == "postgresql", name
        assert database.hostname == "postgres", name
        assert database.password == SECRETS["POSTGRES_PASSWORD"]
        assert urlsplit(config.redis).hostname == "redis", name
        assert config.cluster_secret == SECRETS["QUORIDOR_CLUSTER_SECRET"]
        # Other nodes reach it by its service name on the compose network, at its port.
        assert config.advertise == f"{name}:{config.port}"
        assert config.host == "0.0.0.0"
        assert config.origin_list == [f"https://{EXAMPLE_DOMAIN}"]
    shared = {(c.db, c.redis, c.redis_prefix, c.lease_ttl) for c in configs.values()}
    assert len(shared) == 1, "every node must use the same database, Redis and secret"
    ids = [config.node_id for config in configs.values()]
    assert len(set(ids)) == len(ids), f"node ids must be unique: {ids}"


def test_compose_requires_the_secrets() -> None:
    for missing in SECRETS:
        env = {k: v for k, v in SECRETS.items() if k != missing}
        with pytest.raises(AssertionError, match=missing):
            environment("node1", env)


def test_postgres_keeps_its_data_and_shares_the_nodes_password() -> None:
    postgres = services()["postgres"]
    assert postgres["image"].startswith("postgres:")
    assert any(v.endswith(":/var/lib/postgresql/data") for v in postgres["volumes"])
    env = environment("postgres")
    database = urlsplit(node_config("node1").db)
    assert env["POSTGRES_USER"] == database.username
    assert env["POSTGRES_PASSWORD"] == database.password
    assert env["POSTGRES_DB"] == database.path.lstrip("/")
    assert "pg_isready" in postgres["healthcheck"]["test"]


def test_redis_keeps_nothing_and_never_evicts() -> None:
    command = services()["redis"]["command"]
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--save"] == ""
    assert options["--appendonly"] == "no"
    assert options["--maxmemory-policy"] == "noeviction"
    assert "volumes" not in services()["redis"]


def test_nodes_stop_gracefully_before_compose_kills_them() -> None:
    for name, node in nodes().items():
        assert node.get("stop_signal", "SIGTERM") == "SIGTERM"
        grace = seconds(node["stop_grace_period"])
        assert grace >= 2 * SHUTDOWN_SECONDS + node_config(name).shutdown_delay, name


# -- Caddyfile.cluster ---------------------------------------------------------------------


def test_caddy_balances_across_every_node_and_checks_readiness() -> None:
    caddy = services()["caddy"]
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in caddy["volumes"]}
    assert (DEPLOY / mounts["/etc/caddy/Caddyfile"]).resolve() == DEPLOY / "Caddyfile.cluster"
    assert {"/data", "/config"} <= set(mounts)
    assert set(caddy["depends_on"]) == set(nodes())
    upstreams, block = caddy_upstreams()
    assert sorted(upstreams) == sorted(f"{n}:{node_config(n).port}" for n in nodes())
    settings = dict(line.split(None, 1) for line in block.strip().splitlines() if line.strip())
    assert settings["health_uri"] == "/readyz"
    assert settings["lb_policy"] in ("least_conn", "round_robin")
    assert "lb_try_duration" in settings, "a dead node's connection attempt must try another"
    text = (DEPLOY / "Caddyfile.cluster").read_text()
    assert re.search(r"\brespond\s+/metrics\s+40[34]\b", text), "/metrics must not be public"


def test_the_readme_documents_every_cluster_setting() -> None:
    readme = (DEPLOY / "README.md").read_text()
    for name in CLUSTER_SETTINGS:
        assert name in Config.__dataclass_fields__, f"server/config.py has no {name}"
        flag = "--" + name.replace("_", "-")
        assert f"| `{flag}` | `QUORIDOR_{name.upper()}` |" in readme, flag
    for service in ("PostgreSQL", "Redis"):
        assert f"| {service} " in readme
    for failure in ("killed", "stopped", "rolling restart", "Redis is lost", "PostgreSQL is lost"):
        assert failure in readme, failure


# -- python -m deploy.localcluster ---------------------------------------------------------


async def _line_with(process: asyncio.subprocess.Process, marker: str, seen: list[str]) -> str:
    assert process.stdout is not None
    while True:
        line = (await process.stdout.readline()).decode()
        assert line, f"the launcher exited: {seen}"
        seen.append(line)
        if marker in line:
            return line


def test_the_local_cluster_says_what_is_missing_without_the_tests_tools() -> None:
    """An operator's review: ``--help`` failed with a traceback (no pytest) before ``make
    .venv/.dev``. Without pytest (made unimportable here), ``--help`` works, and a start says
    what to run."""
    hide = "import runpy, sys; sys.modules['pytest'] = None; sys.argv[0] = 'localcluster'; "
    run = "runpy.run_module('deploy.localcluster', run_name='__main__')"

    def launch(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", hide + run, *args]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)

    helped, started = launch("--help"), launch()
    assert (helped.returncode, started.returncode) == (0, 1)
    assert helped.stdout.startswith("usage:")
    assert started.stderr == (
        "cannot start the cluster: pytest is not installed (this launcher starts Redis and "
        "PostgreSQL with the tests' tools): run `make .venv/.dev` first\n"
    )


async def test_the_local_cluster_starts_serves_a_game_and_stops_on_ctrl_c() -> None:
    RedisServer()  # skips (or fails under CI) with a hint when redis-server is missing
    if _postgres_bin() is None:
        pytest.skip("PostgreSQL (initdb) not found")  # RedisServer's hint applies
    redis_port, postgres_port = free_port(), free_port()  # chosen (the review: no way to)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "deploy.localcluster",
        "--nodes",
        "2",
        "--port",
        "0",
        "--redis-port",
        str(redis_port),
        "--postgres-port",
        str(postgres_port),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    seen: list[str] = []
    try:
        async with asyncio.timeout(90):
            url = (await _line_with(process, "connect to ", seen)).split()[2]
        assert len([line for line in seen if line.startswith("node")]) == 2
        assert f"redis redis://127.0.0.1:{redis_port}/0" in seen[-3]
        assert f"@127.0.0.1:{postgres_port}/quoridor" in seen[-2]
        first = next(line for line in seen if line.startswith("node1"))
        logs = Path(first.split("log: ")[1].strip()).parent
        assert logs.is_dir()
        player = await Client.connect(url, "alice")
        await player.send(Create(ai=AiSpec(level=1, seconds=0.05)))
        await player.expect(Joined)
        await player.send(MoveRequest(move="e2", ply=0))
        state = await player.state()
        while state.ply < 2:  # the move, then the computer's answer
            state = await player.state()
        assert state.moves[0] == "e2"
        process.send_signal(signal.SIGINT)
        code, _ = await player.closed(within=30)
        assert code == 1012  # the node said it was restarting: the client may resume
        async with asyncio.timeout(60):
            assert await process.wait() == 0
            await _line_with(process, "stopped", seen)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    # Nothing it started listens any more: nodes, Redis, PostgreSQL, the balancer.
    ports = [int(re.findall(r":(\d+)", line)[0]) for line in seen if re.search(r":\d+", line)]
    assert len(ports) == 2 + 3
    # Its logs' folder is gone too (the review found 18 left in /tmp; --keep-logs keeps it).
    assert not logs.exists()
    for port in ports:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
