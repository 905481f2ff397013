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

RequestId = Annotated[int, Meta(ge=-(2**53), le=2**53)] | Annotated[str, Meta(max_length=64)] | None
"""Client-chosen; integers stay within what JavaScript numbers hold exactly."""
Count = Annotated[int, Meta(ge=0, le=2**53)]
"""A ply or an event number: an integer a JavaScript number holds exactly, as ``id``."""
GameId = Annotated[int, Meta(ge=-(2**53), le=2**53)]
"""A finished game's ``id`` from ``history`` (any other integer is found nowhere)."""
Name = Annotated[str, Meta(min_length=1, max_length=32)]
RoomCode = Annotated[str, Meta(min_length=1, max_length=32)]
Notation = Annotated[str, Meta(min_length=1, max_length=8)]
Seat = Annotated[int, Meta(ge=0, le=3)]
PASSWORD_LENGTH = (8, 128)
"""The shortest and the longest new password (a client may check before asking twice)."""
Password = Annotated[str, Meta(min_length=PASSWORD_LENGTH[0], max_length=PASSWORD_LENGTH[1])]
LoginToken = Annotated[str, Meta(min_length=1, max_length=128)]
Pool = Literal["9x9-bullet", "9x9-blitz", "9x9-rapid", "9x9-untimed", "small", "11x11", "4-player"]
"""A rating pool (PROTOCOL.md, section 26)."""


class ErrorCode(StrEnum):
    """The stable set of error codes (documented in PROTOCOL.md)."""

    MALFORMED_JSON = "malformed_json"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_FIELD = "invalid_field"
    UNSUPPORTED_VERSION = "unsupported_version"
    HELLO_REQUIRED = "hello_required"
    ALREADY_GREETED = "already_greeted"
    BAD_TOKEN = "bad_token"
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
    NO_OFFER = "no_offer"
    CANNOT_CLAIM = "cannot_claim"
    CANNOT_DRAW = "cannot_draw"
    CANNOT_ABORT = "cannot_abort"
    GAME_NOT_OVER = "game_not_over"
    GAME_NOT_FOUND = "game_not_found"
    CANNOT_HINT = "cannot_hint"
    CANNOT_EVALUATE = "cannot_evaluate"
    CANNOT_TAKE_BACK = "cannot_take_back"
    CANNOT_ANALYSE = "cannot_analyse"
    SERVER_BUSY = "server_busy"
    TOO_MANY_ROOMS = "too_many_rooms"
    BAD_CREDENTIALS = "bad_credentials"
    NAME_UNAVAILABLE = "name_unavailable"
    ACCOUNT_REQUIRED = "account_required"
    ACCOUNTS_UNAVAILABLE = "accounts_unavailable"
    PLAYER_NOT_FOUND = "player_not_found"
    SERVICE_UNAVAILABLE = "service_unavailable"


MAX_WALLS = 30
"""The most walls a variant may give each player."""


class VariantSpec(Struct, kw_only=True, forbid_unknown_fields=False):
    """A game variant. ``walls`` null means the official 20 shared out (10 or 5)."""

    players: Literal[2, 4] = 2
    size: Literal[5, 7, 9, 11] = 9
    walls: Annotated[int, Meta(ge=0, le=MAX_WALLS)] | None = None


class TimeControl(Struct, kw_only=True, forbid_unknown_fields=False):
    """Fischer time: ``base`` seconds each, plus ``increment`` seconds per move made."""

    base: Annotated[float, Meta(gt=0, le=86_400)]
    increment: Annotated[float, Meta(ge=0, le=3_600)] = 0


class AiSpec(Struct, kw_only=True, forbid_unknown_fields=False):
    """The computer opponent: its level, and how long it may think per move."""

    level: Annotated[int, Meta(ge=1, le=5)] = 3
    """1 (beginner) to 5 (expert)."""
    seconds: Annotated[float, Meta(gt=0, le=30)] | None = None
    """Thinking time per move; null for the level's own (0.5 s at level 1 to 2 s at 5); less
    on a short clock."""


# -- client to server ----------------------------------------------------------


