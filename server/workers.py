"""The worker processes that think for the server: the computer's moves, and analysis.

Searches never run in the event loop. They wait in one small queue of our own
and go to the processes one at a time as workers free up, so that we, not the
executor's first-come-first-served queue, decide who goes next:

- a lower ``priority`` first (a computer's move in a game in progress before an
  analysis someone asked for);
- then the owner with the fewest searches running (an owner is a room, or a
  session: whoever the work is for), and among those the one served least
  recently, so owners take turns and a room that queued many long searches
  cannot keep every worker while another waits;
- then the oldest.

Bounds: each owner may have ``per_owner`` searches waiting, and the queue holds
at most ``queued`` in all; ``submit`` raises ``PoolFull`` past either. A
computer's move in a game already going is never refused (there is at most one
per room), which is why the server refuses *new* computer games while
``saturated``.

Usage (from the event loop)::

    future = pool.submit("room:k3m9", functools.partial(search, position), MOVE)
    result = await future        # PoolFull is raised by submit, not here
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import multiprocessing
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

MOVE = 0
"""Priority of a computer's move in a game in progress."""
ANALYSIS = 1
"""Priority of work a player asked for that no clock waits on (analysis, hints)."""


class PoolFull(RuntimeError):
    """The owner, or the whole pool, has as much waiting as it may; the message says which."""


def default_workers() -> int:
    """One process per core this server may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(order=True)
class _Job:
    priority: int
    number: int
    owner: str = field(compare=False)
    work: Callable[[], Any] = field(compare=False)
    future: asyncio.Future[Any] = field(compare=False)
    wanted: Callable[[], bool] = field(compare=False)


class WorkerPool:
    """``workers`` processes (started on first use) with a fair, bounded queue in front."""

    def __init__(self, workers: int = 0, per_owner: int = 4, queued: int = 0) -> None:
        self.workers = workers or default_workers()
        self.per_owner = per_owner
        self.queued_limit = queued or 16 * self.workers
        self._waiting: list[_Job] = []
        self._running: Counter[str] = Counter()
        self._served: dict[str, int] = {}
        """When each owner with work waiting or running last got a worker."""
        self._numbers = itertools.count()
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False

    # -- what the server asks -----------------------------------------------------

    @property
    def pending(self) -> int:
        """Searches waiting or running."""
        return len(self._waiting) + self._running.total()

    @property
    def saturated(self) -> bool:
        """Whether new long-running work (a new computer game) should be refused: there is
        already more than ``SATURATION`` searches' worth of work per worker."""
        return self.pending >= SATURATION * self.workers

    def waiting_for(self, owner: str) -> int:
        return sum(1 for job in self._waiting if job.owner == owner)

    def submit(
        self,
        owner: str,
        work: Callable[[], Any],
        priority: int = ANALYSIS,
        wanted: Callable[[], bool] = lambda: True,
    ) -> asyncio.Future[Any]:
        """Queue ``work`` (picklable, run in a worker process) for ``owner``; its result.

        ``wanted`` is asked again just before the work starts: False drops it (the
        future is cancelled), so a search for a game that moved on costs nothing.
        Raises PoolFull when the owner, or the pool, has too much waiting; a move
        (priority ``MOVE``) is refused only for its owner's bound.
        """
        if self._closed:
            raise PoolFull("the server is stopping")
        self._drop_unwanted(owner)
        if self.waiting_for(owner) >= self.per_owner:
            raise PoolFull(f"at most {self.per_owner} searches may wait for one player or room")
        if priority > MOVE and len(self._waiting) >= self.queued_limit:
            raise PoolFull("the server's computer players are all busy; try again in a minute")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Job(priority, next(self._numbers), owner, work, future, wanted))
        self._dispatch()
        return future

    def shutdown(self) -> None:
        self._closed = True
        for job in self._waiting:
            job.future.cancel()
        self._waiting.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    async def stopped(self) -> None:
        """After ``shutdown``: wait (in a thread) for the searches still running, a few
        seconds at most, and the pool's own thread. Leaving it running at exit made the
        interpreter's exit hook write to its closed pipe, now and then: a traceback."""
        if self._executor is not None:
            await asyncio.to_thread(self._executor.shutdown, wait=True)

    # -- inside ---------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Start waiting jobs while a worker is free, the fairest first."""
        while self._waiting and self._running.total() < self.workers:
            job = min(self._waiting, key=self._rank)
            self._waiting.remove(job)
            if job.future.cancelled() or not job.wanted():
                job.future.cancel()
                continue
            self._start(job)

    def _drop_unwanted(self, owner: str) -> None:
        """Cancel the owner's waiting jobs that are no longer wanted (a game moved on)."""
        for job in [job for job in self._waiting if job.owner == owner and not job.wanted()]:
            self._waiting.remove(job)
            job.future.cancel()

    def _rank(self, job: _Job) -> tuple[int, int, int, int]:
        served = self._served.get(job.owner, -1)
        return job.priority, self._running[job.owner], served, job.number

    def _start(self, job: _Job) -> None:
        if self._executor is None:
            # spawn, not fork: a forked copy of a running event loop and its sockets is unsafe.
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_leave_interrupts_to_the_server
            )
        self._running[job.owner] += 1
        self._served[job.owner] = next(self._numbers)
        loop = asyncio.get_running_loop()
        done = self._executor.submit(job.work)
        done.add_done_callback(functools.partial(_back_to, loop, self._finish, job))

    def _finish(self, job: _Job, ended: Future[Any]) -> None:
        self._running[job.owner] -= 1
        if not self._running[job.owner]:
            del self._running[job.owner]
            if not self.waiting_for(job.owner):
                del self._served[job.owner]  # nothing left: forget it (owners come and go)
        if not job.future.done():
            if ended.cancelled():
                job.future.cancel()
            elif (error := ended.exception()) is not None:
                job.future.set_exception(error)
            else:
                job.future.set_result(ended.result())
        if not self._closed:
            self._dispatch()


def _back_to(
    loop: asyncio.AbstractEventLoop,
    finish: Callable[[_Job, Future[Any]], None],
    job: _Job,
    ended: Future[Any],
) -> None:
    """Hand a finished search to the event loop (from the executor's thread), unless the
    loop is already gone (a search that outlived the server)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(finish, job, ended)


SATURATION = 4
"""Searches (waiting or running) per worker beyond which new computer games are refused."""


def address_share(workers: int) -> int:
    """Rooms against the computer one IP address may hold: half of what saturates
    ``workers`` (0: one per core), so that one address alone cannot keep every other
    player's new computer game refused."""
    return max(1, SATURATION * (workers or default_workers()) // 2)


PARENT_CHECK = 1.0
"""Seconds between a worker's looks at whether the server is still its parent."""


def _leave_interrupts_to_the_server() -> None:
    """In each worker: Ctrl-C in a terminal interrupts every process of the server; the
    server stops its workers itself (a worker interrupted printed a traceback). And the
    worker ends when the server dies without stopping it (SIGKILL): orphaned workers went
    on for minutes, and multiprocessing's resource tracker with them (it ends once nobody
    holds its pipe)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    threading.Thread(target=_exit_with, args=(parent,), name="server-watch", daemon=True).start()


def _exit_with(parent: int) -> None:
    """Exit the worker once ``parent`` is no longer its parent: it died, the worker was
    handed to another process (init)."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    os._exit(1)
