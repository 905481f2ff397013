"""The plain HTTP endpoints, read by a strict parser (h11) and by Prometheus's own parser."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.app import GameServer
from server.config import Config
from tests.http import request


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
async def test_each_header_once_and_the_body_it_announces(server: GameServer, path: str) -> None:
    reply = await request(server.port, path)
    assert reply.status == 200
    assert len(reply.header("content-length")) == 1
    assert len(reply.header("content-type")) == 1
    assert int(reply.header("content-length")[0]) == len(reply.body) > 0
    assert reply.after == b""
    # The product, no versions of Python or websockets (an operator's review).
    assert reply.header("server") == ["quoridor-server"]


async def test_metrics_parse_as_prometheus_text(server: GameServer) -> None:
    reply = await request(server.port, "/metrics")
    assert reply.header("content-type") == ["text/plain; version=0.0.4; charset=utf-8"]
    families = {
        family.name: family for family in text_string_to_metric_families(reply.body.decode())
    }
    assert families["quoridor_connections"].samples[0].value == 0
    assert {"quoridor_rooms", "quoridor_moves", "quoridor_request_seconds"} <= families.keys()


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
async def test_head_gets_the_headers_and_no_body(server: GameServer, path: str) -> None:
    got = await request(server.port, path)
    head = await request(server.port, path, method="HEAD")
    assert head.status == 200
    assert head.body == head.after == b""
    assert head.header("content-type") == got.header("content-type")
    if path != "/metrics":  # the metrics change between two scrapes
        assert head.header("content-length") == got.header("content-length")


@pytest.mark.parametrize("body", [b"", b"x=1"])
async def test_other_methods_get_405(server: GameServer, body: bytes) -> None:
    for path in ("/healthz", "/", "/metrics"):
        reply = await request(server.port, path, method="POST", body=body)
        assert reply.status == 405
        assert reply.header("allow") == ["GET, HEAD"]


async def test_unknown_paths_are_404_and_not_websockets(server: GameServer) -> None:
    assert (await request(server.port, "/nothing")).status == 404
    with pytest.raises(InvalidStatus) as refused:
        await connect(f"ws://127.0.0.1:{server.port}/elsewhere")
    assert refused.value.response.status_code == 404
    async with connect(f"ws://127.0.0.1:{server.port}/?client=test") as ws:
        await ws.ping()


async def test_a_request_head_over_16_kib_gets_431(server: GameServer) -> None:
    """websockets alone takes 128 headers of 8 KiB: a megabyte to parse for each GET."""
    cookies = [("Cookie", "c" * 6000), ("X-Padding", "p" * 6000)]  # 12 KB: a big browser's
    assert (await request(server.port, "/healthz", extra=cookies)).status == 200
    async with connect(
        f"ws://127.0.0.1:{server.port}/?client=test", additional_headers=cookies
    ) as ws:
        await ws.ping()
    huge = [(f"X-Padding-{n}", "p" * 8000) for n in range(3)]
    reply = await request(server.port, "/healthz", extra=huge)
    assert reply.status == 431
    assert reply.body == b"the request's headers are too large\n"


async def test_plain_requests_have_a_rate_per_address() -> None:
    """--http-rate 2: 20 at once, then 2 a second; websocket upgrades do not count."""
    async with GameServer(Config(port=0, http_rate=2)).running() as server:
        for _ in range(20):
            assert (await request(server.port, "/healthz")).status == 200
        refused = await request(server.port, "/")
        assert refused.status == 429
        assert refused.header("retry-after") == ["1"]
        assert refused.body == b"too many requests from your address\n"
        async with connect(f"ws://127.0.0.1:{server.port}/?client=test") as ws:
            await ws.ping()
        await asyncio.sleep(0.6)
        assert (await request(server.port, "/healthz")).status == 200
        assert (await request(server.port, "/healthz")).status == 429


async def test_plain_requests_have_a_rate_for_the_whole_server() -> None:
    """--http-rate-total: past it plain requests get 503, whatever their address's own rate
    says; orchestrators' probes and websocket upgrades are never refused for it."""
    async with GameServer(Config(port=0, http_rate_total=0.01)).running() as server:
        assert (await request(server.port, "/", source="127.0.0.2")).status == 200
        for path in ("/", "/metrics", "/main.js", "/nothing"):
            refused = await request(server.port, path)
            assert refused.status == 503
            assert refused.header("retry-after") == ["1"]
            assert refused.body == b"the server has too many requests; try again soon\n"
        for path in ("/healthz", "/readyz"):
            assert (await request(server.port, path)).status == 200
        async with connect(f"ws://127.0.0.1:{server.port}/?client=test") as ws:
            await ws.ping()
