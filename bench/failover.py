"""Failover time of real games whose node is SIGKILLed, over real Redis and PostgreSQL.

Run from the repository root (needs redis-server and PostgreSQL installed, as the tests do)::

    python bench/failover.py              # 20 kills of real server nodes, lease TTL 3 s
    python bench/failover.py --kills 5 --ttl 1
    python bench/failover.py --protocol   # the ownership protocol alone (below)

Real games (the default): a cluster of two server nodes and a load balancer
(``deploy/localcluster.py``). Each round two players open a game on one node
(connected to it directly) and make four moves, each acknowledged to both; that
node is SIGKILLed; the players reconnect through the load balancer (every 50 ms
until they are in), resume with their tokens, and the player to move moves. The
time is from the SIGKILL to that move's state received: the game playable again.
Every round checks the four acknowledged moves are there. The killed node is then
started again, so each round has two nodes, the victims alternating.

With ``--protocol``, each round starts a stand-in owner node as a process of its own
(tests/server/cluster/owner_node.py: lease, fence, one committed move at a time,
"ack N" after each), SIGKILLs it after 10 acknowledged moves, and takes the room
over as another node would (server.cluster.ownership), trying every 20 ms. It
prints the time from the kill to the room loaded by its new owner, median and
worst, and checks every round that each acknowledged move is there.

The time is bounded by the lease: the dead owner's lease runs for up to one TTL
after its last renewal (renewals come every third of it). The real games' time adds
the players noticing, reconnecting, resuming and the first move's round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

from deploy.localcluster import LocalCluster  # noqa: E402
from protocol.messages import Create, Join, Joined, MoveRequest, State  # noqa: E402
from server.cluster.keys import Keys, connect  # noqa: E402
from server.cluster.leases import DEFAULT_TTL, Leases  # noqa: E402
from server.cluster.ownership import Ownership  # noqa: E402
from server.pgstore import PgStore  # noqa: E402
from tests.server.cluster.owner_node import move  # noqa: E402
from tests.server.cluster.test_node import resume_anywhere  # noqa: E402
from tests.services import PostgresServer, RedisServer  # noqa: E402
from tests.wsclient import Client  # noqa: E402

ACKS = 10
GAME = "e2 e8 e3 e7 e4 e6".split()
"""Moves of each round's game: four before the kill, the fifth after it."""
BEFORE_KILL = 4
NAMES = ("alice", "bob")
RETRY_EVERY = 0.05


async def game_round(cluster: LocalCluster, victim: int) -> float:
    """Seat two players on node ``victim``, play, SIGKILL it: seconds until a move goes
    through again, the players having come back through the load balancer."""
    node = cluster.servers[victim]
    alice, bob = await Client.connect(node.url, "alice"), await Client.connect(node.url, "bob")
    await alice.send(Create())
    code = (await alice.expect(Joined)).room
    await bob.send(Join(room=code))
    await bob.expect(Joined)
    players = [alice, bob]
    for ply, step in enumerate(GAME[:BEFORE_KILL]):
        await players[ply % 2].send(MoveRequest(move=step, ply=ply))
        for player in players:
            while (await player.state()).ply != ply + 1:
                pass
    await asyncio.to_thread(node.stop, signal.SIGKILL)
    killed = time.monotonic()
    pairs = zip(players, NAMES, strict=True)
    back = [await resume_anywhere(cluster.url, p.welcome, n, 30) for p, n in pairs]
    mover = back[BEFORE_KILL % 2]
    while True:
        await mover.send(MoveRequest(move=GAME[BEFORE_KILL], ply=BEFORE_KILL))
        state = await _state_or_error(mover)
        if state is not None and state.ply == BEFORE_KILL + 1:
            break
        await asyncio.sleep(RETRY_EVERY)
    took = time.monotonic() - killed
    assert state.moves[: BEFORE_KILL + 1] == GAME[: BEFORE_KILL + 1], f"moves lost: {state.moves}"
    for player in players + back:
        await player.close()
    await asyncio.to_thread(node.start)
    return took


async def _state_or_error(client: Client) -> State | None:
    """The next state, skipping other messages; None on an error reply."""
    while True:
        message = await client.recv(10.0)
        if isinstance(message, State):
            return message
        if type(message).__name__ == "Error":
            return None


async def run_games(kills: int, ttl: float) -> list[float]:
    cluster = LocalCluster(nodes=2, lease_ttl=ttl, node_args=("--log-level", "WARNING"))
    async with cluster.running():
        return [await game_round(cluster, n % 2) for n in range(kills)]


async def one_round(redis_url: str, postgres_url: str, code: str, ttl: float) -> float:
    owner = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.server.cluster.owner_node",
        redis_url, postgres_url, "bench:", code, str(ttl),
        stdout=asyncio.subprocess.PIPE, cwd=_ROOT,
    )  # fmt: skip
    assert owner.stdout is not None
    acked = 0
    while acked < ACKS:
        line = (await owner.stdout.readline()).decode()
        if not line:
            raise RuntimeError("the owner node exited")
        if line.startswith("ack "):
            acked = int(line.split()[1])
    owner.kill()
    killed = time.monotonic()
    rest = (await owner.stdout.read()).decode().split()
    acked = max([acked] + [int(w) for w in rest if w.isdigit()])
    await owner.wait()
    store = PgStore(postgres_url)
    await store.open()
    redis = connect(redis_url)
    ownership = Ownership(store, Leases(redis, Keys("bench:"), "taker", ttl=ttl))
    while (taken := await ownership.take_over(code)) is None:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    took = time.monotonic() - killed
    assert taken.room is not None
    assert taken.room.actions[:acked] == [move(n) for n in range(1, acked + 1)], "moves lost"
    await ownership.hand_over(taken.lease)
    await store.close()
    await redis.aclose()
    return took


async def run(kills: int, ttl: float) -> list[float]:
    redis, postgres = RedisServer().start(), PostgresServer().start()
    try:
        return [await one_round(redis.url, postgres.url(), f"room{n}", ttl) for n in range(kills)]
    finally:
        redis.close()
        postgres.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--ttl", type=float, default=DEFAULT_TTL, help="lease TTL, seconds")
    parser.add_argument(
        "--protocol", action="store_true", help="the ownership protocol alone, no server"
    )
    args = parser.parse_args(argv)
    if args.protocol:
        times = asyncio.run(run(args.kills, args.ttl))
        what = "kill -> room loaded by its new owner"
    else:
        times = asyncio.run(run_games(args.kills, args.ttl))
        what = "kill -> the game's next move played through the load balancer"
    print(f"failover over {len(times)} SIGKILLs, lease TTL {args.ttl:.1f} s, no move lost:")
    print(
        f"  {what}: median {statistics.median(times):.2f} s, "
        f"worst {max(times):.2f} s, best {min(times):.2f} s (target: playable within 5 s)"
    )


if __name__ == "__main__":
    main()
