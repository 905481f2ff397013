"""The browser client's files over real HTTP: types, caching, gzip, headers, no way out."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from importlib.resources import files

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.app import GameServer
from server.config import Config


async def get(port: int, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 GET, as raw as a browser's: (status, headers in lower case, body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    response = await reader.read()
    writer.close()
    head, _, body = response.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), fields, body


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    async with GameServer(Config(port=0, origins="https://play.example.org")).running() as running:
        yield running


def source(name: str) -> bytes:
    return files("web").joinpath(name).read_bytes()


async def test_root_serves_the_client_with_strict_headers(server: GameServer) -> None:
    status, headers, body = await get(server.port, "/")
    assert status == 200
    assert body == source("index.html")
    assert headers["content-type"] == "text/html; charset=utf-8"
    policy = headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self';" in policy
    assert "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert f"connect-src ws://127.0.0.1:{server.port} wss://127.0.0.1:{server.port};" in policy
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["cache-control"] == "no-cache"
    assert headers["etag"].startswith('"')


async def test_each_file_has_its_type(server: GameServer) -> None:
    expected = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
    names = [entry.name for entry in files("web").iterdir()]
    for suffix, content_type in expected.items():
        name = next(name for name in names if name.endswith(suffix))
        status, headers, body = await get(server.port, f"/{name}")
        assert (status, headers["content-type"]) == (200, content_type)
        assert body == source(name)


async def test_gzip_when_accepted_and_304_on_a_matching_etag(server: GameServer) -> None:
    path = max(server.assets, key=lambda name: len(server.assets[name].body))
    plain_status, plain, body = await get(server.port, path)
    status, zipped, packed = await get(server.port, path, Accept_Encoding="gzip, deflate, br")
    assert (plain_status, status) == (200, 200)
    assert zipped["content-encoding"] == "gzip"
    assert "content-encoding" not in plain
    assert gzip.decompress(packed) == body
    assert int(zipped["content-length"]) == len(packed) < len(body)
    assert zipped["vary"] == "Accept-Encoding"
    assert zipped["etag"] != plain["etag"]  # two bodies, two strong validators
    _, refused, _ = await get(server.port, path, Accept_Encoding="gzip;q=0, identity")
    assert "content-encoding" not in refused
    status, headers, empty = await get(server.port, path, If_None_Match=plain["etag"])
    assert (status, empty) == (304, b"")
    assert headers["etag"] == plain["etag"]
    status, _, again = await get(server.port, path, If_None_Match='"stale"')
    assert (status, again) == (200, body)


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/..%2fpyproject.toml",
        "/%2e%2e/server/app.py",
        "//etc/passwd",
        "/__init__.py",
        "/web/",
        "/nothing-here.js",
        "/index.html/",
    ],
)
async def test_no_way_out_and_no_listing(server: GameServer, path: str) -> None:
    status, headers, body = await get(server.port, path)
    assert status == 404
    assert body == b"not found\n"
    assert headers["x-content-type-options"] == "nosniff"


async def test_the_servers_own_pages_may_open_a_websocket(server: GameServer) -> None:
    own = f"http://127.0.0.1:{server.port}"
    socket = await connect(f"ws://127.0.0.1:{server.port}/", origin=own)  # type: ignore[arg-type]
    await socket.close()
    allowed = await connect(
        f"ws://127.0.0.1:{server.port}/",
        origin="https://play.example.org",  # type: ignore[arg-type]
    )
    await allowed.close()
    for origin in (
        "https://evil.example",
        "http://127.0.0.1:1",
        "null",
        f"ftp://127.0.0.1:{server.port}",
    ):
        with pytest.raises(InvalidStatus) as refused:
            await connect(f"ws://127.0.0.1:{server.port}/", origin=origin)  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403


async def test_a_forged_host_header_cannot_inject_policy(server: GameServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x; script-src *\r\n\r\n")
    await writer.drain()
    response = (await reader.read()).decode(errors="replace")
    writer.close()
    assert "connect-src 'self';" in response
    assert "script-src *" not in response
