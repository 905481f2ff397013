"""The thin adapter between the connections (``server.wire``) and the socket-free core.

It numbers connections, feeds their messages to ``Core`` and carries out the
actions it returns; it writes what the core accepted to the store before any
of it is sent (nothing acknowledged is ever lost), and it wakes the core for
its deadlines. It answers plain HTTP on the same port. Everything about games
lives in the core; everything about the websocket protocol in ``server.wire``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import logging
import socket
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from http import HTTPStatus
from ipaddress import IPv4Network, IPv6Network, ip_address
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4 as METRICS_TYPE
from websockets.datastructures import Headers
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import OPEN

from protocol.messages import Hello
from server import http, static
from server.accountdb import RatedGame
from server.accounts import AccountService, AuthLimits, hasher_from
from server.actions import CLOSE_ON_PURPOSE, CLOSE_RESTART, FindSession
from server.addresses import address_key
from server.analysis import AnalyseStep
from server.backlogs import Backlogs
from server.cluster.relay import NODE_MESSAGE, NODE_PATH, Inbound, Relay, authorized, client_address
from server.config import Config, cluster_problem
from server.core import (
    Action,
    Ask,
    Close,
    Core,
    Limits,
    LiveEvalStep,
    Send,
    Suggest,
    Think,
)
from server.database import Synchronous
from server.dburl import is_postgresql, shown
from server.idlers import Idlers
from server.metrics import Metrics
from server.ratelimit import KeyedBuckets, TokenBucket
from server.retention import Retention
from server.rooms import Absence
from server.searches import Searches
from server.stalls import StallClock
from server.storage import Storage, open_storage
from server.store import StoreError, StoreRefused
from server.wire import WRITE_BUFFER_LIMIT, Link
from server.workers import WorkerPool, address_share

if TYPE_CHECKING:  # PostgreSQL's and Redis's clients are imported only in a cluster
    from server.cluster.member import Member

log = logging.getLogger("quoridor.server")

CLOSE_POLICY = 1008
HELD_MESSAGES = 64
"""Messages a connection may send while its hello's login token is checked; one more
closes it (1008), as a cluster node does for a connection on its way (``MAX_WAITING``)."""
CLOSE_GOING_AWAY = 1001
PIPELINE = 2
"""Commits the database process may have at once: while it writes one, the next is
already in its pipe, so it never waits for a busy event loop to send it."""
PROBES = frozenset({"/healthz", "/readyz"})
"""Orchestrators' health and readiness checks: never refused for the server-wide rate."""
PLAIN_BURST = 10.0
"""Plain HTTP requests an address may make at once, in seconds of ``--http-rate``: a page
load with an empty cache is 14 requests, and one address may be a whole office."""
SEND_BUFFER = 128 * 1024
"""The kernel send buffer asked for each client's socket (Linux doubles it). Left alone, Linux
grows it for a client that stops reading up to tcp_wmem's maximum (often 4 MiB), on top of
WRITE_BUFFER_LIMIT; a quarter of a megabyte still holds hundreds of states."""


class StartupError(Exception):
    """The server cannot start; the message is one sentence for the operator."""


def _listen_error(host: str, port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {host}:{port}: the port is already in use "
            "(another server is running there; stop it or choose another port: --port, "
            "or QUORIDOR_PORT in the environment)"
        )
    if error.errno == errno.EACCES:
        return f"cannot listen on {host}:{port}: permission denied (ports below 1024 need root)"
    return f"cannot listen on {host}:{port}: {error.strerror or error}"


def _answered_later(action: Action) -> bool:
    """Whether ``action`` has a hello answered off the core: its login token checked, or,
    on a cluster node, the session of its resume token looked for in the shared database."""
    return (type(action) is Ask and isinstance(action.request, Hello)) or type(
        action
    ) is FindSession


def _closes_for_abuse(action: Action, conn: int) -> bool:
    """Whether ``action`` closes connection ``conn`` for abuse (1008: the request rate)."""
    return type(action) is Close and action.target == conn and action.code == CLOSE_POLICY


