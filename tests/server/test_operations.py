"""Operators' view: health, readiness, metrics, and every abuse limit over real sockets."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from protocol.messages import Create, ErrorCode, Joined, MoveRequest, Ping, Pong, Resign, State
from server import logs
from server.addresses import address_key, rooms_key
from server.app import GameServer
from server.config import Config
from tests.http import get as http_get
from tests.process import ServerProcess
from tests.server.test_games import seat_players
from tests.server.test_store import resume, seat_two
from tests.wsclient import Client


@pytest.fixture
async def guarded() -> AsyncIterator[GameServer]:
    config = Config(
        port=0,
        origins="https://play.example.org",
        max_per_ip=3,
        hello_timeout=0.3,
        idle_timeout=0.5,
        max_message=1024,
    )
    async with GameServer(config).running() as server:
        yield server


def url(server: GameServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


async def test_health_and_metrics(guarded: GameServer) -> None:
    assert await http_get(guarded.port, "/healthz") == (200, "ok\n")
    assert await http_get(guarded.port, "/readyz") == (200, "ready\n")
    (a, b), _ = await seat_players(lambda name="p": Client.connect(url(guarded), name))
    await a.send(MoveRequest(move="e2", ply=0))
    await a.state()
    await b.state()
    await b.send(MoveRequest(move="e1", ply=1))
    await b.error(ErrorCode.ILLEGAL_MOVE)
    status, metrics = await http_get(guarded.port, "/metrics")
    assert status == 200
    assert "quoridor_connections 2.0" in metrics
    assert 'quoridor_rooms{status="playing"} 1.0' in metrics
    assert 'quoridor_moves_total{outcome="accepted"} 1.0' in metrics
    assert 'quoridor_moves_total{outcome="illegal_move"} 1.0' in metrics
    assert 'quoridor_request_seconds_count{type="move"} 2.0' in metrics
    assert "_created" not in metrics  # prometheus_client's timestamps, turned off
    await asyncio.gather(a.close(), b.close())


async def test_readyz_turns_false_during_shutdown(caplog: pytest.LogCaptureFixture) -> None:
    async with GameServer(Config(port=0, shutdown_delay=0.5)).running() as server:
        with caplog.at_level(logging.INFO, "quoridor"):
            stopping = asyncio.create_task(server.shutdown())
            await asyncio.sleep(0.1)
            # The operator sees the stop begin, not half a second of silence.
            assert "the port closes in 0.5 s (--shutdown-delay)" in caplog.text
        assert await http_get(server.port, "/readyz") == (503, "shutting down\n")
        assert await http_get(server.port, "/healthz") == (200, "ok\n")
        await stopping


@pytest.mark.parametrize("again", [signal.SIGTERM, signal.SIGINT])
async def test_a_second_signal_skips_the_rest_of_the_shutdown_delay(
    tmp_path: Path, again: signal.Signals
) -> None:
    """The operators' review (M2): a second SIGTERM or Ctrl-C was ignored during a long
    --shutdown-delay, so only SIGKILL ended it. It skips the rest of the delay now, and the
    stop is still graceful: the game saved, its players closed with 1012."""
    server = await ServerProcess(tmp_path / "q.db", "--shutdown-delay", "120").start()
    a, b, _code = await seat_two(server.url)
    assert server.process is not None
    server.process.send_signal(signal.SIGTERM)
    for _ in range(100):  # up to 5 s
        if b"the port closes in 120 s" in server.log:
            break
        await asyncio.sleep(0.05)
    assert await http_get(server.port, "/readyz") == (503, "shutting down\n")
    assert await server.stop(again, within=10) == 0
    assert b"signalled again: the port closes now" in server.log
    assert (await a.closed())[0] == 1012
    assert (await b.closed())[0] == 1012


async def test_browsers_from_other_sites_get_403(guarded: GameServer) -> None:
    with pytest.raises(InvalidStatus) as refused:
        await connect(url(guarded), origin="https://evil.example")  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    allowed = await connect(url(guarded), origin="https://play.example.org")  # type: ignore[arg-type]
    await allowed.close()
    no_origin = await connect(url(guarded))
    await no_origin.close()


async def test_oversized_frames_close_with_1009(guarded: GameServer) -> None:
    big, calm = await Client.connect(url(guarded)), await Client.connect(url(guarded))
    await big.send_raw('{"type": "chat", "text": "' + "x" * 2000 + '"}')
    code, _ = await big.closed()
    assert code == 1009
    await calm.send(Ping(id=1))
    assert (await calm.expect(Pong)).id == 1
    await calm.close()


async def test_the_log_says_why_a_client_was_cut_off_and_when_games_start_and_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An operator asked about a dropped player finds it in the log at INFO (the oversized
    frame and rate-limit closes were not logged; nor were games' starts)."""
    config = Config(port=0, rate=2, burst=3, max_message=1024)
    with caplog.at_level(logging.INFO, "quoridor"):
        async with GameServer(config).running() as server:
            big, flood = await Client.connect(url(server)), await Client.connect(url(server))
            await big.send_raw('{"type": "chat", "text": "' + "x" * 2000 + '"}')
            assert (await big.closed())[0] == 1009
            for _ in range(server.core.limits.strikes + 8):
                await flood.send_raw('{"type": "ping"}')
            assert (await flood.closed())[0] == 1008
            with pytest.raises(InvalidStatus):
                await connect(url(server), origin=Origin("https://elsewhere.example"))
            alice, bob, _ = await seat_two(url(server))
            await alice.send(Resign())
            while (await bob.expect(State)).result is None:
                pass
    lines = caplog.text
    assert "exceeds limit of 1024 bytes (1009)" in lines
    assert lines.count("closing: rate limit exceeded (1008)") == 1
    # Each names the client's address (an outside operator review: only "conn" was there).
    cut = [r for r in caplog.records if r.getMessage().startswith(("closing:", "closed:"))]
    refused = [r for r in caplog.records if r.getMessage().startswith("connection refused")]
    assert len(cut) == 2
    assert len(refused) == 1
    assert all(getattr(record, "ip", None) == "127.0.0.1" for record in cut + refused)
    # ... and its connection's number (the operators' review: the origin line had none).
    assert all(isinstance(getattr(record, "conn", None), int) for record in cut + refused)
    assert "game started: alice v bob" in lines
    assert "finished: resign, winner seat 1, 0 plies" in lines


