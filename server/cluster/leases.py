"""Room ownership: a lease in Redis with a TTL and an epoch, renewed by its owner.

A node owns a room while it holds the room's lease. Each acquisition gets a new
epoch, higher than every earlier one; the owner writes the room to PostgreSQL
only under that epoch (``server.pgstore.PgStore.claim``), so a former owner
that stalled past its lease's end and wakes up is refused by PostgreSQL even if
it still believes it owns the room (the fencing-token rule). The lease itself
is only the cluster's way to agree, most of the time, on one owner; the fence
is what makes two owners harmless.

Redis may lose everything (a restart without persistence): epochs then start
again from the counter's floor, which ``acquire`` takes from PostgreSQL's fence
so that a new epoch is always above the last one claimed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.keys import Keys, stop_if_cancelled, text

log = logging.getLogger("quoridor.cluster")
DEFAULT_TTL = 3.0
"""Seconds a lease lasts unless renewed: the longest a dead node's rooms wait for a new
owner. Renewals come every third of it."""

_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local epoch = redis.call('INCR', KEYS[2])
local floor = tonumber(ARGV[3])
if epoch <= floor then
    epoch = floor + 1
    redis.call('SET', KEYS[2], epoch)
end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. epoch, 'PX', ARGV[2])
return epoch
"""
"""Take a free lease: KEYS lease, epoch counter; ARGV node, ttl ms, floor."""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
"""Extend a lease if it is still this holder's: KEYS lease; ARGV 'node epoch', ttl ms."""
_RENEW_MANY = """
local renewed = {}
for i, key in ipairs(KEYS) do
    if redis.call('GET', key) == ARGV[i + 1] then
        renewed[i] = redis.call('PEXPIRE', key, ARGV[1])
    else
        renewed[i] = 0
    end
end
return renewed
"""
"""``_RENEW`` for many leases at once: KEYS leases; ARGV ttl ms, then each lease's 'node
epoch'. One 0 or 1 per lease, in order."""
_ACQUIRE_FRESH = """
local taken = {}
for i = 1, #KEYS, 2 do
    if redis.call('EXISTS', KEYS[i]) == 0 and redis.call('EXISTS', KEYS[i + 1]) == 0 then
        redis.call('SET', KEYS[i + 1], 1)
        redis.call('SET', KEYS[i], ARGV[1] .. ' 1', 'PX', ARGV[2])
        taken[#taken + 1] = 1
    else
        taken[#taken + 1] = 0
    end
end
return taken
"""
"""Lease codes nobody ever leased, at epoch 1: KEYS lease, epoch counter of each code;
ARGV node, ttl ms. One 1 (leased) or 0 (held, or leased before) per code, in order."""
RENEWALS_PER_SCRIPT = 500
"""Leases renewed by one script run: Redis runs nothing else meanwhile, so a node with
thousands of rooms sends several (in one round trip all the same)."""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class NameTaken(RuntimeError):
    """Another live node of the cluster has this node's name (``--node-id``)."""


@dataclass(frozen=True)
class Lease:
    room: str
    node: str
    epoch: int

    @property
    def value(self) -> bytes:
        return f"{self.node} {self.epoch}".encode()


