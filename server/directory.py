"""The room directory: which rooms exist, and the public list of them.

``RoomDirectory`` is what the lobby needs to find a room by its code and to list the open
ones; ``LocalDirectory`` answers from the rooms this server hosts, and lists them from the
index of those it may list that the room host keeps (``ListedRooms``). A cluster's directory
answers for every node: the lobby list each node publishes to Redis
(``server.cluster.lobby``), and the room leases that say which node hosts a room
(``server.cluster.leases``), through which a request for a room hosted elsewhere is relayed
to its owner (see docs/cluster.md).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

import msgspec

from protocol.messages import RoomInfo
from server.rooms import Room

LISTED_PER_ADDRESS = 3
"""Rooms of one creator's IP address in one list at most (its newest): five addresses
re-creating public rooms every two seconds filled the whole list, and nobody else's room
showed."""


class RoomDirectory(Protocol):
    def find(self, code: str) -> Room | None:
        """The room with this code, if there is one."""
        ...

    def listing(self, limit: int) -> list[RoomInfo]:
        """The rooms worth showing in the public list, newest first, at most ``limit``."""
        ...

    def listing_json(self, limit: int) -> bytes:
        """``listing`` as the JSON array a ``rooms`` reply carries."""
        ...


_encode = msgspec.json.Encoder().encode


def _opening(room: Room) -> tuple[float, int]:
    return room.created, room.serial


class ListedRooms:
    """The rooms the public list may show (``Room.listable``), in the order they opened, each
    with its entry in the list (its ``RoomInfo``, encoded).

    The room host keeps it (``RoomHost.note``: wherever a room's status, seats, spectators or
    the presence of its players may have changed), so that ``list_rooms`` reads only the rooms
    it may list, newest first, and stops once its reply is full: it looked at every room the
    server held, and an outside review's 1392 rooms left behind by players who went away (none
    listed, the reply empty) made it cost 16 times an empty server's. ``version`` changes with
    every entry, so that a reply made once serves every ``list_rooms`` until the list changes
    (``LocalDirectory.listing_json``).
    """

    def __init__(self) -> None:
        self._order: list[Room] = []
        """The rooms, oldest first (by ``created``, then by ``serial``)."""
        self._entries: dict[Room, tuple[bytes, str]] = {}
        """Each room's ``RoomInfo``, encoded as it was last noted, and whose it is
        (``owner``)."""
        self.version = 0
        """Counts the changes of the list: rooms in or out, an entry changed."""

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, room: object) -> bool:
        return room in self._entries

    def note(self, room: Room, listable: bool) -> None:
        """Whether ``room`` may be listed now (and, if it may, its entry as it is now)."""
        if not listable:
            self.discard(room)
            return
        entry = _encode(room.info()), owner(room)
        before = self._entries.get(room)
        if entry == before:
            return
        self._entries[room] = entry
        self.version += 1
        if before is None:
            bisect.insort(self._order, room, key=_opening)

    def discard(self, room: Room) -> None:
        """``room`` may not be listed (closed, or no longer listable)."""
        if self._entries.pop(room, None) is None:
            return
        self.version += 1
        order = self._order
        at = bisect.bisect_left(order, _opening(room), key=_opening)
        while order[at] is not room:  # rooms made outside a room host may share a key
            at += 1
        del order[at]

    def newest(self) -> Iterator[Room]:
        """The rooms, newest first."""
        return reversed(self._order)

    def entry(self, room: Room) -> bytes:
        """The room's ``RoomInfo``, encoded when it was last noted."""
        return self._entries[room][0]

    def owner(self, room: Room) -> str:
        """``owner(room)`` when it was last noted."""
        return self._entries[room][1]


class LocalDirectory:
    """The rooms of one server: those its room host holds, and those it may list."""

    def __init__(self, rooms: dict[str, Room], listed: ListedRooms) -> None:
        self.rooms = rooms
        """The room host's rooms by code (the same dict, read only here)."""
        self.index = listed
        """The room host's listable rooms (the same index, read only here)."""
        self._made: tuple[int, int] | None = None
        self._json = b"[]"
        """The last ``listing_json``, and the ``version`` and limit it was made for."""

    def find(self, code: str) -> Room | None:
        return self.rooms.get(code)

    def listing(self, limit: int) -> list[RoomInfo]:
        return [room.info() for room in self.listed(limit)]

    def listing_json(self, limit: int) -> bytes:
        """Made again only once the list changed, of the entries the index keeps: made of
        the rooms each time, a full list of 100 took 7 times a move's work (in the
        interpreted server); made of the entries, about one move's; kept, nothing."""
        made = (self.index.version, limit)
        if made != self._made:
            entries = [self.index.entry(room) for room in self.listed(limit)]
            self._json = b"[" + b",".join(entries) + b"]"
            self._made = made
        return self._json

    def listed(self, limit: int | None = None) -> list[Room]:
        """The listable rooms, newest first, at most LISTED_PER_ADDRESS of each address, and
        at most ``limit`` in all (None: every one)."""
        rooms = self.rooms
        live = (room for room in self.index.newest() if rooms.get(room.code) is room)
        return fair(live, limit, self.index.owner)


def owner(room: Room) -> str:
    """Whose room it is for the list: its creator's address; a room with no address
    (saved before its owners were, and taken back after a restart) counts for itself alone."""
    return next((o for o in room.owners if o.startswith("address:")), room.code)


def fair(
    rooms: Iterable[Room], limit: int | None = None, key: Callable[[Room], str] = owner
) -> list[Room]:
    """``rooms`` (newest first) less those of an address that has LISTED_PER_ADDRESS newer
    ones, at most ``limit`` of them (None: all)."""
    shown: dict[str, int] = {}
    kept: list[Room] = []
    if limit is not None and limit <= 0:
        return kept
    for room in rooms:
        address = key(room)
        count = shown.get(address, 0)
        if count < LISTED_PER_ADDRESS:
            shown[address] = count + 1
            kept.append(room)
            if len(kept) == limit:
                break
    return kept
