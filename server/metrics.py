"""Prometheus metrics: what operators graph and alert on.

Counters the core keeps (moves accepted, requests refused by error code,
resumes, flags) and gauges of its state (rooms by status, sessions) are read
at scrape time, so the game code only bumps plain counters and never imports
the metrics library. Latencies are observed by the adapter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from prometheus_client import (
    CollectorRegistry,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from server.backlogs import Backlogs
from server.core import Core
from server.gcwatch import GcCollector
from server.timings import LATENCY_BUCKETS, Timings, histogram


class CoreCollector(Collector):
    """Reads the core's counters and state when Prometheus scrapes."""

    def __init__(self, core: Core) -> None:
        self.core = core

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        core = self.core
        rooms = GaugeMetricFamily(
            "quoridor_rooms", "Rooms by status of their current game", labels=["status"]
        )
        by_status = {"waiting": 0, "playing": 0, "finished": 0}
        for room in core.rooms.values():
            by_status[room.status] += 1
        for status, count in by_status.items():
            rooms.add_metric([status], count)
        yield rooms
        yield GaugeMetricFamily("quoridor_sessions", "Sessions held", value=len(core.sessions))
        yield GaugeMetricFamily(
            "quoridor_room_log_bytes",
            "Bytes the rooms' event logs hold for replays, together (256 MiB budget)",
            value=core.context.log_budget.held,
        )
        yield GaugeMetricFamily(
            "quoridor_queued",
            "Players waiting for a quick match",
            value=sum(map(len, core.queues.values())),
        )
        counts = core.counters
        moves = CounterMetricFamily(
            "quoridor_moves",
            "Move requests by outcome (accepted or the error code)",
            labels=["outcome"],
        )
        for key, value in sorted(counts.items()):
            if key.startswith("move:"):
                moves.add_metric([key.removeprefix("move:")], value)
        yield moves
        errors = CounterMetricFamily("quoridor_errors", "Error replies by code", labels=["code"])
        for key, value in sorted(counts.items()):
            if key.startswith("error:"):
                errors.add_metric([key.removeprefix("error:")], value)
        yield errors
        unreadable = CounterMetricFamily(
            "quoridor_unreadable_rows",
            "Saved rows found unusable at start-up (each quarantined: kept, not loaded), by table",
            labels=["table"],
        )
        for table in ("rooms", "sessions", "games"):
            unreadable.add_metric([table], counts[f"unreadable:{table}"])
        yield unreadable
        for name, text in (
            ("resumes", "Sessions resumed on a new connection"),
            ("flags", "Seats that ran out of time"),
            ("games_finished", "Games that ended, for any reason"),
            ("registrations", "Accounts registered"),
            ("rated_games", "Rated games whose rating changes were committed"),
            ("history_pruned", "Finished games deleted from the history by the retention rule"),
            (
                "rooms_evicted",
                "Rooms nobody was in, or of a game over, closed for a new one at --max-rooms",
            ),
        ):
            yield CounterMetricFamily(f"quoridor_{name}", text, value=counts[name])
        logins = CounterMetricFamily(
            "quoridor_logins", "Password logins by outcome", labels=["outcome"]
        )
        for outcome in ("success", "failure"):
            logins.add_metric([outcome], counts[f"logins:{outcome}"])
        yield logins


CLUSTER_FIGURES = {
    "up": ("gauge", "1 while this node reaches Redis (else it refuses new games: /readyz 503)"),
    "rooms_owned": ("gauge", "Rooms this node hosts, each under its lease"),
    "takeovers": ("counter", "Rooms this node took over from a node that died or stopped"),
    "leases_lost": (
        "counter",
        "Rooms this node stopped hosting: lease lost, write fenced, or a commit that failed",
    ),
    "lease_renewals": ("counter", "Leases (rooms and liveness) renewed"),
    "redis_errors": ("counter", "Requests to Redis that failed"),
    "postgresql_up": (
        "gauge",
        "1 while this node reaches PostgreSQL (else it refuses moves and new games: /readyz 503)",
    ),
    "postgresql_errors": ("counter", "Requests to PostgreSQL that failed, and connections lost"),
    "listed_here": ("gauge", "Rooms this node lists in the cluster-wide lobby list"),
    "listed_elsewhere": ("gauge", "Other nodes' rooms in this node's copy of the list"),
    "pairs_here": ("counter", "Quick-match pairs of two players of this node"),
    "pairs_across": ("counter", "Quick-match pairs this node found with another node's player"),
    "secret_mismatches": (
        "counter",
        "Refreshes that found a node of another --cluster-secret (its handovers are refused)",
    ),
}
"""Figures of a cluster node (``quoridor_cluster_<name>{node}``), by name: kind and help."""


class _Callback(Collector):
    def __init__(self, collect: Callable[[], Iterator[Metric]]) -> None:
        self._collect = collect

    def collect(self) -> Iterator[Metric]:
        return self._collect()


