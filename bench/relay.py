"""What the cluster's relay adds to a player's latency (docs/cluster.md, "The relay").

Starts a local cluster (``deploy.localcluster``: Redis, PostgreSQL, two nodes on
127.0.0.1), then plays ``--games`` games one after the other, each with one player on the
room's node and one on the other node, served through the relay. Prints, for both, a
move's round trip (from sending the move to the mover's new state) and a ``join``'s (from
sending it to ``joined``: the relayed one includes locating the room and opening the node
link), median, 90th and 99th percentiles, and the difference.

    .venv/bin/python bench/relay.py [--games 20]

On a shared machine the figures move with the load: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deploy.localcluster import LocalCluster
from protocol.messages import Create, Join, Joined, MoveRequest, State
from tests.wsclient import Client

GAME = "e2 d9 e3 d8 e4 a6h e5 d7 e6 d6 e7 d5 e8 d4 e9".split()


async def state_at(client: Client, ply: int) -> State:
    state = await client.state()
    while state.ply != ply:
        state = await client.state()
    return state


async def one_game(direct_url: str, relayed_url: str, joins: dict[str, list[float]],
                   moves: dict[str, list[float]]) -> None:  # fmt: skip
    host = await Client.connect(direct_url, "direct")
    await host.send(Create())
    room = (await host.expect(Joined)).room
    guest = await Client.connect(relayed_url, "relayed")
    started = time.perf_counter()
    await guest.send(Join(room=room))
    await guest.expect(Joined)
    joins["relayed"].append(time.perf_counter() - started)
    watcher = await Client.connect(direct_url, "watcher")
    started = time.perf_counter()
    await watcher.send(Join(room=room))  # refused (room full), but answered by the room
    await watcher.recv()
    joins["direct"].append(time.perf_counter() - started)
    players = [host, guest]
    for ply, move in enumerate(GAME):
        mover = players[ply % 2]
        started = time.perf_counter()
        await mover.send(MoveRequest(move=move, ply=ply))
        await state_at(mover, ply + 1)
        moves["direct" if mover is host else "relayed"].append(time.perf_counter() - started)
        await state_at(players[1 - ply % 2], ply + 1)
    await asyncio.gather(host.close(), guest.close(), watcher.close())


def line(what: str, samples: list[float]) -> str:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return (
        f"  {what:8} n={len(samples):4}  median {1000 * statistics.median(samples):7.2f} ms"
        f"  p90 {pick(0.9):7.2f} ms  p99 {pick(0.99):7.2f} ms"
    )


async def main(games: int) -> None:
    joins: dict[str, list[float]] = {"direct": [], "relayed": []}
    moves: dict[str, list[float]] = {"direct": [], "relayed": []}
    async with LocalCluster(nodes=2).running() as cluster:
        direct, relayed = (f"ws://127.0.0.1:{node.port}" for node in cluster.servers)
        for _ in range(games):
            await one_game(direct, relayed, joins, moves)
    for title, figures in (("move round trip", moves), ("join round trip", joins)):
        print(title)
        for what in ("direct", "relayed"):
            print(line(what, figures[what]))
        added = statistics.median(figures["relayed"]) - statistics.median(figures["direct"])
        print(f"  added by the relay (medians): {1000 * added:.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    asyncio.run(main(parser.parse_args().games))