class Hello(Struct, kw_only=True, tag="hello"):
    """First message of every connection."""

    id: RequestId = None
    version: Annotated[str, Meta(max_length=16)]
    name: Name
    resume: Annotated[str, Meta(max_length=128)] | None = None
    """A resume token from an earlier ``welcome``: take that session back."""
    last_event: Count | None = None
    """With ``resume``: the last room event you saw; the ones after it are replayed."""
    token: LoginToken | None = None
    """A login token from ``logged_in``: play as that account (its name replaces ``name``)."""
    compact: bool = False
    """After a move, send this connection a small ``moved`` event instead of the whole
    ``state`` (PROTOCOL.md, section 7a)."""


class Create(Struct, kw_only=True, tag="create"):
    """Create a room and take seat 0 (against the computer, ``seat`` if given)."""

    id: RequestId = None
    variant: VariantSpec = msgspec.field(default_factory=VariantSpec)
    private: bool = False
    """A private room is not shown by ``list_rooms``; share its code."""
    clock: TimeControl | None = None
    """Null for an untimed (casual) game."""
    match: bool = False
    """A two-game match (two players only): each player opens once."""
    ai: AiSpec | None = None
    """Play the computer: every other seat is taken by it, and the game starts at once."""
    seat: Seat | None = None
    """With ``ai``: your seat (1 lets the computer open); null: seat 0. Refused without
    ``ai``: a room for people is its creator's seat 0."""
    spectator_eval: bool = False
    """Let spectators follow the computer's evaluation (untimed two-player games, and only
    once every player allowed it)."""
    rated: bool | None = None
    """Rated or casual; null: rated when you are logged in and the game can be rated."""


class Join(Struct, kw_only=True, tag="join"):
    """Take a seat: the first free one, or ``seat``; with ``secret``, reclaim your own."""

    id: RequestId = None
    room: RoomCode
    seat: Seat | None = None
    spectator_eval: bool = False
    """Allow spectators to follow the computer's evaluation (as in ``create``)."""
    secret: Annotated[str, Meta(max_length=128)] | None = None

    def __post_init__(self) -> None:
        self.room = self.room.lower()  # a code read aloud or typed in capitals is the same


class Watch(Struct, kw_only=True, tag="watch"):
    """Join a room as a spectator."""

    id: RequestId = None
    room: RoomCode

    def __post_init__(self) -> None:
        self.room = self.room.lower()


class QuickMatch(Struct, kw_only=True, tag="quick_match"):
    """Wait for opponents who asked for the same variant and time control."""

    id: RequestId = None
    variant: VariantSpec = msgspec.field(default_factory=VariantSpec)
    clock: TimeControl | None = None
    rated: bool | None = None
    """Rated or casual; null: rated when you are logged in and the game can be rated."""


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
    ply: Count
    """The ply this move is meant for: the ``ply`` of the state it answers."""


class Resign(Struct, kw_only=True, tag="resign"):
    """Give up the game (in a four-player game, leave it; it goes on without you)."""

    id: RequestId = None


class Draw(Struct, kw_only=True, tag="draw"):
    """Offer a draw, accept the one on the table, or decline it."""

    id: RequestId = None
    action: Literal["offer", "accept", "decline"]


class Claim(Struct, kw_only=True, tag="claim"):
    """Claim the game against seats that stayed away past their grace period."""

    id: RequestId = None


class Abort(Struct, kw_only=True, tag="abort"):
    """End a game, with no result, before every seat has made its first move."""

    id: RequestId = None


class Rematch(Struct, kw_only=True, tag="rematch"):
    """Ask (or agree) to play again in this room once the game is over, the opener changed;
    or decline the rematch another seat asked for."""

    id: RequestId = None
    action: Literal["offer", "decline"] = "offer"
    """``offer`` (the default, what clients sent before ``decline`` existed): ask or agree.
    ``decline``: withdraw every request, allowed while another seat's stands."""


class LiveEval(Struct, kw_only=True, tag="live_eval"):
    """As a spectator, follow (or stop following) the computer's evaluation of the game."""

    id: RequestId = None
    on: bool = True


