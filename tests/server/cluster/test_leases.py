"""Room ownership leases on a real Redis: one holder, rising epochs, renewal, expiry, loss."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from redis.asyncio import Redis

from server.cluster.keys import Keys, connect
from server.cluster.leases import Leases, keeping
from tests.services import RedisServer


async def test_one_holder_at_a_time_and_each_owner_a_higher_epoch(
    redis: Redis, other_redis: Redis, keys: Keys
) -> None:
    a = Leases(redis, keys, "node-a", ttl=0.3)
    b = Leases(other_redis, keys, "node-b", ttl=0.3)
    first = await a.acquire("room1")
    assert first is not None
    assert await b.acquire("room1") is None
    assert await b.owner("room1") == ("node-a", first.epoch)
    assert not await b.renew(type(first)("room1", "node-b", first.epoch))  # not b's
    await asyncio.sleep(0.45)  # a stalls past its TTL
    second = await b.acquire("room1")
    assert second is not None
    assert second.epoch == first.epoch + 1
    assert not await a.renew(first)  # the stalled owner finds out
    assert "room1" not in a.held
    await b.release(second)
    assert await a.owner("room1") is None


async def test_a_floor_keeps_epochs_above_the_fence_after_redis_lost_its_counters(
    redis: Redis, keys: Keys
) -> None:
    leases = Leases(redis, keys, "node-a")
    lease = await leases.acquire("room2", floor=41)  # PostgreSQL's fence says 41
    assert lease is not None
    assert lease.epoch == 42
    await leases.release(lease)
    again = await leases.acquire("room2", floor=3)
    assert again is not None
    assert again.epoch == 43


async def test_kept_leases_outlive_their_ttl_and_a_taken_one_is_reported(
    redis: Redis, other_redis: Redis, keys: Keys
) -> None:
    a = Leases(redis, keys, "node-a", ttl=0.5)
    lost: list[str] = []
    held = await a.acquire("kept")
    taken = await a.acquire("taken")
    assert held is not None
    assert taken is not None
    async with keeping(a, lost.append):
        await asyncio.sleep(1.6)  # more than three TTLs
        assert await a.owner("kept") == ("node-a", held.epoch)
        assert await a.alive("node-a")
        assert a.renewals >= 6
        # Another node takes one (an operator's hand, or a lease that expired in a stall).
        await other_redis.delete(keys.lease("taken"))
        b = Leases(other_redis, keys, "node-b", ttl=0.5)
        assert await b.acquire("taken") is not None
        await asyncio.sleep(0.5)
    assert lost == ["taken"]
    assert set(a.held) == {"kept"}
    await asyncio.sleep(0.7)
    assert not await a.alive("node-a")  # stopped renewing: no longer alive


async def test_redis_restarted_or_away_loses_the_leases_and_the_node_notices(
    own_redis: RedisServer, redis_prefix: str
) -> None:
    keys = Keys(redis_prefix)
    client = connect(own_redis.url)
    leases = Leases(client, keys, "node-a", ttl=0.3)
    assert await leases.acquire("r1") is not None
    lost: list[str] = []
    async with keeping(leases, lost.append):
        own_redis.restart()  # everything it held is gone, the lease too
        await soon(lambda: lost == ["r1"])
        assert leases.healthy
        # The node can own the room again, with a fresh lease.
        assert await leases.acquire("r1") is not None
        own_redis.stop()  # now Redis is away for longer than a TTL
        await soon(lambda: lost == ["r1", "r1"])
        assert not leases.healthy
        assert leases.held == {}
        own_redis.start()
        await soon(lambda: leases.healthy)
    await client.aclose()


async def soon(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Until ``condition`` holds (polled; a loaded machine may take a while)."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "not within 5 s"
        await asyncio.sleep(0.02)


async def test_fresh_codes_are_leased_many_at_once_and_never_a_code_leased_before(
    redis: Redis, other_redis: Redis, keys: Keys
) -> None:
    a = Leases(redis, keys, "node-a")
    b = Leases(other_redis, keys, "node-b")
    held = await b.acquire("held")  # another node's now
    old = await b.acquire("old")
    assert held is not None
    assert old is not None
    await b.release(old)  # free, but leased before: its epoch counter is there
    leased = await a.acquire_fresh(["new1", "held", "old", "new2"])
    assert [(lease.room, lease.epoch) for lease in leased] == [("new1", 1), ("new2", 1)]
    assert set(a.held) == {"new1", "new2"}
    assert await a.owner("new2") == ("node-a", 1)
    assert await a.owner("held") == ("node-b", held.epoch)
    assert await a.owner("old") is None


async def evalsha_calls(redis: Redis) -> int:
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


async def test_hundreds_of_leases_are_renewed_in_one_round_trip_and_lost_ones_reported(
    own_redis: RedisServer, redis_prefix: str
) -> None:
    """One node holding 600 leases renews them with one pipeline of two scripts (500 a
    script): one at a time, a busy node took longer than a TTL and lost leases it held."""
    keys = Keys(redis_prefix)
    client, other = connect(own_redis.url), connect(own_redis.url)
    a = Leases(client, keys, "node-a", ttl=2.0)
    rooms = [f"room{index}" for index in range(600)]
    assert len(await a.acquire_fresh(rooms)) == 600
    # Two taken by another node, one expired (deleted), one given up by this node.
    for room in ("room5", "room555"):
        await other.delete(keys.lease(room))
        assert await Leases(other, keys, "node-b").acquire(room) is not None
    await other.delete(keys.lease("room300"))
    await a.release(a.held["room7"])
    await other.set(keys.alive("node-a"), b"0")
    before = await evalsha_calls(other)
    lost = await a.renew_all()
    assert await evalsha_calls(other) - before == 2  # the scripts' calls, in one pipeline
    assert sorted(lost) == ["room300", "room5", "room555"]
    assert len(a.held) == 596
    assert a.renewals == 596
    async with other.pipeline(transaction=False) as pipe:
        for room in a.held:
            pipe.pttl(keys.lease(room))
        ttls = await pipe.execute()
    assert min(ttls) > 1500  # renewed to the TTL
    assert await other.get(keys.alive("node-a")) == a.instance
    # Kept for several TTLs, none is lost.
    fast = Leases(client, keys, "node-c", ttl=0.3)
    assert len(await fast.acquire_fresh([f"kept{index}" for index in range(600)])) == 600
    reported: list[str] = []
    async with keeping(fast, reported.append):
        await asyncio.sleep(1.0)
    assert reported == []
    assert len(fast.held) == 600
    assert fast.renewals >= 600 * 3
    await client.aclose()
    await other.aclose()
