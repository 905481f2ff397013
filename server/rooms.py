"""A room: its games, seats, spectators, clocks, offers and event log.

The room knows nothing of sockets and reads no clock: every call that
depends on time is given ``now``. It turns its game into the self-sufficient
``state`` message and numbers every event it pushes, so clients can tell when
they missed one and get it replayed from the log.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from collections import deque
from dataclasses import dataclass
from typing import Literal, Protocol, cast

import msgspec

from engine import Game
from protocol.messages import (
    ClockInfo,
    LastMove,
    MatchInfo,
    Moved,
    PlayerInfo,
    RequestId,
    Result,
    RoomInfo,
    State,
    TimeControl,
    VariantSpec,
)
from server import ratings
from server.clock import FischerClock
from server.ratelimit import TokenBucket
from server.records import AccountRecord

Status = Literal["waiting", "playing", "finished"]
Reason = Literal["goal", "resign", "time", "abandon", "draw", "aborted", "last_standing", "ply_cap"]

BOT_PLY_CAP = 400
"""Plies after which a game left to computers alone is drawn (they could shuffle forever)."""
PLY_CAP = 1000
"""Plies after which any game is drawn: far above any real game (a long one has 200), and
the most moves a ``replay`` takes. Without it two players could shuffle forever, each move's
state (about 5 bytes a ply) and work growing with the game."""
LOG_LENGTH = 512
"""Events a room keeps for replay to clients that come back."""
LOG_BYTES = 1 << 20
"""...and at most this many bytes of them: a state carries the game's moves, so in a very
long game each one is large, and the log must not grow with the square of its length."""
LOG_BUDGET = 256 << 20
"""Bytes the logs of all the rooms of a server may hold together before each room that logs
an event keeps only ``LOG_FLOOR`` of its own (``LogBudget``): 5000 rooms of 1000-ply games
would have held 1 MiB each, 5 GiB (an outside review's 1.4 MiB a room, extrapolated)."""
LOG_FLOOR = 64 << 10
"""The bytes of log a room keeps over the budget: a few whole states of the longest game,
enough for a dropped connection's last few events; a resume that needs more gets the state."""


class LogBudget:
    """The bytes of every room's log of one server, together (``Room.remember``)."""

    def __init__(self, limit: int = LOG_BUDGET) -> None:
        self.limit = limit
        self.held = 0


MATCH_GAMES = 2


def spliceable(message: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """A struct that encodes exactly like ``message`` (same tag, fields, order and wire
    names, defaults) but takes any value for each field, ``msgspec.Raw`` included: parts
    encoded earlier are spliced into the frame verbatim. Built from ``message`` itself, so
    a field added to it is here too."""
    config = message.__struct_config__
    fields: list[tuple[str, type, object]] = []
    for field in msgspec.structs.fields(message):
        if field.default_factory is not msgspec.NODEFAULT:
            default: object = msgspec.field(default_factory=field.default_factory)
        else:
            default = field.default
        fields.append((field.encode_name, object, default))
    return msgspec.defstruct(
        f"{message.__name__}Frame",
        [
            (name, kind) if default is msgspec.NODEFAULT else (name, kind, default)
            for name, kind, default in fields
        ],
        kw_only=True,
        tag=config.tag,
        tag_field=config.tag_field,
        omit_defaults=config.omit_defaults,
    )


StateFrame = spliceable(State)
"""``State`` whose variant and players arrive already encoded (``Room.state_frame``)."""
_encode = msgspec.json.Encoder().encode


def wall_hex(mask: int, size: int) -> str:
    """``state.legal_walls``: the packed wall mask in hex, one digit per four slots,
    zero-padded to the board's fixed length (2 * (size - 1) ** 2 bits)."""
    return format(mask, f"0{(size - 1) ** 2 // 2}x")


class Member(Protocol):
    """Whoever sits or watches in a room, as the room sees them.

    On one server that is a ``server.sessions.Session``; a clustered room host will also
    seat players whose connection (and session) is on another node, through a stand-in with
    these fields. The room reads them; the lobby and the room host set ``room`` and
    ``seat``, and the session registry ``conn``.
    """

    id: str
    name: str
    token_digest: bytes
    """The hash of its resume token (saved with the room, so it resumes after a restart)."""
    previous_digest: bytes | None
    """The hash of the token of its last resume, good until the newer one is used."""
    account: AccountRecord | None
    address: str
    """The IP address the session came from ("" when not known)."""
    conn: int | None
    """Where the room's events go now; None while away."""
    room: Room | None
    seat: int | None
    """Seat in ``room``; None for a spectator."""


def _ms_until(due: float, now: float) -> int:
    """Milliseconds from ``now`` until ``due``, rounded up: a countdown reads 0 only once the
    moment has come, so a client that claims (or moves) when it reaches 0 is never early.
    Less a microsecond first: a grace of 15 s counted from ``now`` itself is 15.000000
    000000002 s in floats, one time in a thousand, which would read 15001."""
    return max(0, math.ceil((due - now) * 1000 - 0.001))


def secret_digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


@dataclass(eq=False)
class SeatHolder:
    """Who holds a seat: the session, its name, the seat secret's hash, and absence.

    Only the secret's hash is kept, so neither memory nor the database holds a
    usable secret; the secret itself is handed out once, in ``joined``.
    """

    session: Member
    name: str
    digest: bytes = b""
    gone_since: float | None = None
    """When the holder's connection went away during a game, if it is away."""
    grace: float = 0.0
    """Seconds the others must wait, from ``gone_since``, before they may claim."""
    points: float = 0.0
    """Match points so far."""
    bot: int | None = None
    """The computer's level when the computer holds this seat."""
    think: float | None = None
    """The computer's time per move (None: its level's own)."""
    allows_eval: bool = False
    """The player let spectators follow the computer's evaluation (``spectator_eval``)."""
    chat: TokenBucket | None = None
    """Paces this seat's chat lines (made on its first line)."""
    account: AccountRecord | None = None
    """The account playing this seat (the computer level's own, for the computer)."""

    def new_secret(self) -> str:
        """Issue a new secret for this seat (any earlier one stops working)."""
        secret = secrets.token_urlsafe(18)
        self.digest = secret_digest(secret)
        return secret

    def owns(self, secret: str) -> bool:
        return hmac.compare_digest(self.digest, secret_digest(secret))


@dataclass(frozen=True)
class Absence:
    """How long seats may stay away during a game (seconds)."""

    grace: float = 60.0
    """Before the others may claim, after a connection dropped."""
    deliberate_grace: float = 15.0
    """Before the others may claim, after a player closed or left on purpose."""
    hard_limit: float = 600.0
    """After which an unclaimed game is decided against the absent seat."""
    first_move: float = 60.0
    """Each seat's first move of a game must come this soon after its turn does, or the
    server aborts the game (0: never)."""
    think_limit: float = 600.0
    """In an untimed game between people: how long the seat to move may think, after which
    the others may claim the game as against an absent player (0: for ever)."""


class Room:
    """A sequence of games between two or four seats, watched by any number of spectators."""

    def __init__(
        self,
        code: str,
        spec: VariantSpec,
        public: bool,
        created: float,
        clock: TimeControl | None = None,
        match: bool = False,
        pool: str | None = None,
    ) -> None:
        self.code = code
        self.spec = spec
        self.public = public
        self.created = created
        self.serial = 0
        """Which room this is of those its room host opened (the order of rooms ``created``
        at the same moment)."""
        self.time_control = clock
        self.match = match and spec.players == 2
        self.pool = pool
        """The rating pool when the room's games are rated; None for a casual room."""
        self.quick = False
        """Opened for players the quick match paired, who did not choose each other (set
        by the lobby; ``server.walkouts``)."""
        self.first_pairing = True
        """The current game is the first its seats play together: no rematch, no later
        game of a match (``server.walkouts``: walking out of it)."""
        self.barred: set[str] = set()
        """Who may not take a seat here again (``server.walkouts.keys``): players who left a
        public room's first game unplayed and had it open again without them (``reopen``)."""
        self.rating_changes: dict[int, int] = {}
        """Shown-rating change by seat once the current game's ratings are saved."""
        self.established = ratings.PROVISIONAL_GAMES
        """Rated games in the pool after which a rating is no longer provisional."""
        self.rated_together: ratings.RatedTogether | None = None
        """The server's count of rated games the same people started today (set by the
        room host; None: no limit)."""
        self.seats: list[SeatHolder | None] = [None] * spec.players
        self.spectators: set[Member] = set()
        self.owners: tuple[str, ...] = ()
        """Whom the room counts against (the lobby's caps): its creator's session and address."""
        self.eval_followers: set[Member] = set()
        """Spectators who asked for the computer's evaluation (``live_eval``)."""
        self.live: tuple[int, bytes] | None = None
        """The last evaluation pushed: its ply and its frame."""
        self.live_pending: int | None = None
        """The ply whose evaluation the computer is working out."""
        self.event = 0
        """Number of the last event pushed to the room."""
        self.log_events: deque[int] = deque()
        """The numbers of the last events pushed, for replay; see ``remember``."""
        self.log_frames: deque[bytes] = deque()
        """Their frames, in the same order. Two deques rather than one of pairs: a pair is
        one more object per move for the young garbage collections to walk."""
        self._log_bytes = 0
        self.log_budget = LogBudget()
        """The server's (set by the room host): what its rooms' logs hold together."""
        self.number = 0
        """Which game of the room this is (1 once the first starts)."""
        self.announced = 0
        """The last game whose start was logged (``RoomHost.push``)."""
        self.match_game = 0
        self.finished: list[Finished] = []
        """Games that ended and are not archived yet."""
        self._variant_json = msgspec.Raw(_encode(spec))
        self._legal_walls = (-1, "")
        """The last legal wall mask and its ``wall_hex``: most moves leave it as it was."""
        self._players_key: object = None
        self._players_cache = msgspec.Raw(b"[]")
        self.first_move_limit = 0.0
        """Seconds each seat has for its first move (``Absence.first_move``, set by ``arm``)."""
        self.think_limit = 0.0
        """Seconds the seat to move may think in an untimed game (``Absence.think_limit``)."""
        self._new_game()

    def _new_game(self) -> None:
        spec = self.spec
        self.game = Game(spec.players, spec.size, spec.walls)
        self.movers: list[int] = []
        """The seat that played each ply."""
        self.actions: list[str] = []
        """Everything that changed the game, in order: moves, and ``retire N``."""
        self._started = False
        self.turn_since: float | None = None
        """While the first moves are played: when the seat to move got its turn (set by
        ``arm`` once the game has started)."""
        self.move_since: float | None = None
        """In an untimed game, once the first moves are played: when the seat to move got its
        turn (``move_claim_due``)."""
        self.quitters: list[int] = []
        """The seats taken out of the game: resigned, out of time, claimed against
        (``server.walkouts``)."""
        self.aborter: int | None = None
        """The seat that aborted the game (``abort``)."""
        self.nobody_played = False
        """The game was aborted because nobody played it: a first move did not come in time,
        or the person left the computer before it began (in a match's first game: a later
        one is lost by that seat, ``_not_started``); or nobody is left to play it, every
        player away past the grace period (``deserted_due``)."""
        self._result: Result | None = None
        self.status: Status = "waiting"
        """The current game's: waiting (for seats), playing or finished (``result``)."""
        self.draw_offers: set[int] = set()
        self.draw_declined: set[int] = set()
        """Seats whose draw offer was declined and who have not moved since: they may not
        offer again until they move (``Play._draw``)."""
        self.rematch: set[int] = set()
        self.rematch_declined: int | None = None
        """The seat that declined the rematch asked for, until a seat asks again
        (``Play._rematch``); a new game starts without one."""
        self.rating_changes = {}
        self.counts = True
        """Whether this game of a rated room counts for ratings: decided as it starts
        (``_begin``), False once its players' rated games together today are used up."""
        control = self.time_control
        self.clock = (
            FischerClock.start(control.base, control.increment, spec.players) if control else None
        )
        self.number += 1

    # -- what the room is --------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the current game started (every seat was taken)."""
        return self._started

    @started.setter
    def started(self, started: bool) -> None:
        self._started = started
        self._set_status()

    @property
    def result(self) -> Result | None:
        """How the current game ended; None while it has not."""
        return self._result

    @result.setter
    def result(self, result: Result | None) -> None:
        self._result = result
        self._set_status()

    def _set_status(self) -> None:
        # Kept up to date rather than worked out when read: a move reads it ten times.
        self.status = (
            "finished" if self._result is not None else "playing" if self._started else "waiting"
        )

    def free_seat(self) -> int | None:
        return next((seat for seat, holder in enumerate(self.seats) if holder is None), None)

    @property
    def rated(self) -> bool:
        """Whether the room is rated (only registered players sit, no help is given)."""
        return self.pool is not None

    @property
    def game_rated(self) -> bool:
        """Whether the current game counts for ratings (``state.rated``)."""
        return self.pool is not None and self.counts

    def seat_bot(
        self,
        seat: int,
        session: Member,
        level: int,
        think: float | None,
        account: AccountRecord | None = None,
    ) -> None:
        """Give ``seat`` to the computer (it never leaves, never claims, never offers)."""
        holder = SeatHolder(session, session.name, bot=level, think=think, account=account)
        self.seats[seat] = holder
        self._start_when_full()

    def bot_to_move(self) -> SeatHolder | None:
        """The computer's seat holder if it is its turn in a game in progress."""
        if self.status != "playing":
            return None
        holder = self.seats[self.game.turn]
        return holder if holder is not None and holder.bot is not None else None

    def holder(self, seat: int) -> SeatHolder:
        holder = self.seats[seat]
        assert holder is not None
        return holder

    def members(self) -> list[Member]:
        """Every session in the room: seated players, then spectators."""
        players = [
            h.session for h in self.seats if h is not None and h.bot is None and self.sits(h)
        ]
        return players + list(self.spectators)

    def connections(self) -> list[int]:
        """Where the room's events go: ``members``' connections (one pass, on every push;
        ``sits`` is written out: this runs for every move)."""
        conns: list[int] = []
        for holder in self.seats:
            if holder is not None and holder.bot is None:
                session = holder.session
                if session.conn is not None and session.room is self and session.seat is not None:
                    conns.append(session.conn)
        if self.spectators:
            conns += [s.conn for s in self.spectators if s.conn is not None]
        return conns

    def anyone_away(self) -> bool:
        """Whether a seat's player is away (its claim countdown runs). A loop, not ``any``
        over a generator: this runs for every move."""
        for holder in self.seats:  # noqa: SIM110 (no generator per call)
            if holder is not None and holder.gone_since is not None:
                return True
        return False

    def anyone_connected(self) -> bool:
        """Whether any of ``members`` is connected. Loops, not ``members()``: this runs
        nine times a game in the benchmark's games (``note``, deadlines), and building the
        list was a tenth of what opening, joining and leaving a room cost (interpreted)."""
        for holder in self.seats:
            if (
                holder is not None
                and holder.bot is None
                and holder.session.conn is not None
                and self.sits(holder)
            ):
                return True
        for spectator in self.spectators:  # noqa: SIM110 (no generator per call)
            if spectator.conn is not None:
                return True
        return False

    def connected(self, seat: int) -> bool:
        """Is the seat's player here (the computer always is)?"""
        holder = self.seats[seat]
        if holder is None:
            return False
        if holder.bot is not None:
            return True
        return self.sits(holder) and holder.session.conn is not None

    def sits(self, holder: SeatHolder) -> bool:
        """Whether the holder's session is in its seat: not gone to the lobby or to another
        room, nor watching this room as a spectator after leaving its seat."""
        return holder.session.room is self and holder.session.seat is not None

    def active(self, seat: int) -> bool:
        """Still in the current game (not resigned, flagged or claimed out of it)."""
        return self.result is None and not self.game.is_retired(seat)

    def active_seats(self) -> list[int]:
        return [seat for seat in range(self.spec.players) if self.active(seat)]

    def replay_bytes(self, last_event: int | None) -> int:
        """The bytes of the logged events after ``last_event`` (what a resume replays, or a
        little more: ``moved`` events go only to compact connections); 0 if none are."""
        return sum(len(frame) for _, frame in self.logged_after(last_event))

    def logged_after(self, last_event: int | None) -> list[tuple[int, bytes]]:
        """The logged (event, frame) after ``last_event``; none if the log does not reach
        back to the event right after it (or ``last_event`` is None)."""
        events = self.log_events
        if last_event is None or not events or last_event + 1 < events[0]:
            return []
        return [pair for pair in zip(events, self.log_frames, strict=True) if pair[0] > last_event]

    def remember(self, event: int, frame: bytes) -> None:
        """Keep an event for replay: the last LOG_LENGTH, within LOG_BYTES, or LOG_FLOOR
        while the server's logs are over their budget (always the last)."""
        events, frames, budget = self.log_events, self.log_frames, self.log_budget
        events.append(event)
        frames.append(frame)
        self._log_bytes += len(frame)
        budget.held += len(frame)
        cap = LOG_BYTES if budget.held <= budget.limit else LOG_FLOOR  # a move's path: inline
        while len(events) > 1 and (len(events) > LOG_LENGTH or self._log_bytes > cap):
            events.popleft()
            dropped = len(frames.popleft())
            self._log_bytes -= dropped
            budget.held -= dropped

    def forget_log(self) -> None:
        """Give the log's bytes back to the server's budget (the room is closed)."""
        self.log_budget.held -= self._log_bytes
        self._log_bytes = 0
        self.log_events.clear()
        self.log_frames.clear()

    # -- seats -----------------------------------------------------------------

    def seat(self, session: Member, seat: int, name: str) -> str:
        """Give ``seat`` to ``session`` and return its secret; the game starts once every
        seat is taken."""
        holder = SeatHolder(session, name, account=session.account)
        self.seats[seat] = holder
        self._start_when_full()
        return holder.new_secret()

    def _start_when_full(self) -> None:
        if all(self.seats):
            self._begin()
            self.match_game = 1 if self.match else 0

    def _begin(self) -> None:
        """Start the current game (every seat taken): in a rated room, it counts for ratings
        if its people have rated games together left today (``ratings.RatedTogether``)."""
        self.started = True
        if self.pool is not None and self.rated_together is not None:
            self.counts = self.rated_together.take(self._people())

    def _people(self) -> list[int]:
        """The accounts of the people seated (not the computer's)."""
        return [h.account.id for h in self.seats if h and h.account and h.bot is None]

    def away(self, seat: int, now: float, grace: float) -> None:
        """The seat's player went away: the grace period starts (in a game, the claim
        countdown; in a waiting room, the time the seat is kept; in a finished one, the time
        it is kept, once nobody else is there, for the player to come back to the result)."""
        holder = self.holder(seat)
        if holder.gone_since is None:
            holder.gone_since, holder.grace = now, grace

    def listable(self) -> bool:
        """Worth showing in the public list: a waiting room whose players are all here (a
        creator who left cannot start a game), or a game someone is still playing (at least
        one person at the board, not only the computer or players who went away)."""
        if not self.public or self.status == "finished":
            return False
        if self.status == "waiting":
            taken = [seat for seat, holder in enumerate(self.seats) if holder is not None]
            return bool(taken) and all(self.connected(seat) for seat in taken)
        return any(
            holder is not None and holder.bot is None and self.connected(seat)
            for seat, holder in enumerate(self.seats)
        )

    def seats_kept(self) -> bool:
        """Does the room still keep a seat for a player who dropped: in a waiting room to
        play, in a finished one to come back to how the game ended?"""
        if self.status == "waiting":
            return any(h and h.gone_since is not None for h in self.seats)
        return self.status == "finished" and bool(self._dropped())

    def _dropped(self) -> list[tuple[int, SeatHolder]]:
        """The seats (and holders) of a finished game whose player's connection dropped:
        not left with ``leave``, which takes the session out of the room."""
        return [
            (seat, h)
            for seat, h in enumerate(self.seats)
            if h is not None and h.gone_since is not None and h.session.room is self
        ]

    def release_absent(self, now: float) -> list[Member]:
        """Give up the seats whose players stayed away past their grace: in a waiting room,
        and in a finished one that nobody is in any more (while somebody is, every seat is
        kept for a rematch)."""
        if self.status == "waiting":
            kept = [(seat, h) for seat, h in enumerate(self.seats) if h is not None]
        elif self.status == "finished" and not self.anyone_connected():
            kept = self._dropped()
        else:
            return []
        released = []
        for seat, holder in kept:
            gone = holder.gone_since
            if gone is not None and now >= gone + holder.grace:
                self.seats[seat] = None
                released.append(holder.session)
        return released

    def back(self, seat: int) -> None:
        self.holder(seat).gone_since = None

    def claimable(self, now: float) -> list[int]:
        """Active seats whose player stayed away past the grace period, and the seat to move
        once it has thought past the thinking limit (``move_claim_due``)."""
        seats = [
            seat
            for seat in self.active_seats()
            if (h := self.holder(seat)).gone_since is not None and now >= h.gone_since + h.grace
        ]
        due = self.move_claim_due()
        if due is not None and now >= due and self.game.turn not in seats:
            seats.append(self.game.turn)
        return seats

    def claim_wait(self, now: float, claimant: int) -> float | None:
        """Seconds until ``claimant`` may claim against another seat (``claimable``); None
        while nobody is away and the seat to move has no thinking limit running."""
        moments = [
            h.gone_since + h.grace
            for seat in self.active_seats()
            if seat != claimant and (h := self.holder(seat)).gone_since is not None
        ]
        due = self.move_claim_due()
        if due is not None and self.game.turn != claimant:
            moments.append(due)
        return max(0.0, min(moments) - now) if moments else None

    def claim_reason(self, seat: int) -> Reason:
        """Why a claimed seat loses: it stayed away (``abandon``), or it was here and did not
        move within the thinking limit (``time``, as a flag would)."""
        return "abandon" if self.holder(seat).gone_since is not None else "time"

    # -- play --------------------------------------------------------------------

    def play(self, seat: int, move: str, now: float) -> list[Result]:
        """Apply ``seat``'s move (already checked to be its turn); the games it ended.

        Raises ValueError from the engine for an illegal move.
        """
        game = self.game
        game.play(move)
        self.movers.append(seat)
        self.actions.append(game.last_move or move)
        self.draw_offers.discard(seat)  # an offer lapses when the offerer moves
        self.draw_declined.discard(seat)  # and a declined one may be made again
        ply = game.ply  # read once: a property, on every move
        first_moves = ply < self.spec.players
        if self.clock is not None:
            # The first move of each seat is free: the clock runs from then on.
            self.clock.moved(seat, None if first_moves else game.turn, now)
        self.turn_since = now if first_moves else None
        self.move_since = None if first_moves or self.clock is not None else now
        winner = game.winner
        if winner is not None:
            return self.finish(winner, "goal", now)
        if ply >= PLY_CAP or (
            ply >= BOT_PLY_CAP and all(self.holder(s).bot for s in self.active_seats())
        ):
            return self.finish(None, "ply_cap", now)
        return []

    def take_back(self, plies: int) -> None:
        """Undo the last ``plies`` moves (an untimed two-player game only: no clock to wind
        back, no retirements in the record)."""
        for _ in range(plies):
            self.game.undo()
            self.movers.pop()
            self.actions.pop()
        self.draw_offers.clear()

    def against_computer(self, seat: int) -> bool:
        """Whether ``seat`` plays the computer in a casual game: two players, untimed, the
        other seat held by the computer (where hints and takebacks are allowed)."""
        other = self.seats[1 - seat] if self.spec.players == 2 else None
        return self.clock is None and other is not None and other.bot is not None

    def evaluable(self) -> bool:
        """Whether spectators may follow the computer's evaluation: an untimed two-player
        game whose every seat is the computer's or a player's who allowed it."""
        return (
            self.spec.players == 2
            and self.clock is None
            and self.time_control is None
            and all(h is not None and (h.bot is not None or h.allows_eval) for h in self.seats)
        )

    def abort(self, seat: int, now: float) -> list[Result]:
        """``seat`` ends the game with no result (before every seat has moved: ``Play``)."""
        self.aborter = seat
        return self.finish(None, "aborted", now, by=seat)

    def remove(self, seat: int, reason: Reason, now: float, by: int | None = None) -> list[Result]:
        """Take ``seat`` out of the game (resigned, flagged, claimed); the games it ended.
        ``by``: the seat whose request took it out (itself resigning, a claimant), if one did."""
        self.quitters.append(seat)
        if self._opening() and self.spec.players == 4:
            return self.finish(None, reason, now, by)  # aborted (``finish``): nobody plays on
        if self.spec.players == 2:
            return self.finish(1 - seat, reason, now, by)
        mover = self.game.turn
        self.game.retire(seat)
        self.actions.append(f"retire {seat}")
        if self.move_since is not None and self.game.turn != mover:
            self.move_since = now  # the next seat's turn starts now
        self.draw_offers.discard(seat)
        active = self.active_seats()
        if len(active) == 1:
            return self.finish(active[0], "last_standing", now, by)
        if self.clock is not None and self.clock.running == seat:
            self.clock.hand_over(self.game.turn, now)
        return []

    def draw_agreed(self) -> bool:
        return set(self.active_seats()) <= self.draw_offers

    def _opening(self) -> bool:
        """Whether this is a rated game some seat has not made its first move in."""
        return self.pool is not None and self.game.ply < self.spec.players

    def finish(
        self, winner: int | None, reason: Reason, now: float, by: int | None = None
    ) -> list[Result]:
        """End the current game; in a match, score it and start the next one.

        A rated game that ends before every seat has made its first move (a resignation,
        a claim, a draw) is aborted instead, as on lichess: no result, no rating. An outside
        review won 200 rated games in 19 s against a second account that resigned at once.
        In a later game of a match the result stands for the match's score, unrated: not
        moving there loses the game (``_not_started``), or the winner of game 1 would win
        the match by not playing game 2. ``by``: the seat whose request ended it, if one
        did (``Result.by``).
        """
        unrated = False
        if reason != "aborted" and self._opening():
            if self.match_game > 1:
                unrated = True
            else:
                # Against an absent player the match ends, as when a first move does not come.
                self.nobody_played = reason in ("abandon", "time")
                winner, reason = None, "aborted"
        result = Result(winner=winner, reason=reason, by=by)
        self.result = result
        self.draw_offers.clear()
        if self.clock is not None:
            self.clock.hand_over(None, now)
        names = [holder.name if holder else "" for holder in self.seats]
        accounts = [h.account.id if h is not None and h.account else None for h in self.seats]
        ranks = finishing_ranks(self.spec.players, winner, self.actions, reason)
        counted = reason != "aborted" and not unrated
        pool = self.pool if counted and self.counts else None
        together = self.rated_together
        if not counted and self.pool is not None and self.counts and together:
            together.give_back(self._people())  # it did not count
        self.finished.append(
            Finished(self.number, result, names, list(self.actions), accounts, ranks, pool)
        )
        if self.match_game and reason != "aborted":
            for seat, holder in enumerate(self.seats):
                assert holder is not None
                holder.points += 1.0 if winner == seat else 0.5 if winner is None else 0.0
        return [result]

    def continue_match(self) -> bool:
        """After a match game ended: start the next one (or replay an aborted one)."""
        if not self.match_game or self.result is None:
            return False
        if self._ends_match():
            return False
        if self.result.reason == "aborted":
            # A restarted game scores nothing and keeps its opener.
            self._new_game()
            self._begin()
            return True
        if self.match_game < MATCH_GAMES:
            self.next_game()
            self.match_game += 1
            return True
        return False

    def reopen(self, seats: list[int]) -> None:
        """Free ``seats`` and wait for players again with a new game (the unplayed one ended:
        ``server.walkouts.reopens``)."""
        for seat in seats:
            self.seats[seat] = None
        self._new_game()

    def next_game(self) -> None:
        """Start the next game with the seats turned by one, so the opener changes."""
        self.first_pairing = False
        self.seats = self.seats[1:] + self.seats[:1]
        for seat, holder in enumerate(self.seats):
            if holder is not None and self.sits(holder):
                holder.session.seat = seat
        self._new_game()
        self._begin()

    def start_rematch(self) -> None:
        """Everyone agreed: play again, opener changed; a match starts over."""
        if self.match:
            for holder in self.seats:
                assert holder is not None
                holder.points = 0.0
            self.match_game = 1
        self.next_game()

    def match_over(self) -> bool:
        """Its last game is finished, or the game that ended ends the match
        (``_ends_match``)."""
        if not self.match_game or self.result is None:
            return False
        return self.match_game == MATCH_GAMES or self._ends_match()

    def _ends_match(self) -> bool:
        """Whether the game that ended ends its match, with no next game: nobody played it
        (``nobody_played``), or a player stayed away too long (``abandon``). Either way the
        next game would be lost by the same absence at once: replayed or started again with
        the person still gone, a match against the computer aborted and restarted itself
        without end, millions of games a minute (an outside review), and a second game
        started only to be decided against the absent player with no move."""
        assert self.result is not None
        reason = self.result.reason
        return reason == "abandon" or (reason == "aborted" and self.nobody_played)

    # -- time ----------------------------------------------------------------

    def arm(self, now: float, first_move: float, think_limit: float = 0.0) -> None:
        """Start the first-move countdown (``first_move`` seconds) of a game that has just
        started (or been restored: the countdown starts afresh, and so does the thinking limit
        of an untimed game, ``think_limit`` seconds)."""
        self.first_move_limit = first_move
        self.think_limit = think_limit
        if self.status != "playing":
            return
        first_moves = self.game.ply < self.spec.players
        if self.turn_since is None and first_moves:
            self.turn_since = now
        if self.move_since is None and not first_moves and self.clock is None:
            self.move_since = now

    def move_claim_due(self) -> float | None:
        """When the others may claim against the seat to move for not moving: in an untimed
        game between people, once the first moves are played, ``think_limit`` after its turn
        came. Without it a player could stall for ever, connected, where nobody could claim,
        and win once the other gave up and left (an outside review)."""
        since = self.move_since
        if since is None or self.think_limit <= 0 or self.status != "playing":
            return None
        if self.has_computer:
            return None  # the computer never claims, and is never slow
        return since + self.think_limit

    def first_move_due(self) -> float | None:
        """When the game is aborted if the seat to move has not made its first move."""
        if self.turn_since is None or self.first_move_limit <= 0 or self.status != "playing":
            return None
        if self.game.ply >= self.spec.players or self.holder(self.game.turn).bot is not None:
            return None  # every seat has moved; or the computer, which never keeps anyone
        return self.turn_since + self.first_move_limit

    def deadline(self, absence: Absence) -> float | None:
        """The next moment the room must act by itself (a flag, an abandonment, a seat
        given up in a waiting room, a first move not made)."""
        if self.status == "waiting":
            kept = [h.gone_since + h.grace for h in self.seats if h and h.gone_since is not None]
            return min(kept, default=None)
        if self.status == "finished":
            if self.anyone_connected():
                return None  # every seat is kept while somebody is here (a rematch)
            ends = [h.gone_since + h.grace for _, h in self._dropped() if h.gone_since is not None]
            return min(ends, default=None)
        if self.status != "playing":
            return None
        first = None if self.turn_since is None else self.first_move_due()
        if first is not None:
            # Nothing else can happen before every seat has moved, but for a player of
            # the computer who left (nobody waits for them past their grace), and every
            # player gone (nobody is left to wait for anyone).
            soonest = [first, *self._computer_waits()]
            if (deserted := self.deserted_due()) is not None:
                soonest.append(deserted)
            return min(soonest)
        if self.clock is None and not self.anyone_away():
            return None  # the common case, on every move: nothing can happen by itself
        moments = [
            h.gone_since + self._patience(h, absence)
            for seat in self.active_seats()
            if (h := self.holder(seat)).gone_since is not None
        ]
        if (deserted := self.deserted_due()) is not None:
            moments.append(deserted)
        if (due := self.move_claim_due()) is not None:
            moments.append(due + absence.hard_limit)
        if self.clock is not None and (flag := self.clock.deadline()) is not None:
            moments.append(flag)
        return min(moments, default=None)

    def expire(self, now: float, absence: Absence) -> list[Reason]:
        """Flag a seat out of time, decide against seats away too long.

        Returns why each seat it took out of the game went (``time``, ``abandon``),
        whether or not that ended the game: in a four-player game a seat leaving is
        news to push as much as a result is.
        """
        if self.status != "playing":
            return []
        first = self.first_move_due()
        if first is not None and now >= first:
            return self._not_started("time", now)
        if first is not None and any(now >= wait for wait in self._computer_waits()):
            return self._not_started("abandon", now)  # left the computer before moving
        removed: list[Reason] = []
        clock = self.clock
        # Compare with the very deadline the timer was set for (not a recomputed
        # balance), so rounding can never leave a due flag unflagged.
        flag = clock.deadline() if clock is not None else None
        if clock is not None and clock.running is not None and flag is not None and now >= flag:
            self.remove(clock.running, "time", now)
            removed.append("time")
        for seat in self._overdue(now, absence):
            if self.status == "playing":
                reason = self.claim_reason(seat)
                self.remove(seat, reason, now)
                removed.append(reason)
        deserted = self.deserted_due() if self.status == "playing" else None
        if deserted is not None and now >= deserted:
            self.desert(now)
            removed.append("aborted")
        if self.status == "playing" and self.has_computer and not self.humans_playing():
            # Only the computer is left, and no person is here: nobody to play for.
            self.finish(None, "abandon", now)
            removed.append("abandon")
        return removed

    def _not_started(self, reason: Reason, now: float) -> list[Reason]:
        """The seat to move did not make its first move: it was not there, or never moved.
        A match's first game is aborted (nobody played it; ``_ends_match``); in a later one
        that seat loses the game, with ``reason``, as it would in a tournament: aborting it
        ended the match on the points so far, so that the winner of game 1 won the match by
        not moving in game 2 (an outside review)."""
        if self.match_game > 1:
            self.remove(self.game.turn, reason, now)
            return [reason]
        self.nobody_played = True
        self.finish(None, "aborted", now)
        return ["aborted"]

    def _overdue(self, now: float, absence: Absence) -> list[int]:
        """The seats away past their patience, in the order they are decided against: the
        one whose patience ran out first. Away since the same moment (a restart nobody came
        back from), the seat to move first, then in turn order: the game waits on it, as a
        clock would (by seat number, seat 0 always lost)."""
        due: list[tuple[float, int, int]] = []
        turn, players = self.game.turn, self.spec.players
        for seat in self.active_seats():
            holder = self.holder(seat)
            if holder.gone_since is not None:
                deadline = holder.gone_since + self._patience(holder, absence)
                if now >= deadline:
                    due.append((deadline, (seat - turn) % players, seat))
        # The seat to move that thought past the thinking limit counts as away from then on.
        overdue = self.move_claim_due()
        late = overdue is not None and now >= overdue + absence.hard_limit
        if overdue is not None and late and all(seat != turn for *_, seat in due):
            due.append((overdue + absence.hard_limit, 0, turn))
        return [seat for *_, seat in sorted(due)]

    def deserted_due(self) -> float | None:
        """When a game between people ends because every one of them went away: once no
        seat's player is connected (a seat out of the game too, in a four-player one) and
        each seat still in the game is away past its grace period, nobody is left to claim
        or to play, and the game is aborted (``desert``) rather than kept to the hard limit.
        An outside review held every room of the server this way for 10 minutes, no
        connection kept: 510 addresses played 2 moves in 10 rooms each, and went. None while
        a player is here (the claims and the hard limit are theirs), and in a game against
        the computer (its own rule: ``_computer_waits``)."""
        if self.status != "playing":
            return None
        due: float | None = None
        for seat, holder in enumerate(self.seats):
            if holder is None or holder.bot is not None or self.connected(seat):
                return None
            if self.game.is_retired(seat):
                continue
            if holder.gone_since is None:
                return None  # not counting down (never so while away in a game)
            end = holder.gone_since + holder.grace
            if due is None or end > due:
                due = end
        return due

    def desert(self, now: float) -> list[Result]:
        """Abort the game: every player went away (``deserted_due``), or the server closes
        the room, nobody in it, to make room for a new one. No result and no rating, as an
        abort; a match ends there (nobody would play the replay)."""
        self.nobody_played = True
        return self.finish(None, "aborted", now)

    def _computer_waits(self) -> list[float]:
        """When each absent person in a game against the computer runs out of grace."""
        if not self.has_computer:
            return []
        return [h.gone_since + h.grace for h in self.seats if h and h.gone_since is not None]

    @property
    def share(self) -> str:
        """Whose share of the computer's workers this room's searches use: its creator's
        address (``owners``), so that one address's rooms take turns among themselves; the
        room itself when that is not known (a room saved before its owners were)."""
        for owner in self.owners:
            if owner.startswith("address:"):
                return owner
        return f"room:{self.code}"

    @property
    def has_computer(self) -> bool:
        # A loop, not ``any`` over a generator: the thinking limit asks on every move.
        for holder in self.seats:  # noqa: SIM110
            if holder is not None and holder.bot is not None:
                return True
        return False

    def humans_playing(self) -> bool:
        """Whether a person is still in the game, or at least here to watch it."""
        humans = [s for s in range(self.spec.players) if self.holder(s).bot is None]
        return any(self.active(s) or self.connected(s) for s in humans)

    def _patience(self, holder: SeatHolder, absence: Absence) -> float:
        """How long an absent seat keeps its place in the game: in a game against the
        computer, only its grace (nobody else waits for it, and the computer's work
        is wasted); otherwise the hard limit, the others claiming before if they like."""
        return holder.grace if self.has_computer else absence.hard_limit

    # -- messages --------------------------------------------------------------

    def state(self, now: float, request_id: RequestId = None) -> State:
        """The whole room as one message, numbered with the current event."""
        return cast(State, self._state(State, now, request_id))

    def state_frame(self, now: float, request_id: RequestId = None) -> bytes:
        """``state``, encoded: the same bytes, made with less work. The variant is encoded
        once per room and the players once per change of theirs (bench/core_cost.py
        measured building and encoding them at a tenth of a move's cost)."""
        return _encode(self._state(StateFrame, now, request_id))

    def moved_frame(self, now: float, request_id: RequestId = None) -> bytes | None:
        """The last move as a ``moved`` event (PROTOCOL.md, section 7a), encoded; None when
        the move changed more of the state than the event carries (it ended the game, or
        a countdown to a claim runs in ``players``): the whole state goes then."""
        game = self.game
        if self.status != "playing" or not self.movers:
            return None
        if self.anyone_away():
            return None
        move = game.last_move or ""
        seat = self.movers[-1]
        return _encode(
            Moved(
                id=request_id,
                event=self.event,
                room=self.code,
                seat=seat,
                move=move,
                ply=game.ply,
                turn=game.turn,
                pawns=game.pawns,
                walls_left=game.walls_left,
                # A wall's notation ends with its orientation, a square's with its row.
                walls=game.walls if move[-1:] in ("h", "v") else None,
                legal_pawn_moves=game.legal_pawn_moves(),
                legal_walls=self._walls_hex(game.legal_wall_mask()),
                distances=game.distances(),
                spectators=len(self.spectators),
                clock=self._clock_info(now) if self.clock is not None else None,
                draw_offers=sorted(self.draw_offers) if self.draw_offers else [],
                first_move_in_ms=self._first_move_in(now),
                move_claim_in_ms=self._move_claim_in(now),
            )
        )

    def _state(
        self, message: type[msgspec.Struct], now: float, request_id: RequestId
    ) -> msgspec.Struct:
        spliced = message is StateFrame
        game = self.game
        status = self.status
        playing = status == "playing"
        last = None
        if self.movers:
            last = LastMove(seat=self.movers[-1], move=game.last_move or "", ply=game.ply - 1)
        return message(
            id=request_id,
            event=self.event,
            room=self.code,
            variant=self._variant_json if spliced else self.spec,
            status=status,
            ply=game.ply,
            turn=game.turn if playing else None,
            pawns=game.pawns,
            walls=game.walls,
            walls_left=game.walls_left,
            last_move=last,
            legal_pawn_moves=game.legal_pawn_moves() if playing else [],
            legal_walls=self._walls_hex(game.legal_wall_mask() if playing else 0),
            distances=game.distances(),
            players=self._players_json(now) if spliced else self._players(now),
            spectators=len(self.spectators),
            result=self.result,
            game=self.number,
            clock=self._clock_info(now) if self.clock is not None else None,
            draw_offers=sorted(self.draw_offers) if self.draw_offers else [],
            rematch=sorted(self.rematch) if self.rematch else [],
            rematch_declined=self.rematch_declined,
            match=self._match_info() if self.match_game else None,
            rated=self.game_rated,
            pool=self.pool,
            moves=self.actions,
            first_move_in_ms=self._first_move_in(now),
            spectator_eval=self.evaluable(),
            move_claim_in_ms=self._move_claim_in(now),
            quick=self.quick,
        )

    def _walls_hex(self, mask: int) -> str:
        if mask != self._legal_walls[0]:
            self._legal_walls = (mask, wall_hex(mask, self.spec.size))
        return self._legal_walls[1]

    def _first_move_in(self, now: float) -> int | None:
        if self.turn_since is None:  # every seat has moved: on every move after the first few
            return None
        due = self.first_move_due()
        return None if due is None else _ms_until(due, now)

    def _move_claim_in(self, now: float) -> int | None:
        due = self.move_claim_due()
        return None if due is None else _ms_until(due, now)

    def _players(self, now: float) -> list[PlayerInfo]:
        return [self._player(seat, now) for seat in range(self.spec.players)]

    def _players_json(self, now: float) -> msgspec.Raw:
        """``players`` encoded, reused while nothing it shows has changed. A countdown to
        a claim changes with every call, so it is never reused then."""
        playing = self.status == "playing"
        key: list[tuple[str, int | None, bool, bool] | None] = []
        for seat, holder in enumerate(self.seats):
            if holder is None:
                key.append(None)
                continue
            if playing and holder.gone_since is not None:
                return msgspec.Raw(_encode(self._players(now)))
            key.append((holder.name, holder.bot, self.connected(seat), self.active(seat)))
        signature = (tuple(key), self.result is not None, self._ratings_shown())
        if signature != self._players_key:
            self._players_key = signature
            self._players_cache = msgspec.Raw(_encode(self._players(now)))
        return self._players_cache

    def _ratings_shown(self) -> object:
        """What of the seats' ratings ``players`` shows (nothing in a casual room)."""
        if self.pool is None:
            return None
        pool = self.pool
        shown = [h.account.ratings.get(pool) if h and h.account else None for h in self.seats]
        return (
            tuple((r.mu, r.games) if r else None for r in shown),
            tuple(sorted(self.rating_changes.items())),
        )

    def _player(self, seat: int, now: float) -> PlayerInfo:
        holder = self.seats[seat]
        claim_in = None
        if holder is not None and holder.gone_since is not None and self.status == "playing":
            claim_in = _ms_until(holder.gone_since + holder.grace, now)
        # Every field named: a ``**`` of the rating fields made a dict and the slow call of
        # the class for each player, two thirds of what a player cost.
        rating, provisional, change = self._rating(seat, holder)
        return PlayerInfo(
            seat=seat,
            name=holder.name if holder else None,
            connected=self.connected(seat),
            active=self.active(seat) or self.result is not None,
            claim_in_ms=claim_in,
            bot=holder.bot if holder else None,
            rating=rating,
            provisional=provisional,
            rating_change=change,
        )

    def _rating(self, seat: int, holder: SeatHolder | None) -> tuple[int | None, bool, int | None]:
        """The seat's rating fields of ``player``: its rating, whether it is provisional and
        its change (None, False, None in a casual room: ``PlayerInfo``'s defaults)."""
        if self.pool is None or holder is None or holder.account is None:
            return None, False, None
        rating = holder.account.ratings.get(self.pool)
        games = rating.games if rating else 0
        shown = ratings.shown(rating.mu if rating else ratings.START_MU)
        return shown, games < self.established, self.rating_changes.get(seat)

    def _clock_info(self, now: float) -> ClockInfo | None:
        clock = self.clock
        if clock is None:
            return None
        return ClockInfo(
            base_ms=round(clock.base * 1000),
            increment_ms=round(clock.increment * 1000),
            remaining_ms=[
                max(0, round(clock.left(seat, now) * 1000)) for seat in range(self.spec.players)
            ],
            running=clock.running,
        )

    def _match_info(self) -> MatchInfo | None:
        if not self.match_game:
            return None
        scores = [holder.points if holder else 0.0 for holder in self.seats]
        over = self.match_over()
        winner = None
        if over and scores[0] != scores[1]:
            winner = 0 if scores[0] > scores[1] else 1
        return MatchInfo(
            game=self.match_game, games=MATCH_GAMES, scores=scores, over=over, winner=winner
        )

    def info(self) -> RoomInfo:
        return RoomInfo(
            room=self.code,
            variant=self.spec,
            clock=self.time_control,
            match=self.match,
            status=self.status,
            players=[holder.name if holder else None for holder in self.seats],
            spectators=len(self.spectators),
            rated=self.rated,
        )


@dataclass
class Finished:
    """A game that ended, for the history (and, when rated, the ratings)."""

    number: int
    result: Result
    names: list[str]
    actions: list[str]
    accounts: list[int | None]
    ranks: list[int]
    pool: str | None
    """The rating pool when the game counts for ratings."""


def finishing_ranks(players: int, winner: int | None, actions: list[str], reason: str) -> list[int]:
    """Each seat's place (1 first, equal places shared): the winner first; seats still in the
    game next (all first in a draw); then seats that left, the last to leave best."""
    if reason == "aborted":
        return []
    retired = [int(action.split()[1]) for action in actions if action.startswith("retire ")]
    ranks = [0] * players
    standing = [seat for seat in range(players) if seat not in retired and seat != winner]
    place = 1
    if winner is not None:
        ranks[winner] = place
        place += 1
    for seat in standing:
        ranks[seat] = place
    place += len(standing) if standing else 0
    for seat in reversed(retired):
        ranks[seat] = place
        place += 1
    return ranks
