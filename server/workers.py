"""The worker processes that think for the server: the computer's moves, and analysis.

Searches never run in the event loop. They wait in one small queue of our own
and go to the processes one at a time as workers free up, so that we, not the
executor's first-come-first-served queue, decide who goes next:

- a lower ``priority`` first (a computer's move in a game in progress before an
  analysis someone asked for);
- then the group with the fewest searches running (a group is an address: all the
  rooms against the computer that one address opened, and their hints), and among
  those the search that would be done first in a fair share of the workers' time
  (start-time fair queueing: each search is tagged, as it comes, with when its group's
  share would have run it, from the group's searches before it, or from the share's
  clock if it has none, so no group banks time while idle, plus what a search of its
  group takes, as measured). Addresses that think little go before those that think
  long: eight addresses playing level 5 (2 s a search) made a level-1 player wait 7.6 s
  a move when the addresses took turns a search each (an outside review);
- then the group served least recently;
- then the owner served least recently (an owner is a room, or a session: whoever
  the work is for), so one address's rooms take turns among themselves;
- then the oldest.

And two caps, so that there is always a worker for someone else (an outside
review held every worker with four rooms of one address asking 30 s searches,
and another address's level-1 move waited 55 s): a group runs on at most half
the workers at once (``per_group``), and searches longer than ``SHORT_SEARCH``
seconds (a ``computer.seconds`` the player chose) run on at most half the
workers in all. Each cap leaves a worker idle rather than break it; with one
worker there is nothing to share.

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
from collections import Counter, OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

SHORT_SEARCH = 2.0
"""Seconds a search may be given and still count as short: the levels' own budgets (level 5
thinks 2 s) and hints."""
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
    group: str = field(compare=False)
    long: bool = field(compare=False)
    start: float = field(compare=False)
    """When its group's fair share of the workers would start it (``WorkerPool._rank``)."""
    done_by: float = field(compare=False)
    """...and have done it: ``start`` and what a search of its group takes."""
    work: Callable[[], Any] = field(compare=False)
    future: asyncio.Future[Any] = field(compare=False)
    wanted: Callable[[], bool] = field(compare=False)


