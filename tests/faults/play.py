"""Helpers for the fault tests: seat two players, play scripted legal moves."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from engine import Game
from protocol.messages import (
    VERSION,
    ChatMessage,
    Create,
    Error,
    Hello,
    Join,
    Joined,
    MoveRequest,
    State,
    VariantSpec,
    Welcome,
)
from tests.wsclient import Client

WITHIN = 15.0
"""Generous: the suite runs on a loaded 2-core machine."""


def script(size: int = 5, walls: int = 2) -> list[str]:
    """A complete legal game: shortest-path steps, and each player's walls early on."""
    game = Game(2, size, walls)
    while game.winner is None:
        seat = game.turn
        move = None
        if game.walls_left[seat] and game.ply % 3 == 1:
            # A wall that lengthens the opponent's path the most (first one found).
            other = 1 - seat
            best = game.distance(other)
            for wall in game.legal_walls():
                game.play(wall)
                longer = game.distance(other)
                game.undo()
                if longer > best:
                    move, best = wall, longer
        if move is None:
            move = min(game.legal_pawn_moves(), key=lambda step: _after(game, step, seat))
        game.play(move)
    return list(game.moves)


def _after(game: Game, step: str, seat: int) -> int:
    game.play(step)
    distance = game.distance(seat)
    game.undo()
    return distance


def past(ply: int) -> Callable[[State], bool]:
    """A ``next_state`` condition: a state after ``ply`` was played."""
    return lambda state: state.ply > ply


async def next_state(
    client: Client, when: Callable[[State], bool] = lambda s: True, within: float = WITHIN
) -> State:
    """The next state ``client`` receives that satisfies ``when`` (others are skipped).

    An error is a failure: no fault test expects one.
    """
    deadline = time.monotonic() + within
    while True:
        message = await client.recv(max(0.01, deadline - time.monotonic()))
        assert not isinstance(message, Error), message
        if isinstance(message, State) and when(message):
            return message


async def seat_pair(
    a: Client, b: Client, variant: VariantSpec | None = None
) -> tuple[str, Joined, Joined]:
    """``a`` creates a room and ``b`` joins it; both see the game start."""
    await a.send(Create(variant=variant or VariantSpec(size=5, walls=2)))
    joined_a = await a.expect(Joined, WITHIN)
    await b.send(Join(room=joined_a.room))
    joined_b = await b.expect(Joined, WITHIN)
    for client in (a, b):
        await next_state(client, lambda s: s.status == "playing")
    return joined_a.room, joined_a, joined_b


async def move(mover: Client, others: list[Client], ply: int, notation: str) -> float:
    """Play ``notation`` at ``ply``; wait until everyone has the new state; the round trip."""
    started = time.perf_counter()
    await mover.send(MoveRequest(id=ply, move=notation, ply=ply))
    state = await next_state(mover, past(ply))
    elapsed = time.perf_counter() - started
    assert state.last_move is not None
    assert (state.ply, state.last_move.move, state.id) == (ply + 1, notation, ply)
    for other in others:
        await next_state(other, past(ply))
    return elapsed


async def resume(
    connect: Callable[..., Awaitable[Client]], url: str, welcome: Welcome, last_event: int | None
) -> Client:
    """A new connection taking back ``welcome``'s session."""
    client = await connect(url, hello=False)
    hello = Hello(
        version=VERSION, name=welcome.name, resume=welcome.resume_token, last_event=last_event
    )
    await client.send(hello)
    client.welcome = await client.expect(Welcome, WITHIN)
    return client


def check_final(client: Client, moves: list[str], size: int, walls: int) -> State:
    """``client``'s last state is the end of the game ``moves``, as the engine plays it."""
    expected = Game.from_moves(" ".join(moves), size=size, walls=walls)
    final = next(m for m in reversed(client.seen) if isinstance(m, State))
    assert final.status == "finished"
    assert final.result is not None
    assert final.result.winner == expected.winner
    assert final.pawns == expected.pawns
    assert final.walls == expected.walls
    return final


def consecutive(numbers: list[int]) -> bool:
    return bool(numbers) and numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def events(*connections: Client) -> list[int]:
    """Room event numbers received, in order, over one session's connections."""
    return [
        message.event
        for client in connections
        for message in client.seen
        if isinstance(message, State | ChatMessage)
    ]