class Leases:
    """One node's leases: acquire, renew, release, and a loop keeping them (``keep``)."""

    def __init__(self, redis: Redis, keys: Keys, node: str, ttl: float = DEFAULT_TTL) -> None:
        self.redis = redis
        self.keys = keys
        self.node = node
        self.ttl = ttl
        self.held: dict[str, Lease] = {}
        self.renewals = 0
        """Successful renewals (a metric)."""
        self.healthy = True
        """False while Redis cannot be reached (the node is not ready)."""
        self.instance = secrets.token_hex(8).encode()
        """This process's mark in the node's liveness key: two live nodes of one name (each
        taking the other's leases for its own) show as two marks."""
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._renew_many = redis.register_script(_RENEW_MANY)
        self._acquire_fresh = redis.register_script(_ACQUIRE_FRESH)
        self._release = redis.register_script(_RELEASE)

    @property
    def _ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    async def acquire(self, room: str, floor: int = 0) -> Lease | None:
        """The room's lease with a new epoch above ``floor``, or None if another node holds
        it."""
        epoch = await self._acquire(
            keys=[self.keys.lease(room), self.keys.epoch(room)],
            args=[self.node, self._ttl_ms, floor],
        )
        if epoch is None:
            return None
        lease = Lease(room, self.node, int(epoch))
        self.held[room] = lease
        return lease

    async def acquire_fresh(self, rooms: list[str]) -> list[Lease]:
        """Leases of those ``rooms`` nobody ever leased (epoch 1), in one round trip: the
        others (held now, or leased before) are left alone, never to be used."""
        keys = [key for room in rooms for key in (self.keys.lease(room), self.keys.epoch(room))]
        taken = await self._acquire_fresh(keys=keys, args=[self.node, self._ttl_ms])
        leases = [Lease(room, self.node, 1) for room, ok in zip(rooms, taken, strict=True) if ok]
        for lease in leases:
            self.held[lease.room] = lease
        return leases

    async def renew(self, lease: Lease) -> bool:
        """Extend the lease by the TTL; False if it is not ours any more (expired, taken)."""
        renewed = await self._renew(
            keys=[self.keys.lease(lease.room)], args=[lease.value, self._ttl_ms]
        )
        if renewed:
            self.renewals += 1
            return True
        self.held.pop(lease.room, None)
        return False

    async def release(self, lease: Lease) -> None:
        """Give the room up (a rolling restart hands rooms over this way, at once)."""
        self.held.pop(lease.room, None)
        await self._release(keys=[self.keys.lease(lease.room)], args=[lease.value])

    async def release_all(self, leases: list[Lease]) -> None:
        """Give up ``leases`` in one round trip (their rooms closed). They are no longer
        renewed from now on, so if Redis does not answer they end with their TTL."""
        for lease in leases:
            if self.held.get(lease.room) == lease:
                del self.held[lease.room]
        async with self.redis.pipeline(transaction=False) as pipe:
            for lease in leases:
                await self._release(
                    keys=[self.keys.lease(lease.room)], args=[lease.value], client=pipe
                )
            await pipe.execute()

    async def owner(self, room: str) -> tuple[str, int] | None:
        """(node, epoch) holding the room's lease, or None."""
        value = await self.redis.get(self.keys.lease(room))
        if value is None:
            return None
        node, epoch = text(value).rsplit(" ", 1)
        return node, int(epoch)

    async def keep(self, on_lost: Callable[[str], None]) -> None:
        """Renew every held lease (and this node's liveness) every third of the TTL until
        cancelled. ``on_lost(room)`` is called for each lease found gone or taken, and for
        every lease once Redis has been unreachable for a whole TTL: another node may own
        those rooms by then, so this node must stop serving them."""
        last_success = time.monotonic()
        given_up = 0  # leases let go while Redis is away
        while True:
            try:
                lost = await self.renew_all()
                last_success = time.monotonic()
                if not self.healthy:
                    given_up += len(lost)
                    log.info(
                        "redis reachable again; %d leases kept, %d lost (rooms hosted and"
                        " room codes held spare for new rooms alike)",
                        len(self.held),
                        given_up,
                    )
                    given_up = 0
                self.healthy = True  # before on_lost: Redis answers, so a lease may be had again
                for room in lost:
                    on_lost(room)
            except (RedisError, OSError) as error:
                stop_if_cancelled()
                if self.healthy:
                    log.warning("redis unreachable (%s); leases at risk", error)
                self.healthy = False
                if time.monotonic() - last_success >= self.ttl:
                    given_up += len(self.held)
                    for room in list(self.held):
                        del self.held[room]
                        on_lost(room)
            stop_if_cancelled()
            await asyncio.sleep(self.ttl / 3)

    async def renew_all(self) -> list[str]:
        """Renew this node's liveness and every held lease in one round trip (a pipeline of
        scripts of ``RENEWALS_PER_SCRIPT`` leases each): renewing one after another, a node
        with hundreds of busy rooms took longer than a TTL and lost leases it held. Returns
        the rooms whose lease is not ours any more (expired, taken), no longer held."""
        leases = list(self.held.values())
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self.keys.alive(self.node), self.instance, px=self._ttl_ms)
            for start in range(0, len(leases), RENEWALS_PER_SCRIPT):
                chunk = leases[start : start + RENEWALS_PER_SCRIPT]
                await self._renew_many(
                    keys=[self.keys.lease(lease.room) for lease in chunk],
                    args=[self._ttl_ms, *(lease.value for lease in chunk)],
                    client=pipe,
                )
            replies = await pipe.execute()
        renewed = [flag for chunk in replies[1:] for flag in chunk]
        self.renewals += sum(1 for ok in renewed if ok)
        # A lease released (or taken again) while the renewals were on their way is not lost.
        lost = [
            lease.room
            for lease, ok in zip(leases, renewed, strict=True)
            if not ok and self.held.get(lease.room) == lease
        ]
        for room in lost:
            del self.held[room]
        return lost

    async def claim_name(self) -> None:
        """Before this node takes anything: wait for the liveness key of its name to go, as
        a killed node's does within a TTL (a restart straight after a crash waits that long);
        one still renewed past that is another node's, alive: ``NameTaken``."""
        key = self.keys.alive(self.node)
        deadline = time.monotonic() + self.ttl * 1.5
        if await self.redis.exists(key):
            log.info(
                "waiting up to %g s for the node named %r to be gone (this node's last run,"
                " if it did not stop cleanly: its name lives for the lease TTL)",
                self.ttl * 1.5,
                self.node,
            )
        while await self.redis.exists(key):
            if time.monotonic() > deadline:
                raise NameTaken(
                    f"another node of this cluster is named {self.node!r} and alive: give "
                    "each node its own --node-id"
                )
            await asyncio.sleep(self.ttl / 10)

    async def let_name_go(self) -> None:
        """On a graceful stop: the name is free at once for this node's next start."""
        await self._release(keys=[self.keys.alive(self.node)], args=[self.instance])

    async def alive(self, node: str) -> bool:
        """Whether ``node`` renewed its liveness within the TTL."""
        return bool(await self.redis.exists(self.keys.alive(node)))


@contextlib.asynccontextmanager
async def keeping(
    leases: Leases, on_lost: Callable[[str], None]
) -> AsyncIterator[asyncio.Task[None]]:
    """Run ``leases.keep`` for the duration of the block."""
    task = asyncio.create_task(leases.keep(on_lost))
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
