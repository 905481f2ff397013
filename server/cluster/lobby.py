"""The cluster-wide lobby list: every node's listed rooms, in Redis.

Each node keeps its own listed rooms in a hash of its own (room code to the
entry the lobby shows, as bytes), which expires unless the node refreshes it:
the rooms of a node that died leave the list within a TTL. A node remembers
what it published and writes it all again when it finds its hash gone (Redis
restarted and lost it), so the list heals by itself.
"""

from __future__ import annotations

from redis.asyncio import Redis

from server.cluster.keys import Keys, text


class Lobby:
    def __init__(self, redis: Redis, keys: Keys, node: str, ttl: float = 3.0) -> None:
        self.redis = redis
        self.keys = keys
        self.node = node
        self.ttl = ttl
        self.mine: dict[str, bytes] = {}
        """What this node lists, as it last published it."""

    @property
    def _ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    async def publish(self, code: str, entry: bytes) -> None:
        """List (or update) one of this node's rooms."""
        self.mine[code] = entry
        key = self.keys.lobby(self.node)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, code, entry)
            pipe.pexpire(key, self._ttl_ms)
            pipe.sadd(self.keys.nodes(), self.node)
            await pipe.execute()

    async def withdraw(self, code: str) -> None:
        """Take one of this node's rooms off the list."""
        self.mine.pop(code, None)
        await self.redis.hdel(self.keys.lobby(self.node), code)

    async def refresh(self) -> None:
        """Keep this node's entries alive for another TTL; write them all again if Redis
        lost them. Call it every third of the TTL."""
        key = self.keys.lobby(self.node)
        if not self.mine:
            return
        if await self.redis.pexpire(key, self._ttl_ms):
            return
        await self._write_all()

    async def _write_all(self) -> None:
        key = self.keys.lobby(self.node)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping=dict(self.mine))  # type: ignore[arg-type]
            pipe.pexpire(key, self._ttl_ms)
            pipe.sadd(self.keys.nodes(), self.node)
            await pipe.execute()

    async def replace(self, entries: dict[str, bytes]) -> None:
        """Make this node's listed rooms exactly ``entries``, writing only what changed (one
        round trip), and keep them alive for another TTL; everything again if Redis lost
        them. What a node calls every third of the TTL instead of ``refresh``."""
        key = self.keys.lobby(self.node)
        gone = [code for code in self.mine if code not in entries]
        changed = {c: e for c, e in entries.items() if self.mine.get(c) != e}
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.exists(key)
            if gone:
                pipe.hdel(key, *gone)
            if changed:
                pipe.hset(key, mapping=changed)  # type: ignore[arg-type]
            pipe.pexpire(key, self._ttl_ms)
            pipe.sadd(self.keys.nodes(), self.node)
            existed, *_ = await pipe.execute()
        self.mine = dict(entries)  # only once written: a failed write is tried again whole
        if not existed and len(changed) < len(self.mine):
            await self._write_all()  # Redis lost the hash (restarted): write it all again

    async def others(self) -> dict[str, bytes]:
        """Every listed room of every live node but this one: code to entry."""
        return await self.rooms(but=self.node)

    async def rooms(self, but: str | None = None) -> dict[str, bytes]:
        """Every listed room of every live node: code to entry."""
        nodes = sorted(text(n) for n in await self.redis.smembers(self.keys.nodes()))
        nodes = [node for node in nodes if node != but]
        async with self.redis.pipeline(transaction=False) as pipe:
            for node in nodes:
                pipe.hgetall(self.keys.lobby(node))
            hashes = await pipe.execute()
        listed: dict[str, bytes] = {}
        for entries in hashes:
            listed.update({text(code): entry for code, entry in entries.items()})
        return listed
