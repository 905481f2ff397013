"""``replay`` is paid for by the move: a connection's allowance, and a server-wide budget."""

from __future__ import annotations

from protocol.messages import ErrorCode, ReplayFrames, ReplayRequest
from server.app import GameServer
from server.config import Config
from tests.wsclient import Client

SHUFFLE = ["e2", "e8", "e1", "e9"] * 100
"""A legal 400-move game (pawns stepping back and forth)."""


async def test_a_long_replay_costs_its_connection_many_requests() -> None:
    # Bursts of 40 as by default; a slow refill, so a loaded machine cannot refill it between
    # the replays.
    async with GameServer(Config(port=0, rate=1, replay_plies=1e6)).running() as server:
        client = await Client.connect(f"ws://127.0.0.1:{server.port}")
        for n in range(3):  # 11 requests' worth each: three fit in the burst of 40
            await client.send(ReplayRequest(id=n, moves=SHUFFLE))
            frames = await client.expect(ReplayFrames)
            assert (frames.error, len(frames.frames)) == (None, 401)
        await client.send(ReplayRequest(id="more", moves=SHUFFLE))
        refused = await client.error(ErrorCode.RATE_LIMITED)
        assert refused.id == "more"
        assert "costs 10" in refused.message
        await client.send(ReplayRequest(id="short", moves=SHUFFLE[:40]))  # still fits
        assert (await client.expect(ReplayFrames)).id == "short"
        await client.close()


async def test_replays_share_a_budget_for_the_whole_server() -> None:
    config = Config(port=0, replay_plies=50)  # bursts of 1000, slowly refilled
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        first, second = await Client.connect(url, "a"), await Client.connect(url, "b")
        for _ in range(2):
            await first.send(ReplayRequest(moves=SHUFFLE))
            await first.expect(ReplayFrames)
        await second.send(ReplayRequest(id="b", moves=SHUFFLE))
        error = await second.error(ErrorCode.SERVER_BUSY)
        assert "replaying" in error.message
        await first.close()
        await second.close()
