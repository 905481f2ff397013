"""The server's socket-free core: frames in, frames out.

The adapter calls ``open`` when a websocket arrives, ``receive`` for each
frame, ``close`` when it is gone, and ``tick`` when ``next_deadline`` comes;
each returns the actions to carry out: ``Send`` these bytes to these
connections, ``Close`` that connection. Nothing here touches a socket, and
time comes from the injected ``clock``, so the tests drive it exactly.

Each connection goes through an explicit state machine::

    AWAITING_HELLO --hello--> LOBBY --create/join/watch--> IN_ROOM
                               |  \\--quick_match--> QUEUED --paired--> IN_ROOM
                               ^------------------- leave ---------------/

A request that does not fit the state gets an error and changes nothing.
"""

from __future__ import annotations

import heapq
import logging
import secrets
import time
from collections import Counter
from collections.abc import Callable

from engine.ai.evaluation import Evaluation as EngineEvaluation
from engine.ai.evaluation import MoveReview
from protocol.codec import BadRequest, decode_request, encode
from protocol.messages import (
    Abort,
    AiSpec,
    Analyse,
    Chat,
    ChatMessage,
    Claim,
    Create,
    Draw,
    ErrorCode,
    Evaluation,
    FetchGame,
    Hello,
    Hint,
    History,
    Join,
    Joined,
    Leave,
    Left,
    ListRooms,
    LiveEval,
    LiveEvalSet,
    MoveRequest,
    Ping,
    Pong,
    Queued,
    Rematch,
    ReplayRequest,
    Request,
    RequestId,
    Resign,
    Rooms,
    Suggestion,
    Takeback,
    TimeControl,
    VariantSpec,
    Watch,
)
from protocol.messages import QuickMatch as QuickMatchRequest
from server import ratings, text
from server.accountdb import RatedGame
from server.actions import (
    CLOSE_REPLACED,
    AccountRequest,
    Action,
    Ask,
    Close,
    LiveEvalStep,
    Send,
    Suggest,
    Think,
)
from server.context import Context, Limits, full_variant
from server.database import Batch, Loaded
from server.history import GameHistory
from server.historydesk import HistoryDesk
from server.records import AccountRecord
from server.registry import SessionRegistry
from server.rooms import Room
from server.sessions import Connection, Session
from server.snapshot import restore_room, restore_session

__all__ = [
    "CLOSE_REPLACED",
    "HINT_LEVEL",
    "HINT_SECONDS",
    "LIVE_DEPTH",
    "LIVE_NODES",
    "Action",
    "Ask",
    "Close",
    "Core",
    "Limits",
    "LiveEvalStep",
    "Send",
    "Suggest",
    "Think",
]

log = logging.getLogger("quoridor.core")

ROOM_CODE_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ROOM_CODE_LENGTH = 10
"""31**10 codes: about 50 bits, hopeless to guess under the rate limit."""

HINT_LEVEL = 5
HINT_SECONDS = 1.0
"""How the computer thinks for a hint: its strongest level, a fixed second."""

LIVE_DEPTH = 3
LIVE_NODES = 4_000
"""The live evaluation's small fixed budget: 3 plies, at most 4,000 positions (tens of ms)."""

InRoomRequest = MoveRequest | Resign | Draw | Claim | Abort | Rematch | Chat | Hint | Takeback
"""Requests that act in the room the session is in."""


