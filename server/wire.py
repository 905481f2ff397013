"""The server's connections: websockets' sans-I/O core driven from a plain asyncio.Protocol.

Each TCP connection is one ``Link``. The bytes that arrive go to websockets'
``ServerProtocol``, which parses the HTTP request and the frames and answers
pings and closing handshakes; the bytes it wants sent are written straight to
the transport. There is no task, queue or future per connection: a message
goes from ``data_received`` to the server in the same call, and the server's
frames go to the transport without waiting (measured with bench/load.py: this
costs far less CPU and memory per message than websockets' asyncio connection,
which runs a reader task and a message assembler for every connection).

What every connection lives by, whatever it carries, is kept here:

- it is counted from accept by the server's ``http.Gate`` (the per-address
  and the server-wide caps, 429 and 503), and until it holds a seat in a game in progress it
  may be closed to make room for a newcomer when the server is full (``server.idlers``:
  ``make_room``);
- a request of a method other than GET or HEAD gets 405 before it is parsed, and one whose
  head passes ``MAX_REQUEST_HEAD`` bytes gets 431;
- the opening handshake must be complete within ``OPEN_TIMEOUT`` (slowloris);
- an open websocket is pinged every ``ping_interval`` seconds and dropped
  (close code 1011) when nothing at all came from it since the previous ping;
- a close, either side's, ends the TCP connection within ``CLOSE_TIMEOUT``, and at once
  when the client sends anything after the close handshake;
- websocket control frames (pings, pongs) are rate-limited (``CONTROL_RATE``): websockets
  answers each ping by itself, so nothing else bounded them;
- a message may come in at most ``MAX_FRAGMENTS`` frames: the request rate counts messages,
  and the size limit bytes, so a message that never ends in empty fragments met neither;
- a connection closed for either stops being read at once, and is dropped
  ``REFUSED_LINGER`` later;
- a client whose unread backlog passes ``WRITE_BUFFER_LIMIT`` is cut off, whatever filled it
  (the server's frames, or websockets' own pongs to its pings);
- so are those with the largest backlogs while all clients' backlogs together pass the
  server's budget (``server.backlogs``): the connection tells it when it falls behind.

Everything else (what to answer to a plain GET, whether an upgrade is allowed,
what a message means) is the ``Host``'s: ``server.app.GameServer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from http import HTTPStatus
from typing import Protocol, cast

from websockets.datastructures import Headers
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import CLOSED, OPEN
from websockets.server import ServerProtocol

from server.backlogs import BEHIND, Backlogs
from server.http import HEAD_TOO_LARGE, LONGEST_METHOD, METHODS, NOT_ALLOWED, Gate
from server.idlers import Idlers
from server.ratelimit import TokenBucket

SERVER_HEADER = "quoridor-server"
"""Every HTTP answer's ``Server``: the product, without the versions of Python and websockets
(websockets' default) that an operator would rather not announce (an operator's review)."""

log = logging.getLogger("quoridor.server")

OPEN_TIMEOUT = 10.0
"""Seconds from accept to the end of the opening handshake."""
CLOSE_TIMEOUT = 5.0
"""Seconds a closing connection has to finish before the TCP connection is aborted."""

WRITE_BUFFER_LIMIT = 1 << 20
"""Bytes queued for a client that stopped reading before it is cut off."""
CONTROL_RATE = 2.0
"""Websocket control frames (ping, pong) a client may send a second, on average: libraries
send a keepalive ping every 20 seconds or so. websockets queues a pong for every ping before
the server sees it, so 20 connections sending pings and never reading grew the server by a
gigabyte in 30 seconds, and held its event loop for most of them."""
CONTROL_BURST = 20.0
"""...and at once."""
MAX_REQUEST_HEAD = 16 * 1024
"""Bytes a request line and its headers may take: a browser's upgrade with its cookies takes
one or two. websockets' own limits (128 headers of 8 KiB) let a plain GET carry a megabyte
of headers, which cost the server a millisecond of CPU to parse (an outside review: 400 such
requests a second from two addresses took 0.9 of a core)."""
READ_SLICE = 8 * 1024
"""Bytes handed to websockets' parser at a time: between two slices, a connection closed for
abuse stops being parsed (a 256 KiB read of empty frames is 43,000 of them)."""
REFUSED_LINGER = 1.0
"""Seconds between closing a connection for abuse (no longer read) and dropping it."""
EVICTED_LINGER = 1.0
"""Seconds a connection closed to make room has to finish its closing handshake: its
descriptor is in the gate's small reserve meanwhile (``http.reserve_for``)."""
CLOSE_TRY_LATER = 1013
"""The close code of a connection closed to make room ("try again later")."""
MAX_FRAGMENTS = 64
"""Frames one message may come in (a first frame and continuation frames). Libraries split
only messages far larger than the server accepts; one connection sending empty continuation
frames without end held the event loop for 20 s of 20 (an outside review)."""

