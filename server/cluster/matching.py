"""Quick match across the nodes of a cluster.

``ClusterQueue`` is the ``MatchQueue`` (``server.quickmatch``) of a cluster node, on the
core's side (no I/O): it pairs nobody itself. Entering and leaving become requests
(``Enter``, ``Leave``) that the adapter's ``QuickMatching`` takes and runs, in order, against
the queue every node shares in Redis (``server.cluster.matchqueue``: one Lua script pairs
atomically across nodes, so nobody is paired twice or with themselves). When entering pairs
this node's player with one who waited, the answer comes back through ``Matchmaker.paired``:

- both players on this node: they are seated together at once, as on one server;
- the waiting player on another node: this node (which found the pair) opens the room,
  owning it (its lease), seats its own player, and sends an ``Offer`` to the other node over
  the node channel (``server.cluster.channel``). That node's ``Matchmaker.offered`` turns its
  player's quick-match request into a ``join`` of that room and seat, and the relay moves the
  player's connection to this node with it (``Relay.move``): the room fills, the game starts.

The player who waited longer takes seat 0, as on one server (the first to come moves first).
A rated queue pairs in the order players came in a cluster (the Lua script has no rating
window), within the same rating pool. Four-player games are paired among one node's players
(the shared queue pairs two at a time).

An offer rides on pub/sub (at most once): if it is lost (the other node died, or Redis failed
at that instant) the waiting player is not seated, and this node's player waits in the room
as after a ``create``, free to leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import NamedTuple

import msgspec
from redis.exceptions import RedisError

from protocol.codec import encode
from protocol.messages import Join
from server.actions import Action
from server.cluster.channel import NodeChannel
from server.cluster.matchqueue import MatchQueue as SharedQueue
from server.cluster.matchqueue import Waiting
from server.lobby import Lobby
from server.quickmatch import LocalQueue, Pool
from server.sessions import Session

log = logging.getLogger("quoridor.cluster")
RETRY_AFTER = 0.2
"""Seconds before asking Redis again after a failed request (the queue waits meanwhile);
each failure in a row doubles it, up to ``RETRY_AT_MOST``."""
RETRY_AT_MOST = 2.0
STOP_WITHIN = 1.0
"""Seconds a stopping node gives its last requests to the shared queue."""


class Enter(NamedTuple):
    """Put ``session`` in the shared queue of ``pool`` (pairing it if someone waits)."""

    pool: str
    session: str


class Leave(NamedTuple):
    """Take ``session`` out of the shared queue of ``pool``."""

    pool: str
    session: str


class Offer(msgspec.Struct, frozen=True, tag="match"):
    """Over the node channel, to the waiting player's node: your ``session`` plays in
    ``room`` (hosted by ``node``) at ``seat``; no ``room``: its opponent left meanwhile, so
    it waits on."""

    session: str
    room: str
    seat: int
    node: str


class Handoff(NamedTuple):
    """Move connection ``conn`` to ``node``, which takes ``frames`` first (``Relay.move``)."""

    conn: int
    node: str
    frames: list[bytes]


_decode_offer = msgspec.json.Decoder(Offer).decode


def pool_key(pool: Pool) -> str:
    """The name of a pool's list in Redis: every field, so only equal pools meet."""
    return "/".join("-" if field is None else str(field) for field in pool)


class ClusterQueue:
    """The ``MatchQueue`` of a cluster node: which of its sessions wait, and what to tell
    Redis (see the module's description). Four-player games are paired among this node's
    players only, as on one server (``LocalQueue``): the shared queue pairs two at a time."""

    def __init__(self) -> None:
        self.waiting: dict[str, tuple[Pool, Session]] = {}
        """This node's sessions in the shared queue, by session id."""
        self.requests: list[Enter | Leave] = []
        self.local = LocalQueue()
        """Four-player pools, this node's players only."""

    @property
    def queues(self) -> dict[Pool, list[Session]]:
        """This node's waiting sessions by pool (for the metrics)."""
        found: dict[Pool, list[Session]] = {p: list(q) for p, q in self.local.queues.items()}
        for pool, session in self.waiting.values():
            found.setdefault(pool, []).append(session)
        return found

    def enter(self, session: Session, pool: Pool, now: float) -> list[list[Session]]:
        if pool.players != 2:
            return self.local.enter(session, pool, now)
        session.queued_since = now
        self.waiting[session.id] = (pool, session)
        self.requests.append(Enter(pool_key(pool), session.id))
        return []  # pairings come back later, through Matchmaker.paired

    def leave(self, session: Session) -> None:
        self.local.leave(session)
        entry = self.waiting.pop(session.id, None)
        if entry is not None:
            self.requests.append(Leave(pool_key(entry[0]), session.id))

    def due(self) -> float | None:
        return self.local.due()

    def recheck(self, now: float) -> list[tuple[Pool, list[Session]]]:
        return self.local.recheck(now)

    def take(self) -> list[Enter | Leave]:
        """The requests for Redis since the last call, in order (the adapter's)."""
        requests, self.requests = self.requests, []
        return requests


