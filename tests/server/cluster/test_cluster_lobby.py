"""The lobby list of a real cluster: ``list_rooms`` on any node lists every live node's open
rooms (real server processes on the session's PostgreSQL and Redis)."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from protocol.messages import Create, Joined, Leave, Left, ListRooms, Rooms
from server.cluster.keys import Keys
from tests.server.cluster.harness import DEFAULT_TTL, running_cluster
from tests.services import RedisServer
from tests.wsclient import Client

REFRESH = DEFAULT_TTL / 3
"""How often each node publishes its rooms and reads the others'."""


async def listed(client: Client) -> list[str]:
    await client.send(ListRooms())
    return [info.room for info in (await client.expect(Rooms)).rooms]


async def until_listed(client: Client, expected: list[str], within: float = 5.0) -> float:
    """Ask again until the list is ``expected``: how long it took."""
    began = time.monotonic()
    while (found := await listed(client)) != expected:
        assert time.monotonic() - began < within, f"listed {found}, expected {expected}"
        await asyncio.sleep(0.05)
    return time.monotonic() - began


async def test_every_node_lists_every_live_nodes_open_rooms(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        one, two = cluster.node(0), cluster.node(1)
        alice = await Client.connect(one.url, "alice")
        bob = await Client.connect(two.url, "bob")
        await alice.send(Create())
        first = (await alice.expect(Joined)).room
        await alice.state()
        await asyncio.sleep(0.2)  # opened later, on the wall clock both nodes share
        await bob.send(Create())
        second = (await bob.expect(Joined)).room
        await bob.state()
        private = await Client.connect(one.url, "carol")
        await private.send(Create(private=True))
        await private.expect(Joined)
        await private.state()
        # Newest first; a node lists its own rooms at once, the other node's within a refresh.
        took = await until_listed(alice, [second, first])
        assert took < 3 * REFRESH + 1.0
        await until_listed(bob, [second, first])
        # A room that stops being open leaves the other node's list as soon.
        await alice.send(Leave())
        await alice.expect(Left)
        await until_listed(bob, [second])
        # A node stopping takes its rooms off the list in Redis at once, not a TTL later.
        watcher = await Client.connect(one.url, "dave")
        assert await listed(watcher) == [second]
        assert await two.stop() == 0  # bob still waits in his room
        assert await redis.hlen(Keys(redis_prefix).lobby(two.node_id)) == 0
        await until_listed(watcher, [], within=3 * REFRESH + 1.0)
        await asyncio.gather(watcher.close(), private.close(), alice.close(), bob.close())
