"""Latency histograms cheap enough for every frame.

prometheus_client's ``Histogram.observe`` takes a lock per bucket and walks
the buckets one by one: a few microseconds, paid on every request frame.
A ``Timings`` is a list of plain counters found by bisection, read into a
Prometheus histogram only when ``/metrics`` is scraped.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from prometheus_client.core import HistogramMetricFamily

LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)


class Timings:
    """How many observations fell in each bucket (the last: above every bound), and their sum."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        # bisect_left: a value equal to a bound counts in that bound's bucket (Prometheus "le").
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def cumulative(self) -> list[tuple[str, float]]:
        """Prometheus buckets: (upper bound, observations up to it), ``+Inf`` last."""
        buckets, running = [], 0
        for bound, count in zip(self.bounds, self.counts, strict=False):
            running += count
            buckets.append((repr(bound), float(running)))
        buckets.append(("+Inf", float(running + self.counts[-1])))
        return buckets


def histogram(
    name: str, documentation: str, label: str, children: Iterable[tuple[str, Timings]]
) -> HistogramMetricFamily:
    """One Prometheus histogram family with a child per ``(label value, timings)``."""
    family = HistogramMetricFamily(name, documentation, labels=[label])
    for value, timings in children:
        family.add_metric([value], timings.cumulative(), timings.total)
    return family
