"""Plain HTTP on the websocket port: health, readiness, metrics, and what to refuse.

websockets parses the request line and headers (``server.wire``); this module
decides the answer. Only ``GET`` and ``HEAD`` are served (``HEAD`` gets the
headers of the ``GET`` and no body); any other method gets 405 before websockets
reads it, since websockets would otherwise hang up on a request with a body
without a word. The websocket upgrade is accepted on ``/`` only: any other path is
404, so a typo in a client's address is a clear error, not a silent success.
Other plain GETs are for the browser client's files (``server.static``).
"""

from __future__ import annotations

import logging
import resource
import time
from collections import Counter
from collections.abc import Callable
from http import HTTPStatus

from websockets.datastructures import Headers
from websockets.http11 import Response

from server.addresses import address_key
from server.ratelimit import KeyedBuckets

log = logging.getLogger("quoridor.server")

WEBSOCKET_PATH = "/"
TEXT = "text/plain; charset=utf-8"
METHODS = (b"GET", b"HEAD")
LONGEST_METHOD = 8
"""Bytes after which a request line without a space is not a method we serve."""


def response(
    status: HTTPStatus, body: bytes, content_type: str = TEXT, head: bool = False, **extra: str
) -> Response:
    """A complete response with each header once; ``head``: the same headers, no body."""
    headers = Headers(
        {"Content-Type": content_type, "Content-Length": str(len(body)), "Connection": "close"}
    )
    for name, value in extra.items():
        headers[name.replace("_", "-")] = value
    return Response(status.value, status.phrase, headers, b"" if head else body)


def text(status: HTTPStatus, message: str, head: bool = False, **extra: str) -> Response:
    return response(status, (message + "\n").encode(), head=head, **extra)


def without_body(reply: Response) -> Response:
    """The answer to a HEAD: the GET's headers (its Content-Length included), no body."""
    return Response(reply.status_code, reply.reason_phrase, reply.headers, b"")


NOT_ALLOWED = text(HTTPStatus.METHOD_NOT_ALLOWED, "only GET and HEAD are served", Allow="GET, HEAD")


HEAD_TOO_LARGE = text(
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "the request's headers are too large"
)
SLOW_DOWN = text(
    HTTPStatus.TOO_MANY_REQUESTS, "too many requests from your address", Retry_After="1"
)
SERVER_BUSY = text(
    HTTPStatus.SERVICE_UNAVAILABLE,
    "the server has too many requests; try again soon",
    Retry_After="1",
)
SERVER_FULL = text(HTTPStatus.SERVICE_UNAVAILABLE, "the server is full; try again soon")
TOO_MANY = text(HTTPStatus.TOO_MANY_REQUESTS, "too many connections from your address")
TOO_OFTEN = text(
    HTTPStatus.TOO_MANY_REQUESTS,
    "too many new connections from your address; wait a moment",
    Retry_After="1",
)
ARRIVALS_PER_HELD = 5
"""New connections an address may open a second, per connection it may hold: 100 for the
default 20. Each costs the server about half a millisecond (its handshake, its opening and
closing) whether or not it says hello: an outside review opened and closed 1029 a second
from one address, within every other limit, and took 0.57 of a core."""
ARRIVALS_BURST = 50
"""...and at once, per connection it may hold (1000 for the default 20)."""

RESERVE_SHARE = 32
MAX_RESERVE = 32


class Gate:
    """Counts every TCP connection from the moment it is accepted, before any byte of HTTP:
    a client that opens sockets and never finishes its request (slowloris) holds them
    against its address's cap like any websocket, and the whole server keeps below its
    file-descriptor limit. A newcomer that finds it full takes the place of a connection
    that holds nothing (``make_room``: ``server.idlers``), and gets a clear 503 only when
    none may go."""

    def __init__(
        self,
        per_address: int,
        total: int,
        proxies: Callable[[str], bool],
        make_room: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_address = per_address
        self.arrivals = KeyedBuckets(ARRIVALS_PER_HELD * per_address, ARRIVALS_BURST * per_address)
        """Each address's allowance of new connections (a trusted proxy's clients: none)."""
        self.clock = clock
        self.total = total
        self.reserve = reserve_for(total)
        """Descriptors kept for the connections closing to make room: a newcomer makes room
        from ``total - reserve`` on, so the one it replaces still fits while it closes."""
        self.proxied = proxies
        """Whether a peer is a trusted proxy (counted per client at the handshake instead)."""
        self.make_room = make_room
        """Start closing a connection that holds nothing; False if none may be closed."""
        self.open: Counter[str] = Counter()
        self.count = 0
        self.refused: Counter[str] = Counter()
        """Connections refused at accept, by reason (``full``, ``address``, ``rate``), for the
        metrics."""

    def admit(self, peer: str) -> Response | None:
        """Count a new connection from ``peer``; the refusal to send instead, if any. The
        address's cap first: a newcomer it refuses makes nobody else leave."""
        key = address_key(peer)
        if not self.proxied(peer):
            if self.open[key] >= self.per_address:
                self.refused["address"] += 1
                return TOO_MANY
            if not self.arrivals.take(key, self.clock()):
                self.refused["rate"] += 1
                return TOO_OFTEN
        if self.count >= self.total - self.reserve and not self._room_made():
            self.refused["full"] += 1
            return SERVER_FULL
        self.open[key] += 1
        self.count += 1
        return None

    def _room_made(self) -> bool:
        """Whether a connection started closing for the newcomer (within the reserve)."""
        return self.count < self.total and self.make_room()

    def release(self, peer: str) -> None:
        key = address_key(peer)
        self.count -= 1
        self.open[key] -= 1
        if not self.open[key]:
            del self.open[key]


def reserve_for(total: int) -> int:
    """The descriptors of ``total`` kept for connections closing to make room: one in
    ``RESERVE_SHARE``, at least one and at most ``MAX_RESERVE`` (each is gone within a second,
    ``server.wire.EVICTED_LINGER``); none when ``total`` is 1 (nobody is ever made to leave)."""
    return 0 if total < 2 else max(1, min(MAX_RESERVE, total // RESERVE_SHARE))


def default_connection_cap(headroom: int = 100) -> int:
    """The process's open-file limit less ``headroom`` descriptors for the database, the
    worker processes' pipes and the logs (at least 10)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(10, soft - headroom)
