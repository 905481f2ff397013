"""Every message on the wire, as msgspec Structs.

Each message is one JSON object in one websocket text frame; its ``type``
field is the tag of a tagged union. Client requests may carry an ``id`` that
the reply echoes. Unknown fields are ignored (forward compatibility).

``kw_only=True`` is repeated on every class on purpose: msgspec does not
inherit it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

VERSION = "1.0"
"""Protocol version: a client must share the major number."""

RequestId = int | Annotated[str, Meta(max_length=64)] | None
Name = Annotated[str, Meta(min_length=1, max_length=32)]
RoomCode = Annotated[str, Meta(min_length=1, max_length=32)]
Notation = Annotated[str, Meta(min_length=1, max_length=8)]
Seat = Annotated[int, Meta(ge=0, le=3)]


class ErrorCode(StrEnum):
    """The stable set of error codes (documented in PROTOCOL.md)."""

    MALFORMED_JSON = "malformed_json"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_FIELD = "invalid_field"
    UNSUPPORTED_VERSION = "unsupported_version"
    HELLO_REQUIRED = "hello_required"
    ALREADY_GREETED = "already_greeted"
    BAD_TOKEN = "bad_token"
    INVALID_VARIANT = "invalid_variant"
    ALREADY_IN_ROOM = "already_in_room"
    NOT_IN_ROOM = "not_in_room"
    ROOM_NOT_FOUND = "room_not_found"
    ROOM_FULL = "room_full"
    SEAT_TAKEN = "seat_taken"
    BAD_SECRET = "bad_secret"
    NOT_A_PLAYER = "not_a_player"
    GAME_NOT_STARTED = "game_not_started"
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_MOVE = "illegal_move"
    STALE_PLY = "stale_ply"
    GAME_OVER = "game_over"
    RATE_LIMITED = "rate_limited"
    SERVER_SHUTTING_DOWN = "server_shutting_down"


class VariantSpec(Struct, kw_only=True, forbid_unknown_fields=False):
    """A game variant. ``walls`` null means the official 20 shared out (10 or 5)."""

    players: Literal[2, 4] = 2
    size: Annotated[int, Meta(ge=5, le=11)] = 9
    walls: Annotated[int, Meta(ge=0, le=30)] | None = None


# -- client to server ----------------------------------------------------------


class Hello(Struct, kw_only=True, tag="hello"):
    """First message of every connection."""

    id: RequestId = None
    version: Annotated[str, Meta(max_length=16)]
    name: Name
    resume: Annotated[str, Meta(max_length=128)] | None = None
    """A resume token from an earlier ``welcome``: take that session back."""


class Create(Struct, kw_only=True, tag="create"):
    """Create a room and take seat 0."""

    id: RequestId = None
    variant: VariantSpec = msgspec.field(default_factory=VariantSpec)
    private: bool = False
    """A private room is not shown by ``list_rooms``; share its code."""


class Join(Struct, kw_only=True, tag="join"):
    """Take a seat: the first free one, or ``seat``; with ``secret``, reclaim your own."""

    id: RequestId = None
    room: RoomCode
    seat: Seat | None = None
    secret: Annotated[str, Meta(max_length=128)] | None = None


class Watch(Struct, kw_only=True, tag="watch"):
    """Join a room as a spectator."""

    id: RequestId = None
    room: RoomCode


class QuickMatch(Struct, kw_only=True, tag="quick_match"):
    """Wait for opponents who asked for the same variant."""

    id: RequestId = None
    variant: VariantSpec = msgspec.field(default_factory=VariantSpec)


class ListRooms(Struct, kw_only=True, tag="list_rooms"):
    """Ask for the public rooms."""

    id: RequestId = None


class Leave(Struct, kw_only=True, tag="leave"):
    """Leave the room or the quick-match queue."""

    id: RequestId = None


class MoveRequest(Struct, kw_only=True, tag="move"):
    """Play a pawn move or wall, in standard notation, for ply ``ply``."""

    id: RequestId = None
    move: Notation
    ply: Annotated[int, Meta(ge=0)]
    """The ply this move is meant for: the ``ply`` of the state it answers."""


class Ping(Struct, kw_only=True, tag="ping"):
    """Answered by ``pong``."""

    id: RequestId = None


Request = Hello | Create | Join | Watch | QuickMatch | ListRooms | Leave | MoveRequest | Ping


# -- server to client ----------------------------------------------------------


class Welcome(Struct, kw_only=True, tag="welcome"):
    """Answer to ``hello``."""

    id: RequestId = None
    version: str
    server: str
    session: str
    """This session's public identity."""
    resume_token: str
    """Secret: present it in a later ``hello`` to take this session back."""
    name: str
    room: str | None = None
    """The room this session is in, when a resumed session was in one."""
    seat: int | None = None


class Joined(Struct, kw_only=True, tag="joined"):
    """You are in a room: as a player (``seat``, ``secret``) or a spectator."""

    id: RequestId = None
    room: str
    role: Literal["player", "spectator"]
    seat: int | None = None
    secret: str | None = None
    """Secret: with ``join``, reclaims this seat from any connection."""


class Queued(Struct, kw_only=True, tag="queued"):
    """You wait in the quick-match queue for this variant."""

    id: RequestId = None
    variant: VariantSpec


class Left(Struct, kw_only=True, tag="left"):
    """You left the room or queue."""

    id: RequestId = None


class RoomInfo(Struct, kw_only=True):
    room: str
    variant: VariantSpec
    status: Literal["waiting", "playing", "finished"]
    players: list[str | None]
    """Names by seat; null for a free seat."""
    spectators: int


class Rooms(Struct, kw_only=True, tag="rooms"):
    """Answer to ``list_rooms``: public rooms, newest first."""

    id: RequestId = None
    rooms: list[RoomInfo]


class Pong(Struct, kw_only=True, tag="pong"):
    id: RequestId = None


class PlayerInfo(Struct, kw_only=True):
    seat: int
    name: str | None
    """Null while the seat is free."""
    connected: bool


class LastMove(Struct, kw_only=True):
    seat: int
    move: str
    ply: int
    """The ply this move was played at (0 for the first move)."""


class Result(Struct, kw_only=True):
    winner: int | None
    reason: Literal["goal"]


class State(Struct, kw_only=True, tag="state"):
    """The whole room, pushed to everyone in it after every change."""

    id: RequestId = None
    """The ``id`` of the request that caused this event, if any."""
    event: int
    """The room's event number: 1, 2, 3... with no gaps."""
    room: str
    variant: VariantSpec
    status: Literal["waiting", "playing", "finished"]
    ply: int
    turn: int | None
    """Seat to move; null unless playing."""
    pawns: list[str]
    walls: list[str]
    walls_left: list[int]
    last_move: LastMove | None
    legal_pawn_moves: list[str]
    """Where the seat to move may step or jump; empty unless playing."""
    distances: list[int]
    """Each seat's shortest distance to its goal edge."""
    players: list[PlayerInfo]
    spectators: int
    result: Result | None


class Error(Struct, kw_only=True, tag="error"):
    id: RequestId = None
    code: ErrorCode
    message: str
    state: State | None = None
    """The room's current state, for ``stale_ply``, ``not_your_turn`` and the like."""


ServerMessage = Welcome | Joined | Queued | Left | Rooms | Pong | State | Error
