"""Decisions the server makes on its own are pushed the moment it makes them.

Over real websockets, in every variant: a flag, a removal at the hard limit of
absence, and the computer's moves that follow them. A four-player game goes on
after a seat leaves it, so that seat leaving is news on its own: it must not
wait for the end of the game or for somebody's next move to be told.
"""

from __future__ import annotations

import asyncio
import time

from protocol.messages import (
    AiSpec,
    Claim,
    Create,
    Join,
    Joined,
    MoveRequest,
    State,
    TimeControl,
    VariantSpec,
    Watch,
)
from server.app import GameServer
from server.config import Config
from tests.wsclient import Client

FOUR = VariantSpec(players=4, size=9)
FIRST_MOVES = ["e2", "b5", "e8", "h5"]
"""Each seat's free first move in a four-player game on 9x9."""


async def seat_four(url: str, clock: TimeControl | None = None) -> tuple[list[Client], Client, str]:
    """Four players in a new room, and a spectator; every inbox drained up to the start."""
    players = [await Client.connect(url, f"p{seat}") for seat in range(4)]
    await players[0].send(Create(variant=FOUR, clock=clock))
    room = (await players[0].expect(Joined)).room
    for player in players[1:]:
        await player.send(Join(room=room))
        await player.expect(Joined)
    watcher = await Client.connect(url, "watcher")
    await watcher.send(Watch(room=room))
    await watcher.expect(Joined)
    for client in [*players, watcher]:  # a spectator's arrival is no event
        while (await client.state()).status != "playing":
            pass
    return players, watcher, room


async def play_first_moves(players: list[Client], watcher: Client) -> State:
    state = None
    for ply, move in enumerate(FIRST_MOVES):
        await players[ply].send(MoveRequest(move=move, ply=ply))
        for client in [*players, watcher]:
            state = await client.state()
            assert state.ply == ply + 1
    assert state is not None
    return state


async def close_all(clients: list[Client]) -> None:
    await asyncio.gather(*(client.close() for client in clients))


async def test_a_four_player_flag_is_pushed_when_it_falls() -> None:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as server:
        players, watcher, _ = await seat_four(
            f"ws://127.0.0.1:{server.port}", TimeControl(base=0.6)
        )
        started = await play_first_moves(players, watcher)
        assert started.clock is not None
        assert started.clock.running == 0
        since = time.monotonic()
        for client in [*players, watcher]:
            flagged = await client.expect(State, within=3)
            # The flag alone: seat 0 out, seat 1's clock running, nobody else touched.
            assert flagged.id is None
            assert flagged.event == started.event + 1
            assert flagged.moves == [*FIRST_MOVES, "retire 0"]
            assert [p.active for p in flagged.players] == [False, True, True, True]
            assert flagged.status == "playing"
            assert flagged.turn == 1
            assert flagged.clock is not None
            assert flagged.clock.running == 1
            # Seat 1's clock started when the flag fell: by the push it may have run for
            # as long as the timer was late (a few ms, more on a loaded machine).
            zero, running, *others = flagged.clock.remaining_ms
            assert (zero, others) == (0, [600, 600])
            assert 500 < running <= 600
        assert time.monotonic() - since < 1.5
        # Seat 1 was told its clock runs, and plays on.
        await players[1].send(MoveRequest(move="c5", ply=4))
        moved = await players[2].state()
        assert moved.moves[-2:] == ["retire 0", "c5"]
        assert moved.turn == 2
        await close_all([*players, watcher])


async def test_seats_flagging_one_after_another_are_each_pushed() -> None:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as server:
        players, watcher, _ = await seat_four(
            f"ws://127.0.0.1:{server.port}", TimeControl(base=0.3)
        )
        await play_first_moves(players, watcher)
        seen = [await watcher.expect(State, within=3) for _ in range(3)]
        assert [s.moves[4:] for s in seen] == [
            ["retire 0"],
            ["retire 0", "retire 1"],
            ["retire 0", "retire 1", "retire 2"],
        ]
        assert [s.status for s in seen] == ["playing", "playing", "finished"]
        assert seen[-1].result is not None
        assert (seen[-1].result.winner, seen[-1].result.reason) == (3, "last_standing")
        await close_all([*players, watcher])


async def test_a_four_player_hard_limit_removal_is_pushed() -> None:
    config = Config(port=0, rate=1000, burst=1000, grace=0.2, deliberate_grace=0.2, hard_limit=0.6)
    async with GameServer(config).running() as server:
        players, watcher, _ = await seat_four(f"ws://127.0.0.1:{server.port}")
        await play_first_moves(players, watcher)
        players[2].ws.transport.abort()  # seat 2's link dies
        away = await watcher.state()
        assert not away.players[2].connected
        assert away.players[2].claim_in_ms is not None
        removed = await watcher.expect(State, within=3)
        assert removed.id is None
        assert removed.moves == [*FIRST_MOVES, "retire 2"]
        assert removed.players[2].active is False
        assert removed.status == "playing"
        for player in (players[0], players[1], players[3]):
            while (state := await player.state()).event < removed.event:
                pass
            assert state == removed
        await close_all([players[0], players[1], players[3], watcher])


async def test_a_four_player_claim_is_pushed_to_everyone() -> None:
    config = Config(port=0, rate=1000, burst=1000, grace=0.1, deliberate_grace=0.1)
    async with GameServer(config).running() as server:
        players, watcher, _ = await seat_four(f"ws://127.0.0.1:{server.port}")
        await play_first_moves(players, watcher)
        await players[3].close()
        for client in [*players[:3], watcher]:
            assert not (await client.state()).players[3].connected
        await asyncio.sleep(0.2)
        await players[0].send(Claim(id="c"))
        for client in [*players[:3], watcher]:
            claimed = await client.state()
            assert (claimed.id, claimed.moves[-1]) == ("c", "retire 3")
        await close_all([*players[:3], watcher])


async def test_the_computer_plays_on_after_a_four_player_flag() -> None:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as server:
        human = await Client.connect(f"ws://127.0.0.1:{server.port}", "human")
        ai = AiSpec(level=1, seconds=0.05)
        await human.send(Create(variant=FOUR, clock=TimeControl(base=1.0), ai=ai))
        await human.expect(Joined)
        state = await human.state()
        await human.send(MoveRequest(move="e2", ply=0))
        while state.ply < 4:
            state = await human.state()
        # The human's clock runs now; it never moves again.
        flagged = await human.expect(State, within=3)
        assert flagged.moves[-1] == "retire 0"
        assert flagged.turn == 1
        # The computer is told it is its turn, and moves at once, well inside its second.
        after = await human.expect(State, within=0.8)
        assert after.last_move is not None
        assert after.last_move.seat == 1
        assert after.moves[-2] == "retire 0"
        await human.close()
