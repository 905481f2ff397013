"""Owning rooms across the cluster: a Redis lease (``leases``) and the PostgreSQL fence
(``server.pgstore``) taken together, in the order that makes a takeover safe.

To own a room a node (1) takes its lease, with an epoch above the room's fence;
(2) claims the fence at that epoch, which waits for any write of the former
owner still in flight and refuses it afterwards; (3) only then reads the room,
so what it loads is everything anyone was ever told. Handing a room over is the
reverse: the last write first, then the lease.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from server.cluster.leases import Lease, Leases
from server.pgstore import Fenced, PgStore
from server.records import RoomRecord, SessionRecord


@dataclass
class TakenOver:
    lease: Lease
    room: RoomRecord | None
    """The room as last committed (None: it was never saved, or it is gone)."""
    sessions: list[SessionRecord] = field(default_factory=list)


class Ownership:
    def __init__(self, store: PgStore, leases: Leases) -> None:
        self.store = store
        self.leases = leases

    async def own(self, code: str) -> Lease | None:
        """Own ``code`` (a room this node creates, or one it takes over): lease, then fence.
        None if another node holds the lease."""
        lease = await self.leases.acquire(code, floor=await self.store.fence(code))
        if lease is None:
            return None
        try:
            await self.store.claim(code, lease.epoch)
        except Fenced:
            # A newer epoch was claimed between our read of the fence and our claim:
            # another node owns the room now.
            await self.leases.release(lease)
            return None
        return lease

    async def take_over(self, code: str) -> TakenOver | None:
        """Own ``code`` and load it as last committed; None if another node holds it."""
        lease = await self.own(code)
        if lease is None:
            return None
        room, sessions = await self.store.load_room(code)
        return TakenOver(lease, room, sessions)

    async def hand_over(self, lease: Lease) -> None:
        """Give the room up once its last write is committed (a rolling restart): the next
        owner need not wait for the lease to expire."""
        await self.leases.release(lease)
        self.store.epochs.pop(lease.room, None)
