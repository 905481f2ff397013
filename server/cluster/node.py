"""One server as a node of a cluster: the rooms it owns, their leases, and takeovers.

A node hosts a room while it holds the room's lease in Redis (``leases``); it writes the
room to PostgreSQL under the lease's epoch, which the room's fence checks
(``server.pgstore``), so a node that lost a lease cannot write the room again whatever it
believes. ``ClusterNode`` keeps the leases, keeps a few fresh room codes leased in advance
(a room opens at once, under a lease no other node holds), answers where a room is
hosted (``locate``, taking an ownerless room over), and takes over rooms in play nobody
owns (the orphan sweep), so their clocks keep running before their players come back.

It touches no socket and no core: the adapter (``server.app``) gives it three functions
(``hosting``, ``adopt``, ``dropped``) and carries out what they return.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.exceptions import RedisError

from server.cluster.keys import Keys, connect, stop_if_cancelled
from server.cluster.leases import Lease, Leases
from server.cluster.ownership import Ownership, TakenOver
from server.pgstore import PgStore
from server.records import AccountRecord
from server.store import StoreError

log = logging.getLogger("quoridor.cluster")

SPARE_CODES = 32
"""Room codes a node keeps leased in advance, so that opening a room waits for nothing.
They are leased again as soon as one is taken, all in one Redis round trip."""
GAME_ID_BLOCK = 100
"""The fewest game ids a node reserves at a time in the shared database
(``PgStore.reserve_game_ids``): it reserves twice as many as it hosts rooms when that is
more, so that every room can finish a game before the ids run out; another block is
reserved once half of one is used."""
RETRY_AFTER = 0.2
"""Seconds before trying Redis again after an error (the spare codes, the sweep)."""


@dataclass(frozen=True)
class Local:
    """The room is hosted here (now, perhaps after taking it over)."""


@dataclass(frozen=True)
class Remote:
    """Another live node holds the room's lease."""

    node: str


@dataclass(frozen=True)
class Missing:
    """No such room in play (never saved, finished, or gone)."""


Location = Local | Remote | Missing
LOCAL, MISSING = Local(), Missing()


def default_node_id(port: int) -> str:
    return f"{socket.gethostname()}:{port}"


