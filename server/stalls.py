"""The games' clock: the server's monotonic time, less the time its own event loop stalled.

Everything the server times (game clocks, flags, grace periods, countdowns) runs
on one clock, ``StallClock.now``. When the event loop cannot run (a long garbage
collection, a burst of work, the machine taking the CPU away), players' moves
wait in the socket, and a clock that kept running would charge the player to
move for the server's slowness, or let a flag fall that a prompt player would
never have lost. So a heartbeat runs every ``BEAT`` seconds and notes how late
it ran: lateness beyond ``SLACK`` is a stall, and the clock stands still for it.

The clock is exact, not only after the fact: while a stall is still going on
(the heartbeat has not run yet), ``now`` already stands still from ``BEAT +
SLACK`` after the last beat, so a move read as the loop comes back is timed as
of the stall's start, and a flag timer that fires late finds the flag not yet
fallen. At most ``BEAT + SLACK`` (50 ms) of any stall is charged to anyone; the
time of the stall is not charged to any clock, the player's to move included
(PROTOCOL.md, "Clocks"). The heartbeat costs a few microseconds 40 times a
second.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

BEAT = 0.025
"""Seconds between heartbeats."""
SLACK = 0.025
"""A heartbeat this much late is still on time (timers are never exact): lateness beyond it
is a stall."""


class StallClock:
    """Monotonic seconds that stand still while the event loop is stalled."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.monotonic = monotonic
        self.stalled = 0.0
        """Seconds of stalls left out so far (a metric)."""
        self.stalls = 0
        """How many stalls were left out."""
        self.longest = 0.0
        """The longest stall left out, in seconds."""
        self._due = math.inf
        """When the next heartbeat is due (never while it does not run)."""
        self._timer: asyncio.TimerHandle | None = None

    def now(self) -> float:
        """The clock's time: monotonic time less every stall, the current one included."""
        now = self.monotonic()
        return now - self.stalled - max(0.0, now - self._due - SLACK)

    def beat(self) -> None:
        """The heartbeat: note how late it ran (a stall beyond ``SLACK``), due again in
        ``BEAT`` seconds."""
        now = self.monotonic()
        stall = now - self._due - SLACK
        if stall > 0:
            self.stalled += stall
            self.stalls += 1
            self.longest = max(self.longest, stall)
        self._due = now + BEAT

    def start(self) -> None:
        """Run the heartbeat on the running event loop until ``stop``."""
        self.beat()
        self._schedule()

    def stop(self) -> None:
        """Stop the heartbeat: from now on the clock runs on, as before ``start``."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due = math.inf

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_at(loop.time() + BEAT, self._tick)

    def _tick(self) -> None:
        self.beat()
        self._schedule()
