"""Rooms and sessions as plain records (``server.records``), for the database, and back.

A room's whole record is saved after every event (it is small: the moves as
notation, the seats, the clock banks), except after a move: then only what the
move adds goes to the database (``server.journal``), which SQLite keeps in a
row of its own until the record is written whole again (``room_moves``).
Restoring replays the moves through the engine, so a saved game can never hold
an illegal position. Secrets and tokens are saved only as their SHA-256 hashes.
"""

from __future__ import annotations

from server.clock import FischerClock
from server.ratelimit import TokenBucket
from server.ratings import pool_of
from server.records import AccountRecord, ClockRecord, RoomRecord, SeatRecord, SessionRecord
from server.rooms import Member, Room, SeatHolder
from server.sessions import Session


def room_record(room: Room, now: float) -> RoomRecord:
    clock = None
    if room.clock is not None:
        banks = [room.clock.left(seat, now) for seat in range(room.spec.players)]
        clock = ClockRecord(remaining=banks, running=room.clock.running)
    return RoomRecord(
        code=room.code,
        variant=room.spec,
        public=room.public,
        created=room.created,
        time_control=room.time_control,
        match=room.match,
        event=room.event,
        number=room.number,
        match_game=room.match_game,
        started=room.started,
        actions=list(room.actions),
        movers=list(room.movers),
        result=room.result,
        draw_offers=sorted(room.draw_offers),
        rematch=sorted(room.rematch),
        seats=[
            SeatRecord(
                session=h.session.id,
                name=h.name,
                digest=h.digest.hex(),
                points=h.points,
                bot=h.bot,
                think=h.think,
                allows_eval=h.allows_eval,
                account=h.account.id if h.account else None,
            )
            if h is not None
            else None
            for h in room.seats
        ],
        clock=clock,
        rated=room.rated,
        counts=room.counts,
        quick=room.quick,
        first_pairing=room.first_pairing,
        barred=sorted(room.barred),
        owners=list(room.owners),
    )


def session_record(session: Member) -> SessionRecord:
    return SessionRecord(
        id=session.id,
        name=session.name,
        token_digest=session.token_digest.hex(),
        room=session.room.code if session.room else None,
        seat=session.seat,
        account=session.account.id if session.account else None,
        previous_digest=None if session.previous_digest is None else session.previous_digest.hex(),
    )


def restore_session(
    record: SessionRecord, chat: TokenBucket, accounts: dict[int, AccountRecord]
) -> Session:
    account = accounts.get(record.account) if record.account is not None else None
    previous = record.previous_digest
    return Session(
        record.id,
        record.name,
        bytes.fromhex(record.token_digest),
        chat,
        account=account,
        previous_digest=None if previous is None else bytes.fromhex(previous),
    )


def check_room_record(record: RoomRecord) -> None:
    """Raise ValueError when the parts of ``record`` do not fit together (the replay of its
    moves checks their legality). A room still waiting for players has free seats, a person
    in one of them at least, and nothing played."""
    players = record.variant.players
    if len(record.seats) != players:
        raise ValueError(f"{len(record.seats)} seats saved for a {players}-player game")
    if not record.started:
        if record.result is not None or record.actions or record.movers:
            raise ValueError("a room waiting for players saved with a game played")
        if not any(saved is not None and saved.bot is None for saved in record.seats):
            raise ValueError("a room waiting for players saved with nobody seated")
    elif any(saved is None for saved in record.seats):
        raise ValueError(f"a free seat saved in a {players}-player game that started")
    plies = sum(1 for action in record.actions if not action.startswith("retire"))
    if len(record.movers) != plies or any(not 0 <= m < players for m in record.movers):
        raise ValueError(f"{len(record.movers)} movers saved for {plies} moves")
    clock = record.clock
    if clock is not None:
        if len(clock.remaining) != players or not all(r == r for r in clock.remaining):
            raise ValueError(f"{len(clock.remaining)} clock banks saved for {players} seats")
        if clock.running is not None and not 0 <= clock.running < players:
            raise ValueError(f"the clock runs for seat {clock.running}")


def restore_room(
    record: RoomRecord,
    sessions: dict[str, Session],
    now: float,
    bonus: float,
    chat: TokenBucket,
    accounts: dict[int, AccountRecord],
) -> Room:
    """Rebuild a room (in play, or still waiting for players), replaying its game; seated
    sessions are linked back to it.

    The clock restarts at ``now``; the running seat gets ``bonus`` seconds on
    top of its bank, so nobody pays for the server's downtime. Raises ValueError
    (or another error) for a record that does not make a whole, legal room.
    """
    check_room_record(record)
    room = Room(
        record.code,
        record.variant,
        record.public,
        now,
        record.time_control,
        record.match,
        pool_of(record.variant, record.time_control) if record.rated else None,
    )
    room.event, room.number, room.match_game = record.event, record.number, record.match_game
    # A game's start was logged where it started: not again; a waiting room's is to come.
    room.announced = record.number if record.started else record.number - 1
    room.started, room.result = record.started, record.result
    room.counts, room.quick = record.counts, record.quick
    pairing = record.first_pairing
    room.first_pairing = record.number == 1 if pairing is None else pairing
    room.barred = set(record.barred)
    room.owners = tuple(record.owners)
    for action in record.actions:
        room.game.apply(action)
    room.actions, room.movers = list(record.actions), list(record.movers)
    room.draw_offers, room.rematch = set(record.draw_offers), set(record.rematch)
    for seat, saved in enumerate(record.seats):
        if saved is None:
            continue
        # A seat whose session was not kept can still be reclaimed with its secret.
        session = sessions.get(saved.session) or Session(saved.session, saved.name, b"", chat)
        digest = bytes.fromhex(saved.digest)
        account = accounts.get(saved.account) if saved.account is not None else None
        holder = SeatHolder(
            session,
            saved.name,
            digest,
            points=saved.points,
            bot=saved.bot,
            think=saved.think,
            account=account,
        )
        holder.allows_eval = saved.allows_eval
        room.seats[seat] = holder
    if record.clock is not None and room.time_control is not None:
        control = room.time_control
        room.clock = FischerClock(
            control.base, control.increment, list(record.clock.remaining), record.clock.running, now
        )
        if room.clock.running is not None:
            room.clock.remaining[room.clock.running] += bonus
    return room
