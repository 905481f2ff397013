"""The room directory of a cluster node: this node's rooms, and every live node's in the list.

``ClusterDirectory`` is a ``RoomDirectory`` (``server.directory``) for the sans-I/O core:
``find`` answers for this node's rooms (a room hosted elsewhere is found through its lease
and reached through the relay, not here), and ``listing`` merges this node's listable rooms,
as they are now, with the other nodes' from a cache. ``keep_listing`` is the adapter's side:
every third of the TTL it publishes this node's listable rooms to Redis
(``server.cluster.lobby``) and reads the other live nodes' back into the cache. So
``list_rooms`` costs no Redis round trip however often it is asked, and a room opened on
another node shows in the list within about a third of the TTL (a second by default); a
room that stopped being listable there leaves it as soon.

Rooms are ordered across nodes by when they were opened, in wall-clock time (each node's
monotonic clock is its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import msgspec
from redis.exceptions import RedisError

from protocol.messages import RoomInfo
from server.cluster.keys import stop_if_cancelled
from server.cluster.lobby import Lobby
from server.directory import ListedRooms, LocalDirectory
from server.rooms import Room

log = logging.getLogger("quoridor.cluster")
STOP_WITHIN = 1.0
"""Seconds a stopping node gives the list's last round and its withdrawal."""


class Listed(msgspec.Struct, frozen=True):
    """One room's entry in the cluster-wide list, as a node publishes it."""

    opened: float
    """When the room was opened, in wall-clock seconds: the order of the list."""
    info: RoomInfo


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Listed).decode


class ClusterDirectory(LocalDirectory):
    """This node's rooms (``find``), and the list of every live node's (``listing``)."""

    def __init__(
        self,
        rooms: dict[str, Room],
        listed: ListedRooms,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(rooms, listed)
        self.clock = clock
        self.wall_clock = wall_clock
        self.others: list[Listed] = []
        """The other live nodes' listed rooms, newest first, as ``keep_listing`` last read."""
        self._heard = 0
        """Counts the other nodes' lists read (``heard``)."""
        self._merged: tuple[int, int, int] | None = None
        self._merged_json = b"[]"
        """The last ``listing_json``, and what it was made of: this node's list's version,
        the other nodes' list read, the limit."""
        self._opened: dict[str, float] = {}
        """Each listed room's opening time on the wall clock, worked out when first listed
        and kept: the core's clock leaves the event loop's stalls out, so working it out
        again later would drift by them (and the list's order across nodes with it)."""

    def listing(self, limit: int) -> list[RoomInfo]:
        # The newest ``limit`` of its own are all of them that can make the list.
        mine = self.mine(limit)
        codes = {entry.info.room for entry in mine}
        merged = mine + [entry for entry in self.others if entry.info.room not in codes]
        merged.sort(key=lambda entry: entry.opened, reverse=True)
        return [entry.info for entry in merged[:limit]]

    def listing_json(self, limit: int) -> bytes:
        """Made again only once this node's list changed or the others' were read again."""
        made = (self.index.version, self._heard, limit)
        if made != self._merged:
            self._merged_json = _encode(self.listing(limit))
            self._merged = made
        return self._merged_json

    def mine(self, limit: int | None = None) -> list[Listed]:
        """This node's listable rooms, as they are now (the newest ``limit``; None: all)."""
        since_epoch = self.wall_clock() - self.clock()
        opened = self._opened
        return [
            Listed(
                opened=opened.setdefault(room.code, since_epoch + room.created), info=room.info()
            )
            for room in self.listed(limit)
        ]

    def published(self) -> dict[str, bytes]:
        """What this node lists, as entries for ``Lobby.replace`` (a few times a second at
        most: the opening times of rooms gone are forgotten here, not in every ``listing``,
        which would look at each room ever listed)."""
        opened = self._opened
        for code in [code for code in opened if code not in self.rooms]:
            del opened[code]
        return {entry.info.room: _encode(entry) for entry in self.mine()}

    def heard(self, others: dict[str, bytes]) -> None:
        """The other nodes' entries, as ``Lobby.others`` read them."""
        entries = []
        for code, raw in others.items():
            try:
                entries.append(_decode(raw))
            except msgspec.ValidationError:  # a node of another version: leave it out
                log.warning("unreadable lobby entry for room %s left out", code)
        self.others = sorted(entries, key=lambda entry: entry.opened, reverse=True)
        self._heard += 1


async def keep_listing(
    directory: ClusterDirectory,
    lobby: Lobby,
    every: float,
    failed: Callable[[], None] = lambda: None,
    running: Callable[[], bool] = lambda: True,
) -> None:
    """Publish this node's listable rooms and read the other nodes' every ``every`` seconds,
    until cancelled. While Redis is away the list shows this node's rooms only (``failed``
    is called for each round that could not reach it); it heals by itself when Redis is back
    (the next round writes everything again). It ends when cancelled or once ``running``
    says False."""
    while running():
        try:
            await lobby.replace(directory.published())
            directory.heard(await lobby.others())
        except (RedisError, OSError) as error:
            stop_if_cancelled()
            log.debug("lobby list not refreshed: %s", error)
            directory.heard({})
            failed()
        stop_if_cancelled()
        await asyncio.sleep(every)


class Listing:
    """The adapter's side of the list for one node: ``keep_listing`` in a task of its own,
    and this node's entries taken off the list when it stops."""

    def __init__(self, directory: ClusterDirectory, lobby: Lobby) -> None:
        self.directory = directory
        self.lobby = lobby
        self.errors = 0
        """Rounds that could not reach Redis (a metric)."""
        self._task: asyncio.Task[None] | None = None
        self._running = False

    def start(self) -> None:
        self._running = True
        self._task = asyncio.create_task(
            keep_listing(self.directory, self.lobby, self.lobby.ttl / 3, self._failed, self._still)
        )

    def _still(self) -> bool:
        return self._running

    def _failed(self) -> None:
        self.errors += 1

    async def stop(self) -> None:
        """Stop refreshing, and withdraw this node's rooms at once (a graceful stop: the
        other nodes need not wait for them to expire)."""
        self._running = False
        if self._task is not None:
            self._task.cancel()
            # Never wait on it for ever: a Redis client caught in the middle of a request
            # may swallow the cancellation (the loop then ends at its next turn).
            await asyncio.wait([self._task], timeout=STOP_WITHIN)
            self._task = None
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            async with asyncio.timeout(STOP_WITHIN):
                await self.lobby.replace({})
