"""Node addresses on a real Redis: published, refreshed, gone within a TTL of a stop."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from server.cluster.keys import Keys
from server.cluster.nodes import NodeAddresses


async def test_a_live_node_is_found_and_a_dead_one_is_not(redis: Redis, keys: Keys) -> None:
    a = NodeAddresses(redis, keys, "a", "10.0.0.1:8765", ttl=0.3)
    b = NodeAddresses(redis, keys, "b", "10.0.0.2:8765", ttl=0.3)
    a.start()
    await a.publish()
    assert await b.of("a") == "10.0.0.1:8765"
    assert await b.of("b") == "10.0.0.2:8765"  # itself, without asking Redis
    assert await a.of("nobody") is None
    await asyncio.sleep(0.5)  # refreshed every third of the TTL: still there
    assert await b.of("a") == "10.0.0.1:8765"
    await a.stop()  # a graceful stop withdraws it at once
    assert await b.of("a") is None
    await a.publish()  # a node that dies without a word: gone within the TTL
    await asyncio.sleep(0.4)
    assert await b.of("a") is None


async def test_a_missing_address_is_waited_for_up_to_a_ttl(redis: Redis, keys: Keys) -> None:
    """A live node whose key lapsed (it stalled past a refresh) is found once it publishes
    again; a dead node's address is given up on after a TTL."""
    a = NodeAddresses(redis, keys, "a", "10.0.0.1:8765", ttl=0.5)
    b = NodeAddresses(redis, keys, "b", "10.0.0.2:8765", ttl=0.5)
    assert await b.of("a") is None

    async def publish_late() -> None:
        await asyncio.sleep(0.2)
        await a.publish()

    late = asyncio.create_task(publish_late())
    assert await b.reach("a") == "10.0.0.1:8765"
    await late
    started = asyncio.get_running_loop().time()
    assert await b.reach("nobody") is None
    assert asyncio.get_running_loop().time() - started >= 0.5
