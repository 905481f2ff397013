"""A reconnect storm: every connection drops at once and every client comes back at once."""

from __future__ import annotations

import asyncio

from protocol.messages import VariantSpec
from server.app import GameServer
from tests.faults.conftest import Connect
from tests.faults.play import (
    WITHIN,
    check_final,
    consecutive,
    events,
    move,
    next_state,
    resume,
    script,
    seat_pair,
)
from tests.faults.proxy import Proxy
from tests.wsclient import Client

GAMES = 150
VARIANT = VariantSpec(size=5, walls=2)


async def test_a_reconnect_storm_is_absorbed(
    server: GameServer, proxy: Proxy, connect: Connect
) -> None:
    moves = script(VARIANT.size, 2)
    clients = await asyncio.gather(*(connect(proxy.url, f"p{n}") for n in range(2 * GAMES)))
    pairs = [(clients[2 * n], clients[2 * n + 1]) for n in range(GAMES)]
    seated = await asyncio.gather(*(seat_pair(a, b, VARIANT) for a, b in pairs))
    # Every game under way: seat 0 has moved.
    await asyncio.gather(*(move(a, [b], 0, moves[0]) for a, b in pairs))
    assert len(server.sockets) == 2 * GAMES

    proxy.cut_all()
    await asyncio.gather(*(client.closed(WITHIN) for client in clients))

    async def come_back(client: Client) -> Client:
        assert client.welcome is not None
        return await resume(connect, proxy.url, client.welcome, events(client)[-1])

    back = await asyncio.wait_for(asyncio.gather(*(come_back(c) for c in clients)), 60)
    for n, (room, _, _) in enumerate(seated):
        for seat in (0, 1):
            welcome = back[2 * n + seat].welcome
            assert welcome is not None
            assert (welcome.room, welcome.seat) == (room, seat)

    # Each session sees its game with both seats connected again, at the same ply...
    for client in back:
        await next_state(client, lambda s: all(p.connected for p in s.players))
    assert len(server.sockets) == 2 * GAMES
    # ...and every game goes on: seat 1 answers, then one game is played to the end.
    pairs = [(back[2 * n], back[2 * n + 1]) for n in range(GAMES)]
    await asyncio.gather(*(move(b, [a], 1, moves[1]) for a, b in pairs))
    a, b = pairs[0]
    for ply in range(2, len(moves)):
        mover, other = (a, b) if ply % 2 == 0 else (b, a)
        await move(mover, [other], ply, moves[ply])
    check_final(a, moves, VARIANT.size, 2)
    check_final(b, moves, VARIANT.size, 2)

    # No session lost or saw twice any event of its room, across both connections.
    for before, after in zip(clients, back, strict=True):
        seen = events(before, after)
        assert consecutive(seen), seen