class GameServer:
    """One listening server: the core, the open websockets, and the store (the ``Host`` of
    every ``server.wire.Link``)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        absence = Absence(
            config.grace,
            config.deliberate_grace,
            config.hard_limit,
            config.first_move,
            config.think_limit,
        )
        self.stall_clock = StallClock()
        """Every timer of the games runs on it: the event loop's own stalls are left out."""
        self.core = Core(_limits(config, absence), clock=self.stall_clock.now)
        self.store: Storage | None = open_storage(
            config.db,
            _synchronous(config.sync),
            config.db_retry,
            Retention(short_days=config.short_game_days, history_days=config.history_days),
            alone=not config.redis,  # the nodes of a cluster share their database
        )
        self.accounts: AccountService | None = None
        if self.store is not None:
            self.core.persistent = True
            self.store.rated = self._rated
            self.accounts = AccountService(
                self.core,
                self.store,
                hasher_from(
                    config.argon2_time_cost, config.argon2_memory_kib, config.argon2_parallelism
                ),
                AuthLimits(
                    logins_per_minute=config.logins_per_minute,
                    login_burst=config.login_burst,
                    registrations_per_hour=config.registrations_per_hour,
                    registration_burst=config.registration_burst,
                    token_days=config.token_days,
                ),
            )
        self.metrics = Metrics(self.core)
        self._connections = self.core.registry.connections
        """The core's open connections by number (read for every frame: no property)."""
        if self.store is not None:
            self.store.write_seconds = self.metrics.db_write_seconds.observe
            self.store.pruned = self._pruned
            self.store.lost = self._database_lost
            store = self.store
            self.metrics.count_db_reconnects(lambda: store.reconnects)
        self.metrics.count_stalls(lambda: self.stall_clock.stalled)
        self.sockets: dict[int, Link] = {}
        """Open websockets by connection number."""
        self.proxy_networks = config.proxy_networks
        self.idlers: Idlers[Link] = Idlers()
        """The connections that may be closed to make room for a newcomer to a full server."""
        self.gate = http.Gate(
            config.max_per_ip,
            config.max_connections or http.default_connection_cap(),
            lambda peer: _within(peer, self.proxy_networks),
            self._make_room,
        )
        """Counts connections from accept (the per-IP cap, the server-wide cap)."""
        self.backlogs = Backlogs(config.backlog_budget << 20)
        """The frames waiting for clients that stopped reading, all of them together."""
        self.metrics.count_backlogs(self.backlogs)
        self.metrics.count_refusals(self.gate.refused)
        self.metrics.count_evictions(self.idlers.evicted)
        self.origins = frozenset(config.origin_list)
        """Sites other than the server's own whose pages may open a websocket."""
        self.assets = static.load_assets()
        """The browser client's files, served on plain GETs."""
        self.plain_requests = KeyedBuckets(config.http_rate, config.http_rate * PLAIN_BURST)
        """Each address's allowance of plain HTTP requests."""
        total = config.http_rate_total
        self.plain_total = TokenBucket(total, max(1.0, total), 0.0)  # full at its first use
        """The whole server's allowance of plain HTTP requests (probes aside): a second's
        worth at once (at least one request)."""
        self.per_ip: Counter[str] = Counter()
        """Open connections by remote address."""
        self.ready = False
        """True while accepting games (``/readyz``)."""
        self.stopping = asyncio.Event()
        """Set when the server must stop (a signal, or a store that cannot write)."""
        self._hurry = asyncio.Event()
        """Set by a second signal: the rest of --shutdown-delay is skipped."""
        self.failed = False
        """True when it stopped because the store could not write."""
        self.closed = False
        """True once shut down: the last save is made, nothing more is carried out."""
        self._ids = itertools.count(1)
        self._server: asyncio.Server | None = None
        self._closing: set[asyncio.Task[None]] = set()
        """Tasks that must not be garbage-collected: the computer's answers, account requests."""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._arming = False
        """True while a call of ``_arm_timer`` waits for the end of this turn of the loop."""
        self._outbox: list[Action] = []
        """Replies whose changes are not yet sent to the database, in order."""
        self._committing: deque[list[Action]] = deque()
        """For each commit in flight, oldest first, the replies waiting for it."""
        self._drained = asyncio.Event()
        """Set while no commit is in flight and no reply waits."""
        self._drained.set()
        self._commit_due = False
        """True while a call of ``_commit_now`` waits for the end of this turn of the loop."""
        self._unsent: list[Action] = []
        """Actions to carry out at the end of this turn of the event loop (``_send``)."""
        self.workers = WorkerPool(config.ai_workers)
        """Worker processes for the computer's searches (and analysis), started on first use."""
        self.core.computer_busy = lambda: self.workers.saturated
        self.searches = Searches(self.workers, self.core, self._carry_out, self._closing)
        self.member: Member | None = None
        """This server's part of a cluster (``--redis``), made once the port is known."""
        self.handing_over = False
        """True while a node stops: its rooms are written for the last time and handed over,
        so frames that arrive meanwhile are left for the next owner (unanswered)."""
        self.relay: Relay | None = None
        """A cluster node's relay (``enable_relay``): clients served by other nodes."""

    def enable_relay(
        self,
        node: str,
        address_of: Callable[[str], Awaitable[str | None]],
        where: Callable[[str], Awaitable[str | None]],
    ) -> Relay:
        """Make this server a node that hands clients over to the node hosting their room
        and serves clients handed to it (``server.cluster.relay``)."""
        self.core.context.clustered = True
        self.relay = Relay(
            self,
            node,
            self.config.cluster_secret,
            address_of,
            where,
            self.metrics.registry,
            self.config.ping_interval,
        )
        return self.relay

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._server is not None
        return _bound_port(self._server)

    @property
    def serving(self) -> bool:
        """Whether it takes new connections (upgrades get 503 once it stops)."""
        return self._server is not None and self._server.is_serving()

    def running(self) -> Running:
        """``async with server.running():`` take the port, then the database (recovering
        saved games), serve while inside the block, then shut down cleanly. ``StartupError``
        says in one sentence why it could not start: the port is taken first so that a
        second server never touches the database."""
        return Running(self)

    async def start(self) -> None:
        """What entering ``running()`` does: listen, recover, then serve."""
        config = self.config
        if (wrong := cluster_problem(config)) is not None:  # a Config not from the command line
            raise StartupError(wrong)
        server = await self._listen()
        if config.redis:
            self._join_cluster(_bound_port(server))
            try:
                await self._claim_node_name()
            except BaseException:  # refused (Redis away, the name taken): the port goes too
                server.close()
                await server.wait_closed()
                raise
        member = self.member
        self.stall_clock.start()
        try:
            if self.store is not None:
                await self._recover()
            if member is not None:
                await member.start()
            await server.start_serving()
            self._server = server
            self._arm_timer()
            self.ready = True
            cluster = ""
            if member is not None:
                node = member.node.id
                cluster = f"; node {node} of the cluster on {shown(config.redis)}"
            log.info("listening on ws://%s:%d%s", config.host, self.port, cluster)
            if member is None:
                log.info("%s", _where(config.host, self.port))
            else:  # a node's own address is not the one to give players (an operator asked)
                log.info("any node serves any player: give players the cluster's one public "
                         "address (its balancer), not a node's")  # fmt: skip
        except BaseException:
            self.stall_clock.stop()
            if self._server is None:  # it never started: let go of the port and the database
                server.close()
                await server.wait_closed()
                if member is not None:
                    await member.node.stop()
                if self.store is not None:
                    await self.store.close()
            raise

    async def stop(self) -> None:
        """What leaving ``running()`` does, however the block ends: ``shutdown``."""
        try:
            await self.shutdown()
        finally:
            self.stall_clock.stop()
            self.backlogs.stop()

    async def _listen(self) -> asyncio.Server:
        """Bind the port (not yet accepting connections)."""
        config = self.config

        def link() -> Link:
            # No compression (memory per connection, and no compression bombs); origins
            # are checked in answer(), where the server's own site is allowed too.
            return Link(self, config.max_message, config.ping_interval)

        loop = asyncio.get_running_loop()
        try:
            return await loop.create_server(
                link, config.host, config.port, backlog=1024, start_serving=False
            )
        except OSError as error:
            raise StartupError(_listen_error(config.host, config.port, error)) from None

    async def _recover(self) -> None:
        assert self.store is not None
        try:
            before, after = await self.store.open()
        except StoreRefused as refused:
            raise StartupError(str(refused)) from None
        except StoreError as error:
            raise StartupError(_unusable_database(shown(self.config.db), error)) from None
        try:
            loaded = await self.store.load()
        except StoreError as error:
            await self.store.close()
            raise StartupError(_unusable_database(shown(self.config.db), error)) from None
        if self.member is not None:
            # A node takes no room at start: each is taken over, lease first, when asked
            # for or found orphaned (server.cluster.node), never loaded by every node.
            loaded.rooms, loaded.sessions = [], []
        self.core.restore(loaded)
        try:
            await self.store.write(self.core.take_changes())
        except StoreError as error:  # rooms a cluster's node claimed (pgstore.Fenced), say
            await self.store.close()
            message = f"cannot use the database {shown(self.config.db)}: {error}"
            raise StartupError(message) from None
        self._send(self.core.wake())
        waiting = sum(1 for room in self.core.rooms.values() if room.status == "waiting")
        log.info(
            "database %s (schema %d -> %d): %s in progress recovered, %s waiting for players",
            shown(self.config.db),
            before,
            after,
            counted(len(self.core.rooms) - waiting, "game"),
            counted(waiting, "room"),
        )

    def signalled(self) -> None:
        """SIGTERM or SIGINT: the first stops the server gracefully; another one during
        --shutdown-delay skips the rest of it (a Ctrl-C pressed again, a service manager in
        a hurry), and the graceful stop goes on."""
        if not self.stopping.is_set():
            self.stopping.set()
        elif not self._hurry.is_set():
            self._hurry.set()
            log.info("signalled again: the port closes now, not at the end of --shutdown-delay")

    async def shutdown(self) -> None:
        """Refuse new rooms and connections, save every game, close with 1012 (a node of a
        cluster hands its rooms over first, so their players resume at once elsewhere)."""
        self.ready = False
        self.core.accepting = False
        delay = self.config.shutdown_delay
        # With no delay the port closes at once: /readyz has no one left to answer (an
        # operator read the 503 in the log as a delay that --shutdown-delay 0 had not asked).
        if delay > 0:
            log.info("stopping: /readyz answers 503, no new games; the port closes in %g s"
                     " (--shutdown-delay)", delay)  # fmt: skip
        else:
            log.info("stopping: no new games, the port closes now")
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hurry.wait(), delay)
        if self._server is not None:
            self._server.close()
        if self._timer is not None:
            self._timer.cancel()
        if self.store is not None:
            self.core.snapshot_all()
            self._carry_out([])
            await self._drain()
        member = self.member
        if member is not None:
            await member.leave()
            self.handing_over = True
            await self._drain()
            # Said as what happens whether or not another node runs: the last node to stop
            # said it handed its rooms "to the other nodes" when there were none.
            log.info("handing %s over: a running node takes them at once, else the next to "
                     "start", counted(len(self.core.rooms), "room"))  # fmt: skip
            await member.node.hand_over(list(self.core.rooms))
        self._send_now()  # what the loop has not written yet goes before the closes
        self.core.closing_all = True
        links = list(self.sockets.values())
        log.info("closing %s (1012)", counted(len(links), "connection"))
        for link in links:
            link.close(CLOSE_RESTART, "server restarting")
        await asyncio.gather(*(link.wait_closed() for link in links))
        log.info("connections closed")
        if self.relay is not None:
            await self.relay.stop()
        if member is not None:
            await member.addresses.stop()
        if self._server is not None:
            await self._server.wait_closed()
        if self.store is not None:
            await self._drain()
        self.closed = True
        if member is not None:
            await member.node.stop()
        if self.store is not None:
            await self.store.close()
        self.workers.shutdown()
        await self.workers.stopped()
        if self.accounts is not None:
            self.accounts.close()

    # -- plain HTTP on the same port ------------------------------------------------

    def answer(self, link: Link, request: Request) -> Response | None:
        """Health, readiness, metrics and the browser client's files; the upgrade path, the
        origin check and the per-IP cap for websocket upgrades."""
        path = request.path.split("?", 1)[0]
        head = request.method == "HEAD"
        upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
        if not upgrade and (refusal := self._plain_refusal(link, request, path)) is not None:
            return refusal
        if path == "/healthz":
            return http.text(HTTPStatus.OK, "ok", head)
        if path == "/readyz":
            reason = self._unready()
            if reason is None:
                return http.text(HTTPStatus.OK, "ready", head)
            return http.text(HTTPStatus.SERVICE_UNAVAILABLE, reason, head)
        if path == "/metrics":
            return http.response(HTTPStatus.OK, self.metrics.render(), METRICS_TYPE, head)
        if not upgrade:
            files = static.serve(self.assets, request)
            return http.without_body(files) if head else files
        if head:
            return http.NOT_ALLOWED
        if path == NODE_PATH and self.relay is not None:
            return self._admit_node(link, request)
        if path != http.WEBSOCKET_PATH:
            return http.text(HTTPStatus.NOT_FOUND, f"nothing at {path}; games are at /")
        if self.failed:
            return http.text(HTTPStatus.SERVICE_UNAVAILABLE, "the server cannot save games now")
        address = self._address(link, request)
        if not allowed_origin(request.headers, self.origins):
            origin = request.headers.get("Origin")
            log.info(
                "connection refused: origin %s", origin, extra={"conn": link.conn, "ip": address}
            )
            return http.text(HTTPStatus.FORBIDDEN, "this site may not connect here")
        if self.per_ip[address_key(address)] >= self.config.max_per_ip:
            extra = {"conn": link.conn, "ip": address}
            log.warning("connection refused: too many from one address", extra=extra)
            return http.text(HTTPStatus.TOO_MANY_REQUESTS, "too many connections from your address")
        if self.gate.proxied(link.remote_address[0]) and not self.gate.arrivals.take(
            address_key(address), self.gate.clock()
        ):
            # A trusted proxy's client: its new connections counted here, as the gate
            # counts everyone else's at accept (before the request, which names the client).
            self.gate.refused["rate"] += 1
            return http.TOO_OFTEN
        return None

    def _plain_refusal(self, link: Link, request: Request, path: str) -> Response | None:
        """429 past the client address's rate of plain HTTP requests (pages, health checks,
        metrics), 503 past the whole server's: each is a connection accepted, a request
        parsed and answered (an outside review: 400 a second from two addresses took most
        of a core, and about 700 addresses, each within its rate, would take one).
        The probes are only held to their address's rate: refusing an orchestrator's probe
        would have it restart or unlist a server that is merely busy, and their answers cost
        no more than the refusal would."""
        now = asyncio.get_running_loop().time()
        if not self.plain_requests.take(address_key(self._address(link, request)), now):
            return http.SLOW_DOWN
        if path not in PROBES and not self.plain_total.take(now):
            return http.SERVER_BUSY
        return None

    def _admit_node(self, link: Link, request: Request) -> Response | None:
        """A node link: another node hands a client over. The cluster secret is checked in
        constant time; the client's own address is counted, as for a direct connection."""
        assert self.relay is not None
        if not authorized(request.headers, self.relay.secret):
            log.warning(
                "node link refused: wrong cluster secret", extra={"ip": link.remote_address[0]}
            )
            return http.text(HTTPStatus.FORBIDDEN, "this is no node of your cluster")
        address = client_address(request.headers)
        if address is None:
            return http.text(HTTPStatus.BAD_REQUEST, "a node link names its client's address")
        if self.per_ip[address_key(address)] >= self.config.max_per_ip:
            return http.text(HTTPStatus.TOO_MANY_REQUESTS, "too many connections from your address")
        if link.counted is not None:  # the gate counted the handing node: count the client
            self.gate.release(link.counted)
            # Nor is a node's link one of its new connections: a node hands over as many
            # clients a second as move (a rolling restart: every client of a node).
            self.gate.arrivals.give_back(address_key(link.counted))
            link.counted = None
        if (refusal := self.gate.admit(address)) is not None:
            return refusal
        link.counted = address
        link.relay = Inbound()
        # A client's message comes with a tag byte, and first the handoff with its session.
        link.protocol.max_message_size = max(self.config.max_message + 1, NODE_MESSAGE)
        return None

    def _unready(self) -> str | None:
        """Why ``/readyz`` says 503, or None when ready."""
        if not self.ready:
            return "cannot save games" if self.failed else "shutting down"
        unreachable = []
        if self.core.context.unavailable is not None:
            unreachable.append("postgresql")
        if self.member is not None and not self.member.node.healthy:
            unreachable.append("redis")
        return f"unreachable: {', '.join(unreachable)}" if unreachable else None

    # -- websockets ----------------------------------------------------------------

    def opened(self, link: Link) -> None:
        conn = link.conn = next(self._ids)
        address = link.address = self._address(link, link.request)
        key = address_key(address)  # what the limits count: an IPv6 address's /64 (rooms: /56)
        _limit_send_buffer(link)
        self.sockets[conn] = link
        self.per_ip[key] += 1
        self.metrics.connections.inc()
        self.core.open(conn, key)
        self.idlers.opened(link)
        link.expect_within(self.config.hello_timeout)
        log.debug("connection open", extra={"conn": conn, "ip": address})

    def received(self, link: Link, data: bytes) -> None:
        if self.handing_over or self.core.closing_all:
            # This node's rooms belong to the next owner, or every connection is closing:
            # no reply could reach the client (a resume served now changed its token for
            # good, and the welcome with the new one never went out). It asks again.
            return
        self.idlers.active(link)
        if link.relay is not None:  # a cluster node's relayed connection
            assert self.relay is not None
            taken = self.relay.incoming(link, data)
            if taken is None:
                return
            data = taken
        if link.held is not None:
            # Its hello's login token is being checked off the core, or its resume looked
            # for in the shared database: what it sent after waits, so that requests are
            # served in order (a quick_match pipelined after the hello got hello_required,
            # and the welcome came after its error).
            if len(link.held) >= HELD_MESSAGES:
                link.close(CLOSE_POLICY, "too many messages waiting")
            else:
                link.held.append(data)
            return
        self.serve(link, data)

    def _release(self, conn: int) -> None:
        """Serve, in order, what a connection sent while its hello was being checked."""
        link = self.sockets.get(conn)
        if link is None or link.held is None:
            return
        held, link.held = link.held, None
        for index, data in enumerate(held):
            if link.refused or self.handing_over or self.core.closing_all:
                return
            if link.held is not None:  # another hello answered later: the rest wait for it
                link.held.extend(held[index:])
                return
            self.serve(link, data)

    def serve(self, link: Link, data: bytes) -> None:
        """The core takes a client's message."""
        # Text frames arrive as bytes: msgspec decodes UTF-8 JSON itself.
        started = time.perf_counter()
        actions = self.core.receive(link.conn, data)
        elapsed = time.perf_counter() - started
        self.metrics.request_time(self.core.last_kind).observe(elapsed)
        if self.relay is not None:
            actions = self.relay.intercept(link, actions, data)
        if self.core.last_kind == "hello" and any(_answered_later(a) for a in actions):
            # What it sends next waits until the token is checked or the session found
            # (``received``): its Ask may itself wait behind a commit (``_carry_out``).
            link.held = []
        if actions and _closes_for_abuse(actions[-1], link.conn):
            # At once, not with the close frame at the end of this turn: the rest of what
            # it sent, in this very read too, is not read (an outside review's flood of
            # empty messages was parsed and answered for seconds after the decision).
            link.stop_reading()
        self._carry_out(actions)
        self._watch(link)

    def watch(self, conn: int) -> None:
        """``_watch`` a connection whose message was answered away from ``serve`` (a cluster
        node's hello, answered once its session was looked for). One its hello left
        un-greeted (refused, or told to try again) has a new hello deadline."""
        if link := self.sockets.get(conn):
            connection = self._connections.get(conn)
            if connection is not None and connection.session is None:
                link.expect_within(self.config.hello_timeout)
            else:
                self._watch(link)

    def _watch(self, link: Link) -> None:
        """How long this connection may stay silent: the hello deadline runs from the open
        until a hello; outside a room or a queue each message restarts the idle one; in a
        room or a queue there is none (the keepalive pings watch the link)."""
        connection = self._connections.get(link.conn)
        session = None if connection is None else connection.session
        if session is None:
            return
        if session.room is None and session.queued is None:
            link.expect_within(self.config.idle_timeout)
        elif link.patience is not None:
            link.expect_within(None)

    def _make_room(self) -> bool:
        """The server is full: close the connection that holds the least (``server.idlers``)
        for a newcomer; False when every one holds a seat in a game in progress."""
        now = asyncio.get_running_loop().time()
        picked = self.idlers.pick(now, self._seated)
        if picked is None:
            return False
        link, kind = picked
        self.idlers.evicted[kind] += 1
        log.info("closing to make room: %s (1013)", kind, extra={"conn": link.conn, "ip": link.ip})
        link.make_room()
        return True

    def _seated(self, link: Link) -> bool:
        """Whether the connection holds a seat in a game in progress (never closed to make
        room). A cluster node's relayed connection counts as one: its room is elsewhere."""
        if link.relay is not None:
            return True
        connection = self._connections.get(link.conn)
        session = None if connection is None else connection.session
        if session is None or session.seat is None or session.room is None:
            return False
        return session.room.status == "playing"

    def timed_out(self, link: Link) -> None:
        connection = self.core.connections.get(link.conn)
        greeted = connection is not None and connection.session is not None
        reason = "idle for too long" if greeted else "no hello in time"
        code = CLOSE_GOING_AWAY if greeted else CLOSE_POLICY
        log.info("closing: %s (%d)", reason, code, extra={"conn": link.conn, "ip": link.ip})
        link.close(code, reason)

    def gone(self, link: Link) -> None:
        conn, key = link.conn, address_key(link.address)
        del self.sockets[conn]
        self.per_ip[key] -= 1
        if not self.per_ip[key]:
            del self.per_ip[key]
        self.metrics.connections.dec()
        # A client that closed with 1000 left on purpose: shorter grace.
        code = link.close_code
        log.debug("connection closed", extra={"conn": conn, "code": code})
        if link.relay is not None and self.relay is not None:
            self.relay.gone(link, code)
        if conn in self.core.connections:  # not when it was served by another node
            self._carry_out(self.core.close(conn, code == CLOSE_ON_PURPOSE))

    def write(self, link: Link, payload: bytes) -> None:
        """One text frame to a client served by another node (the relay)."""
        if link.protocol.state is OPEN and self._reading(link, link.transport):
            link.transport.write(Frame(Opcode.TEXT, payload).serialize(mask=False))

    # -- carrying out the core's actions -------------------------------------------

    def carry_out(self, actions: list[Action]) -> None:
        self._carry_out(actions)

    def _carry_out(self, actions: list[Action]) -> None:
        """Send ``actions`` once what the core changed for them is committed."""
        if self.closed:
            return  # past the last save: a late answer of the computer, say, changes nothing
        if self.member is not None:
            self.member.matching.wake()  # quick-match requests for the shared queue, if any
        store = self.store
        if store is not None and (self._outbox or self._committing or self.core.has_changes()):
            self._outbox += actions
            self._commit_soon()
        else:
            self._send(actions)
        if not self._arming:
            # Once a turn of the event loop, however many requests it served.
            self._arming = True
            asyncio.get_running_loop().call_soon(self._arm_timer)

    def _commit_soon(self) -> None:
        """Commit at the end of this turn of the event loop, with every request it serves.

        A request that found a commit slot free used to send its change alone,
        and the requests read after it in the same turn waited for the next
        slot: more, smaller commits, each a wake-up of the database process.
        """
        if self.failed:
            return  # nothing more is committed, or sent
        self._drained.clear()
        if not self._commit_due:
            self._commit_due = True
            asyncio.get_running_loop().call_soon(self._commit_now)

    def _commit_now(self) -> None:
        self._commit_due = False
        self._commit()
        if self.failed or (not self._committing and not self._outbox):
            self._drained.set()

    def _commit(self) -> None:
        """Send what changed to the database while fewer than PIPELINE commits are in flight.

        The changes are taken once a commit, not once a request: a room that
        changed several times is written once, and a busy server pays one
        commit for many moves.
        """
        store = self.store
        assert store is not None
        while not self.failed and (self._outbox or self.core.has_changes()):
            if not self.core.has_changes():
                # These replies changed nothing themselves: they only wait for the
                # commits already under way (or for none).
                if self._committing:
                    self._committing[-1] += self._outbox
                else:
                    self._send(self._outbox)
                self._outbox = []
                return
            if len(self._committing) >= PIPELINE:
                return
            waiting, self._outbox = self._outbox, []
            self._committing.append(waiting)
            self._drained.clear()
            store.submit(self.core.take_changes(), self._committed)

    def _committed(self, error: BaseException | None) -> None:
        """The oldest commit in flight is on disk (or failed): send the replies it held."""
        if self.failed:
            return
        if error is not None:
            if self.member is not None:
                self._commit_lost(self.member, error)
                return
            self._stop_failing(f"cannot write to the database; stopping ({error})")
            return
        self._send(self._committing.popleft())
        self._commit_soon()

    def _commit_lost(self, member: Member, error: BaseException) -> None:
        """A cluster node's commit failed (PostgreSQL went away during it): whether it was
        written cannot be known, so nothing it held is acknowledged, and every room is let go
        as if the node had restarted (members closed with 1012, leases released); the
        players resume once PostgreSQL is back, on whichever node takes each room over."""
        log.error("a commit failed (%s); letting every room go (%d)", error, len(self.core.rooms))
        self._committing.popleft()  # its replies: never sent
        member.let_go()
        self._commit()
        if not self._committing and not self._outbox:
            self._drained.set()

    def _database_lost(self, reason: str) -> None:
        """The database is lost for good (SQLite's process gone, PostgreSQL away for longer
        than --db-retry): nothing more can be saved, so stop at once (not at the next move)
        and stop looking ready. ``reason`` names which."""
        if not self.failed and not self.closed:
            self._stop_failing(f"lost the database; stopping ({reason})")

    def _stop_failing(self, why: str) -> None:
        """Nothing that was not saved may be acknowledged: drop the replies waiting for a
        commit and stop serving, not ready from now on."""
        log.error(why)
        self.ready = False
        self._outbox.clear()
        self._committing.clear()
        self.failed = True
        self.stopping.set()
        self._drained.set()

    async def _drain(self) -> None:
        """Wait until every change is committed and its replies are on their way."""
        await self._drained.wait()

    def _arm_timer(self) -> None:
        """Wake up for the core's next deadline (a flag, an abandoned seat)."""
        self._arming = False
        if self.closed:
            return  # past the last save: no deadline acts any more
        when = self.core.next_deadline()
        if when == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = None
        if when is not None:
            loop = asyncio.get_running_loop()
            delay = max(0.0, when - self.core.clock())
            self._timer = loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = self._timer_at = None
        self._carry_out(self.core.tick())

    def _send(self, actions: Iterable[Action]) -> None:
        """Carry out ``actions`` at the end of this turn of the event loop, with the others.

        Writing every reply of a turn back to back, rather than one between
        each request's work, means a client that is woken by the first frame
        finds the rest already there: far fewer wake-ups on both sides, which
        is most of a busy server's system time.
        """
        idle = not self._unsent
        self._unsent.extend(actions)
        if idle and self._unsent:
            asyncio.get_running_loop().call_soon(self._send_now)

    def _send_now(self) -> None:
        actions, self._unsent = self._unsent, []
        for action in actions:
            if isinstance(action, Send):
                self._write(action)
            elif isinstance(action, Close):
                link = self.sockets.get(action.target)
                if link is not None and link.close(action.code, action.reason):
                    why = f"{action.reason} ({action.code})"
                    log.info("closing: %s", why, extra={"conn": action.target, "ip": link.ip})
            elif isinstance(action, Think):
                self.searches.think(action)
            elif isinstance(action, AnalyseStep):
                self.searches.analyse(action)
            elif isinstance(action, Suggest):
                self.searches.hint(action)
            elif isinstance(action, LiveEvalStep):
                self.searches.live(action)
            elif isinstance(action, Ask):
                self._start_asking(action)
            elif isinstance(action, FindSession):
                assert self.member is not None  # only a cluster node's core asks
                if link := self.sockets.get(action.conn):
                    link.expect_within(None)  # it said hello: no deadline while it is looked for
                self.background(self._find_session(action))

    def _write(self, send: Send) -> None:
        """Write one text frame to every target still open and reading.

        The frame is serialized once for all of them (server frames are not
        masked, so every copy is the same bytes) and written straight to each
        transport. It never waits for a slow reader and skips connections that
        are closing.
        """
        frame = Frame(Opcode.TEXT, send.payload).serialize(mask=False)
        sockets = self.sockets
        for target in send.targets:
            link = sockets.get(target)
            if link is None or link.protocol.state is not OPEN:
                continue
            transport = link.transport
            # ``_reading``, its common case written out: this runs for every frame sent.
            if transport.get_write_buffer_size() > WRITE_BUFFER_LIMIT:
                self._reading(link, transport)
                continue
            try:
                transport.write(frame)
            except Exception as error:  # a transport that just broke: its close follows
                log.warning("could not write to a client: %s", error, extra={"conn": target})

    async def _claim_node_name(self) -> None:
        """Refuse to start as a second live node of one name, with another cluster secret
        than the live nodes', or without Redis: a node that cannot reach Redis at start is
        refused as one that cannot reach PostgreSQL is (it started, said ready for a moment,
        then 503 for good, its log full of retries), before the database is touched."""
        from redis.exceptions import RedisError  # Redis's client only on a cluster node

        from server.cluster.leases import NameTaken
        from server.cluster.nodes import SecretDiffers

        assert self.member is not None
        try:
            await self.member.node.leases.claim_name()
            await self.member.addresses.check_secret()
        except (NameTaken, SecretDiffers) as refused:
            raise StartupError(str(refused)) from None
        except (OSError, RedisError) as error:
            raise StartupError(
                f"cannot reach Redis at {shown(self.config.redis)} ({error}): start it, or "
                "correct --redis"
            ) from None

    def _join_cluster(self, port: int) -> None:
        from server.cluster.member import Member  # Redis's client only on a cluster node

        config = self.config
        advertised = config.advertise or f"{_reachable(config.host)}:{port}"
        self.member = Member(self, port, advertised)

    def background(self, work: Coroutine[None, None, None]) -> None:
        """Run ``work`` in a task the server keeps (and awaits when it stops)."""
        task = asyncio.ensure_future(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _find_session(self, find: FindSession) -> None:
        """Look for a resume token's session (a cluster node), then serve what the
        connection sent after its hello, in order, unless it went to another node with it."""
        assert self.member is not None
        try:
            await self.member.find_session(find)
        finally:
            self._release(find.conn)

    def resume_elsewhere(self, conn: int, node: str, hello: bytes) -> None:
        """A resume whose room ``node`` hosts: the connection goes there with its hello,
        and what it sent after the hello (held meanwhile) follows it there, in order."""
        assert self.relay is not None
        link = self.sockets.get(conn)
        if link is None:
            return
        held, link.held = link.held or [], None
        self.relay.move(conn, node, [hello])
        self.relay.then(link, held)

    def _start_asking(self, ask: Ask) -> None:
        """Answer an account request away from the core (database, password hashing)."""
        link = self.sockets.get(ask.conn)
        if self.accounts is None or link is None:
            self.core.asked(ask.conn)
            if isinstance(ask.request, Hello):
                if link is not None and ask.request.token is None:  # no accounts to look in
                    self._carry_out(self.core.guest(ask.conn, ask.request, taken=False))
                self._release(ask.conn)
            return
        # The limits count an IPv6 address as its /64, as the connections' and the core's.
        task = asyncio.ensure_future(self._account_answer(ask, address_key(link.address)))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _account_answer(self, ask: Ask, address: str) -> None:
        assert self.accounts is not None
        try:
            self._carry_out(await self.accounts.answer(ask, address))
        finally:
            if isinstance(ask.request, Hello):
                self._release(ask.conn)

    def _rated(self, games: list[RatedGame]) -> None:
        """Rating changes just committed with their games: the rooms show them."""
        self._carry_out(self.core.ratings_committed(games))

    def _pruned(self, count: int) -> None:
        """The store's own pruning deleted finished games: the operator is told."""
        self.core.counters["history_pruned"] += count
        log.info(
            "history: %d finished %s deleted by the retention rule"
            " (--history-days, --short-game-days)",
            count,
            "game" if count == 1 else "games",
        )

    def _reading(self, link: Link, transport: asyncio.Transport) -> bool:
        """False, and the connection cut, for a client whose unread backlog grew too big.

        Writes never wait for a slow reader, so nobody else is slowed down;
        this bounds the memory such a client can hold.
        """
        if transport.get_write_buffer_size() <= WRITE_BUFFER_LIMIT:
            return True
        link.cut_off()
        return False

    def _address(self, link: Link, request: Request | None = None) -> str:
        """The client's IP address: the peer's, or, from a trusted proxy, the one it names.

        X-Forwarded-For is read right to left, skipping trusted proxies, so a
        client cannot pick its own address by sending the header itself.
        """
        address = link.remote_address[0]
        if isinstance(link.relay, Inbound) and request is not None:
            return client_address(request.headers) or address
        networks = self.proxy_networks
        if not networks or request is None or not _within(address, networks):
            return address
        hops = [hop.strip() for hop in request.headers.get("X-Forwarded-For", "").split(",")]
        for hop in reversed([hop for hop in hops if hop]):
            if not _within(hop, networks):
                return hop
        return address


def allowed_origin(headers: Headers, allowed: frozenset[str]) -> bool:
    """Whether a websocket upgrade may proceed, judged by its Origin header.

    Clients that send no Origin (anything but a browser) always may; a browser
    page may when it was served by this very server (its origin names the host
    the request was sent to, as the Host header says) or comes from a site the
    operator allowed with ``--origins``.
    """
    origin = headers.get("Origin")
    if origin is None or origin in allowed:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    host = headers.get("Host", "")
    return _without_default_port(parts.netloc, parts.scheme) == _without_default_port(
        host, parts.scheme
    )


def counted(count: int, thing: str) -> str:
    """``1 game``, ``2 games``, ``0 games``."""
    return f"{count} {thing}{'' if count == 1 else 's'}"


def _where(host: str, port: int) -> str:
    """Where a person points a browser or a terminal client: on every address, this
    machine's name is what a friend needs (told ``ws://0.0.0.0:8765``, a host had nothing
    to give)."""
    if host not in ("0.0.0.0", "::", ""):
        return f"play at http://{f'[{host}]' if ':' in host else host}:{port}/"
    name = socket.gethostname()
    return (
        f"play from this machine at http://localhost:{port}/; from others: "
        f"http://{name}:{port}/ or this machine's address, and quoridor --server ws://{name}:{port}"
    )


def _reachable(host: str) -> str:
    """The listening host as other machines can reach it: every interface's wildcard is
    no address, so this machine's name stands for it."""
    return socket.gethostname() if host in ("0.0.0.0", "::", "") else host


def _without_default_port(netloc: str, scheme: str) -> str:
    default = ":443" if scheme == "https" else ":80"
    return netloc.lower().removesuffix(default)


def _limit_send_buffer(link: Link) -> None:
    sock = link.transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)


