"""The computer's worker pool: real processes, a fair order, bounded queues."""

from __future__ import annotations

import asyncio
import functools
import signal
import time

import pytest

from protocol.messages import AiSpec, Create, ErrorCode, Joined, MoveRequest, State
from server.app import GameServer
from server.config import Config
from server.workers import ANALYSIS, MOVE, PoolFull, WorkerPool
from tests.process import ServerProcess
from tests.wsclient import Client


def nap(seconds: float) -> functools.partial[None]:
    return functools.partial(time.sleep, seconds)


async def test_a_second_owner_goes_before_the_first_owners_backlog() -> None:
    pool = WorkerPool(workers=1)
    await pool.submit("warm-up", nap(0))  # the worker process is started
    finished: list[str] = []

    async def run(owner: str, name: str) -> None:
        await pool.submit(owner, nap(0.2), MOVE)
        finished.append(name)

    greedy = [asyncio.create_task(run("room:a", f"a{n}")) for n in range(3)]
    await asyncio.sleep(0.05)  # a0 is running, a1 and a2 wait
    other = asyncio.create_task(run("room:b", "b0"))
    await asyncio.gather(*greedy, other)
    pool.shutdown()
    assert finished == ["a0", "b0", "a1", "a2"]


async def test_an_address_that_thinks_little_goes_before_those_that_think_long() -> None:
    """Eight addresses playing level 5 (2 s a search) made a level-1 player wait 7.6 s a
    move when addresses took turns a search each (an outside review): the pool shares its
    workers' time, so a group whose searches are short goes before groups whose are long."""
    pool = WorkerPool(workers=1)
    await pool.submit("warm-up", nap(0), MOVE, group="quick")  # measured: a short search
    finished: list[str] = []

    async def run(group: str, seconds: float) -> None:
        await pool.submit(f"room:{group}", nap(seconds), MOVE, group=group)
        finished.append(group)

    running = asyncio.create_task(run("long0", 0.3))
    await asyncio.sleep(0.05)  # long0 runs
    longs = [asyncio.create_task(run(f"long{n}", 0.1)) for n in (1, 2, 3)]
    await asyncio.sleep(0.05)
    quick = asyncio.create_task(run("quick", 0.01))  # came last, goes next
    await asyncio.gather(running, *longs, quick)
    pool.shutdown()
    assert finished == ["long0", "quick", "long1", "long2", "long3"]


async def test_moves_go_before_analysis() -> None:
    pool = WorkerPool(workers=1)
    finished: list[str] = []

    async def run(owner: str, priority: int, name: str) -> None:
        await pool.submit(owner, nap(0.05), priority)
        finished.append(name)

    first = asyncio.create_task(run("x", ANALYSIS, "running"))
    await asyncio.sleep(0)
    later = [
        asyncio.create_task(run("y", ANALYSIS, "analysis")),
        asyncio.create_task(run("z", MOVE, "move")),
    ]
    await asyncio.gather(first, *later)
    pool.shutdown()
    assert finished == ["running", "move", "analysis"]


async def test_queues_are_bounded_per_owner_and_in_all() -> None:
    pool = WorkerPool(workers=1, per_owner=2, queued=3)
    futures = [pool.submit("busy", nap(0.3))]  # running
    futures += [pool.submit("a", nap(0)), pool.submit("a", nap(0))]
    with pytest.raises(PoolFull, match="one player or room"):
        pool.submit("a", nap(0))
    futures.append(pool.submit("b", nap(0)))
    with pytest.raises(PoolFull, match="all busy"):
        pool.submit("c", nap(0), ANALYSIS)
    futures.append(pool.submit("c", nap(0), MOVE))  # a game's move is never refused
    assert pool.pending == 5
    assert pool.saturated  # four per worker
    await asyncio.gather(*futures)
    pool.shutdown()


async def test_work_no_longer_wanted_never_runs() -> None:
    pool = WorkerPool(workers=1)
    blocker = pool.submit("x", nap(0.2))
    dropped = pool.submit("y", nap(30), wanted=lambda: False)
    await blocker
    # Timed from the moment the worker is free (starting it can take seconds on a
    # loaded machine): had the unwanted work run, it would hold the worker 30 s.
    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await dropped
    assert time.monotonic() - started < 10
    pool.shutdown()