class Hint(Struct, kw_only=True, tag="hint"):
    """Ask the computer which move it would play for you (casual games against it only)."""

    id: RequestId = None


class Takeback(Struct, kw_only=True, tag="takeback"):
    """Take back your last move and the computer's reply (casual games against it only)."""

    id: RequestId = None


class Chat(Struct, kw_only=True, tag="chat"):
    """Say something to the room (players only; everyone in the room reads it)."""

    id: RequestId = None
    text: Annotated[str, Meta(min_length=1, max_length=300)]


class History(Struct, kw_only=True, tag="history"):
    """Ask for the most recently finished games, newest first."""

    id: RequestId = None
    limit: Annotated[int, Meta(ge=1, le=100)] = 20


class FetchGame(Struct, kw_only=True, tag="fetch_game"):
    """Ask for one finished game's full record."""

    id: RequestId = None
    game: GameId
    """The game's ``id`` from ``history``."""


class ReplayRequest(Struct, kw_only=True, tag="replay"):
    """Ask for every position of a game given by its moves (a record file, a fetched game).

    Clients hold no rules: the server plays the moves and sends each position back.
    """

    id: RequestId = None
    variant: VariantSpec = msgspec.field(default_factory=VariantSpec)
    moves: Annotated[list[Notation], Meta(max_length=1000)]
    """Moves in notation; in a four-player game also ``retire N`` where seat N left."""


class Analyse(Struct, kw_only=True, tag="analyse"):
    """Ask for the computer analysis of one finished two-player game of the history.

    Computed once (in the computer's worker processes, behind the games in
    play), stored with the game, and served from there afterwards.
    """

    id: RequestId = None
    game: GameId
    """The game's ``id`` from ``history``."""


class Register(Struct, kw_only=True, tag="register"):
    """Create an account; answered by ``logged_in`` (you are then logged in to it)."""

    id: RequestId = None
    name: Annotated[str, Meta(min_length=1, max_length=64)]
    password: Password


class Login(Struct, kw_only=True, tag="login"):
    """Log in to an account; answered by ``logged_in`` with a new login token."""

    id: RequestId = None
    name: Annotated[str, Meta(min_length=1, max_length=64)]
    password: Annotated[str, Meta(min_length=1, max_length=128)]


class Logout(Struct, kw_only=True, tag="logout"):
    """Revoke a login token: ``token``, or the one this connection said hello with."""

    id: RequestId = None
    token: LoginToken | None = None


class ChangePassword(Struct, kw_only=True, tag="change_password"):
    """Change the password of the account you are logged in as; every login token of the
    account is revoked, and ``logged_in`` brings a new one."""

    id: RequestId = None
    password: Annotated[str, Meta(min_length=1, max_length=128)]
    """The current password."""
    new_password: Password


class Leaderboard(Struct, kw_only=True, tag="leaderboard"):
    """Ask for the best established ratings of one pool."""

    id: RequestId = None
    pool: Pool = "9x9-untimed"
    limit: Annotated[int, Meta(ge=1, le=100)] = 20


class ProfileRequest(Struct, kw_only=True, tag="profile"):
    """Ask for a registered player's (or a computer level's) profile."""

    id: RequestId = None
    name: Annotated[str, Meta(min_length=1, max_length=64)]


class MyGames(Struct, kw_only=True, tag="my_games"):
    """Ask for the games of the account you are logged in as, newest first."""

    id: RequestId = None
    limit: Annotated[int, Meta(ge=1, le=100)] = 20
    before: GameId | None = None
    """Only games with a smaller ``game`` id: the next page after the last one you have."""


class Sync(Struct, kw_only=True, tag="sync"):
    """Ask for your room's whole ``state`` again (after a gap in ``moved`` events)."""

    id: RequestId = None


class Ping(Struct, kw_only=True, tag="ping"):
    """Answered by ``pong``."""

    id: RequestId = None


