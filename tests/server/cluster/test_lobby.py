"""The cluster-wide lobby list on a real Redis: every node's rooms, a dead node's gone, healed
after Redis lost it."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from server.cluster.keys import Keys, connect
from server.cluster.lobby import Lobby
from tests.services import RedisServer


async def test_every_node_sees_every_nodes_rooms_and_a_dead_nodes_leave(
    redis: Redis, other_redis: Redis, keys: Keys
) -> None:
    a = Lobby(redis, keys, "node-a", ttl=0.5)
    b = Lobby(other_redis, keys, "node-b", ttl=0.5)
    await a.publish("AAAA", b"alice waits")
    await b.publish("BBBB", b"bob waits")
    await b.publish("CCCC", b"carol waits")
    await b.withdraw("CCCC")
    assert await a.rooms() == {"AAAA": b"alice waits", "BBBB": b"bob waits"}
    await a.publish("AAAA", b"alice plays")  # an update replaces the entry
    for _ in range(4):  # a keeps refreshing, b has died
        await asyncio.sleep(0.2)
        await a.refresh()
    assert await b.rooms() == {"AAAA": b"alice plays"}


async def test_a_node_writes_its_rooms_again_after_redis_lost_them(
    own_redis: RedisServer, redis_prefix: str
) -> None:
    client = connect(own_redis.url)
    lobby = Lobby(client, Keys(redis_prefix), "node-a")
    await lobby.publish("AAAA", b"one")
    await lobby.publish("BBBB", b"two")
    own_redis.restart()
    assert await lobby.rooms() == {}
    await lobby.refresh()
    assert await lobby.rooms() == {"AAAA": b"one", "BBBB": b"two"}
    await client.aclose()
