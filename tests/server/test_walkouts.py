"""Walking out of quick-match games (``server.walkouts``): an outside review's one address
took every honest pairing by keeping a connection queued and leaving each game it was
paired into. Over real sockets, each player at an address of its own (a trusted proxy's
``X-Forwarded-For``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from protocol.messages import (
    Abort,
    Create,
    Error,
    ErrorCode,
    Join,
    Joined,
    Leave,
    Left,
    MoveRequest,
    Queued,
    QuickMatch,
    Rematch,
    Resign,
    State,
)
from server.app import GameServer
from server.config import Config
from server.database import Loaded
from tests.server.driver import Driver
from tests.wsclient import Client


async def serving(first_move: float) -> AsyncIterator[GameServer]:
    config = Config(
        port=0, rate=1000, burst=1000, trusted_proxies="127.0.0.1", first_move=first_move
    )
    async with GameServer(config).running() as running:
        yield running


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    async for running in serving(first_move=60.0):
        yield running


@pytest.fixture
async def hasty() -> AsyncIterator[GameServer]:
    """First moves must come within 0.5 s."""
    async for running in serving(first_move=0.5):
        yield running


async def player(server: GameServer, address: str) -> Client:
    return await Client.connect(f"ws://127.0.0.1:{server.port}", "p", address=address)


async def paired(*clients: Client) -> str:
    """Queue ``clients`` in turn; the room they were paired into."""
    for client in clients:
        await client.send(QuickMatch())
        await client.expect(Queued)
    rooms = {(await client.expect(Joined)).room for client in clients}
    assert len(rooms) == 1
    return rooms.pop()


async def over(client: Client) -> State:
    while (state := await client.state()).status != "finished":
        pass
    return state


async def leave(client: Client) -> None:
    """Leave the room or queue (the states that came before are read past)."""
    await client.send(Leave(id="leave"))
    while not isinstance(message := await client.recv(), Left):
        assert isinstance(message, State | Joined), message


async def refused_for(client: Client) -> str:
    """``client``, in the lobby, asks for a quick match: why it was refused."""
    await client.send(QuickMatch(id="again"))
    error = await client.error(ErrorCode.RATE_LIMITED)
    assert error.id == "again"
    return error.message


async def queues(client: Client) -> None:
    """Out of its room, ``client`` queues again at once (and leaves the queue)."""
    await leave(client)
    await client.send(QuickMatch(id="again"))
    assert (await client.expect(Queued)).id == "again"
    await leave(client)


async def test_walking_out_of_pairings_makes_the_address_wait_longer_each_time(
    hasty: GameServer,
) -> None:
    server = hasty
    attacker = [await player(server, "203.0.113.9") for _ in range(3)]
    honest = await player(server, "198.51.100.1")
    await paired(attacker[0], honest)
    await attacker[1].send(QuickMatch())  # queued ahead for the next honest player
    await attacker[1].expect(Queued)
    await attacker[0].send(Abort())
    assert (await over(honest)).result.reason == "aborted"  # type: ignore[union-attr]
    assert "queue again in 15 s" in await refused_for(attacker[2])
    # The player left behind is not made to wait. The connection queued ahead still meets
    # them, and leaves the game unplayed: its first move (seat 0, the first queued) does
    # not come within the limit (0.5 s here).
    await leave(honest)
    await honest.send(QuickMatch())
    await honest.expect(Queued)
    await honest.expect(Joined)
    assert (await over(honest)).result.reason == "aborted"  # type: ignore[union-attr]
    message = await refused_for(attacker[2])
    assert "queue again in 30 s" in message
    assert "doubles with each game left so within an hour" in message
    await queues(honest)  # nobody to capture it now
    for client in (*attacker, honest):
        await client.close()


async def playing(client: Client) -> None:
    """Read until the room's game is in play (past the seats' turning)."""
    while not isinstance(message := await client.recv(), State) or message.status != "playing":
        pass


async def test_resigning_before_a_move_is_walking_out_and_a_played_game_is_not(
    server: GameServer,
) -> None:
    first, second = await player(server, "203.0.113.1"), await player(server, "203.0.113.2")
    await paired(first, second)
    await first.send(MoveRequest(move="e2", ply=0))
    while (await second.state()).ply != 1:
        pass
    await second.send(Resign())  # moved nothing: walked out
    assert (await over(first)).result.winner == 0  # type: ignore[union-attr]
    await leave(second)
    assert "15 s" in await refused_for(second)
    await queues(first)  # a win is no walk-out
    # One move, then resigning before the opponent's first: walked out all the same (an
    # outside review got round the rule so).
    mover, other = await player(server, "203.0.113.5"), await player(server, "203.0.113.6")
    await paired(mover, other)  # mover queued first: seat 0
    await mover.send(MoveRequest(move="e2", ply=0))
    while (await other.state()).ply != 1:
        pass
    await mover.send(Resign())
    await over(other)
    await leave(mover)
    assert "15 s" in await refused_for(mover)
    await queues(other)
    # Once both have moved it is a game, however short: resigning it is no walk-out.
    late = await player(server, "203.0.113.7")
    await paired(other, late)
    for ply, (client, square) in enumerate(((other, "e2"), (late, "e8"))):
        await client.send(MoveRequest(move=square, ply=ply))
        while (await other.state()).ply != ply + 1:
            pass
    await other.send(Resign())
    await over(late)
    await queues(other)
    # A rematch is chosen by both: leaving it unplayed is not walking out of a pairing.
    third, fourth = await player(server, "203.0.113.3"), await player(server, "203.0.113.4")
    await paired(third, fourth)
    await third.send(Resign())  # walked out of the pairing: third waits, not fourth
    await over(third)
    for client in (third, fourth):
        await client.send(Rematch())
    await playing(fourth)
    await fourth.send(Resign())  # seat 0 of the rematch (the seats turned), no move
    await over(third)
    await queues(fourth)
    for client in (first, second, mover, other, late, third, fourth):
        await client.close()


async def test_the_state_tells_a_quick_match_room_from_a_room_created(server: GameServer) -> None:
    """``state.quick``: clients warn before an abort or a resignation that costs a wait."""
    first, second = await player(server, "203.0.113.1"), await player(server, "203.0.113.2")
    await paired(first, second)
    while (state := await first.state()).status != "playing":
        pass
    assert state.quick
    assert state.game == 1
    await first.send(Abort())
    assert (await over(second)).quick
    host, guest = await player(server, "203.0.113.3"), await player(server, "203.0.113.4")
    await host.send(Create())
    room = (await host.expect(Joined)).room
    await guest.send(Join(room=room))
    await guest.expect(Joined)
    while (state := await guest.state()).status != "playing":
        pass
    assert not state.quick
    for client in (first, second, host, guest):
        await client.close()


async def test_a_joiner_who_leaves_a_public_rooms_game_unplayed_leaves_the_room_open(
    hasty: GameServer,
) -> None:
    """An outside review: one connection joined every public room as it appeared and aborted
    its game at once, and the friend each creator had given the code got ``room_full``. The
    joiner is out instead, never to sit there again, and the room waits for players."""
    server = hasty
    creator = await player(server, "198.51.100.1")
    await creator.send(Create())
    room = (await creator.expect(Joined)).room
    await creator.state()
    attacker = await player(server, "203.0.113.9")
    await attacker.send(Join(room=room))
    await attacker.expect(Joined)
    await attacker.send(Abort(id="abort"))
    assert (await over(creator)).result.reason == "aborted"  # type: ignore[union-attr]
    reopened = await creator.state()
    assert (reopened.status, reopened.game) == ("waiting", 2)
    assert reopened.players[1].name is None
    while not isinstance(message := await attacker.recv(), Left):
        assert isinstance(message, State), message
    assert message.reason == "walked_out"
    await attacker.send(Join(room=room, id="again"))
    refused = await attacker.error(ErrorCode.ROOM_FULL)
    assert "without playing it" in refused.message
    # Not making a first move in time is leaving it unplayed too (0.5 s here).
    idler = await player(server, "203.0.113.10")
    await idler.send(Join(room=room))
    await idler.expect(Joined)
    await creator.send(MoveRequest(move="e2", ply=0))
    assert (await over(creator)).result.reason == "aborted"  # type: ignore[union-attr]
    assert (await creator.state()).status == "waiting"
    friend = await player(server, "192.0.2.7")
    await friend.send(Join(room=room))
    await friend.expect(Joined)
    while (state := await friend.state()).status != "playing":
        pass
    assert [p.name for p in state.players] == ["p", "p"]
    assert state.game == 3  # the two aborted ones are in the history
    for client in (creator, attacker, idler, friend):
        await client.close()


async def test_a_creator_who_aborts_ends_the_room_and_a_private_room_ends_too(
    server: GameServer,
) -> None:
    for public, aborter in ((True, 0), (False, 1)):
        creator = await player(server, "198.51.100.1")
        await creator.send(Create(private=not public))
        room = (await creator.expect(Joined)).room
        guest = await player(server, "203.0.113.9")
        await guest.send(Join(room=room))
        await guest.expect(Joined)
        await (creator, guest)[aborter].send(Abort())
        assert (await over(guest)).result.reason == "aborted"  # type: ignore[union-attr]
        await guest.quiet(0.2)  # no new game, nobody out
        for client in (creator, guest):
            await client.close()


def test_who_may_not_sit_again_is_kept_across_a_restart() -> None:
    driver = Driver()
    driver.core.persistent = True
    creator, _ = driver.greet("ann", address="198.51.100.1")
    driver.send(creator, Create())
    room = driver.last_state(creator).room
    walker, _ = driver.greet("bob", address="203.0.113.9")
    driver.send(walker, Join(room=room))
    driver.send(walker, Abort())
    assert driver.last_state(creator).status == "waiting"
    batch = driver.core.take_changes()
    restarted = Driver()
    restarted.core.restore(Loaded([r for r, _ in batch.rooms], batch.sessions, batch.games))
    assert restarted.core.rooms[room].barred == {"address:203.0.113.9"}
    assert restarted.core.rooms[room].first_pairing
    again, _ = restarted.greet("bob", address="203.0.113.9")
    (refused,) = restarted.send(again, Join(room=room))
    assert isinstance(refused, Error)
    assert refused.code == ErrorCode.ROOM_FULL
