"""The room host: the rooms this server holds, their events, timers and lifetimes.

It opens rooms for the lobby, pushes each room's numbered events to everyone in it, acts
on the rooms' deadlines (flags, abandoned seats, the first move's limit), brings players
back after a drop or a restart, and forgets rooms nobody can come back to. What players do
in a room is ``server.play``; taking and leaving seats is ``server.seating``.

Rooms are hosted by their owner: in a cluster each node hosts the rooms whose lease it
holds (``server.cluster.ownership``), and requests for a room hosted elsewhere are relayed
to its owner (see docs/cluster.md).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import secrets
from collections.abc import Callable

from protocol.codec import encode
from protocol.messages import ErrorCode, Joined, Left, RequestId, TimeControl, VariantSpec
from server import computer, ratings, walkouts
from server.accountdb import RatedGame
from server.actions import Action, Send, Think
from server.context import Context
from server.directory import ListedRooms
from server.records import AccountRecord, RoomRecord
from server.rooms import Member, Room
from server.sessions import Session
from server.snapshot import restore_room

log = logging.getLogger("quoridor.core")

ROOM_CODE_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ROOM_CODE_LENGTH = 10
"""31**10 codes: about 50 bits, hopeless to guess under the rate limit."""


class RoomHost:
    """Every room of one server, from its creation until nobody can come back to it."""

    def __init__(
        self,
        context: Context,
        archive: Callable[[Room], None],
        forget: Callable[[Member], None],
    ) -> None:
        self.context = context
        self.rooms: dict[str, Room] = {}
        self._archive = archive
        """Takes in the games that ended in a room (the history desk's ``archive``)."""
        self._forget = forget
        """Drops a session that left its room and holds nothing more (the registry's)."""
        self.on_close: Callable[[Room], None] = lambda room: None
        """Told of each room forgotten (the lobby counts rooms against their owners)."""
        self._timers: list[tuple[float, int, str]] = []
        """Heap of (deadline, tiebreak, room code); stale entries are skipped."""
        self._tiebreak = 0
        self._woken: list[Think] = []
        """Moves the computer owes in games taken back by ``restore``."""
        self.take_code: Callable[[], str | None] = room_code
        """A fresh room code, or None when no room may open now (a cluster node hands out
        codes it leased in advance, ``server.cluster.node``)."""
        self.can_open: Callable[[], bool] = lambda: True
        """Whether new rooms may open now (a cluster node says no while Redis or PostgreSQL
        is away)."""
        self.listed = ListedRooms()
        """The rooms the public list may show (``note``)."""
        self.unattended: dict[Room, None] = {}
        """The rooms nobody is connected to, the longest so first (``note``): those closed to
        make room for a new one when the server holds ``max_rooms`` (``make_room``)."""
        self.ended: dict[Room, float] = {}
        """The rooms whose game is over, with when it ended, the earliest first (``note``):
        closed for a new one, after the grace period, when no room is unattended."""
        self._serial = itertools.count(1)

    # -- opening and forgetting rooms --------------------------------------------------

    def open_room(
        self,
        spec: VariantSpec,
        public: bool,
        clock: TimeControl | None,
        match: bool,
        pool: str | None = None,
    ) -> tuple[Room, list[Action]]:
        """A new room, and the notices to the members of the room closed for it, if the
        server was full (``make_room``)."""
        notices = self.make_room()
        # A cluster node always has a code (leased in advance, or just after); None only
        # from a ``take_code`` that refuses, and then any fresh code will do.
        code = self.take_code() or room_code()
        room = Room(code, spec, public, self.context.clock(), clock, match, pool)
        room.log_budget = self.context.log_budget
        room.serial = next(self._serial)
        room.established = self.context.limits.provisional_games
        room.rated_together = self.context.rated_together
        self.rooms[code] = room
        log.info(
            "room created: %d players, %dx%d",
            spec.players,
            spec.size,
            spec.size,
            extra={"room": code},
        )
        return room, notices

    def collect(self, room: Room) -> None:
        """Forget a room nobody can come back to, or that no game keeps alive (and note
        what changed in one that is kept: every change of who is in a room ends here or in
        ``push``)."""
        if room.anyone_connected() or room.status == "playing" or room.seats_kept():
            self.note(room)
            return
        self._close(room)

    def _close(self, room: Room) -> list[Member]:
        """Forget ``room``, and each session whose only hold was a seat there: the members
        still connected to it (only ever some in a finished game's room closed for a new
        one), now in the lobby."""
        del self.rooms[room.code]
        self._unindex(room)
        self.on_close(room)
        room.forget_log()
        journal = self.context.journal
        journal.drop_room(room.code)
        members = [h.session for h in room.seats if h is not None and h.session.room is room]
        members += [spectator for spectator in room.spectators if spectator.room is room]
        room.spectators.clear()
        connected = []
        for member in members:
            member.room = member.seat = None
            if member.conn is None:
                self._forget(member)
            else:
                journal.session(member)
                connected.append(member)
        return connected

    def note(self, room: Room) -> None:
        """Keep ``room``'s place in the indexes up to date (``listed``, ``unattended``) after
        a change of its status or of who is in it. Called by ``push`` (every event but a
        move, which changes neither) and ``collect`` (every departure): cheap, a look at its
        seats."""
        if self.rooms.get(room.code) is not room:
            self._unindex(room)
            return
        self.listed.note(room, room.listable())
        if room.anyone_connected():
            self.unattended.pop(room, None)
        elif room not in self.unattended:
            self.unattended[room] = None
        if room.status != "finished":
            self.ended.pop(room, None)
        elif room not in self.ended:
            self.ended[room] = self.context.clock()

    def _unindex(self, room: Room) -> None:
        self.listed.discard(room)
        self.unattended.pop(room, None)
        self.ended.pop(room, None)

    # -- a full server -----------------------------------------------------------------

    def evictable(self) -> Room | None:
        """The room to close for a new one when the server is full: the one nobody has been
        connected to the longest, or else the one whose game ended the earliest, at least
        the grace period ago (none: every room has a game in play, or one just over, or is
        waiting for players with somebody in it)."""
        unattended = self.unattended
        while unattended:
            room = next(iter(unattended))
            if self.rooms.get(room.code) is room and not room.anyone_connected():
                return room
            del unattended[room]  # noted late: it closed, or somebody is in it
        ended = self.ended
        while ended:
            room, since = next(iter(ended.items()))
            if self.rooms.get(room.code) is room and room.status == "finished":
                held = self.context.clock() - since
                return room if held >= self.context.limits.absence.grace else None
            del ended[room]  # noted late: it closed, or a new game started in it
        return None

    def make_room(self) -> list[Action]:
        """At ``max_rooms``, close the room nobody has been connected to the longest, or the
        one whose game ended the earliest (``evictable``), if there is one (else the room
        opens anyway: ``Lobby`` refused what it could): a ``left`` for each member still
        in it (``closed``). Rooms nobody is in filled an outside review's server, 510
        addresses that played 2 moves in 10 rooms each and went: every player away, no
        connection held, and everyone else refused ``server_busy`` until the hard limit; a
        later one filled it for as long as it liked with finished games, each kept by a
        silent connection. A room with a game in play and somebody in it is never closed;
        one nobody is in loses the rest of its grace period, and its game, aborted: its
        players come back, if they do, to a room that is gone (PROTOCOL.md, section 1)."""
        if len(self.rooms) < self.context.limits.max_rooms:
            return []
        room = self.evictable()
        if room is None:
            return []
        if room.status == "playing":
            room.desert(self.context.clock())
        if room.finished:
            self._archive(room)
        self.context.counters["rooms_evicted"] += 1
        log.info(
            "room closed for a new one: the server is full, and %s",
            "its game is over" if room.anyone_connected() else "nobody is in it",
            extra={"room": room.code},
        )
        members = self._close(room)
        conns = [member.conn for member in members if member.conn is not None]
        return [Send(conns, encode(Left(reason="closed")))] if conns else []

    def drop(self, code: str) -> list[Member]:
        """Stop hosting ``code`` at once, without touching its saved rows (another cluster
        node owns it now): the members it had, who must go and find it there."""
        room = self.rooms.pop(code, None)
        if room is None:
            return []
        self._unindex(room)
        self.on_close(room)
        room.forget_log()
        members = [h.session for h in room.seats if h is not None and h.bot is None]
        members += room.spectators
        members = [member for member in members if member.room is room]
        for member in members:
            member.room = member.seat = None
        self.context.journal.forget(room, members)
        return members

    # -- events ------------------------------------------------------------------------

    def push(self, room: Room, rid: RequestId = None, moved: bool = False) -> Send:
        """A new event in ``room``: its state, numbered, to everyone in it (``moved``: the
        event is a move and nothing else, see ``Journal.moved``)."""
        room.event += 1
        now = self.context.clock()
        absence = self.context.limits.absence
        room.arm(now, absence.first_move, absence.think_limit)  # a game starting counts from now
        self.note(room)
        if room.status == "playing" and room.announced != room.number:
            room.announced = room.number
            _log_start(room)
        return self.publish(room, room.state_frame(now, rid), moved)

    def push_move(self, room: Room, rid: RequestId, now: float) -> list[Action]:
        """A move that did not end the game, as an event: connections that asked for
        compact events get a ``moved`` event, the others the state, which is made only if
        someone needs it (PROTOCOL.md, section 7a)."""
        compact = self.context.compact
        targets = room.connections()
        wanting = [conn for conn in targets if conn in compact] if compact else []
        if not wanting:
            return [self.publish_move(room, rid, targets, now)]
        room.event += 1
        small = room.moved_frame(now, rid)
        if small is None:  # the move changed more than a ``moved`` event carries
            return [self.publish(room, room.state_frame(now, rid), True)]
        if len(wanting) == len(targets):
            # Nobody here reads whole states: the log keeps the event as it went out (a
            # client resuming without compact events gets the state that follows).
            return [self.publish(room, small, True, wanting)]
        others = [conn for conn in targets if conn not in compact]
        return [self.publish(room, room.state_frame(now, rid), True, others), Send(wanting, small)]

    def publish_move(self, room: Room, rid: RequestId, targets: list[int], now: float) -> Send:
        """``push`` of a move to ``targets`` (the room's connections, already listed). A
        move never starts a game, so the room needs no ``arm`` (``push`` does that)."""
        room.event += 1
        return self.publish(room, room.state_frame(now, rid), True, targets)

    def sync(self, session: Session, conn: int, rid: RequestId) -> Send:
        """The answer to ``sync``: the room's state as of its latest event (no new event)."""
        room = session.room
        if room is None:
            return self.context.error(conn, ErrorCode.NOT_IN_ROOM, "join a room first", rid)
        return Send([conn], room.state_frame(self.context.clock(), rid))

    def publish(
        self, room: Room, frame: bytes, moved: bool = False, targets: list[int] | None = None
    ) -> Send:
        room.remember(room.event, frame)
        if moved:
            self.context.journal.moved(room)
        else:
            self.context.journal.room(room)
        return Send(room.connections() if targets is None else targets, frame)

    def after_results(
        self, room: Room, rid: RequestId = None, moved: bool = False, now: float | None = None
    ) -> list[Action]:
        """Push what changed; when a match game ended, start the next and push that too.

        ``moved``: the change was a move (the database then only appends it,
        unless the move ended the game). ``now``: the games' clock, if the caller read it.
        """
        if room.finished:
            self._archive(room)
        if now is None:
            now = self.context.clock()
        actions: list[Action]
        if moved and room.status == "playing":
            actions = self.push_move(room, rid, now)
        else:
            actions = [self.push(room, rid)]
        if walkers := walkouts.reopens(room):
            actions += self._reopen(room, walkers)
        elif room.continue_match():
            self._absent_from_new_game(room)
            actions += self.seat_changes(room)
            actions.append(self.push(room))
        self.schedule(room, now)
        return [*actions, *computer.think(room), *computer.live(room)]

    def _reopen(self, room: Room, seats: list[int]) -> list[Action]:
        """The joiners of a public room left its first game unplayed (``walkouts.reopens``):
        they are out of it, in the lobby (``left``, reason ``"walked_out"``), never to sit
        there again, and it waits for players again, its creator in it."""
        journal = self.context.journal
        actions: list[Action] = []
        for seat in seats:
            holder = room.holder(seat)
            account = holder.account.id if holder.account is not None else None
            room.barred.update(walkouts.keys(holder.session.address, account))
            member = holder.session
            if member.room is room and member.seat == seat:
                member.room = member.seat = None
                if member.conn is None:
                    self._forget(member)
                else:
                    journal.session(member)
                    actions.append(Send([member.conn], encode(Left(reason="walked_out"))))
        room.reopen(seats)
        journal.room(room)
        return [*actions, self.push(room)]

    def seat_changes(self, room: Room) -> list[Action]:
        """Tell every seated player their new seat after the seats turned (same secret)."""
        actions: list[Action] = []
        for seat, holder in enumerate(room.seats):
            if holder is not None and room.sits(holder) and holder.session.conn:
                joined = Joined(room=room.code, role="player", seat=seat)
                actions.append(Send([holder.session.conn], encode(joined)))
        return actions

    def _absent_from_new_game(self, room: Room) -> None:
        """A new game starts the claim countdown for players who are not there."""
        now = self.context.clock()
        for seat in range(room.spec.players):
            if not room.connected(seat):
                room.away(seat, now, self.context.limits.absence.grace)

    # -- rematches and returns -----------------------------------------------------------

    def rematch_ready(self, room: Room) -> bool:
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

    def start_rematch(self, room: Room, rid: RequestId = None) -> list[Action]:
        room.start_rematch()
        self.schedule(room)
        return [*self.seat_changes(room), self.push(room, rid), *computer.think(room)]

    def back(self, room: Room, seat: int) -> list[Action]:
        """A player came back to its seat: end its absence, push that, and start the
        rematch that waited for it, if one did."""
        room.back(seat)
        self.schedule(room)
        actions: list[Action] = [self.push(room)]
        if self.rematch_ready(room):
            actions += self.start_rematch(room)
        return actions

    def resumed(self, session: Session, conn: int, last_event: int | None) -> list[Action]:
        """A session resumed on ``conn``: the events it missed in its room, and its return."""
        room = session.room
        if room is None:
            return []
        actions = _missed(room, conn, last_event, conn in self.context.compact)
        if session.seat is None:
            # A spectator coming back is no event, as one arriving is not (``watch``): the
            # room's state to it alone.
            self.note(room)
            return [*actions, Send([conn], room.state_frame(self.context.clock()))]
        return actions + self.back(room, session.seat)

    def gone(self, session: Session, deliberate: bool) -> list[Action]:
        """The session's connection went away (``deliberate``: closed cleanly)."""
        room = session.room
        if room is None:
            self._forget(session)
            return []
        if session.seat is None:
            # A spectator going is no event: with many spectators coming and going, a
            # state to everyone for each would multiply a few bytes into megabytes. The
            # count is up to date in the room's next state.
            room.spectators.discard(session)
            session.room = None
            self._forget(session)
            if not room.anyone_connected():
                # The last one here: a finished room's seats kept for players who dropped
                # count down from now (kept, with no timer, it was never forgotten).
                self.schedule(room)
            self.collect(room)
            return []
        # The seat is kept for the grace period: in a waiting room it is then
        # given up; in a game the others may then claim.
        absence = self.context.limits.absence
        grace = absence.deliberate_grace if deliberate else absence.grace
        room.away(session.seat, self.context.clock(), grace)
        self.schedule(room)
        self.context.journal.room(room)
        actions: list[Action] = [self.push(room)] if room.anyone_connected() else []
        self.collect(room)
        return actions

    # -- deadlines -----------------------------------------------------------------------

    def schedule(self, room: Room, now: float | None = None) -> None:
        """Keep a timer for the room's next deadline, if it has one (``now``: the games'
        clock, if the caller read it)."""
        absence = self.context.limits.absence
        room.arm(
            self.context.clock() if now is None else now, absence.first_move, absence.think_limit
        )
        when = room.deadline(absence)
        if when is not None:
            self._tiebreak += 1
            heapq.heappush(self._timers, (when, self._tiebreak, room.code))

    def earliest(self) -> float | None:
        """No room's deadline comes before this: the first timer's moment, stale or not
        (every deadline a room has was scheduled, so it has a timer of its own; the ones
        that passed it by are stale). None without timers."""
        return self._timers[0][0] if self._timers else None

    def next_deadline(self) -> float | None:
        while self._timers:
            when, _, code = self._timers[0]
            room = self.rooms.get(code)
            if room is not None and room.deadline(self.context.limits.absence) == when:
                return when
            heapq.heappop(self._timers)  # stale: the room moved on or is gone
        return None

    def tick(self, now: float) -> list[Action]:
        """Act on every room deadline that has come: flags and abandoned seats."""
        actions: list[Action] = []
        acted: set[str] = set()
        while (when := self.next_deadline()) is not None and when <= now:
            code = self._timers[0][2]
            if code in acted:
                # Its new deadline has passed already: acted on at the next tick, after the
                # event loop's other work, so that a room whose every new game is over at once
                # can never hold the server in this loop (it did: a computer match restarting).
                break
            acted.add(code)
            heapq.heappop(self._timers)
            room = self.rooms[code]
            if removed := room.expire(now, self.context.limits.absence):
                # Every seat taken out is pushed now, not only a game's end: in a
                # four-player game the others play on and must be told at once.
                self.context.counters["flags"] += removed.count("time")
                actions += self.after_results(room)
            if released := room.release_absent(now):
                for member in released:
                    member.room = member.seat = None
                    self._forget(member)
                self.context.journal.room(room)
                if room.anyone_connected():
                    actions.append(self.push(room))
            self.schedule(room)
            self.collect(room)
        return actions

    # -- ratings -------------------------------------------------------------------------

    def rated(self, game: RatedGame) -> list[Action]:
        """The rating changes of ``game`` are on disk: show them in its room, if it is here."""
        room = self.rooms.get(game.room)
        if room is None:
            return []
        for change in game.changes:
            after = change.after
            for seat, holder in enumerate(room.seats):
                account = holder.account if holder is not None else None
                if account is not None and account.id == change.account:
                    account.ratings[after.pool] = after
                    if room.number == game.number:
                        shift = ratings.shown(after.mu) - ratings.shown(change.before.mu)
                        room.rating_changes[seat] = shift
        if room.number == game.number and room.anyone_connected():
            return [self.push(room)]
        return []

    # -- restarts ------------------------------------------------------------------------

    def restore(
        self,
        record: RoomRecord,
        sessions: dict[str, Session],
        accounts: dict[int, AccountRecord],
    ) -> Room:
        """Take back one room from the database, a game in progress or a room still waiting
        for players (raises if its record cannot be used). Every player is away until they
        resume, with a fresh grace period (in a waiting room, the time the seat is kept, as
        after a dropped connection); the clocks restart now, the running seat with a small
        bonus. The room, for the lobby to count against its owners again."""
        context = self.context
        now, limits = context.clock(), context.limits
        bonus, chat = limits.restart_bonus, context.chat_bucket()
        room = restore_room(record, sessions, now, bonus, chat, accounts)
        room.log_budget = context.log_budget  # empty after a restart: nothing to give back
        room.serial = next(self._serial)
        room.established = limits.provisional_games
        room.rated_together = self.context.rated_together
        self.rooms[room.code] = room
        for seat, holder in enumerate(room.seats):
            if holder is not None and holder.bot is None:
                holder.session.room, holder.session.seat = room, seat
                room.away(seat, now, limits.absence.grace)
        context.journal.room(room)
        self.note(room)
        self.schedule(room)
        self._woken += computer.think(room)
        return room

    def wake(self) -> list[Think]:
        """The ``Think`` actions for restored games where the computer is to move."""
        woken, self._woken = self._woken, []
        return woken

    def snapshot_all(self) -> None:
        """Note every room in play for saving as of now (before a graceful shutdown)."""
        for room in self.rooms.values():
            if room.status == "playing":
                self.context.journal.room(room)


MOVED_PREFIX = b'{"type":"moved"'
"""How a logged ``moved`` event starts (msgspec writes the tag first)."""


def _missed(room: Room, conn: int, last_event: int | None, compact: bool) -> list[Action]:
    """The events after ``last_event`` from the room's log, or nothing if it is too old.

    Too old (or unknown): the state pushed right after brings the client up to date anyway.
    """
    logged = room.logged_after(last_event)
    if compact:
        return [Send([conn], frame) for _, frame in logged]
    # A move that only compact clients saw was logged as a ``moved`` event, which this
    # client did not ask for: it is left out (the state pushed after the replay has it).
    return [Send([conn], frame) for _, frame in logged if not frame.startswith(MOVED_PREFIX)]


def room_code() -> str:
    """ROOM_CODE_LENGTH random letters of ROOM_CODE_ALPHABET, from one draw of the system's
    randomness (not one a letter: each is a system call)."""
    base = len(ROOM_CODE_ALPHABET)
    number = secrets.randbelow(base**ROOM_CODE_LENGTH)
    letters = []
    for _ in range(ROOM_CODE_LENGTH):
        number, digit = divmod(number, base)
        letters.append(ROOM_CODE_ALPHABET[digit])
    return "".join(letters)


def _log_start(room: Room) -> None:
    players = [
        "?" if h is None else h.name if h.bot is None else f"{h.name} (computer, level {h.bot})"
        for h in room.seats
    ]
    rated = f", rated {room.pool}" if room.game_rated else ""
    if room.pool and not room.game_rated:
        rated = f", casual in rated {room.pool}: rated games together used up today"
    log.info("game started: %s%s", " v ".join(players), rated, extra={"room": room.code})
