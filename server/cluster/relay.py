"""Any node accepts any client: a connection handed over to the node that serves it.

A client connected to node A that asks for a room hosted by node B (``join`` or
``watch`` by code, a ``hello`` resuming a session seated there, a quick-match pairing
into a room there) is served by B through A. A opens a websocket to B's node endpoint
(``NODE_PATH`` on B's port, the cluster secret and the client's real address in its
headers), hands the session over (``server.records.HandedSession``), then the client's
pending message, and from then on pipes messages both ways: B serves the connection as
one of its own (its limits, the client's real address), and the client sees nothing of
the relay. What travels on a node link (docs/cluster.md, "The relay"):

- B to A, text: a frame for the client, written to it verbatim;
- binary, a tag byte then the body: A to B ``h`` the handoff (first, once) and ``c`` a
  message of the client; B to A ``m`` send the client on to another node, ``b`` a message
  of the client that arrived after that (bounced back), ``f`` the echo of A's fence;
- closes: B's close code and reason go to the client verbatim; a node link that breaks
  without one (B died) closes the client with 1012, so it reconnects and resumes; the
  client's close (or loss) closes the node link, which B takes as the client's own.

No chains: B never relays further. To send the client to node C, B forgets the session,
sends ``m`` (C, the session, the messages C must run first), and bounces back what the
client still sends until A's fence ``f`` (after which A sends nothing more). A then
pipes to C, or serves the client itself when C is A.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from ipaddress import ip_address
from typing import Any, Protocol

import msgspec
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from websockets.asyncio.client import ClientConnection, connect
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from protocol.codec import request_id
from protocol.messages import ErrorCode
from server.actions import CLOSE_POLICY, CLOSE_RESTART, Action, Locate
from server.cluster.channel import WARN_EVERY
from server.core import Core
from server.records import HandedSession
from server.timings import LATENCY_BUCKETS
from server.wire import Link

log = logging.getLogger("quoridor.cluster")

NODE_PATH = "/cluster/node"
"""Where a node accepts the connections other nodes hand over to it."""
SECRET_HEADER = "X-Quoridor-Cluster-Secret"
CLIENT_HEADER = "X-Quoridor-Client"
"""The client's address as the handing node saw it (believed once the secret is right)."""
OPEN_TIMEOUT = 5.0
"""Seconds for a node link's opening handshake before the handoff gives up."""
MAX_WAITING = 64
"""A client's messages that may wait while its connection is located, opened or moved;
one more closes it (1008): a client that floods meanwhile is cut off, not buffered."""
NODE_MESSAGE = 1 << 16
"""The largest message a node takes on a node link (a client's are smaller by far)."""
MAX_FRAME = 1 << 23
"""The largest frame a node link takes from the serving node (a long game's replay)."""
"""Tells a client to reconnect (through the load balancer) and resume."""
CLOSE_CLIENT_LOST = 4001
"""A node link's close when its client vanished without a close of its own."""

HANDOFF, CLIENT, MOVE, BOUNCE, FENCE = b"h", b"c", b"m", b"b", b"f"


class Handoff(msgspec.Struct):
    """The first message on a node link: the session coming with the connection (None for
    a connection that said no hello yet, such as one resuming with its token)."""

    session: HandedSession | None


class Move(msgspec.Struct):
    """The serving node sends the client on to ``node``, which runs ``frames`` first."""

    node: str
    session: HandedSession | None
    frames: list[bytes]


_handoffs = msgspec.msgpack.Decoder(Handoff)
_moves = msgspec.msgpack.Decoder(Move)
_encode = msgspec.msgpack.encode


def authorized(headers: Headers, secret: str) -> bool:
    """Whether a node link's request carries the cluster secret (compared in constant
    time; with no secret configured, none is)."""
    given = headers.get(SECRET_HEADER, "")
    return bool(secret) and hmac.compare_digest(given.encode(), secret.encode())


def client_address(headers: Headers) -> str | None:
    """The relayed client's address from a node link's request, if it is an IP address."""
    try:
        return str(ip_address(headers.get(CLIENT_HEADER, "")))
    except ValueError:
        return None