class WorkerPool:
    """``workers`` processes (started on first use) with a fair, bounded queue in front."""

    def __init__(self, workers: int = 0, per_owner: int = 4, queued: int = 0) -> None:
        self.workers = workers or default_workers()
        self.per_owner = per_owner
        self.queued_limit = queued or 16 * self.workers
        self.per_group = max(1, self.workers // 2)
        """Searches one group may run at once."""
        self.long_at_once = max(1, self.workers // 2)
        """Long searches (over ``SHORT_SEARCH`` seconds) that may run at once, all groups."""
        self._waiting: list[_Job] = []
        self._running: Counter[str] = Counter()
        """Searches running, by owner and by group (the two kinds of names never meet)."""
        self._long = 0
        self._served: dict[str, int] = {}
        """When each owner and group with work waiting or running last got a worker."""
        self._last: dict[str, float] = {}
        """The ``done_by`` of the last search of each group with work waiting or running."""
        self._virtual = 0.0
        """The fair share's clock: the ``start`` of the search started last."""
        self._cost: OrderedDict[str, float] = OrderedDict()
        """Seconds a search of each group takes, as measured (a moving average)."""
        self._numbers = itertools.count()
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False

    # -- what the server asks -----------------------------------------------------

    @property
    def pending(self) -> int:
        """Searches waiting or running."""
        return len(self._waiting) + self._busy

    @property
    def saturated(self) -> bool:
        """Whether new long-running work (a new computer game) should be refused: more than
        ``SATURATION`` groups per worker have searches waiting or running. Counted by group,
        not search: a group's searches take turns among themselves, so a new address waits
        for the others' turns, not for their number of rooms (two addresses with four rooms
        each refused everybody else's computer games)."""
        groups = {job.group for job in self._waiting}
        groups.update(name for name in self._running if name.startswith(GROUP))
        return len(groups) >= SATURATION * self.workers

    def waiting_for(self, owner: str) -> int:
        return sum(1 for job in self._waiting if job.owner == owner)

    def submit(
        self,
        owner: str,
        work: Callable[[], Any],
        priority: int = ANALYSIS,
        wanted: Callable[[], bool] = lambda: True,
        group: str | None = None,
        long: bool = False,
    ) -> asyncio.Future[Any]:
        """Queue ``work`` (picklable, run in a worker process) for ``owner``, in ``group``'s
        share (None: a group of its own); its result. ``long``: it may run past
        ``SHORT_SEARCH`` seconds.

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
        name = GROUP + (group or owner)
        # After the group's searches still to do, or from the share's clock (none banked).
        start = max(self._virtual, self._last.get(name, self._virtual))
        done_by = self._last[name] = start + self._cost.get(name, FIRST_COST)
        job = _Job(
            priority, next(self._numbers), owner, name, long, start, done_by, work, future,
            wanted,
        )  # fmt: skip
        self._waiting.append(job)
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
        while self._waiting and self._busy < self.workers:
            allowed = [job for job in self._waiting if self._may_start(job)]
            if not allowed:
                return  # what waits is over a cap: it goes when one of its own ends
            job = min(allowed, key=self._rank)
            self._waiting.remove(job)
            if job.future.cancelled() or not job.wanted():
                job.future.cancel()
                self._idle(job.group)
                continue
            self._start(job)

    def _drop_unwanted(self, owner: str) -> None:
        """Cancel the owner's waiting jobs that are no longer wanted (a game moved on)."""
        for job in [job for job in self._waiting if job.owner == owner and not job.wanted()]:
            self._waiting.remove(job)
            job.future.cancel()
            self._idle(job.group)

    def _idle(self, group: str) -> None:
        """Forget where ``group`` stands in the fair share once it has nothing left: it
        comes back on the share's clock."""
        if not self._running[group] and all(job.group != group for job in self._waiting):
            self._last.pop(group, None)

    @property
    def _busy(self) -> int:
        """Workers running a search (each is counted under its owner and its group)."""
        return self._running.total() // 2

    def _may_start(self, job: _Job) -> bool:
        if self._running[job.group] >= self.per_group:
            return False
        return not job.long or self._long < self.long_at_once

    def _rank(self, job: _Job) -> tuple[int, int, float, int, int, int]:
        served, group = self._served.get, job.group
        running = self._running[group]
        return (
            job.priority,
            running,
            job.done_by,
            served(group, -1),
            served(job.owner, -1),
            job.number,
        )

    def _start(self, job: _Job) -> None:
        if self._executor is None:
            # spawn, not fork: a forked copy of a running event loop and its sockets is unsafe.
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_leave_interrupts_to_the_server
            )
        self._running[job.owner] += 1
        self._running[job.group] += 1
        self._long += job.long
        self._served[job.owner] = self._served[job.group] = next(self._numbers)
        self._virtual = max(self._virtual, job.start)
        loop = asyncio.get_running_loop()
        done = self._executor.submit(job.work)
        started = time.monotonic()
        done.add_done_callback(functools.partial(_back_to, loop, self._finish, job, started))

    def _charge(self, group: str, seconds: float) -> None:
        """``group`` had a worker for ``seconds``: what its searches take, on average."""
        cost = self._cost.pop(group, None)
        self._cost[group] = seconds if cost is None else cost + (seconds - cost) * COST_WEIGHT
        if len(self._cost) > COSTS_KEPT:
            self._cost.popitem(last=False)  # the least recently measured: a newcomer again

    def _finish(self, job: _Job, started: float, ended: Future[Any]) -> None:
        self._long -= job.long
        self._charge(job.group, time.monotonic() - started)
        for name in (job.owner, job.group):
            self._running[name] -= 1
            if not self._running[name]:
                del self._running[name]
                if not any(name in (other.owner, other.group) for other in self._waiting):
                    del self._served[name]  # nothing left: forget it (owners come and go)
                    self._last.pop(name, None)
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
    finish: Callable[[_Job, float, Future[Any]], None],
    job: _Job,
    started: float,
    ended: Future[Any],
) -> None:
    """Hand a finished search to the event loop (from the executor's thread), unless the
    loop is already gone (a search that outlived the server)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(finish, job, started, ended)


FIRST_COST = 1.0
"""Seconds a search of a group not measured yet is taken to take."""
COST_WEIGHT = 0.3
"""The weight of a group's latest search in its measured cost (a moving average)."""
COSTS_KEPT = 10_000
"""Groups whose searches' cost the pool remembers."""
GROUP = "group:"
"""Prefix of a group's name in the counters, apart from the owners' names."""
SATURATION = 4
"""Searches (waiting or running) per worker beyond which new computer games are refused."""


def address_share(workers: int) -> int:
    """Rooms against the computer one IP address may hold: 2 per worker (0: one per core).
    Its searches take turns within its share of the workers (``WorkerPool``); the cap bounds
    how long each of its own rooms waits for its turn."""
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