Request = (
    Hello
    | Create
    | Join
    | Watch
    | QuickMatch
    | ListRooms
    | Leave
    | MoveRequest
    | Resign
    | Draw
    | Claim
    | Abort
    | Rematch
    | Chat
    | Hint
    | Takeback
    | LiveEval
    | History
    | FetchGame
    | ReplayRequest
    | Analyse
    | Register
    | Login
    | Logout
    | ChangePassword
    | Leaderboard
    | ProfileRequest
    | MyGames
    | Sync
    | Ping
)


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
    registered: bool = False
    """True when this session plays as an account (a ``token`` in ``hello``); false for a
    guest."""
    compact: bool = False
    """True when this connection gets ``moved`` events (it asked with ``hello.compact``)."""


class Joined(Struct, kw_only=True, tag="joined"):
    """You are in a room: as a player (``seat``, ``secret``) or a spectator."""

    id: RequestId = None
    room: str
    role: str
    """``player`` or ``spectator`` (a string, so that clients survive new values)."""
    seat: int | None = None
    secret: str | None = None
    """Secret: with ``join``, reclaims this seat from any connection. Null when the
    seat number changed (rematch, next match game) and the secret did not."""


class Queued(Struct, kw_only=True, tag="queued"):
    """You wait in the quick-match queue for this variant and time control."""

    id: RequestId = None
    variant: VariantSpec
    clock: TimeControl | None = None
    """The time control waited for; null for untimed."""
    rated: bool = False


class Left(Struct, kw_only=True, tag="left"):
    """You left the room or queue: by your ``leave`` (``reason`` null), or the server took
    you out of the room."""

    id: RequestId = None
    reason: str | None = None
    """Null: the answer to ``leave``. ``reclaimed``: another session took back your seat
    with its secret. ``closed``: the server closed the room, a finished game's, to make
    room for a new game (a string, so that clients survive new values)."""


class RoomInfo(Struct, kw_only=True):
    room: str
    variant: VariantSpec
    clock: TimeControl | None
    match: bool
    status: str
    """``waiting``, ``playing`` or ``finished``."""
    players: list[str | None]
    """Names by seat; null for a free seat."""
    spectators: int
    rated: bool = False


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
    active: bool = True
    """False once the seat resigned, flagged or was claimed in a four-player game."""
    claim_in_ms: int | None = None
    """While a seated player is away in a game in progress: milliseconds until the
    others may ``claim`` (0: now). Null while connected."""
    bot: int | None = None
    """The computer's level when the computer holds this seat; null for a person."""
    rating: int | None = None
    """In a rated room: the seat's rating in the room's pool (after the game once its
    change is known); null in casual rooms."""
    provisional: bool = False
    """The rating rests on too few games to be established yet."""
    rating_change: int | None = None
    """Once a rated game is over and its ratings are saved: how much the rating moved."""


class LastMove(Struct, kw_only=True):
    seat: int
    move: str
    ply: int
    """The ply this move was played at (0 for the first move)."""


class Result(Struct, kw_only=True):
    winner: int | None
    """The winning seat; null for a draw or an aborted game."""
    reason: str
    """``goal``, ``resign``, ``time``, ``abandon``, ``draw``, ``aborted``, ``last_standing`` or
    ``ply_cap``;
    decoded as a string so that a client survives reasons added later."""
    game_id: int | None = None
    """The game's id in the history, for ``fetch_game``, ``analyse`` and links to it; null
    until the server has numbered it (PROTOCOL.md, section 5, "result")."""
    by: int | None = None
    """The seat whose own request ended the game: its ``resign`` or ``abort``, its ``claim``
    against an absent player, its acceptance that completed a draw; null when the board or
    the server ended it (a goal, a clock, a first move not made, everyone away)."""


class ClockInfo(Struct, kw_only=True):
    base_ms: int
    increment_ms: int
    remaining_ms: list[int]
    """Each seat's time when this message was made."""
    running: int | None
    """The seat whose time is draining; null before the first moves and after the end."""


class MatchInfo(Struct, kw_only=True):
    """A two-game match: each player opens once; a win is 1 point, a draw 1/2."""

    game: int
    """1 or 2: the game being played (or last played)."""
    games: int
    scores: list[float]
    """Points by current seat."""
    over: bool
    winner: int | None
    """Once over: the current seat of the match winner; null for a shared result."""