async def test_new_computer_games_are_refused_while_the_workers_are_saturated() -> None:
    config = Config(port=0, rate=1000, burst=1000, ai_workers=1, trusted_proxies="127.0.0.1")
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        # Five addresses: one address alone may hold 2 computer rooms here (half of 4).
        players = [await Client.connect(url, f"p{n}", address=f"10.0.0.{n}") for n in range(5)]
        for player in players[:4]:  # four long searches: four per worker is saturation
            await player.send(Create(ai=AiSpec(level=5, seconds=3)))
            await player.expect(Joined)
            await player.state()
            await player.send(MoveRequest(move="e2", ply=0))
            await player.state()
        assert server.workers.saturated
        late = players[4]
        await late.send(Create(id="late", ai=AiSpec(level=1)))
        error = await late.error(ErrorCode.SERVER_BUSY)
        assert error.id == "late"
        assert "busy" in error.message
        await late.send(Create(id="human"))  # a game against a person is still fine
        assert (await late.expect(Joined)).id == "human"
        for player in players:
            await player.close()


async def test_one_address_holds_half_of_what_saturates_the_workers() -> None:
    """With one worker (saturated at 4 searches), one address plays the computer in 2 rooms:
    alone, it could otherwise keep every other player's new computer game refused."""
    config = Config(port=0, ai_workers=1, trusted_proxies="127.0.0.1")
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        players = [await Client.connect(url, f"p{n}", address="10.0.0.9") for n in range(3)]
        for player in players[:2]:
            await player.send(Create(ai=AiSpec(level=1)))
            await player.expect(Joined)
        await players[2].send(Create(id="third", ai=AiSpec(level=1)))
        error = await players[2].error(ErrorCode.TOO_MANY_ROOMS)
        assert error.message.startswith("your address already plays the computer in 2 rooms")
        for player in players:
            await player.close()


async def test_ctrl_c_stops_a_server_with_workers_without_a_traceback() -> None:
    """A terminal's Ctrl-C interrupts the whole process group: the workers too."""
    server = await ServerProcess("", "--ai-workers", "2").start()
    client = await Client.connect(server.url, "alice")
    await client.send(Create(ai=AiSpec(level=3)))
    await client.expect(Joined)
    await client.send(MoveRequest(move="e2", ply=0))
    while (await client.state()).ply < 2:  # until the computer (a worker) has answered
        pass
    await client.close()
    assert await server.stop(signal.SIGINT, group=True) == 0
    log = server.log.decode()
    assert "KeyboardInterrupt" not in log
    assert "Traceback" not in log


async def test_long_searches_of_a_few_addresses_leave_a_worker_for_the_others() -> None:
    """An outside review: one address's four rooms asking the computer for 30 s moves held
    every worker, and another address's level-1 move waited 55 s; two such addresses got
    every new computer game refused. Here two addresses, two rooms each, ask for 20 s moves
    on two workers: a third address starts a game and gets its level-1 moves at once."""
    config = Config(port=0, rate=1000, burst=1000, ai_workers=2, trusted_proxies="127.0.0.1")
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        hogs = [await Client.connect(url, f"hog{n}", address=f"10.0.1.{n % 2}") for n in range(4)]
        for hog in hogs:
            await hog.send(Create(ai=AiSpec(level=5, seconds=20)))
            await hog.expect(Joined)
            await hog.state()
            await hog.send(MoveRequest(move="e2", ply=0))
            await hog.state()
        victim = await Client.connect(url, "victim", address="10.0.2.1")
        await victim.send(Create(id="game", ai=AiSpec(level=1)))
        assert (await victim.expect(Joined)).id == "game"  # not refused as busy
        state = await victim.state()
        for ply in (0, 2):  # a step towards the goal (the computer may have walled one off)
            move = max(state.legal_pawn_moves, key=lambda square: int(square[1:]))
            await victim.send(MoveRequest(move=move, ply=ply))
            await victim.state()
            started = time.monotonic()
            while (state := await victim.expect(State, within=30)).ply < ply + 2:
                pass
            # A worker was free (before, a 20 s wait); a margin for starting one on a busy machine.
            assert time.monotonic() - started < 8
        for client in [*hogs, victim]:
            await client.close()


async def test_a_group_runs_on_half_the_workers_and_long_searches_likewise() -> None:
    pool = WorkerPool(workers=2)
    started: list[str] = []

    def submit(owner: str, group: str, long: bool = False) -> asyncio.Future[None]:
        future = pool.submit(owner, nap(0.3), MOVE, group=group, long=long)
        started.append(owner)
        return future

    first = [submit("room:a1", "address:a"), submit("room:a2", "address:a")]
    await asyncio.sleep(0.05)
    assert (pool.pending, pool._busy) == (2, 1)  # a's second search waits for its first
    long = [submit("room:b1", "address:b", long=True), submit("room:c1", "address:c", True)]
    await asyncio.sleep(0.05)
    assert pool._busy == 2  # b's long one took the free worker; c's waits (half for long)
    assert not pool.saturated  # three addresses, eight allowed
    await asyncio.gather(*first, *long)
    pool.shutdown()
