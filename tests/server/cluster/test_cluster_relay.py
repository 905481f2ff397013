"""Any node accepts any client: real node processes on one PostgreSQL and one Redis, players
and spectators on different nodes, resumes through the load balancer (``harness``)."""

from __future__ import annotations

import asyncio
import signal
import statistics
import time

import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from protocol.messages import Create, Join, Joined, MoveRequest, State, Watch
from server.cluster.relay import CLIENT_HEADER, NODE_PATH, SECRET_HEADER
from tests.server.cluster.harness import CLUSTER_SECRET, running_cluster
from tests.server.cluster.test_node import lease_of, resume_anywhere, saved_moves
from tests.server.test_store import GAME, play
from tests.services import RedisServer
from tests.wsclient import Client


async def state_at(client: Client, ply: int) -> State:
    state = await client.state()
    while state.ply != ply:
        state = await client.state()
    return state


async def node_links_refused_without_the_secret(url: str) -> None:
    for secret in ("wrong", CLUSTER_SECRET[:-1], ""):
        headers = {SECRET_HEADER: secret, CLIENT_HEADER: "192.0.2.1"}
        with pytest.raises(InvalidStatus) as refused:
            await connect(url, additional_headers=headers)
        assert refused.value.response.status_code == 403


async def test_players_and_a_spectator_on_three_nodes_play_a_whole_game_and_secrets_hold(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 3) as cluster:
        alice = await Client.connect(cluster.node(0).url, "alice")
        await alice.send(Create())
        room = (await alice.expect(Joined)).room
        assert await lease_of(redis, redis_prefix, room) is not None
        bob = await Client.connect(cluster.node(1).url, "bob")  # served by n1 through n2
        await bob.send(Join(id="j", room=room))
        assert (await bob.expect(Joined)).seat == 1
        watcher = await Client.connect(cluster.node(2).url, "carol")  # through n3
        await watcher.send(Watch(room=room))
        await watcher.expect(Joined)
        seen: list[int] = []
        for ply, move in enumerate(GAME):
            await [alice, bob][ply % 2].send(MoveRequest(move=move, ply=ply))
            for player in (alice, bob):
                await state_at(player, ply + 1)
            state = await state_at(watcher, ply + 1)
            assert state.last_move is not None
            assert state.last_move.move == move
            seen.append(state.ply)
        assert seen == list(range(1, len(GAME) + 1))  # every move, in order
        assert state.result is not None
        assert state.result.winner == 0
        await asyncio.gather(alice.close(), bob.close(), watcher.close())
        await node_links_refused_without_the_secret(cluster.node(0).url + NODE_PATH)
    assert await saved_moves(postgres_url, room) == GAME


async def seat_across(
    host: str, guest: str, names: tuple[str, str] = ("alice", "bob")
) -> tuple[Client, Client, str]:
    """A room created through ``host`` and joined through ``guest`` (another node, which
    relays its player to the room's): the two players, seated, and the room's code."""
    alice = await Client.connect(host, names[0])
    await alice.send(Create())
    room = (await alice.expect(Joined)).room
    bob = await Client.connect(guest, names[1])
    await bob.send(Join(room=room))
    await bob.expect(Joined)
    return alice, bob, room


async def test_a_player_dropped_resumes_through_the_balancer_on_any_node(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 3) as cluster:
        alice, bob, room = await seat_across(cluster.node(0).url, cluster.node(1).url)
        await play([alice, bob], GAME[:4], 0)
        for attempt in range(6):  # the balancer takes turns: each node in turn, twice
            bob.ws.transport.abort()  # the link dies without a close
            bob = await resume_anywhere(cluster.url, bob.welcome, "bob")
            assert bob.welcome is not None
            assert (bob.welcome.room, bob.welcome.seat) == (room, 1), attempt
            state = await bob.state()
            assert state.ply == 4
        final = await play([alice, bob], GAME[4:], 4)
        assert final.result is not None
        await asyncio.gather(alice.close(), bob.close())


async def test_a_resume_whose_welcome_was_lost_is_made_again_on_any_node(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    """The token a resume was made with takes the session back again, through whichever
    node the balancer picks, until the newer one is used: here the newer ones never are."""
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 3) as cluster:
        alice, bob, room = await seat_across(cluster.node(0).url, cluster.node(1).url)
        await play([alice, bob], GAME[:4], 0)
        first, refusals = bob.welcome, list[str]()
        for attempt in range(4):
            bob.ws.transport.abort()  # and the welcome of the resume before is lost
            while (await alice.state()).players[1].connected:
                pass
            bob = await resume_anywhere(cluster.url, first, "bob", refusals=refusals)
            assert bob.welcome is not None
            assert (bob.welcome.room, bob.welcome.seat) == (room, 1), attempt
        assert refusals == []
        final = await play([alice, bob], GAME[4:], 4)
        assert final.result is not None
        await asyncio.gather(alice.close(), bob.close())


async def move_round_trips(players: list[Client], moves: list[str]) -> list[float]:
    """Each move's time from sending it to its mover's state."""
    times = []
    for ply, move in enumerate(moves):
        mover = players[ply % 2]
        started = time.perf_counter()
        await mover.send(MoveRequest(move=move, ply=ply))
        await state_at(mover, ply + 1)
        times.append(time.perf_counter() - started)
        await state_at(players[1 - ply % 2], ply + 1)
    return times


async def test_the_relays_added_latency(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    """Measured, printed for the record (a shared machine: no threshold on it): a move's
    round trip for the player on the room's node and for the one relayed to it."""
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        direct, relayed = [], []
        for _ in range(3):
            alice, bob, _ = await seat_across(
                cluster.node(0).url, cluster.node(1).url, ("direct", "relayed")
            )
            times = await move_round_trips([alice, bob], GAME)
            direct += times[0::2]
            relayed += times[1::2]
            await asyncio.gather(alice.close(), bob.close())
        ms = [1000 * statistics.median(t) for t in (direct, relayed)]
        print(
            f"move round trip, median of {len(direct)}/{len(relayed)}: direct {ms[0]:.2f} ms, "
            f"relayed {ms[1]:.2f} ms, added by the relay {ms[1] - ms[0]:.2f} ms"
        )


async def test_a_relayed_player_whose_serving_node_dies_gets_1012_and_resumes(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 3) as cluster:
        # n2 relays bob to n1
        alice, bob, _ = await seat_across(cluster.node(0).url, cluster.node(1).url)
        await play([alice, bob], GAME[:3], 0)
        await cluster.node(0).stop(signal.SIGKILL)
        code, _ = await bob.closed()
        assert code == 1012  # n2 is alive: it tells bob to come back, not a dead socket
        alice = await resume_anywhere(cluster.url, alice.welcome, "alice")
        bob = await resume_anywhere(cluster.url, bob.welcome, "bob")
        for player in (alice, bob):
            await state_at(player, 3)
        final = await play([alice, bob], GAME[3:], 3)
        assert final.result is not None
        await asyncio.gather(alice.close(), bob.close())