TEXT, BINARY, CONT = Opcode.TEXT, Opcode.BINARY, Opcode.CONT
PING, PONG = Opcode.PING, Opcode.PONG


class Host(Protocol):
    """What a ``Link`` asks of the server it belongs to."""

    gate: Gate
    backlogs: Backlogs
    idlers: Idlers[Link]

    @property
    def serving(self) -> bool:
        """False once the server stops taking connections: upgrades get 503."""

    def answer(self, link: Link, request: Request) -> Response | None:
        """The HTTP response to ``request``; None to accept it as a websocket."""

    def opened(self, link: Link) -> None:
        """The websocket is open."""

    def received(self, link: Link, data: bytes) -> None:
        """A whole message (text or binary) arrived on the open websocket."""

    def timed_out(self, link: Link) -> None:
        """The deadline set with ``Link.expect_within`` passed without a message."""

    def gone(self, link: Link) -> None:
        """The TCP connection of a websocket that was open is gone."""


class Link(asyncio.Protocol):
    """One client connection, from accept to the end of its TCP connection."""

    __slots__ = (
        "address",
        "conn",
        "controls",
        "counted",
        "cut",
        "fragments",
        "head",
        "heard",
        "held",
        "host",
        "keepalive",
        "lost",
        "patience",
        "ping_interval",
        "prefix",
        "protocol",
        "refused",
        "relay",
        "remote_address",
        "request",
        "timer",
        "transport",
    )  # fmt: skip

    transport: asyncio.Transport
    """Set once the TCP connection is made."""

    @property
    def ip(self) -> str:
        """For the logs: the client's address once known (a trusted proxy's client's),
        before that the peer's."""
        return self.address or self.remote_address[0]

    def __init__(self, host: Host, max_message: int, ping_interval: float) -> None:
        self.host = host
        self.ping_interval = ping_interval
        self.protocol = ServerProtocol(max_size=max_message)
        self.remote_address = ("unknown", 0)
        """The peer's address and port (not a proxy's client's: see the server's address)."""
        self.counted: str | None = None
        """The address the gate counts this connection against, while it does."""
        self.prefix: bytes | None = b""
        """The first bytes of the request, until its method is known (then None)."""
        self.head = 0
        """Bytes of the request read so far, until it is parsed."""
        self.request: Request | None = None
        self.conn = 0
        """The server's number for this connection, once open."""
        self.address = ""
        """The client's address as the server sees it (proxies included), once open."""
        self.fragments: list[bytes] | None = None
        self.refused = False
        """Closed for abuse (``_refuse``): nothing more it sends is read."""
        self.cut = False
        """Cut off for its unread backlog (``cut_off``)."""
        self.heard = True
        """Whether anything arrived since the last keepalive ping."""
        self.held: list[bytes] | None = None
        """Its messages that came while its ``hello`` with a login token was being checked
        (``GameServer.received``): served once it is, in order; None when nothing waits."""
        self.timer: asyncio.TimerHandle | None = None
        """The opening handshake's deadline, then the closing's."""
        self.keepalive: asyncio.TimerHandle | None = None
        self.patience: asyncio.TimerHandle | None = None
        self.lost: asyncio.Future[None] | None = None
        self.controls: TokenBucket | None = None
        """The client's allowance of control frames, from its first one."""
        self.relay: object | None = None
        """The cluster relay's state for this connection (``server.cluster.relay``): a
        client served by another node, or a connection another node handed over; None
        for a plain connection (and on a server that is no cluster node)."""

    # -- asyncio.Protocol ----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(asyncio.Transport, transport)  # uvloop: not a subclass
        peer = transport.get_extra_info("peername")
        if peer:
            self.remote_address = (str(peer[0]), int(peer[1]))
        address = self.remote_address[0]
        refusal = self.host.gate.admit(address)
        if refusal is not None:
            log.debug("connection refused at accept: %s", refusal.body.decode().strip())
            transport.write(refusal.serialize())
            transport.close()
            return
        self.counted = address
        transport.set_write_buffer_limits(high=BEHIND)
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(OPEN_TIMEOUT, transport.abort)
        self.host.idlers.arrived(self, loop.time())

    def pause_writing(self) -> None:
        self.host.backlogs.fell_behind(self)

    def resume_writing(self) -> None:
        self.host.backlogs.caught_up(self)

    def data_received(self, data: bytes) -> None:
        if self.request is None and not self._head_allowed(data):
            return
        protocol = self.protocol
        if protocol.close_rcvd is not None and protocol.close_sent is not None:
            # Both close frames have passed, after which a client may send nothing (RFC
            # 6455, 5.5.1): websockets would read and discard it until the close timeout,
            # a third of a core for 5 s per connection that streams on (an outside review).
            self.transport.abort()
            return
        self.heard = True
        if len(data) <= READ_SLICE:
            self._parse(data)
            return
        # A read may hold tens of thousands of tiny frames: parsed a slice at a time, those
        # after a close for abuse (``refused``) are never parsed at all.
        for start in range(0, len(data), READ_SLICE):
            if self.refused:
                return
            self._parse(data[start : start + READ_SLICE])

    def _parse(self, data: bytes) -> None:
        protocol = self.protocol
        protocol.receive_data(data)
        events = protocol.events_received()
        self._flush()
        for event in events:
            if self.refused:
                return  # the rest of this chunk is the same abuse
            if type(event) is Frame:
                self._frame(event)
            else:
                self._request(cast(Request, event))

    def eof_received(self) -> None:
        self.protocol.receive_eof()
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        protocol = self.protocol
        protocol.receive_eof()
        sent = protocol.close_sent
        # websockets closed it (a connection refused for abuse, dropped without reading its
        # close frame, has said why already)
        if protocol.parser_exc is not None and sent is not None and not self.refused:
            why = f"{protocol.parser_exc} ({sent.code})"
            log.info("closed: %s", why, extra={"conn": self.conn, "ip": self.ip})
        for timer in (self.timer, self.keepalive, self.patience):
            if timer is not None:
                timer.cancel()
        self.timer = self.keepalive = self.patience = None
        self.host.backlogs.caught_up(self)
        self.host.idlers.gone(self)
        if self.counted is not None:
            self.host.gate.release(self.counted)
            self.counted = None
        if self.conn:
            self.host.gone(self)
        if self.lost is not None and not self.lost.done():
            self.lost.set_result(None)
        self._unlink()

    def _unlink(self) -> None:
        """Break the reference cycles a closed connection is part of, so that reference
        counting frees it now. The cyclic collector would free it too, but only a full
        collection reaches a connection that lived a while, and the server runs one an hour
        (``server.gcclock``): a cluster node's soak with ~100 reconnections a second grew
        by about 3 KB per connection until then. The cycles: websockets' parser, a
        generator that stays suspended for good once the connection is closed and holds
        its protocol; the error that ended the parser (a request head never finished, a
        frame that broke the protocol), whose traceback holds the parser's frame and with it
        the protocol: 6 KB a connection that an outside review saw pile up, connections
        dropped at the handshake deadline over and over; and a relayed connection's state,
        which holds its link."""
        protocol = self.protocol
        protocol.parser.close()
        protocol.parser_exc = protocol.handshake_exc = None  # read by now (connection_lost)
        self.relay = None

    # -- what the server does with it ----------------------------------------------

    def close(self, code: int, reason: str) -> bool:
        """Start the closing handshake (the TCP connection ends within CLOSE_TIMEOUT);
        False if it had started already. A close for abuse (1008) reads nothing more
        (``stop_reading``)."""
        if self.protocol.state is not OPEN:
            return False
        self.protocol.send_close(code, reason)
        self._flush()
        if code == CloseCode.POLICY_VIOLATION:
            self.stop_reading()
        return True

    def stop_reading(self) -> None:
        """Read nothing more from this client, and drop it ``REFUSED_LINGER`` seconds from
        now (time for a close frame to reach it), not after the close handshake, which
        would need reading on: it is being closed for abuse (1008), and whatever else it
        sends, in the same packet too, is more of the same, which parsing and answering
        would cost the server as much as before."""
        if self.refused:
            return
        self.refused = True
        self.transport.pause_reading()
        self._abort_in(REFUSED_LINGER)

    def make_room(self) -> None:
        """Close it for a newcomer to a full server: a handshake in progress at once, an open
        websocket with ``CLOSE_TRY_LATER`` and ``EVICTED_LINGER`` to finish its closing
        handshake (a client that reconnects finds the server as full as it left it, and
        takes the place of the longest idle connection in turn)."""
        if self.protocol.state is not OPEN:
            self.transport.abort()
            return
        self.protocol.send_close(CLOSE_TRY_LATER, "server full; closed the longest idle")
        self._flush()
        self._abort_in(EVICTED_LINGER)

    def _abort_in(self, seconds: float) -> None:
        """Drop the TCP connection ``seconds`` from now, whatever deadline it had before."""
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(seconds, self.transport.abort)

    def send_binary(self, data: bytes) -> None:
        """Send one binary message (the cluster relay's own messages on a node link)."""
        if self.protocol.state is OPEN:
            self.protocol.send_binary(data)
            self._flush()

    async def wait_closed(self) -> None:
        """Until the TCP connection is gone."""
        if self.protocol.state is CLOSED:
            return
        if self.lost is None:
            self.lost = asyncio.get_running_loop().create_future()
        await self.lost

    def expect_within(self, seconds: float | None) -> None:
        """Tell the server (``Host.timed_out``) if no message arrives within ``seconds``;
        None: wait for ever. Each call replaces the previous deadline."""
        if self.patience is not None:
            self.patience.cancel()
            self.patience = None
        if seconds is not None:
            loop = asyncio.get_running_loop()
            self.patience = loop.call_later(seconds, self.host.timed_out, self)

    @property
    def close_code(self) -> int | None:
        """The code of the close frame received, if any."""
        received = self.protocol.close_rcvd
        return None if received is None else received.code

    def backlog(self) -> int:
        """Bytes waiting to be sent to the client."""
        return self.transport.get_write_buffer_size()

    def cut_off(self, why: str = "") -> None:
        """Drop a client whose unread backlog grew too big: writes never wait for a slow
        reader, so nobody else is slowed down, and this bounds the memory it can hold. Once:
        every frame written to it in the same turn of the loop found it over the limit again,
        and an outside review saw one cut-off logged 11 times in a millisecond."""
        if self.cut:
            return
        self.cut = True
        extra = {"conn": self.conn, "ip": self.ip}
        because = f": {why}" if why else ""
        log.warning("cutting off a client that stopped reading%s", because, extra=extra)
        self.transport.abort()

    # -- inside ----------------------------------------------------------------------

    def _head_allowed(self, data: bytes) -> bool:
        """Whether the request read so far may go on: its method (``_method_allowed``) and
        its size; if not, it has been answered (405, 431) and the connection is closing."""
        if self.prefix is not None and not self._method_allowed(data):
            return False
        self.head += len(data)
        if self.head <= MAX_REQUEST_HEAD:
            return True
        self.transport.write(HEAD_TOO_LARGE.serialize())
        self.transport.close()  # nothing more is read
        return False

    def _method_allowed(self, data: bytes) -> bool:
        """Answer 405 to methods other than GET and HEAD as soon as the method is known,
        before websockets reads the request (it would hang up on a body without a word)."""
        assert self.prefix is not None
        self.prefix += data[:LONGEST_METHOD]
        method, space, _ = self.prefix.partition(b" ")
        if not space and len(self.prefix) < LONGEST_METHOD:
            return True
        self.prefix = None
        if space and method in METHODS:
            return True
        self.transport.write(NOT_ALLOWED.serialize())
        self.transport.close()
        return False

    def _request(self, request: Request) -> None:
        protocol, host = self.protocol, self.host
        self.request = request
        host.idlers.answered(self)
        try:
            response = host.answer(self, request)
        except Exception as error:
            protocol.handshake_exc = error
            log.exception("answering an HTTP request failed")
            response = protocol.reject(HTTPStatus.INTERNAL_SERVER_ERROR, "server error\n")
        if response is None:
            response = protocol.accept(request)
            if response.status_code == HTTPStatus.SWITCHING_PROTOCOLS and not host.serving:
                response = protocol.reject(HTTPStatus.SERVICE_UNAVAILABLE, "shutting down\n")
        headers = Headers(response.headers.raw_items())  # answers may be shared: a copy
        headers["Server"] = SERVER_HEADER
        protocol.send_response(
            Response(response.status_code, response.reason_phrase, headers, response.body)
        )
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self._flush()
        if protocol.state is OPEN:
            self.keepalive = asyncio.get_running_loop().call_later(self.ping_interval, self._ping)
            host.opened(self)

    def _frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode is TEXT or opcode is BINARY:
            # Even once the protocol is closing: a message that came before the close frame
            # (a resign, then a close, in one packet) is the client's last word, and counts.
            data = cast(bytes, frame.data)  # what the parser makes
            if frame.fin:
                self.host.received(self, data)
            else:
                self.fragments = [data]
        elif opcode is CONT and self.fragments is not None:
            if len(self.fragments) >= MAX_FRAGMENTS:
                self.fragments = None
                self._refuse("too many fragments")
                return
            self.fragments.append(cast(bytes, frame.data))
            if frame.fin:
                data, self.fragments = b"".join(self.fragments), None
                self.host.received(self, data)
        elif opcode is PING or opcode is PONG:
            self._control()

    def _control(self) -> None:
        """Count a control frame; close the connection (1008) past the allowance."""
        now = asyncio.get_running_loop().time()
        if self.controls is None:
            self.controls = TokenBucket(CONTROL_RATE, CONTROL_BURST, now)
        if self.controls.take(now) or self.protocol.state is not OPEN:
            return
        self._refuse("too many pings")

    def _refuse(self, reason: str) -> None:
        """Close the connection for abuse of the wire's own limits (1008, ``reason``) and
        read nothing more from it (``stop_reading``)."""
        log.info("closing: %s", reason, extra={"conn": self.conn, "ip": self.ip})
        if self.protocol.state is OPEN:
            self.protocol.send_close(CloseCode.POLICY_VIOLATION, reason)
            self._flush()
        self.stop_reading()

    def _flush(self) -> None:
        """Write what the protocol has to send; an empty chunk means the end of the stream."""
        transport, protocol = self.transport, self.protocol
        if transport.is_closing():  # cut off (a slow reader, say): nothing more goes out
            protocol.data_to_send()
            return
        for data in protocol.data_to_send():
            if data:
                transport.write(data)
            elif transport.can_write_eof():
                with contextlib.suppress(Exception):  # uvloop may raise RuntimeError here
                    transport.write_eof()
            else:
                transport.close()
        if transport.get_write_buffer_size() > WRITE_BUFFER_LIMIT:
            self.cut_off()
            return
        if self.timer is None and protocol.state is not OPEN and protocol.close_expected():
            self.timer = asyncio.get_running_loop().call_later(CLOSE_TIMEOUT, transport.abort)

    def _ping(self) -> None:
        """The keepalive: a peer that sent nothing since the last ping is gone."""
        self.keepalive = None
        protocol, transport = self.protocol, self.transport
        if protocol.state is not OPEN:
            return
        if not self.heard:
            log.info("dropping a silent connection", extra={"conn": self.conn, "ip": self.ip})
            protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
            self._flush()
            transport.abort()
            return
        self.heard = False
        protocol.send_ping(b"")
        self._flush()
        self.keepalive = asyncio.get_running_loop().call_later(self.ping_interval, self._ping)
