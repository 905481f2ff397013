"""Fischer game clocks, kept on the server's monotonic clock.

Each seat has a bank of time; the seat to move spends it; a move adds the
increment to the mover's bank. The clock is told the time on every call, so
it never reads a clock itself and tests drive it exactly.

The first move of each seat is free: the clock starts running once every
seat has moved once (the room decides when), so nobody loses time while the
players find the board.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FischerClock:
    base: float
    """Seconds each seat starts with."""
    increment: float
    """Seconds added to a seat's bank after each of its moves."""
    remaining: list[float]
    """Each seat's bank as of ``since`` (the running seat's is still draining)."""
    running: int | None = None
    """The seat whose time is draining, if any."""
    since: float = 0.0
    """When ``running`` started to drain."""

    @classmethod
    def start(cls, base: float, increment: float, seats: int) -> FischerClock:
        return cls(base, increment, [base] * seats)

    def left(self, seat: int, now: float) -> float:
        """Seconds ``seat`` has at ``now`` (negative once its flag fell)."""
        if seat == self.running:
            return self.remaining[seat] - (now - self.since)
        return self.remaining[seat]

    def deadline(self) -> float | None:
        """When the running seat's time runs out, if a seat is running."""
        if self.running is None:
            return None
        return self.since + self.remaining[self.running]

    def moved(self, seat: int, following: int | None, now: float) -> None:
        """``seat`` moved at ``now``: bank its time, add the increment, run ``following``.

        ``following`` None keeps the clock stopped (the free first moves).
        """
        if self.running == seat:
            self.remaining[seat] = self.left(seat, now) + self.increment
        self.running, self.since = following, now

    def hand_over(self, following: int | None, now: float) -> None:
        """Stop the running seat without an increment and run ``following`` (or nobody)."""
        if self.running is not None:
            self.remaining[self.running] = self.left(self.running, now)
        self.running, self.since = following, now
