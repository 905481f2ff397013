"""Links that drop, lag or stall in the middle of a game, through the fault proxy."""

from __future__ import annotations

import asyncio

import pytest

from protocol.messages import Chat, MoveRequest, State, VariantSpec
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

VARIANT = VariantSpec(size=7, walls=3)


@pytest.mark.parametrize("fault", ["cut", "reset"])
async def test_a_game_survives_a_dropped_link(
    server: GameServer, proxy: Proxy, connect: Connect, fault: str
) -> None:
    moves = script(VARIANT.size, 3)
    a = await connect(proxy.url, "alice")
    link = proxy.links[-1]
    b = await connect(proxy.url, "bob")
    room, _, _ = await seat_pair(a, b, VARIANT)
    players = [a, b]
    half = len(moves) // 2 | 1  # an odd ply: bob's move
    for ply in range(half):
        await move(players[ply % 2], [players[1 - ply % 2]], ply, moves[ply])

    # Bob's move is on its way to alice (held up in the proxy) when her link dies.
    link.pause()
    await b.send(MoveRequest(id=half, move=moves[half], ply=half))
    moved = await next_state(b, lambda s: s.ply == half + 1)
    link.cut() if fault == "cut" else link.reset()
    away = await next_state(b, lambda s: not s.players[0].connected)
    assert away.players[0].claim_in_ms is not None
    await a.closed(WITHIN)
    assert a.ws.close_code == 1006  # no closing handshake: the link just died
    before = events(a)
    assert before[-1] < moved.event  # alice never got bob's move

    assert a.welcome is not None
    again = await resume(connect, proxy.url, a.welcome, before[-1])
    assert again.welcome is not None
    assert (again.welcome.room, again.welcome.seat) == (room, 0)
    assert again.welcome.session == a.welcome.session
    replayed = [await again.expect(State, WITHIN) for _ in range(away.event - before[-1])]
    assert [s.event for s in replayed] == list(range(before[-1] + 1, away.event + 1))
    assert replayed[-1] == away  # the very frames bob got
    back = await next_state(again, lambda s: s.players[0].connected)
    assert back.ply == half + 1
    await next_state(b, lambda s: s.players[0].connected)

    players = [again, b]
    for ply in range(half + 1, len(moves)):
        await move(players[ply % 2], [players[1 - ply % 2]], ply, moves[ply])
    for player in players:
        check_final(player, moves, VARIANT.size, 3)

    seen_a, seen_b = events(a, again), events(b)
    assert consecutive(seen_a), seen_a  # nothing lost, nothing twice, over both links
    assert consecutive(seen_b), seen_b
    assert seen_a[-1] == seen_b[-1]


async def test_a_delayed_link_still_plays_correctly(
    server: GameServer, proxy: Proxy, connect: Connect
) -> None:
    proxy.delay = 0.015  # each way, every chunk
    moves = script(VARIANT.size, 3)
    a, b = await connect(proxy.url, "alice"), await connect(proxy.url, "bob")
    await seat_pair(a, b, VARIANT)
    players = [a, b]
    trips = [
        await move(players[ply % 2], [players[1 - ply % 2]], ply, moves[ply])
        for ply in range(len(moves))
    ]
    assert min(trips) >= 0.03  # the proxy really held the frames, both ways
    for player in players:
        check_final(player, moves, VARIANT.size, 3)
        assert consecutive(events(player))


async def test_a_stalled_link_catches_up_in_order(
    server: GameServer, proxy: Proxy, connect: Connect
) -> None:
    moves = script(VARIANT.size, 3)
    a = await connect(proxy.url, "alice")
    link = proxy.links[-1]
    b = await connect(f"ws://127.0.0.1:{server.port}", "bob")
    await seat_pair(a, b, VARIANT)
    await move(a, [b], 0, moves[0])

    link.pause()
    await b.send(MoveRequest(id=1, move=moves[1], ply=1))
    await next_state(b, lambda s: s.ply == 2)
    for line in ("still there?", "hello?"):
        await b.send(Chat(text=line))
    await asyncio.sleep(0.2)
    assert a.inbox.empty()  # nothing gets through while the link is stalled
    link.resume()

    caught_up = await next_state(a, lambda s: s.ply == 2)
    assert caught_up.players[0].connected  # the TCP connection never dropped
    await asyncio.sleep(0.1)
    players = [a, b]
    for ply in range(2, len(moves)):
        await move(players[ply % 2], [players[1 - ply % 2]], ply, moves[ply])
    seen_a, seen_b = events(a), events(b)
    assert consecutive(seen_a)
    assert consecutive(seen_b)
    assert seen_a[-1] == seen_b[-1]
    check_final(a, moves, VARIANT.size, 3)