class Core:
    """All rooms, sessions and connections of one server."""

    def __init__(
        self,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ):
        self.limits = limits or Limits()
        self.clock = clock
        self.wall_clock = wall_clock
        self.context = Context(self.limits, clock, wall_clock)
        self.counters = self.context.counters
        """Events for the metrics: ``move:<outcome>``, ``error:<code>``, resumes, flags..."""
        self.journal = self.context.journal
        self.registry = SessionRegistry(self.context)
        self.desk = HistoryDesk(self.context)
        self.rooms: dict[str, Room] = {}
        self.owned: Counter[str] = Counter()
        """Rooms held by each ``session:<id>`` and ``address:<ip>`` (see ``Room.owners``)."""
        self.queues: dict[tuple[object, ...], list[Session]] = {}
        self.accepting = True
        """False while shutting down: no new rooms or seats."""
        self.closing_all = False
        """True while the server closes every connection to stop (see ``close``)."""
        self._timers: list[tuple[float, int, str]] = []
        """Heap of (deadline, tiebreak, room code); stale entries are skipped."""
        self._tiebreak = 0
        self._hinting: set[int] = set()
        """Connections whose hint the computer is working out (one each at a time)."""
        self.last_kind = ""
        """The type of the last request received (``invalid`` if it did not decode)."""
        self.computer_busy: Callable[[], bool] = lambda: False
        """Whether the computer's workers are saturated (then new computer games are refused)."""
        self._woken: list[Action] = []
        """Moves the computer owes in games taken back by ``restore``."""
        self.computers: dict[int, AccountRecord] = {}
        """The computer's accounts by level (from the database; none without one)."""
        self._recheck_at: float | None = None
        """When to look again for pairs in the rated quick-match queues (their windows
        widen while players wait)."""

    @property
    def connections(self) -> dict[int, Connection]:
        return self.registry.connections

    @property
    def sessions(self) -> dict[bytes, Session]:
        """Sessions by the hash of their resume token."""
        return self.registry.sessions

    @property
    def history(self) -> GameHistory:
        """The finished games kept in memory (the history desk's)."""
        return self.desk.history

    @history.setter
    def history(self, history: GameHistory) -> None:
        self.desk.history = history

    # -- the adapter's calls -----------------------------------------------------

    def open(self, conn: int, address: str = "") -> None:
        self.registry.open(conn, address)

    def receive(self, conn: int, data: bytes | str) -> list[Action]:
        # A deadline that passed but was not acted on yet (its timer is late)
        # comes first: a move that arrives after the flag fell is too late.
        overdue = self.next_deadline()
        if overdue is not None and overdue <= self.clock():
            return self.tick() + self.receive(conn, data)
        connection = self.connections[conn]
        if (refused := self.registry.throttled(connection, data)) is not None:
            return refused
        try:
            request = decode_request(data)
        except BadRequest as bad:
            self.last_kind = "invalid"
            return [self._error(conn, bad.code, bad.message, bad.request_id)]
        self.last_kind = request.__struct_config__.tag  # type: ignore[assignment]
        return self._dispatch(connection, request)

    def close(self, conn: int, deliberate: bool = False) -> list[Action]:
        """The connection is gone (``deliberate``: the client closed it cleanly)."""
        session = self.registry.close(conn)
        self.desk.forget(conn)
        self._hinting.discard(conn)
        if session is None:
            return []
        self._unqueue(session)
        if self.closing_all:
            # The server is stopping: a player dropped now is no event. Nobody would
            # receive it (every connection is closing), so it would only leave a gap
            # in the event numbers; a restarted server starts everyone away anyway.
            return []
        room = session.room
        if room is None:
            self.registry.forget(session)
            return []
        if session.seat is None:
            # A spectator going is no event: with many spectators coming and going, a
            # state to everyone for each would multiply a few bytes into megabytes. The
            # count is up to date in the room's next state.
            room.spectators.discard(session)
            session.room = None
            self.registry.forget(session)
            self._collect(room)
            return []
        # The seat is kept for the grace period: in a waiting room it is then
        # given up; in a game the others may then claim.
        absence = self.limits.absence
        grace = absence.deliberate_grace if deliberate else absence.grace
        room.away(session.seat, self.clock(), grace)
        self._schedule(room)
        self.journal.room(room)
        actions: list[Action] = [self._push(room)] if room.anyone_connected() else []
        self._collect(room)
        return actions

    def next_deadline(self) -> float | None:
        """When ``tick`` must next be called (on this core's clock), if ever."""
        rooms = self._room_deadline()
        if self._recheck_at is None:
            return rooms
        return self._recheck_at if rooms is None else min(rooms, self._recheck_at)

    def _room_deadline(self) -> float | None:
        while self._timers:
            when, _, code = self._timers[0]
            room = self.rooms.get(code)
            if room is not None and room.deadline(self.limits.absence) == when:
                return when
            heapq.heappop(self._timers)  # stale: the room moved on or is gone
        return None

    def tick(self) -> list[Action]:
        """Act on every deadline that has come: flags and abandoned seats."""
        now = self.clock()
        actions: list[Action] = []
        if self._recheck_at is not None and self._recheck_at <= now:
            self._recheck_at = None
            for key, queue in list(self.queues.items()):
                actions += self._pair(key, queue)
        while (when := self._room_deadline()) is not None and when <= now:
            _, _, code = heapq.heappop(self._timers)
            room = self.rooms[code]
            if removed := room.expire(now, self.limits.absence):
                # Every seat taken out is pushed now, not only a game's end: in a
                # four-player game the others play on and must be told at once.
                self.counters["flags"] += removed.count("time")
                actions += self._after_results(room)
            if released := room.release_absent(now):
                for session in released:
                    session.room = session.seat = None
                    self.registry.forget(session)
                self.journal.room(room)
                if room.anyone_connected():
                    actions.append(self._push(room))
            self._schedule(room)
            self._collect(room)
        return actions

    # -- dispatch ------------------------------------------------------------

    def _dispatch(self, connection: Connection, request: Request) -> list[Action]:
        session = connection.session
        if isinstance(request, MoveRequest) and session is not None:
            return self._in_room(session, request)  # the common case first
        if isinstance(request, Hello):
            return self._hello(connection, request)
        if isinstance(request, Ping):
            return [Send([connection.id], encode(Pong(id=request.id)))]
        if isinstance(request, AccountRequest):
            return self.registry.ask(connection, request)
        if session is None:
            return [
                self._error(connection.id, ErrorCode.HELLO_REQUIRED, "say hello first", request.id)
            ]
        match request:
            case ListRooms():
                return [self._list_rooms(connection.id, request)]
            case History():
                return [self.desk.listing(connection.id, request)]
            case FetchGame():
                return self._fetch_game(connection, request)
            case ReplayRequest():
                return [self.desk.replay(connection.id, connection.bucket, request)]
            case Analyse():
                return self.desk.analyse(connection.id, session.id, request)
            case LiveEval():
                return self._live_eval(connection.id, session, request)
            case Leave():
                return self._leave(session, request)
            case (
                MoveRequest()
                | Resign()
                | Draw()
                | Claim()
                | Abort()
                | Rematch()
                | Chat()
                | Hint()
                | Takeback()
            ):
                return self._in_room(session, request)
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
        actions, resumed = self.registry.hello(connection, hello)
        if resumed is None:
            return actions
        if resumed.queued is not None:
            # Still waiting for opponents: say so, or the client would think it is in
            # the lobby (its create would get already_in_room, then a pairing).
            queued = Queued(id=None, variant=resumed.queued.variant, clock=resumed.queued.clock)
            actions.append(Send([connection.id], encode(queued)))
        room = resumed.room
        if room is not None:
            actions += self._replay(room, connection.id, hello.last_event)
            if resumed.seat is None:
                actions.append(self._push(room))
            else:
                actions += self._back(room, resumed.seat)
        return actions

    def asked(self, conn: int) -> None:
        """The adapter answered this connection's account request."""
        self.registry.asked(conn)

    def authenticated(
        self, conn: int, hello: Hello, account: AccountRecord, login: bytes
    ) -> list[Action]:
        """A ``hello`` whose login token opened ``account``: a session playing as it."""
        return self.registry.authenticated(conn, hello, account, login)

    def ratings_committed(self, games: list[RatedGame]) -> list[Action]:
        """Rated games whose rating changes are on disk: show them in their rooms."""
        actions: list[Action] = []
        for game in games:
            self.counters["rated_games"] += 1
            room = self.rooms.get(game.room)
            for change in game.changes:
                self._rated(room, game, change.account, change.before, change.after)
            if room is not None and room.number == game.number and room.anyone_connected():
                actions.append(self._push(room))
        return actions

    def _rated(
        self,
        room: Room | None,
        game: RatedGame,
        account: int,
        before: ratings.RatingRecord,
        after: ratings.RatingRecord,
    ) -> None:
        """Bring the account's rating up to date where the server shows it."""
        for level, computer in self.computers.items():
            if computer.id == account:
                self.computers[level].ratings[after.pool] = after
        if room is None:
            return
        for seat, holder in enumerate(room.seats):
            if holder is not None and holder.account is not None and holder.account.id == account:
                holder.account.ratings[after.pool] = after
                if room.number == game.number:
                    room.rating_changes[seat] = ratings.shown(after.mu) - ratings.shown(before.mu)

    def _replay(self, room: Room, conn: int, last_event: int | None) -> list[Action]:
        """The events after ``last_event`` from the room's log, or nothing if it is too old.

        Too old (or unknown): the state pushed right after brings the client
        up to date anyway.
        """
        if last_event is None or not room.log or last_event + 1 < room.log[0][0]:
            return []
        return [Send([conn], frame) for event, frame in room.log if event > last_event]

    # -- lobby -------------------------------------------------------------------

    def _room_refused(self, session: Session, rid: RequestId) -> Send | None:
        """The error for a session that may not open another room now, if it may not."""
        limits = self.limits
        if len(self.rooms) >= limits.max_rooms:
            message = f"the server holds as many rooms as it may ({limits.max_rooms}); try later"
            return self._error(session.conn, ErrorCode.SERVER_BUSY, message, rid)
        if self.owned[f"session:{session.id}"] >= limits.rooms_per_session:
            message = (
                f"you already have {limits.rooms_per_session} rooms open; "
                "finish or leave one (a room you left closes after its grace period)"
            )
            return self._error(session.conn, ErrorCode.TOO_MANY_ROOMS, message, rid)
        if session.address and self.owned[f"address:{session.address}"] >= limits.rooms_per_address:
            message = f"your address already has {limits.rooms_per_address} rooms open"
            return self._error(session.conn, ErrorCode.TOO_MANY_ROOMS, message, rid)
        return None

    def _own(self, room: Room, session: Session) -> None:
        room.owners = (f"session:{session.id}",)
        if session.address:
            room.owners += (f"address:{session.address}",)
        self.owned.update(room.owners)

    def _create(self, session: Session, request: Create) -> list[Action]:
        if (refused := self._room_refused(session, request.id)) is not None:
            return [refused]
        if request.ai is not None and self.computer_busy():
            message = "the computer players are all busy; try again in a minute, or play a person"
            return [self._error(session.conn, ErrorCode.SERVER_BUSY, message, request.id)]
        spec = full_variant(request.variant)
        public = not request.private and request.ai is None
        pool, refusal = self._pool(session, request.rated, spec, request.clock, request.ai)
        if refusal is not None:
            return [self._error(session.conn, *refusal, request.id)]
        room = self._new_room(spec, public, request.clock, request.match, pool)
        self._own(room, session)
        if request.ai is not None:
            computer = self.computers.get(request.ai.level) if pool else None
            for seat in range(1, spec.players):
                name = f"Computer L{request.ai.level}"
                bot, _ = Session.new(name, self.context.chat_bucket())
                room.seat_bot(seat, bot, request.ai.level, request.ai.seconds, computer)
        actions = self._take_seat(session, room, 0, request.id)
        room.holder(0).allows_eval = request.spectator_eval
        return actions

    def _pool(
        self,
        session: Session,
        rated: bool | None,
        spec: VariantSpec,
        clock: TimeControl | None,
        ai: AiSpec | None,
    ) -> tuple[str | None, tuple[ErrorCode, str] | None]:
        """The rating pool of a game asked for as ``rated`` (None: rated if it can be), or
        None for a casual one; or why it cannot be rated when that was asked for."""
        pool = ratings.pool_of(spec, clock)
        why: tuple[ErrorCode, str] | None = None
        if session.account is None:
            why = ErrorCode.ACCOUNT_REQUIRED, "log in to play rated games - at `$.rated`"
        elif pool is None:
            why = ErrorCode.INVALID_FIELD, "only the standard wall count is rated - at `$.rated`"
        elif ai is not None and (ai.seconds is not None or ai.level not in self.computers):
            why = (
                ErrorCode.INVALID_FIELD,
                "a rated game against the computer uses its level's own time - at `$.ai.seconds`",
            )
        if rated is None:
            return (pool if why is None else None), None
        if not rated:
            return None, None
        return (pool, None) if why is None else (None, why)

    def _join(self, session: Session, request: Join) -> list[Action]:
        room = self.rooms.get(request.room)
        if room is None:
            return [self._no_room(session, request.room, request.id)]
        if room.rated and request.secret is None:
            account = session.account
            refusal: tuple[ErrorCode, str] | None = None
            if account is None:
                refusal = ErrorCode.ACCOUNT_REQUIRED, f"room {room.code} is rated: log in to play"
            elif any(h and h.account and h.account.id == account.id for h in room.seats):
                refusal = ErrorCode.SEAT_TAKEN, "you already hold a seat in this rated room"
            if refusal is not None:
                return [self._error(session.conn, *refusal, request.id)]
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
        actions = self._take_seat(session, room, seat, request.id)
        room.holder(seat).allows_eval = request.spectator_eval
        return actions

    def _reclaim(
        self, session: Session, room: Room, seat: int | None, request: Join
    ) -> list[Action]:
        """Take back a seat with its secret (from this or any other session)."""
        assert request.secret is not None
        assert session.conn is not None
        candidates = room.seats if seat is None else [room.seats[seat]]
        holder = next((h for h in candidates if h is not None and h.owns(request.secret)), None)
        if holder is not None and room.rated and not _same_account(holder.account, session):
            holder = None  # a rated seat stays with its account, whoever learnt the secret
        if holder is None:
            message = f"that secret does not open a seat in room {room.code}"
            return [self._error(session.conn, ErrorCode.BAD_SECRET, message, request.id)]
        actions: list[Action] = []
        previous = holder.session
        if previous is not session and previous.room is room:
            previous.room = previous.seat = None
            self.journal.session(previous)
            if previous.conn is not None:
                actions.append(Send([previous.conn], encode(Left(id=None))))
            else:
                self.registry.forget(previous)
        holder.session = session
        secret = holder.new_secret()  # whoever had the old one is out
        session.room, session.seat = room, room.seats.index(holder)
        joined = Joined(
            id=request.id, room=room.code, role="player", seat=session.seat, secret=secret
        )
        return [*actions, Send([session.conn], encode(joined)), *self._back(room, session.seat)]

    def _seat(self, session: Session, room: Room, seat: int, rid: RequestId) -> Send:
        """Seat ``session``; the ``joined`` reply (the room's push is the caller's)."""
        secret = room.seat(session, seat, session.name)
        session.room, session.seat = room, seat
        joined = Joined(id=rid, room=room.code, role="player", seat=seat, secret=secret)
        assert session.conn is not None
        return Send([session.conn], encode(joined))

    def _take_seat(self, session: Session, room: Room, seat: int, rid: RequestId) -> list[Action]:
        actions: list[Action] = [self._seat(session, room, seat, rid), self._push(room)]
        self._schedule(room)
        return actions + self._think(room)

    def _watch(self, session: Session, request: Watch) -> list[Action]:
        room = self.rooms.get(request.room)
        if room is None:
            return [self._no_room(session, request.room, request.id)]
        if len(room.spectators) >= self.limits.spectators:
            message = (
                f"room {room.code} has as many spectators as it takes ({len(room.spectators)})"
            )
            return [self._error(session.conn, ErrorCode.ROOM_FULL, message, request.id)]
        room.spectators.add(session)
        session.room, session.seat = room, None
        assert session.conn is not None
        joined = Joined(id=request.id, room=room.code, role="spectator")
        # The newcomer alone gets the room's state (no new event, nothing to the others:
        # their next state counts the spectator).
        state = encode(room.state(self.clock()))
        return [Send([session.conn], encode(joined)), Send([session.conn], state)]

    def _quick_match(self, session: Session, request: QuickMatchRequest) -> list[Action]:
        if (refused := self._room_refused(session, request.id)) is not None:
            return [refused]
        spec = full_variant(request.variant)
        clock = request.clock
        pool, refusal = self._pool(session, request.rated, spec, clock, None)
        if refusal is not None:
            return [self._error(session.conn, *refusal, request.id)]
        key = (spec.players, spec.size, spec.walls, clock.base if clock else None,
               clock.increment if clock else None, pool)  # fmt: skip
        queue = self.queues.setdefault(key, [])
        queue.append(session)
        session.queued = Queued(id=request.id, variant=spec, clock=clock, rated=pool is not None)
        session.queued_since = self.clock()
        assert session.conn is not None
        return [Send([session.conn], encode(session.queued)), *self._pair(key, queue)]

    def _pair(self, key: tuple[object, ...], queue: list[Session]) -> list[Action]:
        """Seat the players of ``queue`` who can play each other, if there are enough."""
        players, size, walls, base, increment, pool = key
        assert isinstance(players, int)
        assert isinstance(size, int)
        assert isinstance(walls, int)
        group = self._pick(queue, players, pool if isinstance(pool, str) else None)
        if group is None:
            return []
        for player in group:
            queue.remove(player)
        if not queue:
            del self.queues[key]
        spec = VariantSpec(players=players, size=size, walls=walls)  # type: ignore[arg-type]
        clock = TimeControl(base=base, increment=increment) if base is not None else None  # type: ignore[arg-type]
        room = self._new_room(spec, False, clock, False, pool if isinstance(pool, str) else None)
        self._own(room, group[0])
        actions: list[Action] = []
        for seat, player in enumerate(group):
            assert player.queued is not None
            rid, player.queued = player.queued.id, None
            actions.append(self._seat(player, room, seat, rid))
        actions.append(self._push(room))
        self._schedule(room)
        return actions + self._pair(key, queue)

    def _pick(self, queue: list[Session], players: int, pool: str | None) -> list[Session] | None:
        """The players to seat together: the first to come in a casual queue; in a rated one
        the closest ratings within the window of the longest waiter among them (it widens
        with waiting, ``ratings.match_window``), in the order they came."""
        if len(queue) < players:
            return None
        if pool is None:
            return queue[:players]
        now = self.clock()
        ranked = sorted(queue, key=lambda s: _rating(s, pool))
        for start in range(len(ranked) - players + 1):
            group = ranked[start : start + players]
            spread = _rating(group[-1], pool) - _rating(group[0], pool)
            waited = max(now - s.queued_since for s in group)
            if spread <= ratings.match_window(waited):
                return sorted(group, key=queue.index)
        recheck = now + ratings.RECHECK_SECONDS
        self._recheck_at = recheck if self._recheck_at is None else min(self._recheck_at, recheck)
        return None

    def _list_rooms(self, conn: int, request: ListRooms) -> Send:
        listed = [r for r in self.rooms.values() if r.listable()]
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
        seat = session.seat
        spectator = seat is None
        if seat is None:
            room.spectators.discard(session)  # no event: see ``close``
        elif room.status == "waiting":
            room.seats[seat] = None
        else:
            # Leaving a game in progress keeps the seat (and its secret); the
            # others may claim after the short, deliberate grace period.
            room.away(seat, self.clock(), self.limits.absence.deliberate_grace)
        session.room = session.seat = None
        self.journal.room(room)
        self.journal.session(session)
        if room.anyone_connected() and not spectator:
            actions.append(self._push(room))
        self._schedule(room)
        self._collect(room)
        return actions

    # -- in a room -----------------------------------------------------------

    def _in_room(self, session: Session, request: InRoomRequest) -> list[Action]:
        conn = session.conn
        assert conn is not None
        room = session.room
        if room is None:
            return [self._error(conn, ErrorCode.NOT_IN_ROOM, "join a room first", request.id)]
        seat = session.seat
        if seat is None:
            message = "spectators can watch and read the chat, not play or write"
            return [self._error(conn, ErrorCode.NOT_A_PLAYER, message, request.id)]
        if isinstance(request, Chat):
            return self._chat(session, room, seat, request)
        if isinstance(request, Rematch):
            return self._rematch(conn, room, seat, request)
        now = self.clock()
        if room.status == "waiting":
            message = "the game starts when every seat is taken"
            return [self._error(conn, ErrorCode.GAME_NOT_STARTED, message, request.id, room, now)]
        if isinstance(request, MoveRequest):
            return self._move(conn, room, seat, request, now)
        if room.status == "finished":
            message = "the game is over"
            return [self._error(conn, ErrorCode.GAME_OVER, message, request.id, room, now)]
        if not room.active(seat):
            message = "you are out of this game"
            return [self._error(conn, ErrorCode.GAME_OVER, message, request.id, room, now)]
        if isinstance(request, Hint | Takeback):
            return self._help(conn, room, seat, request, now)
        match request:
            case Resign():
                room.remove(seat, "resign", now)
            case Draw():
                refusal = self._draw(conn, room, seat, request, now)
                if refusal is not None:
                    return [refusal]
            case Claim():
                claimable = room.claimable(now)
                if not claimable:
                    message = "nobody has been away long enough to claim against"
                    return [
                        self._error(conn, ErrorCode.CANNOT_CLAIM, message, request.id, room, now)
                    ]
                for gone in claimable:
                    if room.status == "playing":
                        room.remove(gone, "abandon", now)
            case Abort():
                if room.game.ply >= room.spec.players:
                    message = "a game can only be aborted before every seat has moved"
                    return [
                        self._error(conn, ErrorCode.CANNOT_ABORT, message, request.id, room, now)
                    ]
                room.finish(None, "aborted", now)
        return self._after_results(room, request.id)

    def _move(
        self, conn: int, room: Room, seat: int, request: MoveRequest, now: float
    ) -> list[Action]:
        game = room.game
        resend = request.ply < game.ply and room.movers[request.ply] == seat
        if resend and game.moves[request.ply] == request.move:
            # A move already applied, sent again: answer it, never apply it twice.
            return [Send([conn], room.state_frame(now, request.id))]
        refusal: tuple[ErrorCode, str] | None = None
        if room.status == "finished":
            refusal = ErrorCode.GAME_OVER, "the game is over"
        elif request.ply != game.ply:
            refusal = (
                ErrorCode.STALE_PLY,
                f"move {request.move} is for ply {request.ply} but the game is at ply {game.ply}",
            )
        elif game.turn != seat:
            refusal = ErrorCode.NOT_YOUR_TURN, f"it is seat {game.turn}'s turn"
        if refusal is None:
            try:
                room.play(seat, request.move, now)
            except ValueError as reason:
                refusal = ErrorCode.ILLEGAL_MOVE, str(reason)
        if refusal is not None:
            self.counters[f"move:{refusal[0]}"] += 1
            return [self._error(conn, *refusal, request.id, room, now)]
        self.counters["move:accepted"] += 1
        return self._after_results(room, request.id, moved=True)

    def _draw(self, conn: int, room: Room, seat: int, request: Draw, now: float) -> Send | None:
        """Apply a draw offer, acceptance or refusal; the error reply if it makes no sense."""
        others = room.draw_offers - {seat}
        if request.action == "offer" or (request.action == "accept" and others):
            room.draw_offers.add(seat)
            if room.draw_agreed():
                room.finish(None, "draw", now)
            return None
        if request.action == "decline" and others:
            room.draw_offers.clear()
            return None
        message = "there is no draw offer from another player to answer"
        return self._error(conn, ErrorCode.NO_OFFER, message, request.id, room, now)

    def _rematch(self, conn: int, room: Room, seat: int, request: Rematch) -> list[Action]:
        now = self.clock()
        if room.status != "finished" or (room.match_game and not room.match_over()):
            message = "a rematch can be asked for once the game (or match) is over"
            return [self._error(conn, ErrorCode.GAME_NOT_OVER, message, request.id, room, now)]
        room.rematch.add(seat)
        room.rematch.update(s for s, h in enumerate(room.seats) if h is not None and h.bot)
        if not self._rematch_ready(room):
            return [self._push(room, request.id)]
        return self._start_rematch(room, request.id)

    def _rematch_ready(self, room: Room) -> bool:
        """Every seat asked for a rematch and every player is here to play it.

        A player who asked and then went away is waited for: starting a game it
        cannot play would hand the others a claim it never had a chance to avoid.
        """
        players = range(room.spec.players)
        return (
            room.status == "finished"
            and len(room.rematch) == room.spec.players
            and all(room.connected(seat) for seat in players)
        )

    def _start_rematch(self, room: Room, rid: RequestId = None) -> list[Action]:
        room.start_rematch()
        self._schedule(room)
        return [*self._seat_changes(room), self._push(room, rid), *self._think(room)]

    def _back(self, room: Room, seat: int) -> list[Action]:
        """A player came back to its seat: end its absence, push that, and start the
        rematch that waited for it, if one did."""
        room.back(seat)
        self._schedule(room)
        actions: list[Action] = [self._push(room)]
        if self._rematch_ready(room):
            actions += self._start_rematch(room)
        return actions

    def _chat(self, session: Session, room: Room, seat: int, request: Chat) -> list[Action]:
        assert session.conn is not None
        holder = room.holder(seat)
        if holder.chat is None:
            holder.chat = self.context.chat_bucket()
        # The seat's bucket, not the session's: reclaiming the seat on a fresh session
        # with its secret must not start a fresh allowance.
        if not holder.chat.take(self.clock()):
            message = "chatting too fast; wait a moment"
            return [self._error(session.conn, ErrorCode.RATE_LIMITED, message, request.id)]
        line_text = text.clean(request.text)
        if (problem := text.problem(line_text)) is not None:
            message = f"chat text {problem} - at `$.text`"
            return [self._error(session.conn, ErrorCode.INVALID_FIELD, message, request.id)]
        room.event += 1
        line = ChatMessage(
            id=request.id,
            event=room.event,
            room=room.code,
            seat=seat,
            name=session.name,
            text=line_text,
        )
        return [self._publish(room, encode(line))]

    def _after_results(
        self, room: Room, rid: RequestId = None, moved: bool = False
    ) -> list[Action]:
        """Push what changed; when a match game ended, start the next and push that too.

        ``moved``: the change was a move (the database then only appends it,
        unless the move ended the game).
        """
        self.desk.archive(room)
        actions: list[Action] = [self._push(room, rid, moved and room.result is None)]
        if room.continue_match():
            self._absent_from_new_game(room)
            actions += self._seat_changes(room)
            actions.append(self._push(room))
        self._schedule(room)
        return actions + self._think(room) + self._live(room)

    # -- hints and takebacks (casual games against the computer) ------------------

    def _help(
        self, conn: int, room: Room, seat: int, request: Hint | Takeback, now: float
    ) -> list[Action]:
        code = ErrorCode.CANNOT_HINT if isinstance(request, Hint) else ErrorCode.CANNOT_TAKE_BACK
        game = room.game
        refusal = None
        if not room.against_computer(seat):
            refusal = "only in an untimed two-player game against the computer"
        elif room.rated:
            refusal = "not in a rated game"
        elif game.turn != seat:
            refusal = "only on your turn: the computer is thinking"
        elif isinstance(request, Takeback) and (game.ply < 2 or room.movers[-2] != seat):
            refusal = "you have no move to take back"
        elif isinstance(request, Hint) and conn in self._hinting:
            refusal = "your last hint is still being worked out"
        if refusal is not None:
            return [self._error(conn, code, refusal, request.id, room, now)]
        if isinstance(request, Takeback):
            room.take_back(2)
            self.counters["takebacks"] += 1
            return self._after_results(room, request.id)
        self._hinting.add(conn)
        self.counters["hints"] += 1
        return [Suggest(conn, request.id, room.code, game.ply, list(room.actions), room.spec)]

    def hint_move(self, suggest: Suggest, move: str | None) -> list[Action]:
        """The computer's hint came back (None: it failed)."""
        self._hinting.discard(suggest.conn)
        if suggest.conn not in self.connections:
            return []
        if move is None:
            message = "the computer could not work out a hint: try again"
            return [self._error(suggest.conn, ErrorCode.CANNOT_HINT, message, suggest.request)]
        reply = Suggestion(id=suggest.request, ply=suggest.ply, move=move)
        return [Send([suggest.conn], encode(reply))]

    # -- the evaluation for spectators --------------------------------------------

    def _live_eval(self, conn: int, session: Session, request: LiveEval) -> list[Action]:
        room = session.room
        if room is None:
            return [self._error(conn, ErrorCode.NOT_IN_ROOM, "watch a room first", request.id)]
        refusal = None
        if session.seat is not None:
            refusal = "players never see the computer's evaluation; spectators may"
        elif request.on and not room.evaluable():
            refusal = (
                "this room has no evaluation: only untimed two-player games whose players all "
                "allowed it (spectator_eval), or games between computers"
            )
        if refusal is not None:
            return [self._error(conn, ErrorCode.CANNOT_EVALUATE, refusal, request.id)]
        reply = Send([conn], encode(LiveEvalSet(id=request.id, on=request.on)))
        if not request.on:
            room.eval_followers.discard(session)
            return [reply]
        room.eval_followers.add(session)
        if room.live is not None and room.live[0] == room.game.ply:
            return [reply, Send([conn], room.live[1])]
        return [reply, *self._live(room)]

    def _live(self, room: Room) -> list[Action]:
        """Have the position evaluated when a spectator follows it: once per position."""
        ply = room.game.ply
        if room.status != "playing" or not room.eval_followers or not room.evaluable():
            return []
        if room.live_pending == ply or (room.live is not None and room.live[0] == ply):
            return []
        room.live_pending = ply
        return [LiveEvalStep(room.code, ply, list(room.actions), room.spec)]

    def _eval_followers(self, room: Room) -> list[int]:
        """The connections of the spectators following the evaluation: never a player's."""
        conns = []
        for session in list(room.eval_followers):
            if session.room is not room or session.seat is not None:
                room.eval_followers.discard(session)  # left, or took a seat since
            elif session.conn is not None:
                conns.append(session.conn)
        return conns

    def still_live(self, step: LiveEvalStep) -> bool:
        """Whether the evaluation ``step`` asked for is still of use (the game is there)."""
        room = self.rooms.get(step.room)
        return room is not None and room.game.ply == step.ply and room.status == "playing"

    def live_evaluated(self, step: LiveEvalStep, found: EngineEvaluation | None) -> list[Action]:
        """The computer's evaluation for spectators came back (None: it failed or was
        dropped); pushed to those following, if the game is still at that position."""
        room = self.rooms.get(step.room)
        if room is None:
            return []
        if room.live_pending == step.ply:
            room.live_pending = None
        if found is None or not self.still_live(step):
            return []
        flip = room.game.turn == 1  # the engine speaks for the side to move
        frame = encode(
            Evaluation(
                room=room.code,
                ply=step.ply,
                score=-found.score if flip else found.score,
                win=round(1.0 - found.win_probability if flip else found.win_probability, 4),
                win_in=None if found.win_in is None else -found.win_in if flip else found.win_in,
                best=found.best,
                pv=list(found.pv),
                depth=found.depth,
            )
        )
        room.live = (step.ply, frame)
        self.counters["live_evaluations"] += 1
        targets = self._eval_followers(room)
        return [Send(targets, frame)] if targets else []

    # -- the computer ------------------------------------------------------------

    def _think(self, room: Room) -> list[Action]:
        """Ask the computer for a move when it is its turn."""
        holder = room.bot_to_move()
        if holder is None or holder.bot is None:
            return []
        game = room.game
        think = Think(
            room.code, game.turn, game.ply, list(room.actions), room.spec, holder.bot, holder.think
        )
        return [think]

    def still_thinking(self, think: Think) -> bool:
        """Whether the computer's move asked for by ``think`` is still awaited."""
        room = self.rooms.get(think.room)
        return room is not None and room.game.ply == think.ply and room.bot_to_move() is not None

    def bot_move(self, code: str, seat: int, ply: int, move: str | None) -> list[Action]:
        """The computer's answer to a ``Think`` (None: it failed; play any legal move).

        An answer for a position that moved on (a resign, a flag, a restart)
        is dropped.
        """
        room = self.rooms.get(code)
        if room is None or room.bot_to_move() is None:
            return []
        game = room.game
        if game.ply != ply or game.turn != seat:
            return []
        try:
            room.play(seat, move or game.legal_moves()[0], self.clock())
        except ValueError:
            log.exception("the computer chose an illegal move %r", move, extra={"room": code})
            room.play(seat, game.legal_moves()[0], self.clock())
        self.counters["move:accepted"] += 1
        return self._after_results(room, moved=True)

    def _absent_from_new_game(self, room: Room) -> None:
        """A new game starts the claim countdown for players who are not there."""
        now = self.clock()
        for seat in range(room.spec.players):
            if not room.connected(seat):
                room.away(seat, now, self.limits.absence.grace)

    def _seat_changes(self, room: Room) -> list[Action]:
        """Tell every seated player their new seat after the seats turned (same secret)."""
        actions: list[Action] = []
        for seat, holder in enumerate(room.seats):
            if holder is not None and holder.session.room is room and holder.session.conn:
                joined = Joined(room=room.code, role="player", seat=seat)
                actions.append(Send([holder.session.conn], encode(joined)))
        return actions

    # -- history -----------------------------------------------------------------

    def _fetch_game(self, connection: Connection, request: FetchGame) -> list[Action]:
        reply = self.desk.fetch_game(connection.id, request)
        if reply is not None:
            return [reply]
        if self.persistent:  # older games (a profile lists them) are read from the database
            return self.registry.ask(connection, request)
        return [self.desk.no_game(connection.id, request)]

    def analysis_step(self, game: int, ply: int, review: MoveReview | None) -> list[Action]:
        """A step of an analysis came back (None: it failed); see ``HistoryDesk``."""
        return self.desk.analysis_step(game, ply, review)

    # -- persistence ---------------------------------------------------------------

    @property
    def persistent(self) -> bool:
        """Whether changes are noted for a database (an adapter with one turns it on)."""
        return self.journal.enabled

    @persistent.setter
    def persistent(self, on: bool) -> None:
        self.journal.enabled = on
        self.desk.keep_unsaved(on)

    def has_changes(self) -> bool:
        """Whether anything accepted since the last ``take_changes`` awaits writing."""
        return bool(self.journal) or self.desk.has_unsaved()

    def take_changes(self) -> Batch:
        """What to write to the database for everything accepted since the last call."""
        batch = self.journal.take(self.rooms, self.history.take_unsaved(), self.clock())
        batch.analyses = self.desk.analyses.take_unsaved()
        return batch

    def restore(self, loaded: Loaded) -> None:
        """Take back the games in progress from the database after a (re)start.

        Every player is away until they resume, with a fresh grace period; the
        clocks restart now, the running seat with a small bonus.
        """
        now = self.clock()
        quarantined: list[str] = []
        self.desk.analyses.load(loaded.analyses)
        accounts = {account.id: account for account in loaded.accounts}
        self.computers = {a.computer: a for a in loaded.accounts if a.computer is not None}
        sessions = {
            record.id: restore_session(record, self.context.chat_bucket(), accounts)
            for record in loaded.sessions
        }
        for bad in loaded.unreadable:
            self._set_aside(bad.table, bad.key, bad.reason)
        for record in loaded.rooms:
            if not record.started or record.result is not None:
                self.journal.drop_room(record.code)
                continue
            bonus = self.limits.restart_bonus
            try:
                room = restore_room(
                    record, sessions, now, bonus, self.context.chat_bucket(), accounts
                )
            except Exception as error:  # whatever is wrong with one row, the others start
                self._set_aside("rooms", record.code, f"{type(error).__name__}: {error}")
                self.journal.quarantine(record.code)
                quarantined.append(record.code)
                continue
            room.established = self.limits.provisional_games
            self.rooms[room.code] = room
            for seat, holder in enumerate(room.seats):
                assert holder is not None
                if holder.bot is None:
                    holder.session.room, holder.session.seat = room, seat
                    room.away(seat, now, self.limits.absence.grace)
            self.journal.room(room)
            self._schedule(room)
            self._woken += self._think(room)
        set_aside = {bad.key for bad in loaded.unreadable if bad.table == "rooms"}
        set_aside.update(quarantined)
        kept = {record.id for record in loaded.sessions if record.room in set_aside}
        for session in sessions.values():
            if session.room is None and session.id not in kept:
                self.journal.drop_session(session)
            elif session.room is None:
                continue  # seated in a quarantined room: its row stays for whoever repairs it
            else:
                self.sessions[session.token_digest] = session
        self.history.load(loaded.games, loaded.last_game)

    def _set_aside(self, table: str, key: str, reason: str) -> None:
        """One saved row that cannot be used: say so in one line, count it, go on."""
        log.warning("saved %s row %s quarantined (kept, never loaded): %s", table, key, reason)
        self.counters[f"unreadable:{table}"] += 1

    def wake(self) -> list[Action]:
        """The ``Think`` actions for restored games where the computer is to move."""
        woken, self._woken = self._woken, []
        return woken

    def snapshot_all(self) -> None:
        """Note every room in play for saving as of now (before a graceful shutdown)."""
        for room in self.rooms.values():
            if room.status == "playing":
                self.journal.room(room)

    # -- helpers ---------------------------------------------------------------

    def _new_room(
        self,
        spec: VariantSpec,
        public: bool,
        clock: TimeControl | None,
        match: bool,
        pool: str | None = None,
    ) -> Room:
        code = _room_code()
        room = Room(code, spec, public, self.clock(), clock, match, pool)
        room.established = self.limits.provisional_games
        self.rooms[code] = room
        log.info(
            "room created: %d players, %dx%d",
            spec.players,
            spec.size,
            spec.size,
            extra={"room": code},
        )
        return room

    def _push(self, room: Room, rid: RequestId = None, moved: bool = False) -> Send:
        """A new event in ``room``: its state, numbered, to everyone in it (``moved``: the
        event is a move and nothing else, see ``Journal.moved``)."""
        room.event += 1
        now = self.clock()
        room.arm(now, self.limits.absence.first_move)  # a game that starts here counts from now
        return self._publish(room, room.state_frame(now, rid), moved)

    def _publish(self, room: Room, frame: bytes, moved: bool = False) -> Send:
        room.remember(room.event, frame)
        if moved:
            self.journal.moved(room)
        else:
            self.journal.room(room)
        return Send(room.connections(), frame)

    def _schedule(self, room: Room) -> None:
        room.arm(self.clock(), self.limits.absence.first_move)
        when = room.deadline(self.limits.absence)
        if when is not None:
            self._tiebreak += 1
            heapq.heappush(self._timers, (when, self._tiebreak, room.code))

    def _collect(self, room: Room) -> None:
        """Forget a room nobody can come back to, or that no game keeps alive."""
        if room.anyone_connected() or room.status == "playing" or room.seats_kept():
            return
        del self.rooms[room.code]
        self.owned.subtract(room.owners)
        for owner in room.owners:
            if self.owned[owner] <= 0:
                del self.owned[owner]
        self.journal.drop_room(room.code)
        for holder in room.seats:
            if holder is not None and holder.session.room is room:
                holder.session.room = holder.session.seat = None
                if holder.session.conn is None:
                    self.registry.forget(holder.session)

    def _unqueue(self, session: Session) -> None:
        if session.queued is None:
            return
        for key, queue in list(self.queues.items()):
            if session in queue:
                queue.remove(session)
            if not queue:
                del self.queues[key]  # keys are variants and clocks: unbounded if kept
        session.queued = None

    def _no_room(self, session: Session, code: str, rid: RequestId) -> Action:
        return self._error(session.conn, ErrorCode.ROOM_NOT_FOUND, f"no room {code!r}", rid)

    def _error(
        self,
        conn: int | None,
        code: ErrorCode,
        message: str,
        rid: RequestId,
        room: Room | None = None,
        now: float = 0.0,
    ) -> Send:
        return self.context.error(conn, code, message, rid, room, now)


def _rating(session: Session, pool: str) -> int:
    """A queued player's shown rating in ``pool`` (a newcomer's is the start)."""
    account = session.account
    rating = account.ratings.get(pool) if account is not None else None
    return ratings.shown(rating.mu if rating is not None else ratings.START_MU)


def _same_account(account: AccountRecord | None, session: Session) -> bool:
    return account is None or (session.account is not None and session.account.id == account.id)


def _room_code() -> str:
    """ROOM_CODE_LENGTH random letters of ROOM_CODE_ALPHABET, from one draw of the system's
    randomness (not one a letter: each is a system call)."""
    base = len(ROOM_CODE_ALPHABET)
    number = secrets.randbelow(base**ROOM_CODE_LENGTH)
    letters = []
    for _ in range(ROOM_CODE_LENGTH):
        number, digit = divmod(number, base)
        letters.append(ROOM_CODE_ALPHABET[digit])
    return "".join(letters)
