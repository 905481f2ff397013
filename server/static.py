"""The browser client's files, served from the websocket server's own HTTP hook.

The files live in the top-level ``web`` package and are read once, at start,
through ``importlib.resources`` (so they work from a wheel as well as from a
checkout). Each gets its content type, a strong ``ETag`` and, when worth it,
a gzip copy made once. Only the files found at start are ever served: a path
is looked up in a dict, never joined to a directory, so there is no listing
and no way out of the folder.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass
from http import HTTPStatus
from importlib.resources import files
from importlib.resources.abc import Traversable

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}
"""The only kinds of file served; anything else in the folder stays private."""

GZIP_MIN = 512
"""Smaller files are sent as they are: gzip would save less than its own headers."""

_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")
"""A Host header safe to echo into the Content-Security-Policy."""

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes | None
    content_type: str
    etag: str


def load_assets(package: str = "web") -> dict[str, Asset]:
    """Every servable file of ``package``, by URL path (``/`` is ``index.html``)."""
    assets: dict[str, Asset] = {}
    _collect(files(package), "", assets)
    if "/index.html" in assets:
        assets["/"] = assets["/index.html"]
    return assets


def _collect(folder: Traversable, prefix: str, assets: dict[str, Asset]) -> None:
    for entry in folder.iterdir():
        name = entry.name
        if name.startswith((".", "_")):
            continue  # __init__.py, __pycache__, editor droppings
        if entry.is_dir():
            _collect(entry, f"{prefix}/{name}", assets)
            continue
        content_type = CONTENT_TYPES.get(_suffix(name))
        if content_type is not None:
            assets[f"{prefix}/{name}"] = _asset(entry.read_bytes(), content_type)


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def _asset(body: bytes, content_type: str) -> Asset:
    packed = gzip.compress(body, compresslevel=9, mtime=0) if len(body) >= GZIP_MIN else None
    if packed is not None and len(packed) >= len(body):
        packed = None
    digest = hashlib.sha256(body).hexdigest()[:20]
    return Asset(body, packed, content_type, digest)


def serve(assets: dict[str, Asset], request: Request) -> Response:
    """The response to a plain GET for one of ``assets`` (404 for anything else)."""
    path = request.path.split("?", 1)[0]
    asset = assets.get(path)
    if asset is None:
        return _plain(HTTPStatus.NOT_FOUND, "not found\n", request)
    accepts_gzip = _accepts_gzip(request.headers.get("Accept-Encoding", ""))
    use_gzip = asset.gzipped is not None and accepts_gzip
    # A different body needs a different strong validator (RFC 9110, 8.8.3).
    etag = f'"{asset.etag}-gz"' if use_gzip else f'"{asset.etag}"'
    headers = _base_headers(request)
    headers["Content-Type"] = asset.content_type
    headers["ETag"] = etag
    # File names carry no version (there is no build step): revalidate every time,
    # which costs a 304 of a few hundred bytes per file on a reload.
    headers["Cache-Control"] = "no-cache"
    if asset.gzipped is not None:
        headers["Vary"] = "Accept-Encoding"
    if etag in _tags(request.headers.get("If-None-Match", "")):
        headers["Content-Length"] = "0"
        return Response(HTTPStatus.NOT_MODIFIED, "Not Modified", headers, b"")
    body = asset.gzipped if use_gzip and asset.gzipped is not None else asset.body
    if use_gzip:
        headers["Content-Encoding"] = "gzip"
    headers["Content-Length"] = str(len(body))
    return Response(HTTPStatus.OK, "OK", headers, body)


def _plain(status: HTTPStatus, text: str, request: Request) -> Response:
    headers = _base_headers(request)
    body = text.encode()
    headers["Content-Type"] = "text/plain; charset=utf-8"
    headers["Content-Length"] = str(len(body))
    headers["Cache-Control"] = "no-store"
    return Response(status, status.phrase, headers, body)


def _base_headers(request: Request) -> Headers:
    headers = Headers(SECURITY_HEADERS)
    headers["Content-Security-Policy"] = content_security_policy(request.headers.get("Host"))
    headers["Connection"] = "close"
    return headers


def content_security_policy(host: str | None) -> str:
    """No inline code, nothing from elsewhere, and sockets only to this server."""
    sockets = f"ws://{host} wss://{host}" if host and _HOST.fullmatch(host) else "'self'"
    return (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src {sockets}; font-src 'self'; object-src 'none'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'; manifest-src 'self'"
    )


def _accepts_gzip(header: str) -> bool:
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            quality = params.strip().removeprefix("q=").strip()
            return not params.strip().startswith("q=") or _quality(quality) > 0
    return False


def _quality(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _tags(header: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}
