"""A token bucket: ``rate`` messages a second on average, bursts up to ``burst``."""

from __future__ import annotations


class TokenBucket:
    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def spend(self, cost: float, now: float) -> bool:
        """Spend ``cost`` tokens if there are that many (nothing otherwise)."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def take(self, now: float) -> bool:
        """Spend one token if there is one; refill by the time elapsed first."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False
