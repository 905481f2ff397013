"""The thinking limit of untimed games over real sockets: a player who stays and never moves
can be claimed against, and cannot then claim the game from the one it kept waiting."""

from __future__ import annotations

import asyncio

from protocol.messages import (
    Claim,
    Create,
    Error,
    ErrorCode,
    Join,
    Joined,
    Leave,
    MoveRequest,
    Result,
    State,
)
from server.app import GameServer
from server.config import Config
from tests.wsclient import Client


async def _refused(client: Client, code: ErrorCode) -> Error:
    """The next error (states pushed before it are skipped), which must be ``code``."""
    while not isinstance(message := await client.recv(), Error):
        pass
    assert message.code == code, message
    return message


async def _stalled_game(url: str) -> tuple[Client, Client]:
    """An untimed game in which everyone has moved and the staller, to move, never will."""
    honest, staller = await Client.connect(url, "honest"), await Client.connect(url, "staller")
    await honest.send(Create())
    room = (await honest.expect(Joined)).room
    await staller.send(Join(room=room))
    await staller.expect(Joined)
    for ply, (mover, square) in enumerate(((honest, "e2"), (staller, "e8"), (honest, "e3"))):
        await mover.send(MoveRequest(move=square, ply=ply))
        while (await honest.expect(State)).ply < ply + 1:
            pass
    return honest, staller


async def test_a_player_who_never_moves_can_be_claimed_against() -> None:
    """An outside review: the staller could not be claimed against, and once the other gave
    up and left it claimed the game itself (a rated win stolen)."""
    async with GameServer(Config(port=0, think_limit=0.5)).running() as server:
        honest, staller = await _stalled_game(f"ws://127.0.0.1:{server.port}")
        await honest.send(Claim(id="early"))
        early = await _refused(honest, ErrorCode.CANNOT_CLAIM)
        assert early.state is not None
        assert early.state.move_claim_in_ms is not None
        assert 0 < early.state.move_claim_in_ms <= 500
        await asyncio.sleep(0.6)
        await staller.send(Claim(id="mine"))  # the staller's own move is overdue
        await _refused(staller, ErrorCode.CANNOT_CLAIM)
        await honest.send(Claim(id="claim"))
        while (final := await honest.expect(State)).id != "claim":
            pass
        assert final.result == Result(winner=0, reason="time", game_id=1, by=0)  # claimed
        await honest.close()
        await staller.close()


async def test_the_staller_cannot_claim_once_the_other_leaves() -> None:
    """The review's theft itself: the honest player leaves; 16 s later the staller claimed
    the win. Now it must move first (its own move is overdue)."""
    config = Config(port=0, think_limit=0.5, deliberate_grace=0.2, hard_limit=5)
    async with GameServer(config).running() as server:
        honest, staller = await _stalled_game(f"ws://127.0.0.1:{server.port}")
        await asyncio.sleep(0.6)
        await honest.send(Leave())
        await asyncio.sleep(0.4)
        await staller.send(Claim(id="steal"))
        await _refused(staller, ErrorCode.CANNOT_CLAIM)
        await honest.close()
        await staller.close()
