"""Node addresses on a real Redis: published, refreshed, gone within a TTL of a stop."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from server.cluster.keys import Keys
from server.cluster.nodes import NodeAddresses, SecretDiffers


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


TTL = 1.5
"""The secret mark's lifetime here: a node refreshes it every third of it, and at 0.5 s a busy
machine (a full test run beside other work) once let it lapse between two refreshes."""


async def test_a_node_of_another_secret_is_refused_and_one_of_the_same_is_not(
    redis: Redis, keys: Keys
) -> None:
    a = NodeAddresses(redis, keys, "a", "10.0.0.1:8765", ttl=TTL, secret="the right secret!")
    same = NodeAddresses(redis, keys, "b", "10.0.0.2:8765", ttl=TTL, secret="the right secret!")
    other = NodeAddresses(redis, keys, "c", "10.0.0.3:8765", ttl=TTL, secret="another secret!!")
    await a.check_secret()  # the first node marks the cluster's secret
    await same.check_secret()
    with pytest.raises(SecretDiffers, match="use another --cluster-secret"):
        await other.check_secret()
    assert b"the right secret" not in (await redis.get(keys.secret()) or b"")
    # The running nodes keep the mark fresh; once every node stopped it lapses in a TTL,
    # and the cluster can start again with a new secret.
    a.start()
    await asyncio.sleep(TTL * 1.5)  # past a TTL: only the refreshes kept it
    with pytest.raises(SecretDiffers):
        await other.check_secret()
    await a.stop()
    await asyncio.sleep(TTL * 1.2)
    await other.check_secret()
    assert a.mismatches == 0


async def test_nodes_of_two_secrets_that_both_started_find_out(
    redis: Redis, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    """Both started while Redis had lost the mark (a restart): each refresh that finds the
    other's mark counts, and the first is logged as an error."""
    a = NodeAddresses(redis, keys, "a", "10.0.0.1:8765", ttl=5, secret="the right secret!")
    c = NodeAddresses(redis, keys, "c", "10.0.0.3:8765", ttl=5, secret="another secret!!")
    await a.publish()
    await a.publish()
    assert a.mismatches == 0
    await c.publish()
    await a.publish()
    await c.publish()
    assert (a.mismatches, c.mismatches) == (1, 2)
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 2  # one per node, not one per refresh
    assert "another --cluster-secret" in errors[0].getMessage()
