"""The records the database keeps: rooms in play, sessions seated in them, finished games.

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


class SessionRecord(msgspec.Struct, kw_only=True):
    id: str
    name: str
    token_digest: str
    room: str | None
    seat: int | None


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
