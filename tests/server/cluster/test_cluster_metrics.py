"""A cluster node's metrics (``quoridor_cluster_*{node}``), from real node processes."""

from __future__ import annotations

import asyncio
import re
import signal
import time
from collections.abc import Callable

from protocol.messages import Create, Joined, MoveRequest
from tests.http import get as http_get
from tests.server.cluster.harness import Node, running_cluster
from tests.server.cluster.test_node import resume_anywhere
from tests.server.test_store import seat_two
from tests.services import RedisServer
from tests.wsclient import Client


async def figures(port: int, node: str) -> dict[str, float]:
    """Every ``quoridor_cluster_*{node="..."}`` value of the node on ``port``."""
    status, text = await http_get(port, "/metrics")
    assert status == 200
    pattern = rf'^quoridor_cluster_(\w+?)(?:_total)?\{{node="{node}"\}} (\S+)$'
    return {name: float(value) for name, value in re.findall(pattern, text, re.M)}


async def test_a_node_exports_its_cluster_figures_labelled_with_its_id(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        one, two = cluster.node(0), cluster.node(1)
        fresh = await figures(one.port, "n1")
        assert fresh["up"] == 1.0
        assert fresh["rooms_owned"] == fresh["takeovers"] == fresh["leases_lost"] == 0.0
        alice = await Client.connect(one.url, "alice")
        await alice.send(Create())
        await alice.expect(Joined)
        a, b, _ = await seat_two(two.url)  # a game in play on the other node
        await a.send(MoveRequest(move="e2", ply=0))
        await a.state()
        await until(lambda got: got["rooms_owned"] == 1.0 and got["listed_here"] == 1.0, one, "n1")
        await until(lambda got: got["listed_elsewhere"] == got["listed_here"] == 1.0, two, "n2")
        assert (await figures(one.port, "n1"))["lease_renewals"] > 0
        # Node 2 dies; its game's players come back through the balancer, to node 1.
        await two.stop(signal.SIGKILL)
        back = await resume_anywhere(cluster.url, a.welcome, "alice")
        after = await figures(one.port, "n1")
        assert after["takeovers"] == 1.0
        assert after["rooms_owned"] == 2.0
        for client in (alice, a, b, back):
            await client.close()


async def until(
    condition: Callable[[dict[str, float]], bool], node: Node, name: str, within: float = 5.0
) -> None:
    """Scrape ``node`` until its figures meet ``condition``."""
    deadline = time.monotonic() + within
    while not condition(got := await figures(node.port, name)):
        assert time.monotonic() < deadline, got
        await asyncio.sleep(0.05)
