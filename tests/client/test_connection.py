"""Connecting: clear words for every way it fails, backoff, giving up; never a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import cast

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import InvalidMessage, InvalidStatus
from websockets.http11 import Response

from client.__main__ import run
from client.connection import (
    Backoff,
    Connected,
    ConnectError,
    Connection,
    Event,
    Failed,
    Lost,
    describe_close,
    describe_connect_error,
    normalize_url,
)
from tests.client.recorder import until

Handler = Callable[[ServerConnection], Awaitable[None]]


def free_port() -> int:
    """A port nothing listens on (it was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def fake_server(handler: Handler) -> AsyncIterator[str]:
    """A websocket server on a free port running ``handler``; its address."""
    async with serve(handler, "127.0.0.1", 0) as server:
        yield f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}"


def welcome(version: str = "1.0") -> str:
    return json.dumps(
        {
            "type": "welcome",
            "id": "hello",
            "version": version,
            "server": "fake",
            "session": "s",
            "resume_token": "t",
            "name": "n",
        }
    )


async def opened(url: str, **options: float) -> Connection:
    connection = Connection(url, "Alice", lambda event: None, **options)  # type: ignore[arg-type]
    await connection.open()
    return connection


async def refusal(url: str, **options: float) -> str:
    with pytest.raises(ConnectError) as caught:
        await opened(url, **options)
    return caught.value.message


