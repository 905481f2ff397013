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

``Core`` only routes: each request goes to the role that answers it, each a module of
its own with no socket either (docs/cluster.md, "The seams"):

- the session registry (``server.registry``): connections, hello, resume, accounts;
- the lobby (``server.lobby``): create, join, watch, quick match, the room list, leave,
  through a room directory (``server.directory``) and a queue (``server.quickmatch``);
- the room host (``server.roomhost``): the rooms, their events and deadlines, with
  seating (``server.seating``) and play in the room (``server.play``, ``server.computer``);
- the history desk (``server.historydesk``): finished games, replays, analyses.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import cast, get_args

from engine.ai.evaluation import Evaluation as EngineEvaluation
from engine.ai.evaluation import MoveReview
from protocol.codec import BadRequest, decode_request, encode
from protocol.messages import (
    Analyse,
    Create,
    ErrorCode,
    FetchGame,
    Hello,
    History,
    Join,
    Leave,
    ListRooms,
    LiveEval,
    MoveRequest,
    Ping,
    Pong,
    ReplayRequest,
    Request,
    RequestId,
    Sync,
    Watch,
)
from protocol.messages import QuickMatch as QuickMatchRequest
from server.accountdb import RatedGame, StoredGame
from server.actions import (
    CLOSE_REPLACED,
    CLOSE_RESTART,
    AccountRequest,
    Action,
    Ask,
    Close,
    LiveEvalStep,
    Locate,
    Send,
    Suggest,
    Think,
)
from server.addresses import address_key
from server.computer import HINT_LEVEL, HINT_SECONDS, LIVE_DEPTH, LIVE_NODES
from server.context import Context, Limits
from server.database import Batch, Loaded
from server.directory import LocalDirectory
from server.history import GameHistory
from server.historydesk import HistoryDesk
from server.lobby import Lobby
from server.play import InRoomRequest, Play
from server.quickmatch import LocalQueue, MatchQueue, Pool
from server.records import AccountRecord, HandedSession, RoomRecord, SessionRecord
from server.registry import SessionRegistry
from server.roomhost import RoomHost
from server.rooms import Room
from server.seating import Seating
from server.sessions import Connection, Session
from server.snapshot import restore_session, session_record

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
    "Locate",
    "Send",
    "Suggest",
    "Think",
]

ACCOUNT_REQUESTS = frozenset(get_args(AccountRequest))
IN_ROOM_REQUESTS = frozenset(get_args(InRoomRequest))
"""The request classes ``_dispatch`` hands on as a group (exact classes, as decoded)."""
SUMMARIES_PER_READ = 20
"""A ``history`` listing counts one game read (``Limits.games_read``) per this many games it
may list, its ``limit``: the default 20 counts one, 100 count five."""

log = logging.getLogger("quoridor.core")


