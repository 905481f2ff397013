"""Garbage collections on a clock, so that each one is short.

CPython starts a young collection when allocations minus deallocations of
tracked objects pass a threshold. On a busy server that count says little
about the work waiting: every finished game frees hundreds of objects and takes
them off the count, while the young generation keeps every object made since
the last collection. Measured with 1,000 paced games (bench/load.py, the
server's own ``gc.callbacks``), the young generation held 30,000 to 100,000
objects when the threshold (10,000) finally fired, and collecting them stopped
the event loop for 20-100 ms; the middle generation, collected every tenth
time, held 80,000-90,000 and took 50-90 ms.

So the server collects on a clock instead: the young generation every
``YOUNG_EVERY`` seconds (a few hundred objects, well under a millisecond), the
middle one every ``MIDDLE_EVERY``-th tick, and everything every ``FULL_EVERY``
seconds. A full collection is the one long pause left: it walks every object
not frozen at start-up, 87,000 with 1,000 games open (2,000 connections), for
65-100 ms of CPU. It finds next to nothing: run every 4 s through a soak where
players reconnect after every other game, each one collected 0 objects, as
rooms, sessions and connections free theirs by reference counting. So it runs
once an hour, and a cycle that outlives the middle generation waits that long
for its memory. The interpreter's own thresholds stay as a backstop for bursts
of allocations, but never start a full collection themselves
(``server.__main__.tune_interpreter``).
"""

from __future__ import annotations

import asyncio
import gc
import time

YOUNG_EVERY = 0.05
"""Seconds between two young collections."""
MIDDLE_EVERY = 2
"""Every this many ticks, the middle generation is collected too."""
FULL_EVERY = 3600.0
"""Seconds between two full collections."""


class Collections:
    """Runs the collections from the event loop's timer until ``stop``."""

    def __init__(
        self,
        young_every: float = YOUNG_EVERY,
        middle_every: int = MIDDLE_EVERY,
        full_every: float = FULL_EVERY,
    ) -> None:
        self.young_every = young_every
        self.middle_every = middle_every
        self.full_every = full_every
        self.ticks = 0
        self._next_full = time.monotonic() + full_every
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Collect from the running event loop's timer from now on."""
        self._next_full = time.monotonic() + self.full_every
        self._schedule()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.young_every, self._tick)

    def tick(self) -> int:
        """Run this tick's collection; the generation collected (benchmarks call it too)."""
        self.ticks += 1
        now = time.monotonic()
        if now >= self._next_full:
            self._next_full = now + self.full_every
            generation = 2
        elif self.ticks % self.middle_every == 0:
            generation = 1
        else:
            generation = 0
        gc.collect(generation)
        return generation

    def _tick(self) -> None:
        self.tick()
        self._schedule()
