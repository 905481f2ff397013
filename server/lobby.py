"""The lobby: opening rooms, finding them, the public list, and quick match.

It answers ``create``, ``join``, ``watch``, ``quick_match``, ``list_rooms`` and ``leave``
for sessions in the lobby: it checks what it alone can (the caps on rooms per session and
address, the rating pool, the computer's availability), has the room host open rooms, and
hands joins and watches to the seating of the room found in the room directory. The
directory (``server.directory``) and the quick-match queue (``server.quickmatch``) are
interfaces: on one server both are local; in a cluster they span every node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import msgspec

from protocol.codec import encode
from protocol.messages import (
    AiSpec,
    Create,
    ErrorCode,
    Join,
    Leave,
    Left,
    ListRooms,
    Queued,
    RequestId,
    Rooms,
    TimeControl,
    VariantSpec,
    Watch,
)
from protocol.messages import QuickMatch as QuickMatchRequest
from server import ratings
from server.accountdb import computer_seat_name
from server.actions import Action, Locate, Send
from server.addresses import rooms_key
from server.context import Context, full_variant
from server.directory import RoomDirectory
from server.quickmatch import MatchQueue, Pool
from server.records import AccountRecord
from server.roomhost import RoomHost
from server.rooms import Room, spliceable
from server.seating import Seating
from server.sessions import Session
from server.walkouts import Walkouts

RoomsFrame = spliceable(Rooms)
"""``Rooms`` whose list arrives already encoded (``RoomDirectory.listing_json``)."""


class Lobby:
    """Where sessions outside any room ask for one."""

    def __init__(
        self,
        context: Context,
        host: RoomHost,
        seating: Seating,
        directory: RoomDirectory,
        queue: MatchQueue,
    ) -> None:
        self.context = context
        self.host = host
        self.seating = seating
        self.directory = directory
        self.queue = queue
        self.rooms_of: dict[str, set[Room]] = {}
        """The rooms each address owns (an IPv6 one by its /56: ``rooms_key``): how many it
        holds, and which of them wait."""
        self.computer_rooms: Counter[str] = Counter()
        """Rooms against the computer held by each ``computer:<ip>`` (see ``Room.owners``)."""
        self.computers: dict[int, AccountRecord] = {}
        """The computer's accounts by level (from the database; none without one)."""
        self.computer_busy: Callable[[], bool] = lambda: False
        """Whether the computer's workers are saturated (then new computer games are refused)."""
        self.walkouts = Walkouts()
        """Who walked out of quick-match games, and how long they wait to queue again."""
        host.on_close = self.closed

    # -- requests ------------------------------------------------------------------------

    def create(self, session: Session, request: Create) -> list[Action]:
        error = self.context.error
        if (refused := self._room_refused(session, request.id)) is not None:
            return [refused]
        if request.ai is not None and (refused := self._computer_refused(session, request.id)):
            return [refused]
        if request.ai is None and (refused := self._waiting_refused(session, request.id)):
            return [refused]
        spec = full_variant(request.variant)
        if (wrong := self._seat_refused(request, spec.players)) is not None:
            return [error(session.conn, ErrorCode.INVALID_FIELD, wrong, request.id)]
        mine = request.seat or 0
        public = not request.private and request.ai is None
        pool, refusal = self._pool(session, request.rated, spec, request.clock, request.ai)
        if refusal is not None:
            return [error(session.conn, *refusal, request.id)]
        room, notices = self.host.open_room(spec, public, request.clock, request.match, pool)
        self._own(room, session, computer=request.ai is not None)
        if request.ai is not None:
            computer = self.computers.get(request.ai.level) if pool else None
            others = [seat for seat in range(spec.players) if seat != mine]
            for nth, seat in enumerate(others, 1):
                name = computer_seat_name(request.ai.level, nth)
                bot, _ = Session.new(name, self.context.chat_bucket())
                room.seat_bot(seat, bot, request.ai.level, request.ai.seconds, computer)
        return notices + self.seating.take_seat(
            session, room, mine, request.id, request.spectator_eval
        )

    @staticmethod
    def _seat_refused(request: Create, players: int) -> str | None:
        """Why ``create``'s ``seat`` is refused, if it is. Only against the computer: a room
        for people is its creator's (seat 0 opens the room, waits in it, and its leaving
        ends the waiting; ``server.walkouts``), and a friend who wants to open can be given
        the first game's seat by a rematch's turn as well. An AI author could not have the
        computer open a game but by playing a first one (an outside review)."""
        seat = request.seat
        if seat is None:
            return None
        if request.ai is None:
            return "seat: only a game against the computer (with ai) chooses the seat - at `$.seat`"
        if seat >= players:
            return f"seat {seat} does not exist: this game has {players} seats - at `$.seat`"
        return None

    def join(self, session: Session, request: Join) -> list[Action]:
        room = self.directory.find(request.room)
        if room is None:
            return [self._elsewhere(session, request)]
        return self.seating.join(session, room, request)

    def watch(self, session: Session, request: Watch) -> list[Action]:
        room = self.directory.find(request.room)
        if room is None:
            return [self._elsewhere(session, request)]
        return self.seating.watch(session, room, request)

    def _elsewhere(self, session: Session, request: Join | Watch) -> Action:
        """A room this server does not host: on a cluster node, perhaps another node's
        (the adapter finds out: ``Locate``); alone, no such room."""
        if self.context.clustered and session.conn is not None:
            return Locate(session.conn, request)
        return self.missing(session, request)

    def missing(self, session: Session, request: Join | Watch) -> Send:
        return self._no_room(session, request.room, request.id)

    def quick_match(self, session: Session, request: QuickMatchRequest) -> list[Action]:
        if (refused := self._room_refused(session, request.id)) is not None:
            return [refused]
        if (refused := self._walked_out(session, request.id)) is not None:
            return [refused]
        spec = full_variant(request.variant)
        clock = request.clock
        pool, refusal = self._pool(session, request.rated, spec, clock, None)
        if refusal is not None:
            return [self.context.error(session.conn, *refusal, request.id)]
        session.queued = Queued(id=request.id, variant=spec, clock=clock, rated=pool is not None)
        assert session.conn is not None
        actions: list[Action] = [Send([session.conn], encode(session.queued))]
        for group in self.queue.enter(session, Pool.of(spec, clock, pool), self.context.clock()):
            actions += self._seat_group(group, pool)
        return actions

    def list_rooms(self, conn: int, request: ListRooms) -> Send:
        rooms = msgspec.Raw(self.directory.listing_json(self.context.limits.rooms_listed))
        return Send([conn], encode(RoomsFrame(id=request.id, rooms=rooms)))

    def leave(self, session: Session, request: Leave) -> list[Action]:
        assert session.conn is not None
        room = session.room
        if room is None and session.queued is None:
            message = "not in a room or queue"
            return [self.context.error(session.conn, ErrorCode.NOT_IN_ROOM, message, request.id)]
        self.unqueue(session)
        actions: list[Action] = [Send([session.conn], encode(Left(id=request.id)))]
        if room is None:
            return actions
        return actions + self.seating.leave(session, room)

    # -- the queue -----------------------------------------------------------------------

    def unqueue(self, session: Session) -> None:
        if session.queued is not None:
            self.queue.leave(session)
            session.queued = None

    def resumed(self, session: Session, conn: int) -> list[Action]:
        """A session resumed: if it still waits for opponents, say so, or the client would
        think it is in the lobby (its create would get already_in_room, then a pairing)."""
        if session.queued is None:
            return []
        queued = msgspec.structs.replace(session.queued, id=None)
        return [Send([conn], encode(queued))]

    def due(self) -> float | None:
        """When ``tick`` must next look at the queue, if ever."""
        return self.queue.due()

    def tick(self, now: float) -> list[Action]:
        """Seat the players a rated queue's widened window now pairs."""
        actions: list[Action] = []
        for pool, group in self.queue.recheck(now):
            actions += self._seat_group(group, pool.rating_pool)
        return actions

    def _seat_group(self, group: list[Session], pool: str | None) -> list[Action]:
        """A room of its own for a group the queue paired, the first player owning it."""
        first = group[0].queued
        assert first is not None
        room, actions = self.host.open_room(first.variant, False, first.clock, False, pool)
        room.quick = True
        self._own(room, group[0])
        for seat, player in enumerate(group):
            assert player.queued is not None
            rid, player.queued = player.queued.id, None
            actions.append(self.seating.seat(player, room, seat, rid))
        actions.append(self.host.push(room))
        self.host.schedule(room)
        return actions

    def seat_group(self, group: list[Session], pool: str | None) -> list[Action]:
        """Seat together a group a shared queue paired (a cluster's: every player here)."""
        return self._seat_group(group, pool)

    def open_for_match(
        self, session: Session, pool: str | None, seat: int
    ) -> tuple[str, list[Action]]:
        """A room for ``session``, paired by a cluster's shared queue with a player of another
        node, who joins it at the other seat: its code, and ``session`` seated at ``seat``."""
        queued = session.queued
        assert queued is not None
        room, notices = self.host.open_room(queued.variant, False, queued.clock, False, pool)
        room.quick = True
        self._own(room, session)
        rid, session.queued = queued.id, None
        return room.code, notices + self.seating.take_seat(session, room, seat, rid)

    # -- caps and pools ------------------------------------------------------------------

    def _room_refused(self, session: Session, rid: RequestId) -> Send | None:
        """The error for a session that may not open another room now, if it may not."""
        limits, error = self.context.limits, self.context.error
        if not self.host.can_open():
            message = "new games cannot start on this server right now; try again in a moment"
            return error(session.conn, ErrorCode.SERVICE_UNAVAILABLE, message, rid)
        if len(self.host.rooms) >= limits.max_rooms and self.host.evictable() is None:
            # Full of rooms somebody is in, none with a game over for long: one would be
            # closed for this one (``RoomHost.make_room``).
            message = f"the server holds as many rooms as it may ({limits.max_rooms}); try later"
            return error(session.conn, ErrorCode.SERVER_BUSY, message, rid)
        if len(self.rooms_of.get(rooms_key(session.address), ())) >= limits.rooms_per_address:
            message = f"your address already has {limits.rooms_per_address} rooms open"
            return error(session.conn, ErrorCode.TOO_MANY_ROOMS, message, rid)
        return None

    def _walked_out(self, session: Session, rid: RequestId) -> Send | None:
        """The error for a player who walked out of a quick-match game and must wait."""
        account = session.account.id if session.account is not None else None
        wait = self.walkouts.wait(session.address, account, self.context.clock())
        if not wait:
            return None
        message = (
            f"you left a quick-match game without playing it: you may queue again in {wait:g} s "
            "(the wait doubles with each game left so within an hour)"
        )
        return self.context.error(session.conn, ErrorCode.RATE_LIMITED, message, rid)

    def game_over(self, room: Room) -> None:
        """A game ended in ``room``: count its walk-outs (``server.walkouts``)."""
        if room.quick:
            self.walkouts.note(room, self.context.clock())

    def _waiting_refused(self, session: Session, rid: RequestId) -> Send | None:
        """The error for a new room to wait for players in, if the address has its share of
        those waiting already (a game against the computer, or one the quick match pairs,
        starts at once: it waits for nobody)."""
        most = self.context.limits.waiting_rooms_per_address
        rooms = self.rooms_of.get(rooms_key(session.address), ())
        if sum(1 for room in rooms if room.status == "waiting") < most:
            return None
        message = (
            f"your address already has {most} rooms waiting for players; "
            "play or leave one of them first"
        )
        return self.context.error(session.conn, ErrorCode.TOO_MANY_ROOMS, message, rid)

    def _computer_refused(self, session: Session, rid: RequestId) -> Send | None:
        """The error for a new game against the computer that may not start now, if any."""
        error, most = self.context.error, self.context.limits.computer_rooms_per_address
        address = rooms_key(session.address)
        if address and self.computer_rooms[f"computer:{address}"] >= most:
            absence = self.context.limits.absence
            message = (
                f"your address already plays the computer in {most} rooms; finish or leave one "
                f"(a game you left ends, and its room closes, within {absence.deliberate_grace:g} "
                f"s; {absence.grace:g} s after a lost connection)"
            )
            return error(session.conn, ErrorCode.TOO_MANY_ROOMS, message, rid)
        if self.computer_busy():
            message = "the computer players are all busy; try again in a minute, or play a person"
            return error(session.conn, ErrorCode.SERVER_BUSY, message, rid)
        return None

    def _own(self, room: Room, session: Session, computer: bool = False) -> None:
        # Counted against the address only: a session is in one room at a time, so a cap per
        # session counted only rooms it had left, and a player who left three games in
        # progress could not create a fourth room for up to 10 minutes, none of them shown.
        # An IPv6 address by its /56, not the /64 its session has: a provider's customer
        # usually holds 256 /64s, and with 20 rooms in each filled the server's 5000.
        address = rooms_key(session.address)
        room.owners = ()
        if not address:
            return
        room.owners = (f"address:{address}",)
        self.rooms_of.setdefault(address, set()).add(room)
        if computer:
            room.owners += (f"computer:{address}",)
            self.computer_rooms[f"computer:{address}"] += 1

    def restored(self, room: Room) -> None:
        """A room taken back from the database (a restart, a cluster's takeover): it counts
        against the owners it had (``Room.owners``, saved with it) as when it opened."""
        for owner in room.owners:
            kind, _, address = owner.partition(":")
            if kind == "address":
                self.rooms_of.setdefault(address, set()).add(room)
            else:
                self.computer_rooms[owner] += 1

    def closed(self, room: Room) -> None:
        """The room host forgot ``room``: it no longer counts against its owners."""
        for owner in room.owners:
            kind, _, address = owner.partition(":")
            if kind == "address":
                self._disown(address, room)
                continue
            self.computer_rooms[owner] -= 1
            if self.computer_rooms[owner] <= 0:
                del self.computer_rooms[owner]

    def _disown(self, address: str, room: Room) -> None:
        rooms = self.rooms_of.get(address)
        if rooms is not None:
            rooms.discard(room)
            if not rooms:
                del self.rooms_of[address]

    def _pool(
        self,
        session: Session,
        rated: bool | None,
        spec: VariantSpec,
        clock: TimeControl | None,
        ai: AiSpec | None,
    ) -> tuple[str | None, tuple[ErrorCode, str] | None]:
        """The rating pool of a game asked for as ``rated`` (None: rated if it can be), or
        None for a casual one; or why it cannot be rated when that was asked for (or why
        the clock cannot be)."""
        if clock is not None and round(clock.base * 1000) == 0:
            # Clocks are shown in whole milliseconds (half to even): a base below that showed
            # a 0 ms clock, and its game was lost on time at the first move that counted.
            message = "a clock's base is more than 0.0005 seconds (0 ms) - at `$.clock.base`"
            return None, (ErrorCode.INVALID_FIELD, message)
        pool = ratings.pool_of(spec, clock)
        why: tuple[ErrorCode, str] | None = None
        if session.account is None:
            why = ErrorCode.ACCOUNT_REQUIRED, "log in to play rated games - at `$.rated`"
        elif pool is None:
            standard = ratings.STANDARD_WALLS[spec.players]
            why = (
                ErrorCode.INVALID_FIELD,
                f"only games with the standard {standard} walls each are rated: leave out the "
                "walls, or ask for a casual game - at `$.rated`",
            )
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

    def rated(self, account: int, after: ratings.RatingRecord) -> None:
        """A rating saved: the computer's accounts show it from now on."""
        for computer in self.computers.values():
            if computer.id == account:
                computer.ratings[after.pool] = after

    def _no_room(self, session: Session, code: str, rid: RequestId) -> Send:
        return self.context.error(session.conn, ErrorCode.ROOM_NOT_FOUND, f"no room {code!r}", rid)
