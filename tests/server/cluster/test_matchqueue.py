"""The quick-match queue on a real Redis: pairing across nodes is atomic, nobody twice."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from server.cluster.keys import Keys, connect
from server.cluster.matchqueue import MatchQueue, Waiting
from tests.services import RedisServer

POOL = "2p-9x9-untimed"


async def mark_alive(redis: Redis, keys: Keys, *nodes: str) -> None:
    for node in nodes:
        await redis.set(keys.alive(node), b"1", px=60_000)


async def test_players_arriving_on_two_nodes_at_once_are_paired_each_exactly_once(
    redis_server: RedisServer, keys: Keys
) -> None:
    nodes = ["node-a", "node-b"]
    clients = [connect(redis_server.url) for _ in nodes]
    await mark_alive(clients[0], keys, *nodes)
    queues = [MatchQueue(client, keys) for client in clients]
    players = [Waiting(nodes[n % 2], f"s{n}") for n in range(60)]
    # Each player enters from their own node, all at once, some of them twice.
    entries = players + players[::7]
    results = await asyncio.gather(*(queues[nodes.index(p.node)].enter(POOL, p) for p in entries))
    pairs = [
        (p, r.opponent) for p, r in zip(entries, results, strict=True) if r.outcome == "paired"
    ]
    waiting = await queues[0].waiting(POOL)
    matched = [p.session for pair in pairs for p in pair if p is not None]
    assert len(matched) == len(set(matched))  # nobody twice
    assert all(a != b for a, b in pairs)  # nobody against themselves
    assert sorted(matched + [w.session for w in waiting]) == sorted(p.session for p in players)
    assert len(waiting) <= 1
    assert {r.outcome for r in results} <= {"paired", "waiting", "queued", "matched"}
    assert any(a.node != b.node for a, b in pairs if b is not None)  # across nodes
    for client in clients:
        await client.aclose()


async def test_a_player_who_left_or_whose_node_died_is_not_paired(redis: Redis, keys: Keys) -> None:
    queue = MatchQueue(redis, keys)
    await mark_alive(redis, keys, "node-a", "node-b")
    alice, bob, carol = Waiting("node-a", "alice"), Waiting("dead", "bob"), Waiting("node-b", "c")
    assert (await queue.enter(POOL, alice)).outcome == "waiting"
    assert (await queue.enter(POOL, alice)).outcome == "queued"
    assert await queue.leave(POOL, alice)
    assert not await queue.leave(POOL, alice)
    assert (await queue.enter(POOL, bob)).outcome == "waiting"  # on a node not alive
    assert (await queue.enter(POOL, carol)).outcome == "waiting"  # bob was dropped
    assert await queue.waiting(POOL) == [carol]
    paired = await queue.enter(POOL, alice)
    assert (paired.outcome, paired.opponent) == ("paired", carol)
    assert await queue.waiting(POOL) == []
    assert (await queue.enter(POOL, carol)).outcome == "matched"  # a racing second request
    await queue.seated(carol.session)
    # Another pool is another queue.
    assert (await queue.enter("other", carol)).outcome == "waiting"
