"""The room directory: which rooms exist, and the public list of them.

``RoomDirectory`` is what the lobby needs to find a room by its code and to list the open
ones; ``LocalDirectory`` answers from the rooms this server hosts. A cluster's directory
answers for every node: the lobby list each node publishes to Redis
(``server.cluster.lobby``), and the room leases that say which node hosts a room
(``server.cluster.leases``), through which a request for a room hosted elsewhere is relayed
to its owner (see docs/cluster.md).
"""

from __future__ import annotations

from typing import Protocol

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


class LocalDirectory:
    """The rooms of one server: those its room host holds."""

    def __init__(self, rooms: dict[str, Room]) -> None:
        self.rooms = rooms
        """The room host's rooms by code (the same dict, read only here)."""

    def find(self, code: str) -> Room | None:
        return self.rooms.get(code)

    def listing(self, limit: int) -> list[RoomInfo]:
        return [room.info() for room in self.listed()[:limit]]

    def listed(self) -> list[Room]:
        """The listable rooms, newest first, at most LISTED_PER_ADDRESS of each address."""
        listed = [room for room in self.rooms.values() if room.listable()]
        listed.sort(key=lambda room: room.created, reverse=True)
        return fair(listed)


def fair(rooms: list[Room]) -> list[Room]:
    """``rooms`` (newest first) less those of an address that has LISTED_PER_ADDRESS newer
    ones. A room with no address (saved before its owners were, and taken back after a restart)
    counts for itself alone."""
    shown: dict[str, int] = {}
    kept = []
    for room in rooms:
        address = next((o for o in room.owners if o.startswith("address:")), room.code)
        count = shown.get(address, 0)
        if count < LISTED_PER_ADDRESS:
            shown[address] = count + 1
            kept.append(room)
    return kept