def test_backoff_grows_with_jitter_up_to_a_cap() -> None:
    backoff = Backoff(base=0.5, cap=8.0, rng=random.Random(7))
    for attempt in range(10):
        ceiling = min(8.0, 0.5 * 2**attempt)
        delays = {backoff.delay(attempt) for _ in range(20)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1  # jittered: clients do not come back in step


def test_addresses_are_normalized_or_refused() -> None:
    assert normalize_url("example.org:8765") == "ws://example.org:8765"
    assert normalize_url(" wss://example.org ") == "wss://example.org"
    with pytest.raises(ConnectError, match="not a websocket address"):
        normalize_url("http://example.org:8765")
    with pytest.raises(ConnectError, match="no host name"):
        normalize_url("ws://:8765")
    for garbled in ("garbage:::x", "ws://example.org:port", "example.org:70000"):
        with pytest.raises(ConnectError, match="no valid port"):
            normalize_url(garbled)


def test_close_codes_decide_whether_to_come_back() -> None:
    assert describe_close(4000, "session resumed on another connection") == (
        "this session was taken over by another connection of yours",
        False,
    )
    assert describe_close(1008, "rate limit exceeded")[1] is False
    assert describe_close(1012, "server restarting") == ("the server is restarting", True)
    assert describe_close(1006, None) == ("the connection dropped", True)


def test_an_unknown_host_is_told_as_such() -> None:
    error = describe_connect_error("ws://nowhere.invalid:1", socket.gaierror(-2, "unknown"))
    assert error.message == "cannot find the host in ws://nowhere.invalid:1: check the address"


def test_only_passing_http_answers_are_tried_again_and_only_when_reconnecting() -> None:
    """A proxy answers 502, 503 or 504 while its server restarts (tests/client/test_restart.py
    has it for real); another status, or any status at the first connection, is final."""
    url = "ws://127.0.0.1:1"
    for status, again in [(503, True), (502, True), (504, True), (429, True), (404, False)]:
        answer = InvalidStatus(Response(status, "", Headers()))
        assert describe_connect_error(url, answer, reconnecting=True).retry is again
        first = describe_connect_error(url, answer)
        assert not first.retry
        assert first.message.endswith("instead of a websocket: is it a Quoridor server?")
    cut = InvalidMessage("did not receive a valid HTTP response")
    cut.__cause__ = EOFError("connection closed while reading HTTP status line")
    assert describe_connect_error(url, cut, reconnecting=True).retry
    assert not describe_connect_error(url, cut).retry


async def test_a_server_that_is_down() -> None:
    port = free_port()
    assert await refusal(f"ws://127.0.0.1:{port}") == (
        f"nothing answers at 127.0.0.1:{port}: is the server running, on that port? (another"
        " address: --server ws://host:port, or QUORIDOR_SERVER)"
    )


async def test_a_wrong_address_that_answers_http() -> None:
    async def http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(http, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        message = await refusal(f"ws://127.0.0.1:{port}")
    assert message == (
        f"127.0.0.1:{port} answered HTTP 404 instead of a websocket: is it a Quoridor server?"
    )


async def test_an_incompatible_server_version() -> None:
    async def old(ws: ServerConnection) -> None:
        await ws.recv()
        error = {
            "type": "error",
            "id": "hello",
            "code": "unsupported_version",
            "message": "protocol version 1.0 is not supported; this server speaks 2.0",
        }
        await ws.send(json.dumps(error))
        await ws.close(1008, "unsupported protocol version")

    async with fake_server(old) as url:
        assert await refusal(url) == (
            "incompatible server: it does not speak this client's protocol 1.0 (protocol "
            "version 1.0 is not supported; this server speaks 2.0); use a matching client"
        )

    async def newer(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.send(welcome("2.1"))
        await ws.wait_closed()

    async with fake_server(newer) as url:
        assert await refusal(url) == "incompatible server: it speaks protocol 2.1, this client 1.0"


async def test_a_websocket_server_that_is_not_a_quoridor_server() -> None:
    async def chatty(ws: ServerConnection) -> None:
        await ws.send("hello, human")
        await ws.wait_closed()

    async with fake_server(chatty) as url:
        message = await refusal(url)
        assert message == f"{url} is not a Quoridor server (it sent something else)"

    async def silent(ws: ServerConnection) -> None:
        await ws.wait_closed()

    async with fake_server(silent) as url:
        message = await refusal(url, open_timeout=0.2)
        assert message == f"{url} did not answer hello: is it a Quoridor server?"


async def test_it_reconnects_with_backoff_and_gives_up_in_the_end() -> None:
    events: list[Event] = []
    connections = 0

    async def flaky(ws: ServerConnection) -> None:
        nonlocal connections
        connections += 1
        hello = json.loads(await ws.recv())
        assert hello["resume"] == (None if connections == 1 else "t")
        await ws.send(welcome())
        if connections < 3:
            ws.transport.abort()  # drop the link twice
        await ws.wait_closed()

    async with serve(flaky, "127.0.0.1", 0) as server:
        url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        connection = Connection(
            url, "Alice", events.append, backoff=Backoff(base=0.01, cap=0.05), give_up_after=0.5
        )
        await connection.open()
        reader = asyncio.create_task(connection.run())
        await until(lambda: (connections == 3 and connection.connected) or None)
        assert [type(e) for e in events] == [Lost, Connected, Lost, Connected]
        lost = events[0]
        assert isinstance(lost, Lost)
        assert lost.reason == "the connection dropped"
        assert lost.attempt == 1
    # The server is gone for good: the client tries, then gives up.
    await asyncio.wait_for(reader, 5)
    assert isinstance(events[-1], Failed)
    assert events[-1].reason.startswith(f"gave up reconnecting to {url}: nothing answers")
    assert isinstance(events[-2], Lost)


@pytest.mark.parametrize("close_code", [1012, None])
async def test_a_server_restarting_is_tried_again_every_little_while(
    close_code: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a 1012 (the server restarts, back in seconds) the backoff stops growing at
    ``RESTART_CAP``: an operator's review saw players come back 8 s after the server did. A
    dropped link (None: no close frame) backs off as before."""
    monkeypatch.setattr("client.connection.RESTART_CAP", 0.1)
    events: list[Event] = []
    connections = 0

    async def restarting(ws: ServerConnection) -> None:
        nonlocal connections
        connections += 1
        await ws.recv()
        if connections == 1:
            await ws.send(welcome())
            if close_code is None:
                ws.transport.abort()
            else:
                await ws.close(close_code, "server restarting")
        elif connections < 6:
            ws.transport.abort()  # still starting: no welcome
        else:
            await ws.send(welcome())
        await ws.wait_closed()

    async with fake_server(restarting) as url:
        connection = Connection(url, "Alice", events.append, backoff=Backoff(base=0.05, cap=15))
        await connection.open()
        reader = asyncio.create_task(connection.run())
        await until(lambda: (connections == 6 and connection.connected) or None, 10)
        delays = [event.retry_in for event in events if isinstance(event, Lost)]
        assert len(delays) == 5, events
        longest = max(delays[3:])  # ceilings 0.05, 0.1, 0.2, 0.4, 0.8 uncapped
        assert longest <= 0.1 if close_code == 1012 else longest > 0.2, delays
        await connection.close()
        await asyncio.wait_for(reader, 5)


async def test_a_busy_answer_to_a_resume_is_tried_again() -> None:
    """A cluster whose game's node just died answers a resume with ``server_busy`` until
    another node has the room: the client comes back rather than giving up."""
    events: list[Event] = []
    connections = 0

    async def failing_over(ws: ServerConnection) -> None:
        nonlocal connections
        connections += 1
        await ws.recv()
        if connections == 2:
            busy = {"type": "error", "id": "hello", "code": "server_busy", "message": "later"}
            await ws.send(json.dumps(busy))
        else:
            await ws.send(welcome())
        if connections == 1:
            ws.transport.abort()
        await ws.wait_closed()

    async with fake_server(failing_over) as url:
        connection = Connection(url, "Alice", events.append, backoff=Backoff(base=0.01, cap=0.05))
        await connection.open()
        reader = asyncio.create_task(connection.run())
        await until(lambda: (connections == 3 and connection.connected) or None)
        assert [type(e) for e in events] == [Lost, Lost, Connected]
        assert "later" in cast(Lost, events[1]).reason
        await connection.close()
        await asyncio.wait_for(reader, 5)


async def test_a_session_taken_over_elsewhere_is_not_fought_for() -> None:
    events: list[Event] = []

    async def replaced(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.send(welcome())
        await ws.close(4000, "session resumed on another connection")

    async with fake_server(replaced) as url:
        connection = Connection(url, "Alice", events.append)
        await connection.open()
        await asyncio.wait_for(connection.run(), 5)
    assert events == [Failed("this session was taken over by another connection of yours")]


def test_the_command_says_what_is_wrong_without_a_traceback() -> None:
    port = free_port()
    for argv, message in [
        (["--server", f"127.0.0.1:{port}", "list"], "is the server running"),
        (["--server", "http://example.org", "list"], "not a websocket address"),
        (["--server", "garbage:::x", "list"], "no valid port"),
    ]:
        out, err = io.StringIO(), io.StringIO()
        assert run(argv, io.StringIO(), out, err) == 1
        assert err.getvalue().startswith("quoridor: ")
        assert message in err.getvalue()
        assert "Traceback" not in err.getvalue() + out.getvalue()
