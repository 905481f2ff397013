"""The quick-match queue: who waits for which kind of game, and who plays whom.

``MatchQueue`` is what the lobby needs of a queue; ``LocalQueue`` is the single server's,
lists in memory. A cluster's queue is shared by every node (``server.cluster.matchqueue``:
a list per pool in Redis, paired by one Lua script, so two nodes never hand out the same
player); it answers later rather than at once, so its ``enter`` returns no group and its
pairings come back to the lobby as they are made (see docs/cluster.md).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from protocol.messages import TimeControl, VariantSpec
from server import ratings
from server.sessions import Session


class Pool(NamedTuple):
    """Which players may be paired: the same variant, time control and rating pool."""

    players: int
    size: int
    walls: int | None
    base: float | None
    increment: float | None
    rating_pool: str | None
    """The rating pool of a rated queue; None for a casual one."""

    @classmethod
    def of(cls, spec: VariantSpec, clock: TimeControl | None, rating_pool: str | None) -> Pool:
        base, increment = (clock.base, clock.increment) if clock else (None, None)
        return cls(spec.players, spec.size, spec.walls, base, increment, rating_pool)


class MatchQueue(Protocol):
    @property
    def queues(self) -> dict[Pool, list[Session]]:
        """Who waits here, by pool (for the metrics)."""
        ...

    def enter(self, session: Session, pool: Pool, now: float) -> list[list[Session]]:
        """Queue ``session`` (its ``queued`` reply set); the groups to seat together now,
        each in the order they came (the first owns the room)."""
        ...

    def leave(self, session: Session) -> None:
        """Take ``session`` out of the queue, if it waits there."""
        ...

    def due(self) -> float | None:
        """When to look again for pairs (a rated queue's window widens with waiting)."""
        ...

    def recheck(self, now: float) -> list[tuple[Pool, list[Session]]]:
        """The groups that can play now, looking again at every queue."""
        ...


class LocalQueue:
    """The quick-match queue of one server: a list per pool, in the order players came."""

    def __init__(self) -> None:
        self.queues: dict[Pool, list[Session]] = {}
        self._recheck_at: float | None = None

    def enter(self, session: Session, pool: Pool, now: float) -> list[list[Session]]:
        queue = self.queues.setdefault(pool, [])
        queue.append(session)
        session.queued_since = now
        return [group for _, group in self._pair(pool, queue, now)]

    def leave(self, session: Session) -> None:
        for pool, queue in list(self.queues.items()):
            if session in queue:
                queue.remove(session)
            if not queue:
                del self.queues[pool]  # pools are variants and clocks: unbounded if kept

    def due(self) -> float | None:
        return self._recheck_at

    def recheck(self, now: float) -> list[tuple[Pool, list[Session]]]:
        if self._recheck_at is None or self._recheck_at > now:
            return []
        self._recheck_at = None
        groups = []
        for pool, queue in list(self.queues.items()):
            groups += self._pair(pool, queue, now)
        return groups

    def _pair(
        self, pool: Pool, queue: list[Session], now: float
    ) -> list[tuple[Pool, list[Session]]]:
        """Take out every group of ``queue`` that can play together now."""
        groups = []
        while (group := self._pick(queue, pool, now)) is not None:
            for player in group:
                queue.remove(player)
            groups.append((pool, group))
        if not queue:
            self.queues.pop(pool, None)
        return groups

    def _pick(self, queue: list[Session], pool: Pool, now: float) -> list[Session] | None:
        """The players to seat together: the first to come in a casual queue; in a rated one
        the closest ratings within the window of the longest waiter among them (it widens
        with waiting, ``ratings.match_window``), in the order they came."""
        players, rating_pool = pool.players, pool.rating_pool
        if len(queue) < players:
            return None
        if rating_pool is None:
            return queue[:players]
        ranked = sorted(queue, key=lambda s: _rating(s, rating_pool))
        for start in range(len(ranked) - players + 1):
            group = ranked[start : start + players]
            spread = _rating(group[-1], rating_pool) - _rating(group[0], rating_pool)
            waited = max(now - s.queued_since for s in group)
            if spread <= ratings.match_window(waited):
                return sorted(group, key=queue.index)
        recheck = now + ratings.RECHECK_SECONDS
        self._recheck_at = recheck if self._recheck_at is None else min(self._recheck_at, recheck)
        return None


def _rating(session: Session, pool: str) -> int:
    """A queued player's shown rating in ``pool`` (a newcomer's is the start)."""
    account = session.account
    rating = account.ratings.get(pool) if account is not None else None
    return ratings.shown(rating.mu if rating is not None else ratings.START_MU)