class RelayHost(Protocol):
    """What the relay needs of the server it is part of (``server.app.GameServer``)."""

    core: Core
    sockets: dict[int, Link]

    def carry_out(self, actions: list[Action]) -> None:
        """Carry out the core's actions, as for any request."""

    def serve(self, link: Link, data: bytes) -> None:
        """Have the core take a client's message, as if it had just arrived."""

    def write(self, link: Link, payload: bytes) -> None:
        """Write one text frame to the client (unless it stopped reading)."""


class Pipe:
    """Node A's side of a client served elsewhere: the client's link here, the node link
    to the serving node, and the client's messages waiting to go there."""

    __slots__ = ("answer", "gone", "link", "moving", "sent", "waiting", "wake", "ws")

    def __init__(self, link: Link, frames: Iterable[bytes], answer: int) -> None:
        self.link = link
        self.waiting: deque[bytes] = deque(frames)
        self.answer = answer
        """How many of the first waiting messages are requests the handoff is for: if it
        fails, each gets an error (the rest are served here)."""
        self.wake = asyncio.Event()
        self.ws: ClientConnection | None = None
        self.moving = False
        """A move came: the client's messages wait for the next node."""
        self.gone: int | None = None
        """The client's close code once its connection is gone."""
        self.sent = 0.0
        """When the oldest message sent on and not yet answered went (for the metric)."""

    def take(self, data: bytes) -> bool:
        """A message of the client; False if too many wait already (the caller closes it)."""
        if len(self.waiting) >= MAX_WAITING:
            return False
        self.waiting.append(data)
        if self.ws is not None and not self.moving:
            self.wake.set()
        return True


class Inbound:
    """Node B's side of a node link: a connection handed over to this node."""

    __slots__ = ("handed", "held", "moved")

    def __init__(self) -> None:
        self.handed = False
        """The handoff came (always the first message)."""
        self.held: list[bytes] | None = None
        """While a room the client asked for is located: its messages meanwhile."""
        self.moved = False
        """The session left for another node: the client's messages go back."""