class ClusterNode:
    """This server's part of the cluster (see the module's description)."""

    def __init__(
        self,
        redis_url: str,
        prefix: str,
        node_id: str,
        ttl: float,
        store: PgStore,
        new_code: Callable[[], str],
    ) -> None:
        self.id = node_id
        self.redis = connect(redis_url)
        self.keys = Keys(prefix)
        self.leases = Leases(self.redis, self.keys, node_id, ttl)
        self.store = store
        self.ownership = Ownership(store, self.leases)
        self._new_code = new_code
        self.hosting: Callable[[str], bool] = lambda code: False
        """Whether the core hosts room ``code`` now (set by the adapter)."""
        self.adopt: Callable[[TakenOver, list[AccountRecord]], bool] = lambda t, a: False
        """Restore a room taken over (with its players' accounts) into the core; False if
        its record cannot be used."""
        self.dropped: Callable[[str], None] = lambda code: None
        """The room's lease is lost: the core must stop hosting it at once."""
        self.game_ids: Callable[[range], None] = lambda block: None
        """Hands a block of game ids reserved for this node to the core's history."""
        self._reserving = False
        self.spare: list[Lease] = []
        """Fresh codes leased in advance, for rooms this node opens."""
        self._late: list[str] = []
        """Codes of rooms opened while no spare one was ready, to lease at once."""
        self._closed: list[Lease] = []
        """Leases of rooms this node no longer hosts, to give up."""
        self._short = asyncio.Event()
        """Set when a spare code is taken or a room closes: the spares are leased again,
        the closed rooms' leases given up, now."""
        self._taking: dict[str, asyncio.Task[Location]] = {}
        """Takeovers under way, by room: a second ``locate`` waits for the first."""
        self._tasks: list[asyncio.Task[None]] = []
        self._regaining: set[asyncio.Task[None]] = set()
        """Rooms whose lease was found gone, being owned again (``_own_again``)."""
        self.takeovers = 0
        """Rooms this node took over (a metric)."""
        self.losses = 0
        """Leases this node lost while hosting their room (a metric)."""
        self.redis_errors = 0
        """Redis requests that failed (a metric)."""
        self._redis_run: str | None = None
        """The ``run_id`` of the Redis process last seen: another one means Redis restarted."""
        self._settling_until = 0.0
        """Monotonic time before which this node takes no room over: Redis restarted, and
        the rooms' owners, alive, take their leases again first (``_settled``)."""

    # -- lifetime --------------------------------------------------------------------

    async def start(self) -> None:
        """Keep the leases (and this node's liveness), the spare codes, and sweep for
        orphaned rooms, until ``stop``. The first spare codes are leased before it returns
        (unless Redis does not answer: the node then starts unready, and refuses new games
        until it does)."""
        await self.reserve_game_ids()
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            async with asyncio.timeout(self.leases.ttl):
                await self._settled()  # which Redis this node starts with
                await self._lease_codes()
        self._tasks = [
            asyncio.create_task(self.leases.keep(self._lost)),
            asyncio.create_task(self._keep_spares()),
            asyncio.create_task(self._sweep_orphans()),
        ]

    async def stop(self) -> None:
        for task in [*self._tasks, *self._regaining]:
            task.cancel()
        for task in [*self._tasks, *self._regaining]:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        for lease in self.spare:
            with contextlib.suppress(RedisError, OSError):
                await self.leases.release(lease)
        self.spare = []
        with contextlib.suppress(RedisError, OSError):
            await self.leases.let_name_go()
        await self.redis.aclose()

    async def hand_over(self, codes: list[str]) -> None:
        """Give up the rooms ``codes`` once their last write is committed (a graceful stop):
        the next owner takes them over at once instead of waiting for the TTL."""
        for code in codes:
            lease = self.leases.held.get(code)
            if lease is not None:
                with contextlib.suppress(RedisError, OSError):
                    await self.ownership.hand_over(lease)

    @property
    def healthy(self) -> bool:
        """Whether Redis answers (PostgreSQL's state is the store's)."""
        return self.leases.healthy

    # -- opening rooms ----------------------------------------------------------------

    def take_code(self) -> str:
        """A code for a new room, leased to this node: a spare one, or when rooms open
        faster than spares are leased (or Redis is away) a fresh random code leased right
        after. Such a room is written under epoch 0 until then, which no fence refuses; if
        its lease cannot be had (another node took the room over meanwhile, which needs it
        to be in play with no lease) the room is dropped, as on any lease lost."""
        self._short.set()
        if self.spare:
            return self.spare.pop().room
        code = self._new_code()
        self._late.append(code)
        return code

    def closed(self, code: str) -> None:
        """The node forgot room ``code``: its lease is given up (renewing the lease of every
        room a node ever opened cost it a renewal per room, every third of the TTL, for
        ever)."""
        lease = self.leases.held.get(code)
        if lease is not None and all(spare.room != code for spare in self.spare):
            del self.leases.held[code]  # no longer renewed, whatever happens next
            self._closed.append(lease)
            self._short.set()

    async def _keep_spares(self) -> None:
        while True:
            try:
                self._short.clear()
                await self._lease_codes()
                if self._closed:
                    closed, self._closed = self._closed, []
                    await self.leases.release_all(closed)  # if not, they end with the TTL
                stop_if_cancelled()
                await self._short.wait()
            except (RedisError, OSError) as error:
                stop_if_cancelled()
                self.redis_errors += 1
                log.debug("cannot lease spare room codes now: %s", error)
                await asyncio.sleep(RETRY_AFTER)

    async def _lease_codes(self) -> None:
        """Lease the codes of rooms opened without a spare one, then spare codes up to
        ``SPARE_CODES``, one round trip per round (codes nobody ever leased: one found
        leased, or leased before, is a collision of 50 random bits, never reused)."""
        while self._late or len(self.spare) < SPARE_CODES:
            self._short.clear()
            late, self._late = self._late, []
            wanted = [self._new_code() for _ in range(SPARE_CODES - len(self.spare))]
            try:
                leased = await self.leases.acquire_fresh(late + wanted)
            except BaseException:
                self._late = late + self._late
                raise
            got = {lease.room for lease in leased}
            for code in late:
                if code not in got:
                    self._lost(code)
                elif self.hosting(code):
                    self.store.epochs[code] = 1
                else:  # the room closed before its lease came
                    self.closed(code)
            for lease in leased:
                if lease.room not in late:
                    self.store.epochs[lease.room] = 1
                    self.spare.append(lease)

    async def reserve_game_ids(self) -> None:
        """Reserve the next block of game ids (one reservation at a time)."""
        if self._reserving:
            return
        self._reserving = True
        try:
            rooms = len(self.leases.held) - len(self.spare)
            self.game_ids(await self.store.reserve_game_ids(max(GAME_ID_BLOCK, 2 * rooms)))
        except StoreError as error:  # asked again when the history next runs low
            log.warning("cannot reserve game ids now: %s", error)
        finally:
            self._reserving = False

    # -- losing rooms -----------------------------------------------------------------

    def _lost(self, code: str) -> None:
        """``Leases.keep`` found the room's lease gone or another node's."""
        for index, lease in enumerate(self.spare):
            if lease.room == code:
                del self.spare[index]
                return
        if not self.hosting(code):
            return
        if not self.leases.healthy:
            # Redis unreachable for a whole TTL: another node may own the room by now.
            self._drop(code)
            return
        task = asyncio.create_task(self._own_again(code))
        self._regaining.add(task)
        task.add_done_callback(self._regaining.discard)

    async def _own_again(self, code: str) -> None:
        """Own a hosted room whose lease a renewal found gone or taken again, lease then
        fence, closing nobody, if no other node holds its lease (Redis restarted empty, say);
        else stop hosting it.

        Its writes meanwhile go on under the old epoch, which is safe: a node that takes
        the room claims a newer epoch in PostgreSQL before loading it, and from then on the
        fence refuses them (the node then drops the room, ``fenced``)."""
        lease = None
        with contextlib.suppress(RedisError, OSError, StoreError):
            lease = await self.ownership.own(code)
        if lease is not None:
            if self.hosting(code):
                extra = {"room": code}
                log.info("lease lost and taken again at epoch %d", lease.epoch, extra=extra)
            else:  # the room closed meanwhile
                self.closed(code)
            return
        if self.hosting(code):
            self._drop(code)

    def _drop(self, code: str) -> None:
        """Stop hosting a room whose lease is lost."""
        self.losses += 1
        log.warning("lease lost; no longer hosting the room", extra={"room": code})
        # Nothing more of the room may be written: the fence refuses a node that has
        # no epoch for it, whatever epoch another node claimed it under.
        self.store.epochs.pop(code, None)
        self.dropped(code)

    # -- finding rooms ----------------------------------------------------------------

    async def locate(self, code: str) -> Location:
        """Where room ``code`` is hosted now. A room open in PostgreSQL (in play, or waiting
        for players) whose lease no live node holds is taken over by this node (``Local``)."""
        if self.hosting(code):
            return LOCAL
        task = self._taking.get(code)
        if task is None:
            task = asyncio.create_task(self._take_over(code))
            self._taking[code] = task
            task.add_done_callback(lambda _: self._taking.pop(code, None))
        return await asyncio.shield(task)

    async def _take_over(self, code: str) -> Location:
        started = time.monotonic()
        owner = await self._live_owner(code)
        waited = ""
        if owner is None and (wait := await self._settled()):
            # Redis restarted: the lease may be gone only because Redis forgot it, while
            # its node, alive, is about to take it again (at its next renewal, within a
            # third of the TTL). Taking the room now closed every game of that node.
            await asyncio.sleep(wait)
            owner = await self._live_owner(code)
            waited = f", {wait * 1000:.0f} ms of it waiting after Redis's restart"
        if owner is not None:
            return Remote(owner)
        taken = await self.ownership.take_over(code)
        if taken is None:  # another node got there first
            holder = await self.leases.owner(code)
            return Remote(holder[0]) if holder is not None else MISSING
        if taken.room is None or taken.room.result is not None:
            # Nothing to take over: gone, or finished (a restart keeps no finished room
            # either). A room still waiting for players is taken over as a game in progress.
            await self.ownership.hand_over(taken.lease)
            return MISSING
        ids = sorted({s.account for s in taken.sessions if s.account is not None})
        if not self.adopt(taken, await self.store.accounts(ids) if ids else []):
            await self.ownership.hand_over(taken.lease)
            return MISSING
        self.takeovers += 1
        log.info(
            "room taken over at epoch %d in %.0f ms%s",
            taken.lease.epoch,
            (time.monotonic() - started) * 1000,
            waited,
            extra={"room": code},
        )
        return LOCAL

    async def _settled(self) -> float:
        """Seconds to wait before taking a room over: none, unless Redis restarted (another
        ``run_id``) less than a TTL ago. Every live node renews its leases every third of
        the TTL and takes a lease it finds gone again at once (``_own_again``), so after a
        TTL a room without a lease has no live owner. A dead node's rooms wait that much
        longer after a Redis restart.

        A TTL from the restart, not from when this node noticed it: Redis's own uptime says
        when. A node that hosted nothing noticed only at its next takeover, and an operator
        saw a stopped node's rooms wait the whole TTL 11 s after Redis came back."""
        info = await self.redis.info("server")
        run = str(info.get("run_id", ""))
        now = time.monotonic()
        if self._redis_run is not None and run != self._redis_run:
            # Whole seconds, rounded down: the restart may be up to one more second ago.
            left = self.leases.ttl - float(info.get("uptime_in_seconds", 0))
            if left > 0:
                self._settling_until = now + left
                log.info(
                    "redis restarted: this node takes no room over for %.1f s (their owners first)",
                    left,
                )
        self._redis_run = run
        return max(0.0, self._settling_until - now)

    async def _live_owner(self, code: str) -> str | None:
        """The live node that holds the room's lease, if one does. A lease whose node is
        dead (its liveness key gone: both expire together) is waited out, within a TTL."""
        deadline = time.monotonic() + self.leases.ttl
        while (owner := await self.leases.owner(code)) is not None:
            node = owner[0]
            if node == self.id or await self.leases.alive(node):
                return None if node == self.id else node
            if time.monotonic() > deadline:
                return node
            await asyncio.sleep(0.05)
        return None

    async def _sweep_orphans(self) -> None:
        """Take over the open rooms (in play, or waiting for players) whose lease no node
        holds (their node died or stopped), every TTL or so: their clocks and deadlines run
        on without waiting for their players to come back (a waiting room nobody comes back
        to closes after the grace period, its rows with it). Nodes sweep at random moments;
        the lease decides who wins each room."""
        ttl = self.leases.ttl
        while True:
            stop_if_cancelled()
            await asyncio.sleep(ttl * random.uniform(0.5, 1.0))
            await self._sweep_once()

    async def _sweep_once(self) -> None:
        try:
            codes = [code for code in await self.store.open_rooms() if not self.hosting(code)]
            if not codes:
                return
            leases = await self.redis.mget([self.keys.lease(code) for code in codes])
        except (RedisError, OSError, StoreError) as error:
            stop_if_cancelled()
            self.redis_errors += isinstance(error, RedisError | OSError)
            log.debug("orphan sweep skipped: %s", error)
            return
        for code, lease in zip(codes, leases, strict=True):
            if lease is None:
                await _quietly(self.locate(code))


async def _quietly(work: Awaitable[Location]) -> None:
    try:
        await work
    except (RedisError, OSError, StoreError) as error:
        stop_if_cancelled()
        log.warning("taking over an orphaned room failed: %s", error)