async def test_at_debug_the_log_says_who_comes_and_goes(caplog: pytest.LogCaptureFixture) -> None:
    """An operator asked who was connected: only counts said it. At DEBUG each connection's
    hello names its player (deploy/README.md, Logs), and its close follows, by ``conn``. (A
    first version named the field ``name``, which a log record has already: every hello
    failed at DEBUG. A game is played here at DEBUG too.)"""
    with caplog.at_level(logging.DEBUG, "quoridor"):
        async with GameServer(Config(port=0)).running() as server:
            alice, bob, _ = await seat_two(url(server))
            await alice.send(MoveRequest(move="e2", ply=0))
            await bob.send(Resign())
            while (await alice.expect(State)).result is None:
                pass
            await alice.close()
            await asyncio.sleep(0.2)
    hellos = {str(getattr(r, "player", "")): r for r in caplog.records if r.getMessage() == "hello"}
    assert sorted(hellos) == ["alice", "bob"]
    closed = [r for r in caplog.records if r.getMessage() == "connection closed"]
    assert getattr(hellos["alice"], "conn", None) in [getattr(r, "conn", None) for r in closed]
    assert "player=alice" in logs.PlainFormatter().format(hellos["alice"])
    assert "Fatal error" not in caplog.text


async def test_no_hello_in_time_is_closed(
    guarded: GameServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "quoridor")
    silent = await Client.connect(url(guarded), hello=False)
    greeted = await Client.connect(url(guarded))
    await greeted.send(Create())
    await greeted.expect(Joined)
    assert await silent.closed() == (1008, "no hello in time")
    assert "closing: no hello in time (1008)" in caplog.text  # the code, as the other lines
    await greeted.send(Ping(id=2))
    await greeted.state()
    assert (await greeted.expect(Pong)).id == 2
    await greeted.close()


