"""The cluster-wide room list on a real Redis: every live node's open rooms on every node,
newest first, without a Redis round trip per ``list_rooms``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from redis.asyncio import Redis

from server.cluster.directory import ClusterDirectory, keep_listing
from server.cluster.keys import Keys, connect
from server.cluster.lobby import Lobby
from server.directory import ListedRooms
from server.rooms import Room
from tests.server.test_seams import waiting_room
from tests.services import RedisServer


class Node:
    """What one node's adapter holds for the list: its rooms, directory and Redis lobby."""

    def __init__(self, redis: Redis, keys: Keys, name: str, start: float, ttl: float) -> None:
        self.rooms: dict[str, Room] = {}
        self.index = ListedRooms()
        # Monotonic clocks differ between nodes; the wall clock is shared.
        self.directory = ClusterDirectory(
            self.rooms, self.index, clock=lambda: start + 1000, wall_clock=lambda: 1000.0
        )
        self.lobby = Lobby(redis, keys, name, ttl)

    def open(self, code: str, opened: float, public: bool = True) -> Room:
        """A room opened at ``opened`` on the shared wall clock."""
        room = waiting_room(code, self.directory.clock() - 1000 + opened, public)
        self.rooms[code] = room
        self.index.note(room, room.listable())  # as the room host does (``RoomHost.note``)
        return room

    async def sync(self) -> None:
        """One round of ``keep_listing``."""
        await self.lobby.replace(self.directory.published())
        self.directory.heard(await self.lobby.others())

    def listed(self, limit: int = 10) -> list[str]:
        return [info.room for info in self.directory.listing(limit)]


async def test_every_node_lists_every_nodes_open_rooms_newest_first(
    redis: Redis, other_redis: Redis, keys: Keys
) -> None:
    a = Node(redis, keys, "node-a", start=5.0, ttl=3.0)
    b = Node(other_redis, keys, "node-b", start=900.0, ttl=3.0)
    a.open("a1", opened=1.0)
    b.open("b2", opened=2.0)
    a.open("a3", opened=3.0)
    b.open("hidden", opened=4.0, public=False)
    assert a.listed() == ["a3", "a1"]  # nothing heard yet: its own rooms, at once
    await a.sync()
    await b.sync()
    await a.sync()
    assert a.listed() == ["a3", "b2", "a1"]
    assert b.listed() == ["a3", "b2", "a1"]
    assert b.listed(limit=2) == ["a3", "b2"]
    # A room that fills up (or closes) leaves the other node's list at the next round.
    del a.rooms["a3"]
    a.open("a5", opened=5.0)
    await a.sync()
    await b.sync()
    assert b.listed() == ["a5", "b2", "a1"]
    # Its own list is always as it is now, never a stale copy of itself from Redis.
    b.rooms["b2"].seats[0] = None
    b.index.note(b.rooms["b2"], False)  # as the room host does
    assert b.listed() == ["a5", "a1"]


async def test_a_dead_nodes_rooms_leave_the_list_within_the_ttl(
    redis: Redis, other_redis: Redis, keys: Keys
) -> None:
    a = Node(redis, keys, "node-a", start=0.0, ttl=0.4)
    b = Node(other_redis, keys, "node-b", start=0.0, ttl=0.4)
    b.open("b1", opened=1.0)
    await b.sync()
    await a.sync()
    assert a.listed() == ["b1"]
    await asyncio.sleep(0.5)  # b died: it refreshes no more
    await a.sync()
    assert a.listed() == []


async def test_the_list_heals_after_redis_lost_everything_and_survives_its_absence(
    own_redis: RedisServer, redis_prefix: str
) -> None:
    keys = Keys(redis_prefix)
    clients = [connect(own_redis.url), connect(own_redis.url)]
    a = Node(clients[0], keys, "node-a", start=0.0, ttl=3.0)
    b = Node(clients[1], keys, "node-b", start=0.0, ttl=3.0)
    b.open("b1", opened=1.0)
    b.open("b2", opened=2.0)
    rounds = [
        asyncio.create_task(keep_listing(node.directory, node.lobby, every=0.05)) for node in (a, b)
    ]
    try:
        await _until(lambda: a.listed() == ["b2", "b1"])
        own_redis.stop(kill=True)
        await _until(lambda: a.listed() == [])  # Redis away: only its own rooms (none)
        own_redis.start()  # empty: it lost every node's entries
        await _until(lambda: a.listed() == ["b2", "b1"])
    finally:
        for task in rounds:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for client in clients:
            await client.aclose()


async def _until(condition: Callable[[], bool], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 (the other task's rounds change it)
            await asyncio.sleep(0.02)