def _unusable_database(path: str, error: StoreError) -> str:
    """One line for a database the server cannot start with, and what to do: the advice
    for a damaged file is no help for a newer schema or a PostgreSQL that does not answer."""
    reason = " ".join(str(error).split())  # PostgreSQL's own messages run over two lines
    text = f"cannot use the database {path} ({reason})"
    if "is newer than this server's" in reason:  # server.database, server.pgstore
        return (
            f"{text}; a newer version of the server wrote it: run that version, or restore "
            "the backup taken before the upgrade (deploy/README.md, Upgrading)"
        )
    if is_postgresql(path):
        return (
            f"{text}; check that PostgreSQL runs and the URL is right, or start with another --db"
        )
    return (
        f"{text}; if it is damaged, move it aside and restore a backup (deploy/README.md, "
        "Backups), or start with another --db"
    )


def _limits(config: Config, absence: Absence) -> Limits:
    return Limits(
        rate=config.rate,
        burst=config.burst,
        address_share=config.address_share,
        absence=absence,
        rooms_per_address=config.rooms_per_ip,
        waiting_rooms_per_address=max(1, config.rooms_per_ip // 4),
        computer_rooms_per_address=address_share(config.ai_workers),
        spectators=config.max_spectators,
        replay_plies=config.replay_plies,
        hellos_per_second=config.hellos_per_second,
        hello_burst=config.hello_burst,
        max_rooms=config.max_rooms,
        provisional_games=config.provisional_games,
    )


def _synchronous(value: str) -> Synchronous:
    if value not in ("off", "normal", "full"):
        raise ValueError(f"sync must be off, normal or full, not {value!r}")
    return cast(Synchronous, value)


def _within(address: str, networks: list[IPv4Network | IPv6Network]) -> bool:
    try:
        ip = ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def _bound_port(server: asyncio.Server) -> int:
    """The port of the server's first socket. ``sockets`` is read as ``Any``: uvloop's is a
    list where the stubs say tuple, which the compiled build (mypyc) would check and refuse."""
    sockets = getattr(server, "sockets")  # noqa: B009
    return int(sockets[0].getsockname()[1])


class Running:
    """``GameServer.running()``: a class rather than an ``asynccontextmanager`` generator,
    which the compiled build (deploy/compile.py, mypyc) cannot compile."""

    def __init__(self, server: GameServer) -> None:
        self.server = server

    async def __aenter__(self) -> GameServer:
        await self.server.start()
        return self.server

    async def __aexit__(self, *exc_info: object) -> None:
        await self.server.stop()
