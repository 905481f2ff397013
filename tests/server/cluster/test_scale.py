"""A node under many rooms at once: room codes never run out, game ids never collide."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from protocol.messages import Create, Joined, Leave, Left
from server.cluster.keys import Keys, connect
from server.cluster.node import GAME_ID_BLOCK, ClusterNode
from server.database import Batch
from server.history import GameHistory
from server.pgstore import PgStore
from server.records import UNNUMBERED
from server.roomhost import room_code
from tests.server.cluster.harness import running_cluster
from tests.server.cluster.test_node import lease_of
from tests.server.test_store_contract import game
from tests.services import RedisServer
from tests.wsclient import Client

ROOMS = 100


async def test_a_node_opens_100_rooms_at_once_without_a_refusal_each_under_its_lease(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    many = ("--max-per-ip", "1000", "--rooms-per-ip", "1000", "--hello-burst", "1000",
            "--address-share", "1000")  # fmt: skip
    # every player is 127.0.0.1
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 1, *many) as cluster:
        url = cluster.node(0).url
        clients = await asyncio.gather(*(Client.connect(url, f"p{i}") for i in range(ROOMS)))
        # Far more creates at once than the node keeps codes leased in advance.
        await asyncio.gather(*(client.send(Create()) for client in clients))
        replies = await asyncio.gather(*(client.recv() for client in clients))
        refused = [reply for reply in replies if not isinstance(reply, Joined)]
        assert refused == []
        codes = {reply.room for reply in replies if isinstance(reply, Joined)}
        assert len(codes) == ROOMS
        # Rooms opened past the spare codes are leased right after: each room's lease is
        # the node's, at epoch 1 (a code nobody leased before).
        for _ in range(50):
            leases = [await lease_of(redis, redis_prefix, code) for code in sorted(codes)]
            if all(lease is not None for lease in leases):
                break
            await asyncio.sleep(0.02)
        assert leases == [("n1", 1)] * ROOMS
        for client in clients:
            await client.close()


async def test_out_of_reserved_game_ids_the_database_numbers_the_game_and_never_twice(
    postgres_url: str,
) -> None:
    """A node that used up its block no longer counts on past its last id (another node's
    block starts there: the INSERT failed and the node's whole write with it)."""
    first, second = PgStore(postgres_url), PgStore(postgres_url)
    await first.open()
    await second.open()
    history = GameHistory(10)
    asked: list[int] = []
    history.running_low = lambda: asked.append(1)
    history.reserved(await first.reserve_game_ids(2))
    theirs = await second.reserve_game_ids(100)  # the next ids are the other node's
    ids = [history._take_id() for _ in range(3)]
    assert ids == [1, 2, UNNUMBERED]
    assert asked  # another block was asked for
    mine = [game(number) for number in ids]
    await second.write(Batch(games=[game(theirs[0])]))
    await first.write(Batch(games=mine))
    assert mine[2].id not in theirs  # numbered by the write, and the record in memory too
    assert mine[2].id > 2
    saved = {g.id: g.room for g in (await first.load()).games}
    assert saved == {1: "r1", 2: "r2", theirs[0]: f"r{theirs[0]}", mine[2].id: "r0"}
    # The next reservation starts past it.
    assert min(await second.reserve_game_ids(10)) > mine[2].id
    await first.close()
    await second.close()


async def test_a_node_reserves_game_ids_in_proportion_to_the_rooms_it_hosts(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    store = PgStore(postgres_url)
    await store.open()
    node = ClusterNode(redis_server.url, redis_prefix, "n1", 3.0, store, room_code)
    blocks: list[range] = []
    node.game_ids = blocks.append
    node.hosting = lambda code: True  # every room it opens stays open
    await node.start()
    try:
        assert len(blocks[0]) == GAME_ID_BLOCK  # no room yet
        codes = [node.take_code() for _ in range(150)]  # more than the spares: some late
        assert len(set(codes)) == 150
        for _ in range(100):
            if all(code in node.leases.held for code in codes):
                break
            await asyncio.sleep(0.01)
        assert all(node.leases.held[code].epoch == 1 for code in codes)
        await node.reserve_game_ids()
        assert len(blocks[1]) == 300  # every room can finish a game, twice over
        assert blocks[1][0] > blocks[0][-1]
    finally:
        await node.stop()
        await store.close()


async def test_a_burst_of_commands_waits_for_a_connection_instead_of_failing(
    redis_server: RedisServer, keys: Keys
) -> None:
    """Hundreds of relayed joins at once each locate their room: redis-py's default pool
    failed every command past its 100th ("Too many connections"), which the lease keeper
    took for Redis being away."""
    client = connect(redis_server.url)
    await client.set(keys.alive("burst"), b"1")
    replies = await asyncio.gather(*(client.get(keys.alive("burst")) for _ in range(500)))
    assert replies == [b"1"] * 500
    await client.aclose()


async def test_a_closed_rooms_lease_is_given_up_and_no_longer_renewed(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 1) as cluster:
        host = await Client.connect(cluster.node(0).url, "host")
        await host.send(Create())
        code = (await host.expect(Joined)).room
        assert await lease_of(redis, redis_prefix, code) == ("n1", 1)
        await host.send(Leave())
        while not isinstance(await host.recv(), Left):  # the room's state first
            pass  # nobody is left in the room: it closes
        for _ in range(150):
            if await lease_of(redis, redis_prefix, code) is None:
                break
            await asyncio.sleep(0.02)
        # Given up (released at once; at worst ending with its TTL): no longer renewed.
        assert await lease_of(redis, redis_prefix, code) is None
        # Its code is never handed out again: its epoch counter stays.
        assert await redis.get(Keys(redis_prefix).epoch(code)) == b"1"
        await host.close()


async def test_a_closed_rooms_epoch_is_forgotten_once_its_row_is_deleted(
    postgres_url: str,
) -> None:
    """A node's epochs by room grew with every room it ever hosted."""
    store = PgStore(postgres_url)
    await store.open()
    store.epochs.update({"closed": 1, "open": 1})
    await store.write(Batch(dropped_rooms=["closed"]))
    assert store.epochs == {"open": 1}
    await store.close()