class Core:
    """One server: its session registry, lobby, room host and history desk, wired."""

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
        self.counters: Counter[str] = self.context.counters
        """Events for the metrics: ``move:<outcome>``, ``error:<code>``, resumes, flags..."""
        self.rated_in: Counter[str] = Counter()
        """Rated games committed by this server, by pool (a leaderboard read before one of
        its pool is read again: ``server.accounts``)."""
        self.journal = self.context.journal
        self.registry = SessionRegistry(self.context)
        self.desk = HistoryDesk(self.context)
        forget = self.registry.forget
        self.host = RoomHost(self.context, self._game_over, forget)
        self.seating = Seating(self.context, self.host, forget)
        self.play = Play(self.context, self.host, self.registry.connections.__contains__)
        self.queue: MatchQueue = LocalQueue()
        directory = LocalDirectory(self.host.rooms, self.host.listed)
        self.lobby = Lobby(self.context, self.host, self.seating, directory, self.queue)
        self.accepting = True
        """False while shutting down: no new rooms or seats."""
        self.closing_all = False
        """True while the server closes every connection to stop (see ``close``)."""
        self.last_kind = ""
        """The type of the last request received (``invalid`` if it did not decode)."""

    # -- what the roles hold (read by the adapter, the metrics and the tests) ----------

    @property
    def connections(self) -> dict[int, Connection]:
        return self.registry.connections

    @property
    def sessions(self) -> dict[bytes, Session]:
        """Sessions by the hash of their resume token."""
        return self.registry.sessions

    @property
    def rooms(self) -> dict[str, Room]:
        return self.host.rooms

    @property
    def queues(self) -> dict[Pool, list[Session]]:
        """Who waits for a quick match, by pool."""
        return self.queue.queues

    @property
    def history(self) -> GameHistory:
        """The finished games kept in memory (the history desk's)."""
        return self.desk.history

    @history.setter
    def history(self, history: GameHistory) -> None:
        self.desk.history = history

    @property
    def computer_busy(self) -> Callable[[], bool]:
        """Whether the computer's workers are saturated (then new computer games are refused)."""
        return self.lobby.computer_busy

    @computer_busy.setter
    def computer_busy(self, busy: Callable[[], bool]) -> None:
        self.lobby.computer_busy = busy

    @property
    def computers(self) -> dict[int, AccountRecord]:
        """The computer's accounts by level (from the database; none without one)."""
        return self.lobby.computers

    # -- the adapter's calls -----------------------------------------------------

    def open(self, conn: int, address: str = "") -> None:
        """A connection from ``address``, counted as the per-address limits count it (an
        IPv6 address as its /64) whoever opens it: the server's adapter, or a cluster's
        relay serving a client here again."""
        self.registry.open(conn, address_key(address))

    def receive(self, conn: int, data: bytes | str) -> list[Action]:
        # A deadline that passed but was not acted on yet (its timer is late)
        # comes first: a move that arrives after the flag fell is too late.
        now = self.clock()
        if self._maybe_overdue(now):
            overdue = self.next_deadline()
            if overdue is not None and overdue <= now:
                # Once: a tick may leave a deadline that is overdue again (``RoomHost.tick``).
                return self.tick() + self._take(conn, data, now)
        return self._take(conn, data, now)

    def _take(self, conn: int, data: bytes | str, now: float) -> list[Action]:
        connection = self.connections[conn]
        if (refused := self.registry.throttled(connection, data, now)) is not None:
            return refused
        try:
            request = decode_request(data)
        except BadRequest as bad:
            self.last_kind = "invalid"
            return [self.context.error(conn, bad.code, bad.message, bad.request_id)]
        self.last_kind = request.__struct_config__.tag  # type: ignore[assignment]
        return self._dispatch(connection, request)

    def close(self, conn: int, deliberate: bool = False) -> list[Action]:
        """The connection is gone (``deliberate``: the client closed it on purpose, 1000)."""
        session = self.registry.close(conn)
        self.desk.forget(conn)
        self.play.forget(conn)
        if session is None:
            return []
        self.lobby.unqueue(session)
        if self.closing_all:
            # The server is stopping: a player dropped now is no event. Nobody would
            # receive it (every connection is closing), so it would only leave a gap
            # in the event numbers; a restarted server starts everyone away anyway.
            return []
        return self.host.gone(session, deliberate)

    def next_deadline(self) -> float | None:
        """When ``tick`` must next be called (on this core's clock), if ever."""
        rooms, queue = self.host.next_deadline(), self.lobby.due()
        if queue is None:  # the common case (asked before every frame): no rated queue waits
            return rooms
        return queue if rooms is None else min(rooms, queue)

    def _maybe_overdue(self, now: float) -> bool:
        """Whether a deadline may have come, from a bound no deadline is earlier than: the
        rooms' deadlines are only worked out (``next_deadline``) once it has passed, not
        before every frame (they were 4 % of the server's CPU at saturation)."""
        bound, queue = self.host.earliest(), self.lobby.due()
        if queue is not None:
            bound = queue if bound is None else min(bound, queue)
        return bound is not None and bound <= now

    def tick(self) -> list[Action]:
        """Act on every deadline that has come: pairings, flags and abandoned seats."""
        now = self.clock()
        return self.lobby.tick(now) + self.host.tick(now)

    # -- dispatch ------------------------------------------------------------

    def _dispatch(self, connection: Connection, request: Request) -> list[Action]:
        session = connection.session
        # ``type(...) is``, never ``isinstance`` nor ``match``'s class patterns: msgspec's
        # classes have a metaclass, which makes each ``isinstance`` a call of
        # ``__instancecheck__`` (about 800 instructions), and a ``create`` went through some
        # 25 of them; decoded requests are of these exact classes.
        if type(request) is MoveRequest and session is not None:
            # The common case first.
            return self._in_room(connection.id, session, request)
        if type(request) is Hello:
            return self._hello(connection, request)
        if type(request) is Ping:
            return [Send([connection.id], encode(Pong(id=request.id)))]
        if type(request) in ACCOUNT_REQUESTS:
            return self.registry.ask(connection, cast(AccountRequest, request))
        conn, error = connection.id, self.context.error
        if session is None:
            return [error(conn, ErrorCode.HELLO_REQUIRED, "say hello first", request.id)]
        if type(request) in IN_ROOM_REQUESTS:
            return self._in_room(conn, session, cast(InRoomRequest, request))
        if type(request) is ListRooms:
            return [self.lobby.list_rooms(conn, request)]
        if type(request) is History:
            return self._history(connection, request)
        if type(request) is FetchGame:
            return self._fetch_game(connection, request)
        if type(request) is ReplayRequest:
            return [self.desk.replay(conn, connection.address, connection.bucket, request)]
        if type(request) is Analyse:
            return self._analyse(connection, session.id, request)
        if type(request) is LiveEval:
            return self.play.live_eval(conn, session, request)
        if type(request) is Sync:
            return [self.host.sync(session, conn, request.id)]
        if type(request) is Leave:
            return self.lobby.leave(session, request)
        if session.room is not None or session.queued is not None:
            where = f"room {session.room.code}" if session.room else "the quick-match queue"
            message = f"already in {where}: leave first"
            return [error(conn, ErrorCode.ALREADY_IN_ROOM, message, request.id)]
        if not self.accepting:
            message = "the server is restarting; try again in a moment"
            return [error(conn, ErrorCode.SERVER_SHUTTING_DOWN, message, request.id)]
        if type(request) is Create:
            return self.lobby.create(session, request)
        if type(request) is Join:
            return self.lobby.join(session, request)
        if type(request) is Watch:
            return self.lobby.watch(session, request)
        if type(request) is QuickMatchRequest:
            return self.lobby.quick_match(session, request)
        raise AssertionError(f"unhandled request {request!r}")  # pragma: no cover

    def _in_room(self, conn: int, session: Session, request: InRoomRequest) -> list[Action]:
        if self.context.unavailable is not None:
            return [self._unavailable(conn, request.id)]
        return self.play.in_room(session, request)

    def _game_over(self, room: Room) -> None:
        """A game ended in ``room``: into the history, and its walk-outs counted."""
        self.lobby.game_over(room)
        self.desk.archive(room)

    def _unavailable(self, conn: int, rid: RequestId) -> Send:
        message = f"{self.context.unavailable}: nothing was played; send it again in a moment"
        return self.context.error(conn, ErrorCode.SERVICE_UNAVAILABLE, message, rid)

    def _hello(self, connection: Connection, hello: Hello, looked: bool = False) -> list[Action]:
        actions, resumed = self.registry.hello(connection, hello, looked)
        if resumed is None:
            return actions
        actions += self.lobby.resumed(resumed, connection.id)
        return actions + self.host.resumed(resumed, connection.id, hello.last_event)

    def _history(self, connection: Connection, request: History) -> list[Action]:
        # A listing counts a game read for every SUMMARIES_PER_READ games it may list: 100
        # summaries are about the bytes of one long record, and an outside review's 49
        # addresses listing 100 games 4,000 times a second took the honest players' moves
        # to 472 ms (p99) when listings counted nothing.
        reads = -(-request.limit // SUMMARIES_PER_READ)
        if (refusal := self.registry.read_games(connection, reads)) is not None:
            return [self.context.error(connection.id, *refusal, request.id)]
        return [self.desk.listing(connection.id, request)]

    def _fetch_game(self, connection: Connection, request: FetchGame) -> list[Action]:
        # Every fetch counts one game read, from memory as from the database: a record of
        # up to 1000 moves, some 20 KB out (one address's connections fetching a 999-move
        # game from memory took a quarter of a core, before its frame was kept encoded).
        if (refusal := self.registry.read_games(connection, 1)) is not None:
            return [self.context.error(connection.id, *refusal, request.id)]
        reply = self.desk.fetch_game(connection.id, request)
        if reply is not None:
            return [reply]
        if self.persistent:  # older games (a profile lists them) are read from the database
            return self.registry.ask(connection, request, charged=True)
        return [self.desk.no_game(connection.id, request)]

    def _analyse(self, connection: Connection, session: str, request: Analyse) -> list[Action]:
        answered = self.desk.analyse(connection.id, session, connection.address, request)
        if answered is not None:
            return answered
        if not self.persistent:
            return [self.desk.no_game(connection.id, request)]
        # A profile's older game: read from the database with its stored analysis, counted
        # as a game read (``fetch_game``), then analysed or answered (``analyse_stored``).
        if (refusal := self.registry.read_games(connection, 1)) is not None:
            return [self.context.error(connection.id, *refusal, request.id)]
        return self.registry.ask(connection, request, charged=True)

    # -- answers to the adapter's work -------------------------------------------------

    def analyse_stored(self, conn: int, request: Analyse, stored: StoredGame) -> list[Action]:
        """The database's answer to an ``analyse`` of a game older than the history kept in
        memory (``_analyse``): its record and its stored analysis, if it has one."""
        connection = self.registry.connections.get(conn)
        if connection is None or connection.session is None:
            return []  # gone meanwhile
        session, address = connection.session.id, connection.address
        game, body = stored.record, stored.analysis
        return self.desk.analyse_game(conn, session, address, request, game, body)

    def asked(self, conn: int) -> None:
        """The adapter answered this connection's account request."""
        self.registry.asked(conn)

    def authenticated(
        self, conn: int, hello: Hello, account: AccountRecord, login: bytes
    ) -> list[Action]:
        """A ``hello`` whose login token opened ``account``: a session playing as it."""
        return self.registry.authenticated(conn, hello, account, login)

    def guest(self, conn: int, hello: Hello, taken: bool) -> list[Action]:
        """A ``hello`` without a login token, once the database said whether an account
        has its name (``taken``)."""
        return self.registry.guest(conn, hello, taken)

    def ratings_committed(self, games: list[RatedGame]) -> list[Action]:
        """Rated games whose rating changes are on disk: show them in their rooms."""
        actions: list[Action] = []
        for game in games:
            self.counters["rated_games"] += 1
            for pool in {change.after.pool for change in game.changes}:
                self.rated_in[pool] += 1
            for change in game.changes:
                self.lobby.rated(change.account, change.after)
            actions += self.host.rated(game)
        return actions

    def still_thinking(self, think: Think) -> bool:
        """Whether the computer's move asked for by ``think`` is still awaited."""
        return self.play.still_thinking(think)

    def bot_move(self, code: str, seat: int, ply: int, move: str | None) -> list[Action]:
        """The computer's answer to a ``Think`` (None: it failed; play any legal move)."""
        return self.play.bot_move(code, seat, ply, move)

    def hint_move(self, suggest: Suggest, move: str | None) -> list[Action]:
        """The computer's hint came back (None: it failed)."""
        return self.play.hint_move(suggest, move)

    def still_live(self, step: LiveEvalStep) -> bool:
        """Whether the evaluation ``step`` asked for is still of use (the game is there)."""
        return self.play.still_live(step)

    def live_evaluated(self, step: LiveEvalStep, found: EngineEvaluation | None) -> list[Action]:
        """The computer's evaluation for spectators came back (None: it failed)."""
        return self.play.live_evaluated(step, found)

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
        """Take back the games in progress and the rooms still waiting for players from the
        database after a (re)start (a finished room is not kept).

        Every player is away until they resume, with a fresh grace period; the
        clocks restart now, the running seat with a small bonus. Each room counts
        against its owners' address again (the lobby's caps).
        """
        quarantined: list[str] = []
        self.desk.analyses.load(loaded.analyses)
        accounts = {account.id: account for account in loaded.accounts}
        self.lobby.computers = {a.computer: a for a in loaded.accounts if a.computer is not None}
        sessions = {
            record.id: restore_session(record, self.context.chat_bucket(), accounts)
            for record in loaded.sessions
        }
        for bad in loaded.unreadable:
            self._set_aside(bad.table, bad.key, bad.reason)
        for record in loaded.rooms:
            if record.result is not None:
                self.journal.drop_room(record.code)
                continue
            try:
                self.lobby.restored(self.host.restore(record, sessions, accounts))
            except Exception as error:  # whatever is wrong with one row, the others start
                self._set_aside("rooms", record.code, f"{type(error).__name__}: {error}")
                self.journal.quarantine(record.code)
                quarantined.append(record.code)
        set_aside = {bad.key for bad in loaded.unreadable if bad.table == "rooms"}
        set_aside.update(quarantined)
        kept = {record.id for record in loaded.sessions if record.room in set_aside}
        for session in sessions.values():
            if session.room is None and session.id not in kept:
                self.journal.drop_session(session)
            elif session.room is None:
                continue  # seated in a quarantined room: its row stays for whoever repairs it
            else:
                self.registry.keep(session)
        self.history.load(loaded.games, loaded.last_game)
        self.desk.prune_analyses()  # those of the games loaded that it keeps

    def _set_aside(self, table: str, key: str, reason: str) -> None:
        """One saved row that cannot be used: say so in one line, count it, go on."""
        log.warning("saved %s row %s quarantined (kept, never loaded): %s", table, key, reason)
        self.counters[f"unreadable:{table}"] += 1

    def wake(self) -> list[Action]:
        """The ``Think`` actions for restored games where the computer is to move."""
        return list(self.host.wake())

    # -- a node of a cluster (server.cluster.node) ------------------------------------------

    def hosts(self, code: str) -> bool:
        return code in self.host.rooms

    def drop_room(self, code: str) -> list[Action]:
        """Another node owns room ``code`` now: stop hosting it, write nothing more of it,
        and close its members' connections with 1012 so they reconnect and resume there."""
        actions: list[Action] = []
        for member in self.host.drop(code):
            self.registry.release(member)
            connection = self.connections.get(member.conn) if member.conn else None
            if connection is not None:
                connection.session = None
                actions.append(Close(connection.id, CLOSE_RESTART, "room moved; reconnect"))
            member.conn = None
        return actions

    def adopt(
        self,
        record: RoomRecord,
        records: list[SessionRecord],
        accounts: list[AccountRecord],
    ) -> list[Action]:
        """Host a room this node just took over (in play, or waiting for players), as a
        restart takes one back: every player away with a fresh grace period, the clocks
        charged nothing for the gap, the room counted against its owners here (raises if
        the record cannot be used)."""
        by_id = {account.id: account for account in accounts}
        sessions = {r.id: restore_session(r, self.context.chat_bucket(), by_id) for r in records}
        self.lobby.restored(self.host.restore(record, sessions, by_id))
        for session in sessions.values():
            if session.room is not None:
                self.registry.keep(session)
        return list(self.host.wake())

    def searched(self, conn: int, hello: Hello) -> list[Action]:
        """The adapter looked for the session of a resume token this node did not know
        (``FindSession``) and brought its room here if it could: resume it, or refuse."""
        connection = self.connections.get(conn)
        if connection is None:
            return []
        connection.asking = False
        return self._hello(connection, hello, looked=True)  # unknown now: refused

    def unsearchable(self, conn: int, hello: Hello, reason: str) -> list[Action]:
        """The session of a resume token this node did not know could not be looked for
        now (``reason``: the database or the cluster away): try again, not ``bad_token``."""
        connection = self.connections.get(conn)
        if connection is None:
            return []
        connection.asking = False
        message = f"{reason}: your game cannot be looked for now; try again in a moment"
        return [self.context.error(conn, ErrorCode.SERVICE_UNAVAILABLE, message, hello.id)]

    # -- the relay: connections moving between the nodes of a cluster ---------------------

    def located(self, conn: int, request: Join | Watch, here: bool) -> list[Action]:
        """The answer to a ``Locate``: the room is hosted here now (``here``: taken over
        from a dead node), or nowhere."""
        connection = self.connections.get(conn)
        session = None if connection is None else connection.session
        if connection is None or session is None:
            return []
        if here and request.room in self.host.rooms:
            return self._dispatch(connection, request)
        return [self.lobby.missing(session, request)]

    def movable(self, conn: int) -> bool:
        """Whether the connection may move to another node: open here, and its session (if
        any) in no room of this node."""
        connection = self.connections.get(conn)
        if connection is None:
            return False
        return connection.session is None or connection.session.room is None

    def depart(self, conn: int) -> HandedSession | None:
        """The connection moves to another node (``movable``): forget it and its session
        here without a word to anyone (the session lives on there, so no grace period, no
        queue); what that node needs of the session, or None if it said no hello yet."""
        if not self.movable(conn):
            raise ValueError(f"connection {conn} cannot move: it is not here, or in a room")
        self.desk.forget(conn)
        self.play.forget(conn)
        compact = conn in self.context.compact
        session = self.registry.depart(conn)
        if session is None:
            return None
        self.lobby.unqueue(session)
        return HandedSession(
            session=session_record(session),
            account=session.account,
            login=session.login,
            address=session.address,
            compact=compact,
        )

    def arrive(self, conn: int, handed: HandedSession) -> None:
        """The opened connection ``conn`` brings a session from another node (``depart``
        there): it is this node's from now on."""
        record = handed.session
        accounts = {} if handed.account is None else {handed.account.id: handed.account}
        session = restore_session(record, self.context.chat_bucket(), accounts)
        session.login = handed.login
        session.address = handed.address
        if handed.compact:
            self.context.compact.add(conn)
        self.registry.arrive(conn, session)

    def snapshot_all(self) -> None:
        """Note every room in play for saving as of now (before a graceful shutdown)."""
        self.host.snapshot_all()
