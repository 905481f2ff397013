"""``replay`` is paid for by the move: a connection's allowance, and a server-wide budget."""

from __future__ import annotations

from protocol.messages import Error, ErrorCode, ReplayFrames, ReplayRequest, VariantSpec
from server.app import GameServer
from server.config import Config
from tests.server.driver import Driver
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
        # The whole price, the request included, as PROTOCOL.md gives it.
        assert "a replay of 400 moves costs 11 requests" in refused.message
        await client.send(ReplayRequest(id="short", moves=SHUFFLE[:40]))  # still fits
        assert (await client.expect(ReplayFrames)).id == "short"
        await client.close()


async def test_replays_share_a_budget_for_the_whole_server() -> None:
    # Bursts of 1000, slowly refilled; two addresses, each within its share.
    config = Config(port=0, replay_plies=50, trusted_proxies="127.0.0.0/8")
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        first = await Client.connect(url, "a", address="198.51.100.1")
        second = await Client.connect(url, "b", address="203.0.113.9")
        for _ in range(2):
            await first.send(ReplayRequest(moves=SHUFFLE))
            await first.expect(ReplayFrames)
        await second.send(ReplayRequest(id="b", moves=SHUFFLE))
        error = await second.error(ErrorCode.SERVER_BUSY)
        assert "replaying" in error.message
        await first.close()
        await second.close()


def _replay_heavily(driver: Driver, other: int | None = None) -> tuple[int, list[Error]]:
    """Six connections of one address, each replaying 400 moves every 0.6 s (18 requests a
    second, within its rate limit of 20), one after the other, for 10 s: together 4,000 moves
    a second, the whole server's budget; ``other`` asks for a 500-move replay every second
    meanwhile, and each is answered. The heavy address's moves answered, its refusals."""
    heavy = [driver.greet(f"h{n}", "198.51.100.1")[0] for n in range(6)]
    answered, refused = 0, []
    for tick in range(1, 101):
        driver.clock.advance(0.1)
        (reply,) = driver.send(heavy[tick % 6], ReplayRequest(moves=SHUFFLE))
        if isinstance(reply, ReplayFrames):
            answered += len(SHUFFLE)
        else:
            assert isinstance(reply, Error)
            refused.append(reply)
        if other is not None and tick % 10 == 0:
            (reply,) = driver.send(other, ReplayRequest(id=tick, moves=SHUFFLE + SHUFFLE[:100]))
            assert isinstance(reply, ReplayFrames), reply
    return answered, refused


def test_one_address_gets_a_quarter_of_the_budget() -> None:
    answered, refused = _replay_heavily(Driver())
    assert 1000 * 10 <= answered <= 1000 * 10 + 1000  # a quarter of 4,000 a second, a burst
    assert refused
    assert {error.code for error in refused} == {ErrorCode.RATE_LIMITED}
    assert "your address" in refused[0].message


def test_an_address_replaying_often_leaves_the_budget_to_another() -> None:
    driver = Driver()
    other, _ = driver.greet("other", "203.0.113.9")
    answered, _ = _replay_heavily(driver, other)  # each of other's replays answered
    assert 1000 * 10 <= answered <= 1000 * 10 + 1000


async def test_a_four_player_replay_stops_when_one_seat_is_left() -> None:
    async with GameServer(Config(port=0)).running() as server:
        client = await Client.connect(f"ws://127.0.0.1:{server.port}")
        moves = ["e2", "retire 1", "retire 2", "retire 3", "e3", "e4"]
        await client.send(ReplayRequest(variant=VariantSpec(players=4), moves=moves))
        reply = await client.expect(ReplayFrames)
        assert [frame.last_move for frame in reply.frames] == [None, *moves[:4]]
        assert [frame.winner for frame in reply.frames] == [None] * 4 + [0]
        assert reply.frames[-1].turn == 0
        assert reply.error is not None
        assert reply.error.startswith("move 2 (e3): the game is over")
        await client.close()
