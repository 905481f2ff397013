"""What every role of the core shares: its limits, its clocks, its counters, its journal.

``Context`` is handed to the lobby, the room host, the session registry and the history
desk, so each reads time from the same injected clock, counts into the same metrics and
notes changes in the same journal for the database, without knowing about the others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from engine import Variant
from protocol.codec import encode
from protocol.messages import Error, ErrorCode, RequestId, State, VariantSpec
from server import ratings
from server.actions import Send
from server.journal import Journal
from server.ratelimit import TokenBucket
from server.rooms import Absence, LogBudget, Room


@dataclass(frozen=True)
class Limits:
    """Abuse limits and timings of the core (the adapter has its own for frames and sockets)."""

    rate: float = 20.0
    """Requests per second per connection, on average."""
    burst: float = 40.0
    strikes: int = 20
    """Rate-limited requests in a row before the connection is closed (1008)."""
    address_share: float = 5.0
    """Connections' worth of ``rate`` and ``burst`` the connections of one IP address may use
    together: 50 addresses of 20 connections each, every one just under its own rate, sent
    19,000 requests a second, more than a core, and the honest players' moves waited (p99
    13 -> 364 ms, an outside review)."""
    rooms_listed: int = 100
    chat_rate: float = 0.5
    """Chat lines per second per player, on average."""
    chat_burst: float = 5.0
    absence: Absence = field(default_factory=Absence)
    restart_bonus: float = 10.0
    """Seconds added, after a restart, to the bank of the seat whose clock was running."""
    replay_plies: float = 4000.0
    """Plies all ``replay`` requests together may replay a second (about 5% of a core)."""
    hellos_per_second: float = 1.0
    """Hellos the connections of one IP address may say a second, on average: a resume
    with ``last_event`` replays up to 1 MiB of the room's log, and nothing else limited how
    often one address asked for that (44 resumes a second from two addresses: 28.7 MB/s)."""
    hello_burst: float = 20.0
    """...and at once: as many as its connections (``--max-per-ip``) all coming back."""
    spectators: int = 100
    """Spectators one room takes at most."""
    rooms_per_address: int = 20
    """Rooms the sessions of one IP address may own at once."""
    waiting_rooms_per_address: int = 5
    """Of those, how many may wait for players at once (the server: a quarter of
    ``rooms_per_address``). Rooms waiting for someone to join cost their creator nothing,
    so 250 addresses with 20 each filled the whole server's ``max_rooms`` in seconds and
    nobody else could start a game (an outside review); a player waits in one or two."""
    computer_rooms_per_address: int = 4
    """Of those, how many against the computer (the server: 2 per worker process,
    ``server.workers.address_share``): an address's rooms take turns within its share of the
    workers, so more would only make each of them slower."""
    max_rooms: int = 5000
    """Rooms the server holds at most; past it new rooms are refused with ``server_busy``."""
    history: int = 1000
    """Finished games kept for ``history`` and ``fetch_game``."""
    analyses: int = 32
    """Games whose analysis may wait or run at once (``server_busy`` beyond): the addresses
    take turns (``server.analysis``), so a full queue makes each wait longer, not others
    wait for ever; at 8, four addresses filled it for minutes."""
    analyses_per_session: int = 1
    """Of those, how many one session may have asked for."""
    analyses_per_address: int = 2
    """And how many the sessions of one IP address together (a quarter: a few connections of
    one address filled the whole queue for minutes, and everyone else got ``server_busy``)."""
    games_read: float = 100.0
    """Finished games the connections of one IP address together may read a second
    (``my_games`` counts its ``limit``, ``profile`` its recent games, every ``fetch_game``
    one, from memory as from the database, a ``history`` one per ``core.SUMMARIES_PER_READ``
    games it may list): each is a whole record of up to 1000 moves,
    which the database's one process decodes, every commit waiting behind it, and the
    server again. 20 connections listing 100 long games each, in turn, took 1.2 cores and
    held everyone's moves for 225 ms (p50; 950 ms p99); fetching one game of 999 moves from
    memory, 370 times a second, a quarter of a core (its record is kept encoded now)."""
    games_read_burst: float = 200.0
    """...and at once (two pages of ``my_games``)."""
    games_read_server: float = 500.0
    """Finished games every address together may read a second (and twice that at once):
    49 addresses, each within its own 100, fetched 4,270 records of 1000 moves a second,
    3.3 GB a minute, and the honest players' moves took 79 ms (p50; 345 ms p99, against 10
    with requests as many that read nothing): an outside review. Past it, ``server_busy``."""
    provisional_games: int = ratings.PROVISIONAL_GAMES
    """Rated games in a pool before a rating is established (shown without "?", listed)."""


class Context:
    """The limits, clocks, counters and journal one core's roles share."""

    def __init__(
        self, limits: Limits, clock: Callable[[], float], wall_clock: Callable[[], float]
    ) -> None:
        self.limits = limits
        self.clock = clock
        self.wall_clock = wall_clock
        self.counters: Counter[str] = Counter()
        """Events for the metrics: ``move:<outcome>``, ``error:<code>``, resumes, flags..."""
        self.journal = Journal()
        """Changes for the database (off until an adapter with one turns it on)."""
        self.log_budget = LogBudget()
        """What the event logs of every room hold together (``Room.remember``)."""
        self.clustered = False
        """True on a node of a cluster: sessions and rooms may live on other nodes."""
        self.unavailable: str | None = None
        """Why moves cannot be saved now (a cluster node whose PostgreSQL is away), or None:
        requests that change a game are then refused (``service_unavailable``), not held."""
        self.rated_together = ratings.RatedTogether(clock)
        """Rated games each group of accounts started together today (rooms ask it)."""
        self.compact: set[int] = set()
        """Connections that asked for ``moved`` events in their ``hello`` (the session
        registry keeps it; the room host reads it to push each connection its kind)."""

    @property
    def persistent(self) -> bool:
        """Whether a database keeps what the server accepts (an adapter with one says so)."""
        return self.journal.enabled

    def error(
        self,
        conn: int | None,
        code: ErrorCode,
        message: str,
        rid: RequestId,
        room: Room | None = None,
        now: float = 0.0,
    ) -> Send:
        """An error reply; with ``room``, the room's current state attached."""
        assert conn is not None
        self.counters[f"error:{code}"] += 1
        state: State | None = room.state(now) if room is not None else None
        return Send([conn], encode(Error(id=rid, code=code, message=message, state=state)))

    def chat_bucket(self) -> TokenBucket:
        """A fresh allowance of chat lines (per player, or per seat)."""
        return TokenBucket(self.limits.chat_rate, self.limits.chat_burst, self.clock())


def full_variant(spec: VariantSpec) -> VariantSpec:
    """The variant with its wall count filled in (the schema already bounds the rest)."""
    walls = Variant.of(spec.players, spec.size, spec.walls).walls
    return VariantSpec(players=spec.players, size=spec.size, walls=walls)