class State(Struct, kw_only=True, tag="state"):
    """The whole room, pushed to everyone in it after every change."""

    id: RequestId = None
    """The ``id`` of the request that caused this event, if any."""
    event: int
    """The room's event number: 1, 2, 3... with no gaps."""
    room: str
    variant: VariantSpec
    status: str
    """``waiting``, ``playing`` or ``finished``."""
    ply: int
    turn: int | None
    """Seat to move; null unless playing."""
    pawns: list[str]
    walls: list[str]
    walls_left: list[int]
    last_move: LastMove | None
    legal_pawn_moves: list[str]
    """Where the seat to move may step or jump; empty unless playing."""
    legal_walls: Annotated[
        str,
        Meta(
            pattern="^[0-9a-f]*$",
            description="Walls the seat to move may place, a hex bitmask: PROTOCOL.md section 9",
        ),
    ] = ""
    """The walls the seat to move may place, as a bitmask in hex (PROTOCOL.md, section 9):
    bit ``row * (size - 1) + col`` for the horizontal wall at (col, row), the same plus
    ``(size - 1) ** 2`` for the vertical one; all zeros unless playing with walls left.
    The server always writes it; the default only serves states built by clients."""
    distances: list[int]
    """Each seat's shortest distance to its goal edge."""
    players: list[PlayerInfo]
    spectators: int
    result: Result | None
    game: int = 1
    """Which game in this room: rematches and match games count up from 1."""
    clock: ClockInfo | None = None
    draw_offers: list[int] = msgspec.field(default_factory=list)
    """Seats that offer (or accepted) a draw; it is agreed when every active seat is here."""
    rematch: list[int] = msgspec.field(default_factory=list)
    """Seats that asked for a rematch."""
    rematch_declined: int | None = None
    """The seat that declined the rematch asked for, until a seat asks again or a new game
    starts; null otherwise."""
    match: MatchInfo | None = None
    rated: bool = False
    """Whether this game counts for ratings (in the pool of ``state.pool``): false in a rated
    room for a game played casual, its players' rated games together today used up."""
    pool: str | None = None
    """The rating pool of a rated room."""
    moves: list[str] = msgspec.field(default_factory=list)
    """This game's record so far: every move in notation and, in a four-player game,
    ``retire N`` where seat N left (bots search from it; ``replay`` plays it)."""
    first_move_in_ms: int | None = None
    """While the first moves are played: milliseconds the seat to move has left to make its
    first move before the server aborts the game; null otherwise (and for the computer)."""
    spectator_eval: bool = False
    """Whether spectators may follow the computer's evaluation of this game (``live_eval``):
    an untimed two-player game whose every player allowed it (``spectator_eval`` in their
    ``create`` or ``join``; against the computer, its player's alone). A client offers it only
    then."""
    move_claim_in_ms: int | None = None
    """In an untimed game between people, once every seat has moved: milliseconds until the
    others may claim the game from the seat to move for not moving (0: they may now); null
    otherwise."""
    quick: bool = False
    """Whether the quick match opened this room: a player who ends its first game before
    every seat has moved (``abort``, ``resign``, staying away) waits before their next
    ``quick_match`` (PROTOCOL.md, section 4, walking out). A client warns before that."""


class Moved(Struct, kw_only=True, tag="moved"):
    """A move, to the connections that asked for ``compact`` events: every field of the
    room's ``state`` that the move changed (PROTOCOL.md, section 7a). Applied to the state
    of event ``event - 1`` it gives exactly the state of this event."""

    id: RequestId = None
    """The ``id`` of the ``move`` request that caused it, if any (as in ``state``)."""
    event: int
    """The room's event number: one more than the state it applies to."""
    room: str
    seat: int
    """Who moved."""
    move: str
    """The move, in notation: it goes at the end of ``state.moves`` and into ``last_move``."""
    ply: int
    """The game's ply after the move (the move was played at ``ply - 1``)."""
    turn: int
    """Seat to move now."""
    pawns: list[str]
    walls_left: list[int]
    walls: list[str] | None = None
    """The whole list when the move placed a wall; null when it is unchanged."""
    legal_pawn_moves: list[str]
    legal_walls: Annotated[
        str,
        Meta(
            pattern="^[0-9a-f]*$",
            description="Walls the seat to move may place, a hex bitmask: PROTOCOL.md section 9",
        ),
    ]
    distances: list[int]
    spectators: int
    clock: ClockInfo | None = None
    draw_offers: list[int] = msgspec.field(default_factory=list)
    first_move_in_ms: int | None = None
    move_claim_in_ms: int | None = None