class RequestCollector(Collector):
    """``quoridor_request_seconds{type}``, from the adapter's cheap per-frame timings."""

    def __init__(self) -> None:
        self.by_kind: dict[str, Timings] = {}

    def collect(self) -> Iterator[HistogramMetricFamily]:
        yield histogram(
            "quoridor_request_seconds",
            "Time to handle one request frame, by request type",
            "type",
            sorted(self.by_kind.items()),
        )


# No ``*_created`` series beside each counter and histogram (prometheus_client's default:
# a timestamp per series nobody asked for, which an operators' review found to be noise).
disable_created_metrics()  # type: ignore[no-untyped-call]


class Metrics:
    """The server's registry (one per server, so tests can run several)."""

    def __init__(self, core: Core) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(CoreCollector(core))
        self.registry.register(GcCollector())
        self.connections = Gauge(
            "quoridor_connections", "Open websocket connections", registry=self.registry
        )
        self._requests = RequestCollector()
        self.registry.register(self._requests)
        self.db_write_seconds = Histogram(
            "quoridor_db_write_seconds",
            "Time to commit one batch of changes to the database",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def count_refusals(self, refused: Counter[str]) -> None:
        """Export the connections refused at accept (``http.Gate.refused``)."""
        self._count_by(
            "quoridor_connections_refused",
            "Connections refused when accepted: per-address cap or rate, or the server full",
            "reason",
            refused,
            ("address", "full"),
        )

    def count_evictions(self, evicted: Counter[str]) -> None:
        """Export the connections closed to make room for newcomers (``server.idlers``)."""
        self._count_by(
            "quoridor_connections_evicted",
            "Connections closed to make room for a newcomer to a full server: a handshake "
            "in progress, or the longest idle one holding no seat in a game in progress",
            "state",
            evicted,
            ("opening", "idle"),
        )

    def _count_by(
        self, name: str, text: str, label: str, counts: Counter[str], values: tuple[str, ...]
    ) -> None:
        """Export ``counts`` (kept up to date elsewhere) as a counter labelled ``label``, one
        sample for each of ``values`` (zeros included, so that every series exists at once)."""

        def collect() -> Iterator[CounterMetricFamily]:
            family = CounterMetricFamily(name, text, labels=[label])
            for value in values:
                family.add_metric([value], counts[value])
            yield family

        self.registry.register(_Callback(collect))

    def count_backlogs(self, backlogs: Backlogs) -> None:
        """Export the frames waiting for slow readers (``server.backlogs``)."""

        def collect() -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
            yield GaugeMetricFamily(
                "quoridor_backlog_bytes",
                "Bytes waiting for clients more than 64 KiB behind in reading, all together",
                value=backlogs.total(),
            )
            yield CounterMetricFamily(
                "quoridor_backlog_cutoffs",
                "Clients cut off because all backlogs together passed --backlog-budget",
                value=backlogs.cut,
            )

        self.registry.register(_Callback(collect))

    def count_db_reconnects(self, reconnects: Callable[[], int]) -> None:
        """Export the store's connections made again (PostgreSQL restarted or failed over)."""

        def collect() -> Iterator[CounterMetricFamily]:
            yield CounterMetricFamily(
                "quoridor_db_reconnects",
                "Connections to the database made again after it went away",
                value=reconnects(),
            )

        self.registry.register(_Callback(collect))

    def count_stalls(self, stalled: Callable[[], float]) -> None:
        """Export the event loop's stalls left out of every clock (``server.stalls``)."""

        def collect() -> Iterator[CounterMetricFamily]:
            yield CounterMetricFamily(
                "quoridor_loop_stall_seconds",
                "Seconds the event loop stalled (late by more than 50 ms), charged to no clock",
                value=stalled(),
            )

        self.registry.register(_Callback(collect))

    def count_cluster(self, node: str, figures: Callable[[], dict[str, float]]) -> None:
        """Export a cluster node's ``CLUSTER_FIGURES``, read at scrape time, each labelled
        with the node's id so that one query sums or compares them over the cluster."""

        def collect() -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
            values = figures()
            for name, (kind, text) in CLUSTER_FIGURES.items():
                family = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
                metric = family(f"quoridor_cluster_{name}", text, labels=["node"])
                metric.add_metric([node], values[name])
                yield metric

        self.registry.register(_Callback(collect))

    def request_time(self, kind: str) -> Timings:
        """The latency histogram of one request type (observed for every frame, so a
        ``Timings``: prometheus_client's own Histogram costs microseconds per frame)."""
        timings = self._requests.by_kind.get(kind)
        if timings is None:
            timings = self._requests.by_kind[kind] = Timings()
        return timings

    def render(self) -> bytes:
        return generate_latest(self.registry)