async def test_idle_lobby_connections_are_closed(guarded: GameServer) -> None:
    idle = await Client.connect(url(guarded))
    playing = await Client.connect(url(guarded))
    await playing.send(Create())
    await playing.expect(Joined)
    assert await idle.closed() == (1001, "idle for too long")
    await asyncio.sleep(0.3)
    await playing.send(Ping(id=3))
    await playing.state()
    assert (await playing.expect(Pong)).id == 3  # a player in a room is never idle
    await playing.close()


async def test_per_ip_connection_cap(guarded: GameServer) -> None:
    clients = [await Client.connect(url(guarded)) for _ in range(3)]
    with pytest.raises(InvalidStatus) as refused:
        await connect(url(guarded))
    assert refused.value.response.status_code == 429
    await clients[0].send(Ping(id=4))
    assert (await clients[0].expect(Pong)).id == 4
    await clients[1].close()
    await asyncio.sleep(0.05)
    again = await Client.connect(url(guarded))
    for client in [again, clients[0], clients[2]]:
        await client.close()


async def test_the_per_ip_cap_sees_through_trusted_proxies() -> None:
    config = Config(port=0, max_per_ip=1, trusted_proxies="127.0.0.0/8")
    async with GameServer(config).running() as server:
        first = await connect(url(server), additional_headers={"X-Forwarded-For": "203.0.113.7"})
        # A client cannot pick its address: the proxy appends the real one on the right.
        spoofed = {"X-Forwarded-For": "203.0.113.7, 198.51.100.2"}
        second = await connect(url(server), additional_headers=spoofed)
        with pytest.raises(InvalidStatus) as refused:
            await connect(url(server), additional_headers={"X-Forwarded-For": "203.0.113.7"})
        assert refused.value.response.status_code == 429
        await first.close()
        await second.close()


async def test_an_ipv6_client_is_counted_by_its_64() -> None:
    """Every per-address limit counted an IPv6 address alone, and one home or rented server
    gets a whole /64: one attacker held 2**64 addresses (an outside attack review)."""
    config = Config(port=0, max_per_ip=1, trusted_proxies="127.0.0.0/8")
    async with GameServer(config).running() as server:

        def via(address: str) -> dict[str, str]:
            return {"X-Forwarded-For": address}

        first = await connect(url(server), additional_headers=via("2001:db8:1:2::a"))
        with pytest.raises(InvalidStatus) as refused:  # the same /64
            await connect(url(server), additional_headers=via("2001:db8:1:2:ffff::b"))
        assert refused.value.response.status_code == 429
        other = await connect(url(server), additional_headers=via("2001:db8:1:3::a"))
        ipv4 = await connect(url(server), additional_headers=via("203.0.113.7"))
        with pytest.raises(InvalidStatus) as mapped:  # the same IPv4 address, written in IPv6
            await connect(url(server), additional_headers=via("::ffff:203.0.113.7"))
        assert mapped.value.response.status_code == 429
        for ws in (first, other, ipv4):
            await ws.close()


def test_address_keys() -> None:
    assert address_key("203.0.113.7") == "203.0.113.7"
    assert address_key("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64"
    assert address_key("::ffff:203.0.113.7") == "203.0.113.7"
    assert address_key("unknown") == "unknown"
    assert rooms_key("2001:db8:1:2:3:4:5:6") == "2001:db8:1::/56"
    assert rooms_key("2001:db8:1:2::/64") == "2001:db8:1::/56"  # an address_key already
    assert rooms_key("203.0.113.7") == rooms_key("::ffff:203.0.113.7") == "203.0.113.7"
    assert rooms_key("") == ""


async def test_a_game_taken_back_after_a_restart_is_not_logged_as_started_again(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Counting ``game started`` lines counts games (an outside operator review found each
    restart, restore or takeover logging every game in progress as started once more)."""
    config = Config(port=0, db=str(tmp_path / "q.db"))
    with caplog.at_level(logging.INFO, "quoridor"):
        async with GameServer(config).running() as server:
            alice, bob, _ = await seat_two(url(server))
            await alice.send(MoveRequest(move="e2", ply=0))
            await bob.state()
        async with GameServer(config).running() as server:
            back = await resume(url(server), alice.welcome, "alice")
            while not (await back.state()).players[0].connected:
                pass
            await back.close()
    assert caplog.text.count("game started: alice v bob") == 1
    assert "1 game in progress recovered" in caplog.text