class GameSummary(Struct, kw_only=True):
    """A finished game in the history."""

    game: int
    """Its id, for ``fetch_game``."""
    room: str | None
    """The room it was played in; null for a private room (its code stays secret)."""
    number: int
    """Which game of its room it was."""
    variant: VariantSpec
    players: list[str]
    """Names by seat."""
    winner: int | None
    reason: str
    plies: int
    finished: float
    """When it ended, in Unix time."""
    pool: str | None = None
    """The rating pool, for a rated game; null for a casual one."""


class HistoryList(Struct, kw_only=True, tag="history_list"):
    """Answer to ``history``."""

    id: RequestId = None
    games: list[GameSummary]


class GameRecordReply(Struct, kw_only=True, tag="game_record"):
    """Answer to ``fetch_game``: the game, its moves and its record in standard notation."""

    id: RequestId = None
    summary: GameSummary
    moves: list[str]
    """Every action in order; in four-player games ``retire N`` marks a seat leaving."""
    record: str
    """The moves as one line (``e2 e8 e3h``)."""
    numbered: str
    """The moves numbered by round (``1. e2 e8 2. e3h``)."""


class Frame(Struct, kw_only=True):
    """One position of a replayed game."""

    ply: int
    pawns: list[str]
    walls: list[str]
    walls_left: list[int]
    turn: int
    """The seat to move (once the game is over: the winner)."""
    last_move: str | None
    winner: int | None
    distances: list[int]


class ReplayFrames(Struct, kw_only=True, tag="replay_frames"):
    """Answer to ``replay``: the start position, then one frame after each move."""

    id: RequestId = None
    variant: VariantSpec
    frames: list[Frame]
    error: str | None = None
    """Why the move after the last frame could not be played, if one could not."""


Mark = Literal["inaccuracy", "mistake", "blunder"]


class MoveAnalysis(Struct, kw_only=True):
    """One move of an analysed game, from the mover's point of view."""

    ply: int
    """1 for the first move of the game."""
    seat: Seat
    move: Notation
    best: Notation
    """The engine's best move in the position before (the same as ``move`` when it agrees)."""
    pv: list[Notation]
    """The principal variation from the position before, starting with ``best``."""
    score_before: float
    """Steps ahead in the race with the best move (negative: behind)."""
    win_before: float
    """Win probability (0 to 1) with the best move."""
    win_in: int | None
    """Plies to a forced end with the best move: positive wins, negative loses; else null."""
    score_after: float
    """Steps ahead after the move played."""
    win_after: float
    """Win probability after the move played."""
    pv_after: list[Notation] = []
    """The line the engine expects after the move played, starting with the opponent's reply
    (empty when the move ends the game or passes up a win in one, and in an analysis stored
    before the field existed)."""
    loss: float
    """``win_before - win_after`` (0 when the move is the best move), 0 to 1."""
    mark: Mark | None
    """``inaccuracy`` (loss >= 0.10), ``mistake`` (>= 0.20), ``blunder`` (>= 0.30), or null."""


class SeatAnalysis(Struct, kw_only=True):
    """One player's moves summed up."""

    seat: Seat
    moves: int
    average_loss: float
    """Mean win-probability loss per move, 0 to 1."""
    inaccuracies: int
    mistakes: int
    blunders: int


class AnalysisReply(Struct, kw_only=True, tag="analysis"):
    """The answer to ``analyse``."""

    id: RequestId = None
    game: int
    depth: int
    """Plies each position was searched (the exact endgame needs none)."""
    moves: list[MoveAnalysis]
    seats: list[SeatAnalysis]


class Suggestion(Struct, kw_only=True, tag="suggestion"):
    """The answer to ``hint``: the move the computer would play in your place."""

    id: RequestId = None
    ply: int
    """The position it is for (the game's ``ply`` when you asked)."""
    move: Notation


