"""Token buckets: ``rate`` messages a second on average, bursts up to ``burst``."""

from __future__ import annotations

BUCKETS_KEPT = 10_000
"""Buckets by key kept before the idle ones are dropped."""


class TokenBucket:
    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def spend(self, cost: float, now: float) -> bool:
        """Spend ``cost`` tokens if there are that many (nothing otherwise)."""
        if self.holds(cost, now):
            self.tokens -= cost
            return True
        return False

    def holds(self, cost: float, now: float) -> bool:
        """Whether ``cost`` tokens are there, refilled by the time elapsed (none spent)."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens >= cost

    def take(self, now: float) -> bool:
        """Spend one token if there is one; refill by the time elapsed first."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class KeyedBuckets:
    """Token buckets by key (an address, an account name), pruned when they pile up."""

    def __init__(self, per_second: float, burst: float) -> None:
        self.per_second, self.burst = per_second, burst
        self.buckets: dict[str, TokenBucket] = {}

    def get(self, key: str, now: float) -> TokenBucket:
        bucket = self.buckets.get(key)
        if bucket is None:
            if len(self.buckets) >= BUCKETS_KEPT:
                self._prune(now)
            bucket = self.buckets[key] = TokenBucket(self.per_second, self.burst, now)
        return bucket

    def take(self, key: str, now: float) -> bool:
        return self.get(key, now).take(now)

    def give_back(self, key: str) -> None:
        bucket = self.buckets.get(key)
        if bucket is not None:
            bucket.tokens = min(bucket.burst, bucket.tokens + 1)

    def _prune(self, now: float) -> None:
        """Drop the buckets that would be full by now (they limit nothing)."""
        refill = self.burst / self.per_second
        self.buckets = {k: b for k, b in self.buckets.items() if now - b.stamp < refill}
