"""A stand-in room owner, as a real process, for the failover and fencing tests.

``python -m tests.server.cluster.owner_node REDIS_URL POSTGRES_URL PREFIX ROOM TTL``
owns ROOM (lease and fence, ``server.cluster.ownership``), keeps its lease, and
writes one move at a time to PostgreSQL, printing ``ack N`` once move N is
committed: what a node would then tell its players. It goes on writing even
after its lease is lost (an owner that has not noticed yet): only the fence
stops it, and then it prints ``fenced`` and exits with status 3.
"""

from __future__ import annotations

import asyncio
import sys

from server.cluster.keys import Keys, connect
from server.cluster.leases import Leases, keeping
from server.cluster.ownership import Ownership
from server.database import Batch, MoveDelta
from server.pgstore import Fenced, PgStore
from tests.server.test_store_contract import room

FENCED_EXIT = 3


def move(n: int) -> str:
    return f"m{n}"


async def main(redis_url: str, postgres_url: str, prefix: str, code: str, ttl: float) -> int:
    store = PgStore(postgres_url)
    await store.open()
    redis = connect(redis_url)
    leases = Leases(redis, Keys(prefix), "owner-node", ttl=ttl)
    lease = await Ownership(store, leases).own(code)
    assert lease is not None, "the room is owned by another node"
    await store.write(Batch(rooms=[(room(code, []), "playing")]))
    print(f"owner epoch {lease.epoch}", flush=True)
    async with keeping(leases, lambda lost: print(f"lost {lost}", flush=True)):
        n = 0
        while True:
            n += 1
            delta = MoveDelta(
                code=code, status="playing", event=n, actions=[move(n)], movers=[n % 2],
                draw_offers=[], clock=None,
            )  # fmt: skip
            try:
                await store.write(Batch(moved=[delta]))
            except Fenced:
                print("fenced", flush=True)
                return FENCED_EXIT
            print(f"ack {n}", flush=True)
            await asyncio.sleep(0.01)


if __name__ == "__main__":
    redis_url, postgres_url, prefix, code, ttl = sys.argv[1:]
    sys.exit(asyncio.run(main(redis_url, postgres_url, prefix, code, float(ttl))))
