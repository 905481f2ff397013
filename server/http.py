"""Plain HTTP on the websocket port: health, readiness, metrics, and what to refuse.

websockets parses the request line and headers; this module decides the
answer. Only ``GET`` and ``HEAD`` are served (``HEAD`` gets the headers of
the ``GET`` and no body); any other method gets 405 before websockets reads
it, since websockets would otherwise hang up on a request with a body without
a word. The websocket upgrade is accepted on ``/`` only: any other path is
404, so a typo in a client's address is a clear error, not a silent success.
Other plain GETs are for the browser client's files (``server.static``).
"""

from __future__ import annotations

from http import HTTPStatus

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Response

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


class GatedConnection(ServerConnection):
    """A websocket connection that answers a request of another method with 405 itself."""

    _prefix = b""
    _method_known = False

    def data_received(self, data: bytes) -> None:
        if not self._method_known:
            self._prefix += data[:LONGEST_METHOD]
            method, space, _ = self._prefix.partition(b" ")
            if space or len(self._prefix) >= LONGEST_METHOD:
                self._method_known = True
                if not space or method not in METHODS:
                    self.transport.write(NOT_ALLOWED.serialize())
                    self.transport.close()
                    return
        super().data_received(data)