class Matchmaker:
    """What a node does with the pairings the shared queue makes (sans-I/O)."""

    def __init__(self, lobby: Lobby, queue: ClusterQueue, node: str) -> None:
        self.lobby = lobby
        self.queue = queue
        self.node = node

    def paired(self, session_id: str, opponent: Waiting) -> tuple[list[Action], list[Offer]]:
        """This node's ``session_id`` entered and was paired with ``opponent``, who waited
        longer: the actions to carry out here, and the offers to send to other nodes."""
        mine = self.queue.waiting.pop(session_id, None)
        if opponent.node == self.node:
            theirs = self.queue.waiting.pop(opponent.session, None)
            if mine is None or theirs is None:
                self._again(mine, theirs)  # one left meanwhile: the other waits on
                return [], []
            return self.lobby.seat_group([theirs[1], mine[1]], mine[0].rating_pool), []
        if mine is None:
            # This player left meanwhile; the waiting one, now out of the queue, must be
            # put back by its own node: an offer of no room says so.
            return [], [Offer(opponent.session, "", 0, self.node)]
        pool, session = mine
        room, actions = self.lobby.open_for_match(session, pool.rating_pool, seat=1)
        return actions, [Offer(opponent.session, room, 0, self.node)]

    def offered(self, offer: Offer) -> list[Handoff]:
        """Another node paired this node's ``offer.session``: its quick-match request
        becomes a ``join`` of the room the other node opened, carried there by the relay."""
        entry = self.queue.waiting.pop(offer.session, None)
        if entry is None:
            return []  # it left or went away meanwhile: its seat stays free
        if not offer.room:  # the other player left meanwhile: wait on
            self._again(entry)
            return []
        session = entry[1]
        assert session.queued is not None
        assert session.conn is not None
        rid, session.queued = session.queued.id, None
        join = encode(Join(id=rid, room=offer.room, seat=offer.seat))
        return [Handoff(session.conn, offer.node, [join])]

    def _again(self, *entries: tuple[Pool, Session] | None) -> None:
        for entry in entries:
            if entry is not None:
                pool, session = entry
                self.queue.enter(session, pool, session.queued_since)


class QuickMatching:
    """The adapter's side of quick match across nodes: the queue's requests run against
    Redis one after the other, offers sent and received over the node channel."""

    def __init__(
        self,
        matchmaker: Matchmaker,
        shared: SharedQueue,
        channel: NodeChannel,
        carry_out: Callable[[list[Action]], None],
        move: Callable[[int, str, list[bytes]], None],
    ) -> None:
        self.matchmaker = matchmaker
        self.queue = matchmaker.queue
        self.node = matchmaker.node
        self.shared = shared
        self.channel = channel
        self.carry_out = carry_out
        self.move = move
        self.paired_here = 0
        """Pairs of two players of this node (a metric)."""
        self.paired_across = 0
        """Pairs this node found with a player of another node (a metric)."""
        self.errors = 0
        """Requests to Redis that failed (a metric)."""
        self._draining: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        channel.handler = self.received

    def start(self) -> None:
        self._spawn(self.channel.run())

    async def stop(self) -> None:
        """Stop, taking this node's players out of the shared queue (a node that comes back
        under the same id would otherwise be offered players it no longer has)."""
        for task in [*self._tasks, self._draining]:
            if task is not None:
                task.cancel()
                await asyncio.wait([task], timeout=STOP_WITHIN)
        leaving = [Leave(pool_key(pool), s.id) for pool, s in self.queue.waiting.values()]
        leaving += [r for r in self.queue.take() if isinstance(r, Leave)]
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            async with asyncio.timeout(STOP_WITHIN):
                for request in leaving:
                    await self.shared.leave(request.pool, Waiting(self.node, request.session))
        await self.channel.close()

    def wake(self) -> None:
        """The core may have queued requests: run them (in order, one task at a time)."""
        if self.queue.requests and (self._draining is None or self._draining.done()):
            self._draining = asyncio.create_task(self._drain())

    async def _drain(self) -> None:
        wait = RETRY_AFTER
        while requests := self.queue.take():
            for index, request in enumerate(requests):
                try:
                    await self._run(request)
                    wait = RETRY_AFTER
                except (RedisError, OSError) as error:
                    self.errors += 1
                    if wait == RETRY_AFTER:  # once an outage (it was every 0.2 s)
                        log.warning("quick-match queue unreachable: %s", error)
                    self.queue.requests[:0] = requests[index:]  # asked again, in order
                    await asyncio.sleep(wait)
                    wait = min(wait * 2, RETRY_AT_MOST)
                    break

    async def _run(self, request: Enter | Leave) -> None:
        waiting = Waiting(self.node, request.session)
        if isinstance(request, Leave):
            await self.shared.leave(request.pool, waiting)
            return
        entered = await self.shared.enter(request.pool, waiting)
        if entered.outcome != "paired":
            return
        opponent = entered.opponent
        assert opponent is not None
        await self.shared.seated(request.session)  # seated now, or back in the queue
        actions, offers = self.matchmaker.paired(request.session, opponent)
        if opponent.node == self.node:
            await self.shared.seated(opponent.session)
            self.paired_here += bool(actions)
        else:
            self.paired_across += bool(actions)
        self.carry_out(actions)
        for offer in offers:
            if not await self.channel.send(opponent.node, encode(offer)):
                log.warning("quick match: %s did not hear its offer", opponent.node)

    def received(self, payload: bytes) -> None:
        """A message on this node's channel."""
        try:
            offer = _decode_offer(payload)
        except msgspec.ValidationError:
            log.warning("unreadable message on the node channel left out")
            return
        self._spawn(self._offered(offer))

    async def _offered(self, offer: Offer) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.shared.seated(offer.session)  # so that it may queue again at once
        for handoff in self.matchmaker.offered(offer):
            self.move(*handoff)
        self.wake()

    def _spawn(self, work: object) -> None:
        assert asyncio.iscoroutine(work)
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
