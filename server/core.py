"""The server's socket-free core: frames in, frames out.

The adapter calls ``open`` when a websocket arrives, ``receive`` for each
frame and ``close`` when it is gone; each returns the actions to carry out:
``Send`` these bytes to these connections, ``Close`` that connection. Nothing
here touches a socket or a clock of its own, so the tests drive it directly.

Each connection goes through an explicit state machine::

    AWAITING_HELLO --hello--> LOBBY --create/join/watch/match--> IN_ROOM
                               ^  \\--quick_match--> QUEUED --paired--> IN_ROOM
                               \\------------ leave ----------------------/

A request that does not fit the state gets an error and changes nothing.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple, cast

from engine import Game
from protocol.codec import BadRequest, decode_request, encode, request_id
from protocol.messages import (
    VERSION,
    Create,
    Error,
    ErrorCode,
    Hello,
    Join,
    Joined,
    Leave,
    Left,
    ListRooms,
    MoveRequest,
    Ping,
    Pong,
    Queued,
    Request,
    RequestId,
    Rooms,
    State,
    VariantSpec,
    Watch,
    Welcome,
)
from protocol.messages import (
    QuickMatch as QuickMatchRequest,
)
from server.ratelimit import TokenBucket
from server.rooms import Room
from server.sessions import Connection, Session, token_hash

SERVER_NAME = "quoridor-server/0.1"
ROOM_CODE_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ROOM_CODE_LENGTH = 10
"""31**10 codes: about 50 bits, hopeless to guess under the rate limit."""

CLOSE_POLICY = 1008
CLOSE_REPLACED = 4000
"""Close code for a connection whose session was resumed on a newer one."""


class Send(NamedTuple):
    targets: list[int]
    payload: bytes


class Close(NamedTuple):
    target: int
    code: int
    reason: str


Action = Send | Close


@dataclass(frozen=True)
class Limits:
    """Abuse limits of the core (the adapter has its own for frames and sockets)."""

    rate: float = 20.0
    """Requests per second per connection, on average."""
    burst: float = 40.0
    strikes: int = 20
    """Rate-limited requests in a row before the connection is closed (1008)."""
    rooms_listed: int = 100


class Core:
    """All rooms, sessions and connections of one server."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic):
        self.limits = limits or Limits()
        self.clock = clock
        self.connections: dict[int, Connection] = {}
        self.sessions: dict[bytes, Session] = {}
        """Sessions by the hash of their resume token."""
        self.rooms: dict[str, Room] = {}
        self.queues: dict[tuple[int, int, int], list[Session]] = {}
        self.accepting = True
        """False while shutting down: no new rooms or seats."""

    # -- the adapter's three calls ---------------------------------------------

    def open(self, conn: int) -> None:
        bucket = TokenBucket(self.limits.rate, self.limits.burst, self.clock())
        self.connections[conn] = Connection(conn, bucket)

    def receive(self, conn: int, data: bytes | str) -> list[Action]:
        connection = self.connections[conn]
        if not connection.bucket.take(self.clock()):
            return self._rate_limited(connection, data)
        connection.strikes = 0
        try:
            request = decode_request(data)
        except BadRequest as bad:
            return [self._error(conn, bad.code, bad.message, bad.request_id)]
        return self._dispatch(connection, request)

    def close(self, conn: int) -> list[Action]:
        """The connection is gone: keep its session's seat, tell its room."""
        connection = self.connections.pop(conn)
        session = connection.session
        if session is None or session.conn != conn:
            return []
        session.conn = None
        self._unqueue(session)
        room = session.room
        if room is None:
            self._forget(session)
            return []
        if session.seat is None:
            room.spectators.discard(session)
            session.room = None
            self._forget(session)
        actions: list[Action] = [self._push(room)] if room.anyone_connected() else []
        self._collect(room)
        return actions

    # -- dispatch ------------------------------------------------------------

    def _dispatch(self, connection: Connection, request: Request) -> list[Action]:
        session = connection.session
        if isinstance(request, Hello):
            return self._hello(connection, request)
        if isinstance(request, Ping):
            return [Send([connection.id], encode(Pong(id=request.id)))]
        if session is None:
            return [
                self._error(connection.id, ErrorCode.HELLO_REQUIRED, "say hello first", request.id)
            ]
        match request:
            case ListRooms():
                return [self._list_rooms(connection.id, request)]
            case Leave():
                return self._leave(session, request)
            case MoveRequest():
                return self._move(session, request)
        if session.room is not None or session.queued is not None:
            where = f"room {session.room.code}" if session.room else "the quick-match queue"
            message = f"already in {where}: leave first"
            return [self._error(connection.id, ErrorCode.ALREADY_IN_ROOM, message, request.id)]
        if not self.accepting:
            message = "the server is restarting; try again in a moment"
            return [self._error(connection.id, ErrorCode.SERVER_SHUTTING_DOWN, message, request.id)]
        match request:
            case Create():
                return self._create(session, request)
            case Join():
                return self._join(session, request)
            case Watch():
                return self._watch(session, request)
            case QuickMatchRequest():
                return self._quick_match(session, request)
        raise AssertionError(f"unhandled request {request!r}")  # pragma: no cover

    # -- handshake -------------------------------------------------------------

    def _hello(self, connection: Connection, hello: Hello) -> list[Action]:
        conn = connection.id
        if connection.session is not None:
            return [
                self._error(conn, ErrorCode.ALREADY_GREETED, "hello was already said", hello.id)
            ]
        if hello.version.split(".")[0] != VERSION.split(".")[0]:
            message = (
                f"protocol version {hello.version} is not supported; this server speaks {VERSION}"
            )
            error = self._error(conn, ErrorCode.UNSUPPORTED_VERSION, message, hello.id)
            return [error, Close(conn, CLOSE_POLICY, "unsupported protocol version")]
        name = "".join(ch for ch in hello.name if ch.isprintable()).strip()
        if not name:
            message = "name must have a visible character - at `$.name`"
            return [self._error(conn, ErrorCode.INVALID_FIELD, message, hello.id)]
        if hello.resume is not None:
            return self._resume(connection, hello, name)
        session, token = Session.new(name)
        self.sessions[session.token_digest] = session
        return [self._attach(connection, session, token, hello.id)]

    def _resume(self, connection: Connection, hello: Hello, name: str) -> list[Action]:
        assert hello.resume is not None
        session = self.sessions.pop(token_hash(hello.resume), None)
        if session is None:
            message = "unknown or expired resume token; say hello without one for a new session"
            return [self._error(connection.id, ErrorCode.BAD_TOKEN, message, hello.id)]
        actions: list[Action] = []
        if session.conn is not None:
            # Two connections for one session: the newer one wins.
            old = self.connections[session.conn]
            old.session = None
            actions.append(Close(old.id, CLOSE_REPLACED, "session resumed on another connection"))
        token = session.rotate_token()
        self.sessions[session.token_digest] = session
        actions.append(self._attach(connection, session, token, hello.id))
        if session.room is not None:
            actions.append(self._push(session.room))
        return actions

    def _attach(self, connection: Connection, session: Session, token: str, rid: RequestId) -> Send:
        connection.session = session
        session.conn = connection.id
        room = session.room
        welcome = Welcome(
            id=rid,
            version=VERSION,
            server=SERVER_NAME,
            session=session.id,
            resume_token=token,
            name=session.name,
            room=room.code if room else None,
            seat=session.seat,
        )
        return Send([connection.id], encode(welcome))

    # -- lobby -------------------------------------------------------------------

    def _create(self, session: Session, request: Create) -> list[Action]:
        spec = self._variant(request.variant)
        if isinstance(spec, str):
            return [self._error(session.conn, ErrorCode.INVALID_VARIANT, spec, request.id)]
        room = self._new_room(spec, public=not request.private)
        return self._take_seat(session, room, 0, request.id)

    def _join(self, session: Session, request: Join) -> list[Action]:
        room = self.rooms.get(request.room)
        if room is None:
            return [self._no_room(session, request.room, request.id)]
        seat = request.seat
        if seat is not None and seat >= len(room.seats):
            message = f"seat {seat} does not exist: this room has {len(room.seats)} seats"
            return [self._error(session.conn, ErrorCode.INVALID_FIELD, message, request.id)]
        if request.secret is not None:
            return self._reclaim(session, room, seat, request)
        if seat is None:
            seat = room.free_seat()
            if seat is None:
                message = f"room {room.code} is full; you can watch it"
                return [self._error(session.conn, ErrorCode.ROOM_FULL, message, request.id)]
        elif room.seats[seat] is not None:
            message = f"seat {seat} in room {room.code} is taken"
            return [self._error(session.conn, ErrorCode.SEAT_TAKEN, message, request.id)]
        return self._take_seat(session, room, seat, request.id)

    def _reclaim(
        self, session: Session, room: Room, seat: int | None, request: Join
    ) -> list[Action]:
        """Take back a seat with its secret (from this or any other session)."""
        assert request.secret is not None
        assert session.conn is not None
        candidates = room.seats if seat is None else [room.seats[seat]]
        holder = next((h for h in candidates if h is not None and h.owns(request.secret)), None)
        if holder is None:
            message = f"that secret does not open a seat in room {room.code}"
            return [self._error(session.conn, ErrorCode.BAD_SECRET, message, request.id)]
        actions: list[Action] = []
        previous = holder.session
        if previous is not session and previous.room is room:
            previous.room = previous.seat = None
            if previous.conn is not None:
                actions.append(Send([previous.conn], encode(Left(id=None))))
            else:
                self._forget(previous)
        holder.session = session
        session.room, session.seat = room, room.seats.index(holder)
        joined = Joined(
            id=request.id, room=room.code, role="player", seat=session.seat, secret=holder.secret
        )
        return [*actions, Send([session.conn], encode(joined)), self._push(room)]

    def _take_seat(self, session: Session, room: Room, seat: int, rid: RequestId) -> list[Action]:
        holder = room.seat(session, seat, session.name)
        session.room, session.seat = room, seat
        joined = Joined(id=rid, room=room.code, role="player", seat=seat, secret=holder.secret)
        assert session.conn is not None
        return [Send([session.conn], encode(joined)), self._push(room)]

    def _watch(self, session: Session, request: Watch) -> list[Action]:
        room = self.rooms.get(request.room)
        if room is None:
            return [self._no_room(session, request.room, request.id)]
        room.spectators.add(session)
        session.room, session.seat = room, None
        assert session.conn is not None
        joined = Joined(id=request.id, room=room.code, role="spectator")
        return [Send([session.conn], encode(joined)), self._push(room)]

    def _quick_match(self, session: Session, request: QuickMatchRequest) -> list[Action]:
        spec = self._variant(request.variant)
        if isinstance(spec, str):
            return [self._error(session.conn, ErrorCode.INVALID_VARIANT, spec, request.id)]
        key = (spec.players, spec.size, spec.walls or 0)
        queue = self.queues.setdefault(key, [])
        queue.append(session)
        session.queued = (spec, request.id)
        assert session.conn is not None
        actions: list[Action] = [Send([session.conn], encode(Queued(id=request.id, variant=spec)))]
        if len(queue) < spec.players:
            return actions
        players, self.queues[key] = queue[: spec.players], queue[spec.players :]
        room = self._new_room(spec, public=False)
        for seat, player in enumerate(players):
            assert player.queued is not None
            rid, player.queued = player.queued[1], None
            actions += self._take_seat(player, room, seat, rid)[:1]
        actions.append(self._push(room))
        return actions

    def _list_rooms(self, conn: int, request: ListRooms) -> Send:
        listed = [r for r in self.rooms.values() if r.public and r.status != "finished"]
        listed.sort(key=lambda r: r.created, reverse=True)
        rooms = [room.info() for room in listed[: self.limits.rooms_listed]]
        return Send([conn], encode(Rooms(id=request.id, rooms=rooms)))

    def _leave(self, session: Session, request: Leave) -> list[Action]:
        assert session.conn is not None
        room = session.room
        if room is None and session.queued is None:
            message = "not in a room or queue"
            return [self._error(session.conn, ErrorCode.NOT_IN_ROOM, message, request.id)]
        self._unqueue(session)
        actions: list[Action] = [Send([session.conn], encode(Left(id=request.id)))]
        if room is None:
            return actions
        if session.seat is None:
            room.spectators.discard(session)
        elif room.status == "waiting":
            room.seats[session.seat] = None
        # A player who leaves a game in progress keeps the seat (and its
        # secret); it shows as disconnected until they come back.
        session.room = session.seat = None
        if room.anyone_connected():
            actions.append(self._push(room))
        self._collect(room)
        return actions

    # -- play ----------------------------------------------------------------

    def _move(self, session: Session, request: MoveRequest) -> list[Action]:
        conn = session.conn
        assert conn is not None
        room = session.room
        if room is None:
            return [self._error(conn, ErrorCode.NOT_IN_ROOM, "join a room first", request.id)]
        seat = session.seat
        if seat is None:
            message = "spectators cannot move"
            return [self._error(conn, ErrorCode.NOT_A_PLAYER, message, request.id)]
        game = room.game
        refusal = self._refusal(conn, room, seat, request)
        if refusal is not None:
            return refusal
        try:
            game.play(request.move)
        except ValueError as reason:
            state = room.state()
            return [self._error(conn, ErrorCode.ILLEGAL_MOVE, str(reason), request.id, state)]
        room.movers.append(seat)
        return [self._push(room, request.id)]

    def _refusal(
        self, conn: int, room: Room, seat: int, request: MoveRequest
    ) -> list[Action] | None:
        """Why this move cannot be played now, as the reply; None when it can."""
        game, status = room.game, room.status
        if status == "waiting":
            message = "the game starts when every seat is taken"
            return [self._error(conn, ErrorCode.GAME_NOT_STARTED, message, request.id)]
        resend = request.ply < game.ply and room.movers[request.ply] == seat
        if resend and game.moves[request.ply] == request.move:
            # A move already applied, sent again: answer it, never apply it twice.
            return [Send([conn], encode(room.state(request.id)))]
        if status == "finished":
            message = "the game is over"
            return [self._error(conn, ErrorCode.GAME_OVER, message, request.id, room.state())]
        if request.ply != game.ply:
            message = (
                f"move {request.move} is for ply {request.ply} but the game is at ply {game.ply}"
            )
            return [self._error(conn, ErrorCode.STALE_PLY, message, request.id, room.state())]
        if game.turn != seat:
            message = f"it is seat {game.turn}'s turn"
            return [self._error(conn, ErrorCode.NOT_YOUR_TURN, message, request.id, room.state())]
        return None

    # -- helpers ---------------------------------------------------------------

    def _variant(self, spec: VariantSpec) -> VariantSpec | str:
        """The variant with its wall count filled in, or why it is not one."""
        try:
            game = Game(spec.players, spec.size, spec.walls)
        except ValueError as exc:
            return str(exc)
        v = game.variant
        return VariantSpec(players=cast(Literal[2, 4], v.players), size=v.size, walls=v.walls)

    def _new_room(self, spec: VariantSpec, public: bool) -> Room:
        code = "".join(secrets.choice(ROOM_CODE_ALPHABET) for _ in range(ROOM_CODE_LENGTH))
        room = Room(code, spec, public, self.clock())
        self.rooms[code] = room
        return room

    def _push(self, room: Room, request_id: RequestId = None) -> Send:
        """A new event in ``room``: its state, numbered, to everyone in it."""
        room.event += 1
        return Send(room.connections(), encode(room.state(request_id)))

    def _collect(self, room: Room) -> None:
        """Forget a room nobody can come back to, or that no game keeps alive."""
        if room.anyone_connected() or room.status == "playing":
            return
        del self.rooms[room.code]
        for holder in room.seats:
            if holder is not None and holder.session.room is room:
                holder.session.room = holder.session.seat = None
                if holder.session.conn is None:
                    self._forget(holder.session)

    def _forget(self, session: Session) -> None:
        """Drop a session that holds nothing worth resuming."""
        if session.conn is None and session.room is None:
            self.sessions.pop(session.token_digest, None)

    def _unqueue(self, session: Session) -> None:
        if session.queued is None:
            return
        for queue in self.queues.values():
            if session in queue:
                queue.remove(session)
        session.queued = None

    def _no_room(self, session: Session, code: str, rid: RequestId) -> Action:
        return self._error(session.conn, ErrorCode.ROOM_NOT_FOUND, f"no room {code!r}", rid)

    def _rate_limited(self, connection: Connection, data: bytes | str) -> list[Action]:
        connection.strikes += 1
        if connection.strikes > self.limits.strikes:
            return [Close(connection.id, CLOSE_POLICY, "rate limit exceeded")]
        message = f"more than {self.limits.rate:g} requests a second; slow down"
        return [self._error(connection.id, ErrorCode.RATE_LIMITED, message, request_id(data))]

    @staticmethod
    def _error(
        conn: int | None,
        code: ErrorCode,
        message: str,
        rid: RequestId,
        state: State | None = None,
    ) -> Send:
        assert conn is not None
        return Send([conn], encode(Error(id=rid, code=code, message=message, state=state)))