class LiveEvalSet(Struct, kw_only=True, tag="live_eval_set"):
    """The answer to ``live_eval``: whether you now follow the evaluation."""

    id: RequestId = None
    on: bool


class Evaluation(Struct, kw_only=True, tag="evaluation"):
    """The computer's evaluation of a room's position, pushed to the spectators who follow it
    (never to a player), at most once per move."""

    id: RequestId = None
    """Always null: a push, not a reply."""
    room: str
    ply: int
    """The position evaluated: the game's ``ply``."""
    score: float
    """Seat 0's advantage in steps of the race (negative: seat 1 is ahead)."""
    win: float
    """Seat 0's win probability, 0 to 1."""
    win_in: int | None
    """Plies to a forced end: positive when seat 0 wins, negative when seat 1 does; else null."""
    best: Notation
    """The best move for the seat to move."""
    pv: list[Notation]
    """The principal variation, starting with ``best``."""
    depth: int


class ChatMessage(Struct, kw_only=True, tag="chat_line"):
    """A chat line, pushed to everyone in the room; it is a room event."""

    id: RequestId = None
    event: int
    room: str
    seat: int
    name: str
    text: str


class LoggedIn(Struct, kw_only=True, tag="logged_in"):
    """Answer to ``register``, ``login`` and ``change_password``."""

    id: RequestId = None
    name: str
    """The account's name as registered."""
    token: str
    """Secret: the login token. Send it as ``token`` in a later ``hello``; it works until
    ``expires``, a ``logout`` or a password change."""
    expires: float
    """When the token stops working, in Unix time."""


class LoggedOut(Struct, kw_only=True, tag="logged_out"):
    """Answer to ``logout``: the token no longer works (it may have been revoked already)."""

    id: RequestId = None


class LeaderEntry(Struct, kw_only=True):
    rank: int
    name: str
    rating: int
    games: int
    wins: int
    losses: int
    draws: int
    bot: int | None = None
    """The computer's level, for the computer's own rating."""


class LeaderboardList(Struct, kw_only=True, tag="leaderboard_list"):
    """Answer to ``leaderboard``: established ratings, best first."""

    id: RequestId = None
    pool: str
    players: list[LeaderEntry]


class RatingPoint(Struct, kw_only=True):
    game: int
    """The game that moved the rating (for ``fetch_game``)."""
    rating: int
    """The rating after it."""
    at: float


class PoolRating(Struct, kw_only=True):
    pool: str
    rating: int
    provisional: bool
    games: int
    wins: int
    losses: int
    draws: int
    history: list[RatingPoint]
    """The newest changes, oldest first."""


class Profile(Struct, kw_only=True, tag="profile_info"):
    """Answer to ``profile``."""

    id: RequestId = None
    name: str
    bot: int | None = None
    """The computer's level, for a computer's profile."""
    created: float
    ratings: list[PoolRating]
    played: int
    """Finished games, rated and casual (aborted ones do not count)."""
    won: int
    lost: int
    drawn: int
    recent: list[GameSummary]
    """The newest games, newest first."""


class GameList(Struct, kw_only=True, tag="game_list"):
    """Answer to ``my_games``."""

    id: RequestId = None
    games: list[GameSummary]


class Error(Struct, kw_only=True, tag="error"):
    id: RequestId = None
    code: Annotated[str, Meta(examples=[code.value for code in ErrorCode])]
    """One of ``ErrorCode`` (PROTOCOL.md, section 19); a string so that clients survive codes
    added later."""
    message: str
    state: State | None = None
    """The room's current state, for ``stale_ply``, ``not_your_turn`` and the like."""


ServerMessage = (
    Welcome
    | Joined
    | Queued
    | Left
    | Rooms
    | Pong
    | State
    | Moved
    | ChatMessage
    | HistoryList
    | GameRecordReply
    | ReplayFrames
    | AnalysisReply
    | Suggestion
    | LiveEvalSet
    | Evaluation
    | LoggedIn
    | LoggedOut
    | LeaderboardList
    | Profile
    | GameList
    | Error
)
