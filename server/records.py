"""The records the database keeps: the rooms the server holds, the sessions seated in them,
finished games.

Plain msgspec Structs, stored as JSON, with nothing of the live server in them
(``server.snapshot`` turns rooms and sessions into records and back), so the
database process needs only these and the protocol's small types.
"""

from __future__ import annotations

import msgspec

from protocol.messages import Result, TimeControl, VariantSpec


class SeatRecord(msgspec.Struct, kw_only=True):
    session: str
    name: str
    digest: str
    """Hex SHA-256 of the seat secret."""
    points: float = 0.0
    bot: int | None = None
    """The computer's level, when it holds the seat."""
    think: float | None = None
    allows_eval: bool = False
    """The player let spectators follow the computer's evaluation."""
    account: int | None = None
    """The registered player's (or the computer level's) account, in rated rooms."""


class ClockRecord(msgspec.Struct, kw_only=True):
    remaining: list[float]
    """Each seat's bank when the room was saved (the running seat's already drained)."""
    running: int | None


class RoomRecord(msgspec.Struct, kw_only=True):
    code: str
    variant: VariantSpec
    public: bool
    created: float
    time_control: TimeControl | None
    match: bool
    event: int
    number: int
    match_game: int
    started: bool
    actions: list[str]
    movers: list[int]
    result: Result | None
    draw_offers: list[int]
    rematch: list[int]
    seats: list[SeatRecord | None]
    clock: ClockRecord | None
    rated: bool = False
    counts: bool = True
    """Whether the current game of a rated room counts for ratings (``Room.counts``)."""
    quick: bool = False
    """Opened for players the quick match paired (``Room.quick``)."""
    first_pairing: bool | None = None
    """Whether the current game is the first its seats play together (``Room.first_pairing``);
    None in records saved before it was kept: whether it is the room's first game."""
    barred: list[str] = msgspec.field(default_factory=list)
    """Who may not take a seat here again (``Room.barred``)."""
    owners: list[str] = msgspec.field(default_factory=list)
    """Whom the room counts against (``Room.owners``): its creator's address as the caps on
    rooms count it (``address:203.0.113.7``, an IPv6 one by its /56), and ``computer:`` that
    address for a game against the computer. A room taken back after a restart counts
    against them again. Empty in records saved before it was kept: such a room counts
    against nobody."""


class SessionRecord(msgspec.Struct, kw_only=True):
    id: str
    name: str
    token_digest: str
    room: str | None
    seat: int | None
    account: int | None = None
    """The account the session logged in to; None for a guest."""
    previous_digest: str | None = None
    """The hash of the token of the session's last resume (``Session.previous_digest``)."""


UNNUMBERED = 0
"""A finished game's id until the database gives it one: a cluster node that used up the
ids it reserved leaves the numbering to the database's write (``server.pgstore``)."""


class GameRecord(msgspec.Struct, kw_only=True):
    """A finished game, for the history."""

    id: int = 0
    """Assigned by the database."""
    room: str
    number: int
    variant: VariantSpec
    players: list[str]
    winner: int | None
    reason: str
    moves: list[str]
    finished: float
    """Unix time."""
    public: bool = True
    """Whether its room was listed; a private room's code is not shown in the history."""
    pool: str | None = None
    """The rating pool (``server.ratings``) for a rated game; None for a casual one."""
    accounts: list[int | None] = msgspec.field(default_factory=list)
    """Each seat's account (a computer level's account for the computer); None for a guest.
    Empty in games saved before accounts existed."""
    ranks: list[int] = msgspec.field(default_factory=list)
    """Each seat's finishing place (1 first; equal places share it), for rating."""
    flood: bool = False
    """Finished while every person in it had finished more games than their address's rate
    (``server.historydesk.GAMES_PER_HOUR``): kept as a short game (``is_short``)."""


class RatingRecord(msgspec.Struct, kw_only=True):
    """One account's rating in one pool."""

    pool: str
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0


class AccountRecord(msgspec.Struct, kw_only=True):
    """An account as the server holds it while someone is logged in to it (no password)."""

    id: int
    name: str
    computer: int | None = None
    """The computer's level, for the computer's own accounts."""
    ratings: dict[str, RatingRecord] = msgspec.field(default_factory=dict)


class HandedSession(msgspec.Struct, kw_only=True):
    """A session moving with its client's connection to another node of a cluster (the
    relay, docs/cluster.md): everything the node it leaves knew of it, so the node it
    joins serves it as if it had said hello there."""

    session: SessionRecord
    account: AccountRecord | None = None
    login: bytes | None = None
    """The digest of the login token the session said hello with, if any (for ``logout``)."""
    address: str = ""
    """The address the session was created from (its rooms count against it)."""
    compact: bool = False
    """Whether the client asked for compact move events in its ``hello`` (PROTOCOL.md,
    section 7a): the node it joins sends it ``moved`` events too."""
