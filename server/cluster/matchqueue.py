"""The quick-match queue, shared by every node, with atomic pairing (a Lua script).

One list per pool (variant and time control): a player who arrives pairs with
the longest waiting one, or waits at the end. Pairing is one script run by
Redis alone, so two nodes can never hand out the same waiting player twice,
and a set of who waits makes a second entry of the same session a no-op (never
one player twice, never a player against themselves). Entries of a node that
stopped renewing its liveness (``server.cluster.leases``) are dropped when
reached: its players are gone with it.

The script reads the ``alive`` keys it is not given in KEYS: fine on one Redis
(or a primary with replicas), not on Redis Cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from server.cluster.keys import Keys, text

_ENTER = """
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1 then return {'queued'} end
if redis.call('EXISTS', ARGV[4] .. ARGV[2]) == 1 then return {'matched'} end
while true do
    local head = redis.call('LPOP', KEYS[1])
    if not head then break end
    local space = string.find(head, ' ', 1, true)
    local node = string.sub(head, 1, space - 1)
    local other = string.sub(head, space + 1)
    redis.call('SREM', KEYS[2], other)
    if redis.call('EXISTS', ARGV[3] .. node) == 1 then
        redis.call('SET', ARGV[4] .. ARGV[2], '1', 'PX', ARGV[5])
        redis.call('SET', ARGV[4] .. other, '1', 'PX', ARGV[5])
        return {'paired', head}
    end
end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return {'waiting'}
"""
"""KEYS queue, queued set; ARGV 'node session', session, the alive keys' prefix, the matched
keys' prefix, how long a match holds its players (ms)."""
_LEAVE = """
local removed = redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('SREM', KEYS[2], ARGV[2])
return removed
"""


@dataclass(frozen=True)
class Waiting:
    """A player in the queue: the node that holds their connection, and their session."""

    node: str
    session: str

    @property
    def entry(self) -> bytes:
        return f"{self.node} {self.session}".encode()


@dataclass(frozen=True)
class Entered:
    """What entering did: ``paired`` (with ``opponent``), ``waiting``, ``queued`` (already
    waiting: nothing changed) or ``matched`` (just paired, not yet seated: refused)."""

    outcome: str
    opponent: Waiting | None = None


MATCHED_FOR = 30.0
"""Seconds a paired player cannot queue again unless their node says they are seated
(``seated``): a second quick-match request racing the first is refused, not paired twice."""


class MatchQueue:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._enter = redis.register_script(_ENTER)
        self._leave = redis.register_script(_LEAVE)

    async def enter(self, pool: str, player: Waiting) -> Entered:
        """Pair ``player`` with the longest waiting player of ``pool`` on a live node, or
        queue them."""
        reply = await self._enter(
            keys=[self.keys.queue(pool), self.keys.queued(pool)],
            args=[
                player.entry,
                player.session,
                self.keys.alive(""),
                self.keys.matched(""),
                int(MATCHED_FOR * 1000),
            ],
        )
        outcome = reply[0].decode()
        if outcome != "paired":
            return Entered(outcome)
        node, session = reply[1].decode().split(" ", 1)
        return Entered(outcome, Waiting(node, session))

    async def seated(self, session: str) -> None:
        """The session sits in its matched game now: it may queue again when that ends."""
        await self.redis.delete(self.keys.matched(session))

    async def leave(self, pool: str, player: Waiting) -> bool:
        """Take ``player`` out of the queue; False if they were not in it (paired already)."""
        removed = await self._leave(
            keys=[self.keys.queue(pool), self.keys.queued(pool)],
            args=[player.entry, player.session],
        )
        return bool(removed)

    async def waiting(self, pool: str) -> list[Waiting]:
        """Who waits in ``pool``, longest first."""
        entries = await self.redis.lrange(self.keys.queue(pool), 0, -1)
        return [Waiting(*text(e).split(" ", 1)) for e in entries]
