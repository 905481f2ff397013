"""A game server's part in a cluster (``--redis``): the wiring between ``GameServer``
(server/app.py) and the cluster's pieces.

The server makes one ``Member`` once its port is known and keeps it in
``GameServer.member``: the node and its leases (``server.cluster.node``), the
cluster-wide lobby list (``server.cluster.directory``), quick match across nodes
(``server.cluster.matching``), the relay's addresses (``server.cluster.nodes``), and what
happens to this server's rooms when the cluster takes, fences or drops them. A server
without ``--redis`` never imports this module (nor Redis's client).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from typing import TYPE_CHECKING, Protocol

from redis.exceptions import RedisError

from protocol.codec import encode
from server.actions import FindSession
from server.cluster.channel import NodeChannel
from server.cluster.directory import ClusterDirectory, Listing
from server.cluster.lobby import Lobby
from server.cluster.matching import ClusterQueue, Matchmaker, QuickMatching
from server.cluster.matchqueue import MatchQueue as SharedQueue
from server.cluster.node import ClusterNode, Local, Location, Remote, default_node_id
from server.cluster.nodes import NodeAddresses
from server.cluster.ownership import TakenOver
from server.core import Close
from server.pgstore import PgStore
from server.records import AccountRecord
from server.roomhost import room_code
from server.store import StoreError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from server.actions import Action
    from server.cluster.relay import Relay
    from server.config import Config
    from server.core import Core
    from server.metrics import Metrics
    from server.rooms import Room
    from server.storage import Storage
    from server.wire import Link

LOOK_WITHIN = 2.0
"""Seconds a node looks for an unknown resume token's session (PostgreSQL, then where its
room is) before it answers the hello ``service_unavailable`` rather than keep it waiting."""


class Host(Protocol):
    """What a member needs of its server (``server.app.GameServer``)."""

    config: Config
    store: Storage | None
    core: Core
    metrics: Metrics
    sockets: dict[int, Link]
    relay: Relay | None
    handing_over: bool

    def carry_out(self, actions: list[Action]) -> None: ...

    def watch(self, conn: int) -> None: ...

    def resume_elsewhere(self, conn: int, node: str, hello: bytes) -> None: ...

    def background(self, work: Coroutine[None, None, None]) -> None: ...

    def enable_relay(
        self,
        node: str,
        address_of: Callable[[str], Awaitable[str | None]],
        where: Callable[[str], Awaitable[str | None]],
    ) -> Relay: ...


log = logging.getLogger("quoridor.server")


class Member:
    """This server as a node of a cluster: made by ``GameServer.running`` with ``--redis``."""

    def __init__(self, server: Host, port: int, advertised: str) -> None:
        config, store = server.config, server.store
        assert isinstance(store, PgStore)
        self.server = server
        self.store = store
        self.node = node = ClusterNode(
            config.redis,
            config.redis_prefix,
            config.node_id or default_node_id(port),
            config.lease_ttl,
            store,
            room_code,
        )
        core = server.core
        core.context.clustered = True
        node.hosting = core.hosts
        node.adopt = self._adopt
        node.dropped = self.drop_room
        history = core.history
        node.game_ids = history.reserved
        history.running_low = lambda: server.background(node.reserve_game_ids())
        store.fenced = self._fenced
        # A node never gives up on PostgreSQL: while it is away the node is not ready and
        # refuses moves and new games (rather than holding them); it serves again once
        # PostgreSQL is back.
        store.retry = math.inf
        store.keep_trying = True
        store.availability = self._database_available
        core.host.take_code = node.take_code
        forget = core.host.on_close

        def closed(room: Room) -> None:
            forget(room)
            node.closed(room.code)

        core.host.on_close = closed
        core.host.can_open = lambda: node.healthy and store.available and not server.handing_over
        self.listing = self._join_lobby()
        self.addresses = self._join_relay(advertised)
        self.matching = self._join_queue()

    async def start(self) -> None:
        """Lease the first room codes, publish this node's address, its rooms, its queue."""
        await self.node.start()
        self.addresses.start()
        self.listing.start()
        self.matching.start()

    async def leave(self) -> None:
        """The first steps of a graceful stop: this node's rooms leave the other nodes'
        lists at once, its players leave the shared queue."""
        await self.listing.stop()
        await self.matching.stop()

    # -- joining the cluster's parts ----------------------------------------------------

    def _join_lobby(self) -> Listing:
        """``list_rooms`` lists every live node's rooms (``server.cluster.directory``)."""
        node, core = self.node, self.server.core
        context = core.context
        directory = ClusterDirectory(
            core.host.rooms, core.host.listed, context.clock, context.wall_clock
        )
        core.lobby.directory = directory
        lobby = Lobby(node.redis, node.keys, node.id, node.leases.ttl)
        listing = Listing(directory, lobby)

        def matching(figure: str) -> int:
            return getattr(self.matching, figure, 0)  # None until the queue is joined

        def figures() -> dict[str, float]:
            return {
                "up": float(node.healthy),
                "rooms_owned": len(node.leases.held) - len(node.spare),
                "takeovers": node.takeovers,
                "leases_lost": node.losses,
                "lease_renewals": node.leases.renewals,
                "redis_errors": node.redis_errors + listing.errors + matching("errors"),
                "postgresql_up": float(node.store.available),
                "postgresql_errors": node.store.errors,
                "listed_here": len(lobby.mine),
                "listed_elsewhere": len(directory.others),
                "pairs_here": matching("paired_here"),
                "pairs_across": matching("paired_across"),
                "secret_mismatches": getattr(self.addresses, "mismatches", 0),
            }

        self.server.metrics.count_cluster(node.id, figures)
        return listing

    def _join_relay(self, advertised: str) -> NodeAddresses:
        """Clients asking for a room of another node are handed over to it, and other nodes'
        clients are served here (``server.cluster.relay``), found at their addresses."""
        node = self.node
        secret = self.server.config.cluster_secret
        addresses = NodeAddresses(
            node.redis, node.keys, node.id, advertised, node.leases.ttl, secret
        )

        async def where(code: str) -> str | None:
            location = await node.locate(code)
            if isinstance(location, Remote):
                return location.node
            return node.id if isinstance(location, Local) else None

        self.server.enable_relay(node.id, addresses.reach, where)
        return addresses

    def _join_queue(self) -> QuickMatching:
        """Quick match pairs the players of every node (``server.cluster.matching``): the
        queue is shared in Redis, offers go over the node channel, and a player paired into
        another node's room is moved there by the relay."""
        server, node = self.server, self.node
        relay = server.relay
        assert relay is not None
        queue = ClusterQueue()
        server.core.queue = server.core.lobby.queue = queue
        matchmaker = Matchmaker(server.core.lobby, queue, node.id)
        channel = NodeChannel(server.config.redis, node.keys, node.id, lambda payload: None)
        shared = SharedQueue(node.redis, node.keys)
        return QuickMatching(matchmaker, shared, channel, server.carry_out, relay.move)

    # -- rooms coming and going ---------------------------------------------------------

    def _database_available(self, available: bool) -> None:
        context = self.server.core.context
        context.unavailable = None if available else "the database is unreachable"

    def _adopt(self, taken: TakenOver, accounts: list[AccountRecord]) -> bool:
        """Host a room the node took over; False (logged) if its record cannot be used."""
        assert taken.room is not None
        try:
            actions = self.server.core.adopt(taken.room, taken.sessions, accounts)
        except Exception:
            log.exception("a room taken over cannot be restored", extra={"room": taken.room.code})
            return False
        self.server.carry_out(actions)
        return True

    def drop_room(self, code: str) -> None:
        """Stop hosting ``code`` (its lease is lost): its members are closed at once, before
        any reply still waiting for a commit could reach them."""
        sockets = self.server.sockets
        for action in self.server.core.drop_room(code):
            if isinstance(action, Close) and (link := sockets.get(action.target)):
                link.close(action.code, action.reason)

    def _fenced(self, codes: list[str]) -> None:
        """A commit left out rooms another node claimed meanwhile: nothing of theirs was
        written, so nothing of theirs may be acknowledged."""
        for code in codes:
            if self.server.core.hosts(code):
                self.node.losses += 1
                log.warning("room fenced off: another node owns it now", extra={"room": code})
                self.drop_room(code)

    def let_go(self) -> None:
        """A commit failed mid-way: every room goes (members closed with 1012, leases
        released), as if this node had restarted."""
        codes = list(self.server.core.rooms)
        self.node.losses += len(codes)  # an operator saw rooms go with the metric at 0
        for code in codes:
            self.drop_room(code)
        self.server.background(self.node.hand_over(codes))

    # -- players this node does not know ------------------------------------------------

    async def find_session(self, find: FindSession) -> None:
        """A resume token this node does not know: its room, from the shared database, is
        brought here if no live node hosts it (a takeover), then the hello is answered; a
        room another live node hosts gets the connection handed over with the hello.

        When that cannot be known now (PostgreSQL or Redis away, or no answer within
        ``LOOK_WITHIN``) the hello is answered ``service_unavailable`` at once: the token
        may well be good, so not ``bad_token``, and the client says hello again in a moment
        (a node used to wait for PostgreSQL to come back, and the client's hello deadline
        closed it meanwhile with 1008)."""
        server = self.server
        if not self.store.available:
            self._cannot_look(find, "the database is unreachable")
            return
        lookup = asyncio.ensure_future(self._where(find.token_digest))
        try:
            where = await asyncio.wait_for(asyncio.shield(lookup), LOOK_WITHIN)
        except TimeoutError:
            # Left to finish by itself: a takeover it started stands, the room hosted here.
            server.background(_settled(lookup))
            self._cannot_look(find, "the cluster did not answer in time")
            return
        except (StoreError, RedisError, OSError) as error:
            log.warning("cannot look for a session now: %s", error, extra={"conn": find.conn})
            unreachable = "the database" if isinstance(error, StoreError) else "the cluster"
            self._cannot_look(find, f"{unreachable} is unreachable")
            return
        if isinstance(where, Remote):
            server.core.asked(find.conn)
            server.resume_elsewhere(find.conn, where.node, encode(find.hello))
            return
        server.carry_out(server.core.searched(find.conn, find.hello))
        # Its hello deadline ran meanwhile: a resumed player has none (a game is no idle
        # time), and one left in no room has the idle one.
        server.watch(find.conn)

    async def _where(self, digest: bytes) -> Location | None:
        code = await self.store.session_room(digest)
        return None if code is None else await self.node.locate(code)

    def _cannot_look(self, find: FindSession, reason: str) -> None:
        self.server.carry_out(self.server.core.unsearchable(find.conn, find.hello, reason))
        self.server.watch(find.conn)


async def _settled(work: asyncio.Future[Location | None]) -> None:
    with contextlib.suppress(StoreError, RedisError, OSError):
        await work
