"""Whole games over real websockets on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from protocol.messages import (
    Create,
    ErrorCode,
    FetchGame,
    GameRecordReply,
    Join,
    Joined,
    MoveRequest,
    Queued,
    QuickMatch,
    State,
    VariantSpec,
    Watch,
)
from tests.wsclient import Client

Connect = Callable[..., Awaitable[Client]]


async def seat_players(
    connect: Connect, players: int = 2, size: int = 9
) -> tuple[list[Client], str]:
    """Connect ``players`` clients into one new room; return them by seat, and the room."""
    clients = [await connect(f"p{seat}") for seat in range(players)]
    await clients[0].send(Create(id=0, variant=VariantSpec(players=players, size=size)))  # type: ignore[arg-type]
    room = (await clients[0].expect(Joined)).room
    for client in clients[1:]:
        await client.send(Join(room=room))
        assert (await client.expect(Joined)).room == room
    # Drain the join events so each inbox starts at the game's first state.
    for seat, client in enumerate(clients):
        for _ in range(players - seat):
            await client.state()
    return clients, room


async def play(clients: list[Client], moves: list[str]) -> State:
    """Play ``moves`` in turn order; every client must see each state."""
    state = None
    for ply, move in enumerate(moves):
        mover = clients[ply % len(clients)]
        await mover.send(MoveRequest(id=ply, move=move, ply=ply))
        for client in clients:
            state = await client.state()
            assert state.ply == ply + 1
            assert state.last_move is not None
            assert state.last_move.move == move
    assert state is not None
    return state


async def test_two_clients_play_to_a_win(connect: Connect) -> None:
    (a, b), _ = await seat_players(connect)
    moves = "e2 d9 e3 d8 e4 a6h e5 d7 e6 d6 e7 d5 e8 d4 e9".split()
    final = await play([a, b], moves)
    assert final.status == "finished"
    assert final.result is not None
    assert final.result.winner == 0
    assert final.turn is None
    assert final.walls == ["a6h"]
    assert final.walls_left == [10, 9]
    assert final.legal_pawn_moves == []
    await a.send(MoveRequest(id="late", move="d3", ply=len(moves)))
    error = await a.error(ErrorCode.GAME_OVER)
    assert error.state is not None
    # The state names the game's id in the history, and that is this game.
    assert final.result.game_id is not None
    await b.send(FetchGame(id="record", game=final.result.game_id))
    record = await b.expect(GameRecordReply)
    assert (record.moves, record.summary.players) == (moves, ["p0", "p1"])


async def test_a_spectator_sees_every_event_in_order(connect: Connect) -> None:
    (a, b), room = await seat_players(connect)
    watcher = await connect("watcher")
    await watcher.send(Watch(room=room))
    await watcher.expect(Joined)
    moves = "e2 e8 e3 e7 e4 e6 e5 e5h".split()
    events = [(await watcher.state()).event]
    await a.quiet()  # the watcher's arrival is no event: the next state counts it
    for ply, move in enumerate(moves):
        await [a, b][ply % 2].send(MoveRequest(move=move, ply=ply))
        state = await watcher.state()
        events.append(state.event)
        assert state.ply == ply + 1
        for client in (a, b):
            assert (await client.state()).event == state.event
    assert events == list(range(events[0], events[0] + len(moves) + 1))
    await watcher.send(MoveRequest(move="e6", ply=len(moves)))
    await watcher.error(ErrorCode.NOT_A_PLAYER)


async def test_a_third_client_cannot_take_a_seat_in_a_full_room(connect: Connect) -> None:
    (a, _b), room = await seat_players(connect)
    third = await connect("third")
    await third.send(Join(id=9, room=room))
    error = await third.error(ErrorCode.ROOM_FULL)
    assert error.id == 9
    await third.send(Join(room=room, seat=1))
    await third.error(ErrorCode.SEAT_TAKEN)
    await a.quiet()


async def test_four_players_play_to_a_win(connect: Connect) -> None:
    clients, _ = await seat_players(connect, players=4)
    rounds = [
        f"e{row} {side_a} {d_col} {side_i}"
        for row, side_a, d_col, side_i in zip(
            range(2, 9),
            ["a4", "a5"] * 4,
            ["d9", "d8"] * 4,
            ["i4", "i5"] * 4,
            strict=False,
        )
    ]
    moves = [*" ".join(rounds).split(), "e9"]
    final = await play(clients, moves)
    assert final.status == "finished"
    assert final.result is not None
    assert final.result.winner == 0
    assert final.pawns == ["e9", "a4", "d9", "i4"]


async def test_quick_match_pairs_two_players(connect: Connect) -> None:
    a, b = await connect("a"), await connect("b")
    await a.send(QuickMatch(id="qa"))
    await a.expect(Queued)
    await b.send(QuickMatch(id="qb"))
    await b.expect(Queued)
    joined_a, joined_b = await a.expect(Joined), await b.expect(Joined)
    assert (joined_a.id, joined_a.seat) == ("qa", 0)
    assert (joined_b.id, joined_b.seat) == ("qb", 1)
    assert joined_a.room == joined_b.room
    state = await a.state()
    assert state.status == "playing"
    assert state == await b.state()


async def test_a_game_between_people_is_drawn_at_the_move_limit(connect: Connect) -> None:
    PLY_CAP = 1000  # the documented move limit (section 11)
    (a, b), _ = await seat_players(connect, size=5)
    shuffle = ["c2", "c4", "c1", "c5"] * (PLY_CAP // 4 + 1)  # nobody ever gets nearer
    before = await play([a, b], shuffle[: PLY_CAP - 1])
    assert before.status == "playing"
    last, other = (a, b) if PLY_CAP % 2 else (b, a)
    await last.send(MoveRequest(id=1, move=shuffle[PLY_CAP - 1], ply=PLY_CAP - 1))
    final = await other.state()
    assert (await last.state()).result == final.result
    assert final.status == "finished"
    assert final.ply == PLY_CAP
    assert final.result is not None
    assert (final.result.winner, final.result.reason) == (None, "ply_cap")
    await other.send(MoveRequest(id=2, move=shuffle[PLY_CAP], ply=PLY_CAP))
    assert (await other.error(ErrorCode.GAME_OVER)).state is not None


async def test_a_closed_tab_gets_the_grace_of_a_lost_connection(connect: Connect) -> None:
    """Browsers close with 1001 ("going away") by themselves when a tab is closed or
    reloaded, by accident too; it counted as leaving on purpose, and the opponent could
    claim the game 15 s later (a player's review). Only 1000 (or ``leave``) is on purpose."""
    for code, grace in ((1001, 60_000), (1000, 15_000)):
        (a, b), _ = await seat_players(connect)
        await play([a, b], ["e2"])
        await a.ws.close(code=code)
        gone = await b.state()
        assert not gone.players[0].connected
        claim_in = gone.players[0].claim_in_ms
        assert claim_in is not None
        assert grace - 1000 < claim_in <= grace, (code, claim_in)


async def test_a_room_code_is_read_in_any_case(connect: Connect) -> None:
    """Read aloud or typed in capitals, a code is the room's: `join G8XTRGUG2Q` was
    `room_not_found` (an outside review)."""
    a, b, c = await connect("ann"), await connect("bob"), await connect("cid")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room.upper()))
    assert (await b.expect(Joined)).room == room
    await c.send_raw(json.dumps({"type": "watch", "room": room.upper()}))  # as a stranger's
    joined = await c.expect(Joined)
    assert (joined.room, joined.role) == (room, "spectator")