class Relay:
    """This node's relay: hands connections over, and serves those handed to it."""

    def __init__(
        self,
        host: RelayHost,
        node: str,
        secret: str,
        address_of: Callable[[str], Awaitable[str | None]],
        where: Callable[[str], Awaitable[str | None]],
        registry: CollectorRegistry,
        ping_interval: float,
    ) -> None:
        self.host = host
        self.node = node
        self.secret = secret
        self.address_of = address_of
        """``host:port`` of a live node, or None."""
        self.where = where
        """The node hosting a room now (this one's id, perhaps after a takeover), or None."""
        self.ping_interval = ping_interval
        self._tasks: set[asyncio.Task[Any]] = set()
        self._link_failures: dict[str, tuple[float, int]] = {}
        """By node: when a failed node link was last warned of, and the failures since."""
        self.relayed = Gauge(
            "quoridor_relayed_connections",
            "Clients connected here and served by another node through the relay",
            registry=registry,
        )
        self.handoffs = Counter(
            "quoridor_relay_handoffs",
            "Connections handed over to another node, by outcome",
            ["outcome"],
            registry=registry,
        )
        self.handoff_seconds = Histogram(
            "quoridor_relay_handoff_seconds",
            "From a request for a room elsewhere to the node link open (locating included)",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.reply_seconds = Histogram(
            "quoridor_relay_reply_seconds",
            "From a client's message sent on to the serving node to the next frame back",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- the entry points -------------------------------------------------------------

    def move(self, conn: int, node: str, frames: Iterable[bytes] = ()) -> None:
        """Serve connection ``conn`` on ``node`` from now on; that node's core takes
        ``frames`` (client requests, such as a ``join``) before anything the client sends
        next. On this node already, ``frames`` are taken here. A connection in a room of
        this node stays (``Core.movable``)."""
        link = self.host.sockets.get(conn)
        if link is None:
            return
        state, frames = link.relay, list(frames)
        if isinstance(state, Pipe) and link.conn not in self.host.core.connections:
            log.warning("cannot move a connection served by another node", extra={"conn": conn})
            return  # its session is there: that node moves it
        if isinstance(state, Inbound) and node != self.node:
            if not self._send_on(link, state, node, frames):
                self._serve_here(link, frames, [])
        elif node != self.node:
            if not isinstance(state, Pipe):
                state = link.relay = Pipe(link, (), 0)
            state.waiting.extendleft(reversed(frames))
            state.answer += len(frames)
            self._spawn(self._hand_over(state, node, None, time.perf_counter()))
        else:  # here: the frames first, then what waited for a locate, if anything
            self._serve_here(link, frames + self._take_waiting(link), [])

    def then(self, link: Link, waiting: list[bytes]) -> None:
        """The client's messages ``waiting`` (without their tag), after those of a ``move``
        just made: where they go depends on the move (on to the serving node, bounced back
        to the node that handed the client here, or served here), in order."""
        self._serve_here(link, waiting, [])

    def intercept(self, link: Link, actions: list[Action], data: bytes) -> list[Action]:
        """The core's answer to the client's ``data``, less a ``Locate``, which the relay
        carries out (the connection's later messages wait for it)."""
        for action in actions:
            if type(action) is Locate:
                state = link.relay
                if isinstance(state, Inbound):
                    state.held = [data]
                else:
                    link.relay = Pipe(link, (data,), 1)
                self._spawn(self._locate(link, action))
                return [a for a in actions if a is not action]
        return actions

    async def _locate(self, link: Link, locate: Locate) -> None:
        started = time.perf_counter()
        room = locate.request.room
        try:
            node = await self.where(room)
        except Exception as error:  # Redis or PostgreSQL away: say so, serve on here
            log.warning("cannot locate a room: %s", error, extra={"room": room})
            node = ""
        if link.conn not in self.host.sockets:
            return  # the client is gone meanwhile
        state = link.relay
        if node and node != self.node:
            if isinstance(state, Inbound) and self._send_on(link, state, node, []):
                return
            if isinstance(state, Pipe):
                await self._hand_over(state, node, None, started)
                return
            node = ""  # it cannot move (it sat down here meanwhile): as if unreachable
        waiting = self._take_waiting(link)
        if not waiting:
            return
        core = self.host.core
        if node == "":
            answer = self._busy(link.conn, waiting[0])
        else:
            answer = core.located(link.conn, locate.request, node == self.node)
        self._serve_here(link, waiting[1:], answer)

    # -- node A: a client served elsewhere ----------------------------------------------

    async def _hand_over(self, pipe: Pipe, node: str, moved: Move | None, started: float) -> None:
        """Carry the client to ``node`` and pipe it there until it ends or moves on."""
        link = pipe.link
        while True:
            ws = await self._open(node, link.address)
            if pipe.gone is not None:
                if ws is not None:
                    await ws.close(CLOSE_CLIENT_LOST, "client gone")
                return
            core = self.host.core
            if ws is None or (moved is None and not core.movable(link.conn)):
                self.handoffs.labels("unreachable").inc()
                if ws is not None:
                    await ws.close()
                self._fail(pipe, moved)
                return
            handed = core.depart(link.conn) if moved is None else moved.session
            self.handoffs.labels("open").inc()
            self.handoff_seconds.observe(time.perf_counter() - started)
            moved = await self._pipe(pipe, ws, handed)
            if moved is None:
                return
            started = time.perf_counter()
            if moved.node == self.node:
                self._come_back(pipe, moved)
                return
            node = moved.node

    async def _open(self, node: str, address: str) -> ClientConnection | None:
        try:
            where = await self.address_of(node)
            if where is None:
                log.warning("node %s has no address (not alive?)", node)
                return None
            return await connect(
                f"ws://{where}{NODE_PATH}",
                additional_headers={SECRET_HEADER: self.secret, CLIENT_HEADER: address},
                open_timeout=OPEN_TIMEOUT,
                ping_interval=self.ping_interval,
                ping_timeout=self.ping_interval,
                close_timeout=OPEN_TIMEOUT,
                max_size=MAX_FRAME,
                compression=None,
                proxy=None,
                user_agent_header=f"quoridor-node/{self.node}",
            )
        except (OSError, InvalidHandshake, TimeoutError, Exception) as error:
            self._link_failed(node, error)
            return None

    def _link_failed(self, node: str, error: BaseException) -> None:
        """Warn of a node link that cannot be opened, once per ``WARN_EVERY`` seconds for
        each node (a dead node's players retrying had it logged 16 times in 2 s)."""
        now = time.monotonic()
        warned, failures = self._link_failures.get(node, (float("-inf"), 0))
        failures += 1
        if now - warned < WARN_EVERY:
            self._link_failures[node] = (warned, failures)
            return
        more = f" ({failures - 1} more failed since the last warning)" if failures > 1 else ""
        if isinstance(error, ConnectionRefusedError):
            # Said plainly: an operator read only "Errno 111" after a node was killed.
            more += "; the node looks stopped or dead: its rooms go to another node once its "
            more += "leases lapse"
        log.warning("cannot open a node link to %s: %s%s", node, error, more)
        self._link_failures[node] = (now, 0)

    async def _pipe(
        self, pipe: Pipe, ws: ClientConnection, handed: HandedSession | None
    ) -> Move | None:
        """Pipe the client through ``ws`` until either side closes (None) or the serving
        node sends it on (that ``Move``, with the messages to run first now waiting)."""
        pipe.moving, pipe.answer = False, 0
        pipe.link.expect_within(None)  # its silences are the serving node's to judge now
        self.relayed.inc()
        sender: asyncio.Future[None] | None = None
        try:
            await ws.send(HANDOFF + _encode(Handoff(handed)))
            pipe.ws = ws
            sender = asyncio.ensure_future(self._forward(pipe, ws))
            pipe.wake.set()
            return await self._receive(pipe, ws)
        except ConnectionClosed:
            return await self._receive(pipe, ws)
        finally:
            if sender is not None:
                sender.cancel()
            pipe.ws = None
            self.relayed.dec()
            with contextlib.suppress(Exception):
                await ws.close()

    async def _forward(self, pipe: Pipe, ws: ClientConnection) -> None:
        """Send the client's messages on, in order, until a move or the end."""
        with contextlib.suppress(ConnectionClosed):
            while True:
                await pipe.wake.wait()
                pipe.wake.clear()
                while pipe.waiting and not pipe.moving:
                    if not pipe.sent:
                        pipe.sent = time.perf_counter()
                    await ws.send(CLIENT + pipe.waiting.popleft())

    async def _receive(self, pipe: Pipe, ws: ClientConnection) -> Move | None:
        link, write = pipe.link, self.host.write
        move: Move | None = None
        bounced: list[bytes] = []
        while True:
            try:
                message = await ws.recv()
            except ConnectionClosed:
                break
            if isinstance(message, str):
                if pipe.sent:
                    self.reply_seconds.observe(time.perf_counter() - pipe.sent)
                    pipe.sent = 0.0
                write(link, message.encode())
                continue
            tag, body = message[:1], message[1:]
            if tag == MOVE and move is None:
                move = _moves.decode(body)
                pipe.moving = True
                await ws.send(FENCE)
            elif tag == BOUNCE and move is not None:
                bounced.append(body)
            elif tag == FENCE and move is not None:
                pipe.waiting.extendleft(reversed(move.frames + bounced))
                pipe.answer = len(move.frames)
                return move
        if pipe.gone is None:
            close = ws.protocol.close_rcvd
            if close is not None and move is None and close.code not in (1005, 1006, 1015):
                link.close(close.code, close.reason)
            else:
                link.close(CLOSE_RESTART, "the game's server went away; reconnect and resume")
        return None

    def _come_back(self, pipe: Pipe, moved: Move) -> None:
        """The serving node sent the client back here: serve it here again."""
        link = pipe.link
        self.host.core.open(link.conn, link.address)
        if moved.session is not None:
            self.host.core.arrive(link.conn, moved.session)
        link.relay = None
        self._serve_here(link, list(pipe.waiting), [])

    def _fail(self, pipe: Pipe, moved: Move | None) -> None:
        """The node could not be reached: the requests the handoff was for get an error,
        the client is served here."""
        link, core = pipe.link, self.host.core
        if link.conn not in core.connections:
            core.open(link.conn, link.address)
            if moved is not None and moved.session is not None:
                core.arrive(link.conn, moved.session)
        waiting = list(pipe.waiting)
        link.relay = None
        if pipe.answer and core.connections[link.conn].session is None:
            # A resume whose room's node cannot be reached: it died and its lease has not run
            # out yet, or it is stopping. As after a restart (PROTOCOL.md section 21), the
            # client reconnects and resumes, by then on the node that took the room over.
            link.close(CLOSE_RESTART, "your game's server cannot be reached; reconnect and resume")
            return
        answers: list[Action] = []
        for data in waiting[: pipe.answer]:
            answers += self._busy(link.conn, data)
        self._serve_here(link, waiting[pipe.answer :], answers)

    def gone(self, link: Link, code: int | None) -> None:
        """The client's connection is gone: close its node link, as the client would."""
        pipe = link.relay
        if not isinstance(pipe, Pipe):
            return
        on_purpose = code == 1000  # server.actions.CLOSE_ON_PURPOSE: not 1001, as a browser's
        pipe.gone = 1000 if on_purpose else CLOSE_CLIENT_LOST
        if pipe.ws is not None:
            reason = "client left" if on_purpose else "client connection lost"
            self._spawn(pipe.ws.close(pipe.gone, reason))

    # -- node B: connections handed over to this node -----------------------------------

    def incoming(self, link: Link, data: bytes) -> bytes | None:
        """A message on a relayed connection: the client's, for the core (returned), or
        one the relay takes (a client's served elsewhere, or the relay's own): None."""
        state = link.relay
        if isinstance(state, Pipe):
            if not state.take(data):
                link.close(CLOSE_POLICY, "too many messages waiting")
            return None
        assert isinstance(state, Inbound)
        tag, body = data[:1], data[1:]
        if tag == CLIENT and state.handed:
            if state.moved:
                link.send_binary(BOUNCE + body)
            elif state.held is not None:
                if len(state.held) >= MAX_WAITING:
                    link.close(CLOSE_POLICY, "too many messages waiting")
                else:
                    state.held.append(body)
            else:
                return body
        elif tag == HANDOFF and not state.handed:
            state.handed = True
            handoff = _handoffs.decode(body)
            if handoff.session is not None:
                self.host.core.arrive(link.conn, handoff.session)
        elif tag == FENCE and state.moved:
            link.send_binary(FENCE)
            link.close(1000, "moved to another node")
        else:
            link.close(CLOSE_POLICY, "unexpected node link message")
        return None

    def _send_on(self, link: Link, state: Inbound, node: str, frames: list[bytes]) -> bool:
        """Send the client on to ``node`` through the node that handed it here; False if
        it cannot move (it is in a room of this node)."""
        core = self.host.core
        if state.moved:
            return True
        if not core.movable(link.conn):
            return False
        frames += state.held or []
        state.held, state.moved = None, True
        handed = core.depart(link.conn)
        link.send_binary(MOVE + _encode(Move(node, handed, frames)))
        return True

    # -- serving here ---------------------------------------------------------------

    def _take_waiting(self, link: Link) -> list[bytes]:
        state = link.relay
        if isinstance(state, Inbound):
            waiting, state.held = state.held or [], None
            return waiting
        if isinstance(state, Pipe):
            link.relay = None
            return list(state.waiting)
        return []

    def _serve_here(self, link: Link, waiting: list[bytes], answers: list[Action]) -> None:
        """Carry out ``answers``, then serve the messages that waited, one by one, as if
        they had just arrived (one may hand the connection over again: the rest then wait
        for that)."""
        self.host.carry_out(answers)
        for data in waiting:
            state = link.relay
            if isinstance(state, Pipe):
                if not state.take(data):
                    link.close(CLOSE_POLICY, "too many messages waiting")
            elif isinstance(state, Inbound) and state.moved:
                link.send_binary(BOUNCE + data)
            elif isinstance(state, Inbound) and state.held is not None:
                state.held.append(data)
            else:
                self.host.serve(link, data)

    def _busy(self, conn: int, data: bytes) -> list[Action]:
        message = "the room's server cannot be reached now; try again in a moment"
        context = self.host.core.context
        return [context.error(conn, ErrorCode.SERVER_BUSY, message, request_id(data))]
