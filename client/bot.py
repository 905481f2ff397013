"""``quoridor bot``: a computer player that plays on a server through the public protocol.

This is the reference example for writing a bot of your own. It uses nothing
but the protocol (protocol/PROTOCOL.md; the section numbers below are its
sections) and one function to think with, ``engine.ai.choose_move``:

1. Connect and say ``hello`` (``client.connection`` does it, and later comes
   back after a dropped link).
2. Ask for a seat: ``join`` a room by its code, or ``quick_match``.
3. On every ``state`` in which it is our turn, think, then send a ``move``
   naming the state's ``ply`` (section 8): a state seen twice can never make
   us play twice, and a move sent twice is played once.
4. When a game is over, ask for a ``rematch`` until we have played
   ``--games`` games (section 15); every ``joined`` gives our seat, which
   turns in a rematch.

Errors about a move (``stale_ply``, ``not_your_turn``, ``illegal_move``...)
carry the room's current state (section 19): the bot simply reads that state
and decides again. After a dropped link the connection resumes the session
and the server replays the events we missed (section 21); if the server has
forgotten the session, the bot takes its seat back with the seat's secret.

``choose_move`` wants the game's record, the moves from the start; a state
gives only the position, so the bot writes the record down from each state's
``last_move`` (events come in order and without gaps, section 7). Should the
record have a hole (events missed and not replayed), or a seat have left a
four-player game (the record cannot say so), the bot falls back on the
greedy step of the 20-line client of section 23. The search runs for up to
a few seconds, so it runs in a worker thread: meanwhile the event loop goes
on reading frames and answering the server's keepalive pings (section 1).

This is the only module of ``client`` that imports ``engine``: the terminal
client holds no rules, and ``quoridor`` loads this module only for ``bot``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TextIO

from client.connection import (
    Backoff,
    Connected,
    ConnectError,
    Connection,
    Event,
    Failed,
    Garbled,
    Lost,
    Received,
    normalize_url,
)
from client.describe import result_text
from client.notation import parse
from engine.ai import LEVELS, choose_move, move_budget
from protocol.messages import (
    ChatMessage,
    Error,
    ErrorCode,
    Join,
    Joined,
    LastMove,
    Leave,
    Left,
    MoveRequest,
    Queued,
    QuickMatch,
    Rematch,
    Request,
    ServerMessage,
    State,
    TimeControl,
    VariantSpec,
)

REMATCH_WAIT = 60.0
"""Seconds to wait for the others to agree to a rematch before stopping."""


@dataclass(frozen=True)
class Thought:
    """The move the search chose for one position (game number and ply)."""

    game: int
    ply: int
    move: str
    seconds: float


@dataclass(frozen=True)
class NoRematch:
    """The rematch asked for after this game did not come in time."""

    game: int


class Bot:
    """One computer player on one connection, for as many games as asked."""

    def __init__(
        self,
        url: str,
        name: str,
        intent: Join | QuickMatch,
        *,
        level: int = 3,
        seconds: float | None = None,
        games: int = 1,
        log: TextIO,
        backoff: Backoff | None = None,
    ) -> None:
        self.intent = intent
        self.level = level
        self.seconds = seconds
        self.games = games
        self.log = log
        self.inbox: asyncio.Queue[Event | Thought | NoRematch] = asyncio.Queue()
        self.connection = Connection(url, name, self.inbox.put_nowait, backoff=backoff)
        self.connection.last_event = lambda: self.last_event
        self.thinker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bot-search")

        # What the server told us.
        self.room: str | None = None
        self.seat: int | None = None
        self.secret: str | None = None
        self.state: State | None = None
        self.last_event: int | None = None

        # The current game's moves so far (None when we missed some), and the last one logged.
        self.record: list[str] | None = []
        self.record_game = 0
        self.logged: tuple[int, int] | None = None

        # Our move for the current position: being thought about, chosen, sent.
        self.thinking: tuple[int, int] | None = None
        self.chosen: Thought | None = None
        self.sent: tuple[int, int] | None = None
        self.distrust: tuple[int, int] | None = None
        """A position where the server refused the search's move: step greedily there."""

        self.played = 0
        self.seen_over: set[int] = set()
        self.exit_code: int | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._rematch_timer: asyncio.TimerHandle | None = None

    def say(self, text: str) -> None:
        self.log.write(f"[{self.connection.name}] {text}\n")
        self.log.flush()

    # -- the loop ------------------------------------------------------------------------

    async def run(self) -> int:
        """Play until done (0) or unable to go on (1)."""
        try:
            welcome = await self.connection.open()
        except ConnectError as error:
            self.say(error.message)
            return 1
        self.say(f"connected to {self.connection.url} as {welcome.name}, level {self.level}")
        reader = asyncio.create_task(self.connection.run())
        try:
            await self.send(self.intent, "intent")
            while self.exit_code is None:
                await self.handle(await self.inbox.get())
        finally:
            if self.connection.connected:
                await self.send(Leave(), "leave")
            await self.connection.close()
            reader.cancel()
            for task in self._tasks:
                task.cancel()
            if self._rematch_timer is not None:
                self._rematch_timer.cancel()
            self.thinker.shutdown(wait=False, cancel_futures=True)
        return self.exit_code

    async def handle(self, item: Event | Thought | NoRematch) -> None:
        match item:
            case Received(message):
                await self.on_message(message)
            case Thought():
                await self.on_thought(item)
            case Connected(welcome=welcome):
                await self.on_reconnect(welcome.room, welcome.seat)
            case Lost(reason, retry_in, _):
                self.say(f"{reason}; reconnecting in {retry_in:.1f} s")
            case Failed(reason):
                self.stop(1, f"giving up: {reason}")
            case Garbled(text):
                self.say(text)
            case NoRematch(game):
                state = self.state
                if state is not None and state.game == game and state.status == "finished":
                    self.stop(0, f"no rematch after {REMATCH_WAIT:g} s; played {self.played}")

    def stop(self, code: int, why: str) -> None:
        self.say(why)
        self.exit_code = code

    async def send(self, request: Request, request_id: str) -> bool:
        request.id = request_id
        return await self.connection.send(request)

    # -- what the server says ----------------------------------------------------------

    async def on_message(self, message: ServerMessage) -> None:
        match message:
            case Joined(room=room, seat=seat, secret=secret):
                if seat != self.seat or room != self.room:
                    self.say(f"seat {seat} in room {room}")
                self.room, self.seat = room, seat
                self.secret = secret or self.secret  # null when only the seat number changed
            case Queued():
                self.say("waiting for an opponent (quick match)")
            case State():
                await self.on_state(message)
            case ChatMessage(event=event):
                self.last_event = max(event, self.last_event or 0)
            case Error():
                await self.on_error(message)
            case Left(id=None, reason="closed"):
                self.stop(
                    0, f"the full server closed the finished game's room; played {self.played}"
                )
            case Left(id=None, reason="walked_out"):
                self.stop(1, "the game was left unplayed: out of the room, which waits for others")
            case Left(id=None):
                self.stop(1, "our seat was taken back with its secret on another connection")

    async def on_state(self, state: State) -> None:
        if state.room != self.room:
            return
        if self.state is not None and state.event < self.state.event:
            return  # an older event, replayed after a reconnection: we know better already
        self.last_event = max(state.event, self.last_event or 0)
        self.write_down(state)
        self.state = state
        if state.status == "finished" and self.declined(state):
            who = state.players[state.rematch_declined or 0].name
            self.stop(0, f"{who} declined the rematch; played {self.played}")
        elif state.status == "finished":
            await self.game_over(state)
        elif state.status == "playing" and state.turn == self.seat:
            await self.our_turn(state)

    def declined(self, state: State) -> bool:
        """Whether another player declined the rematch this bot asked for: no use waiting
        for it (``REMATCH_WAIT``)."""
        seat = state.rematch_declined
        return seat is not None and seat != self.seat and state.game in self.seen_over

    def write_down(self, state: State) -> None:
        """Keep the record of the game, and log each move once."""
        if state.game != self.record_game:
            self.record_game, self.record = state.game, []
        last = state.last_move
        if last is not None and self.logged != (state.game, last.ply):
            self.logged = (state.game, last.ply)
            self.log_move(state, last)
            if self.record is not None and last.ply == len(self.record):
                self.record.append(last.move)
        if self.record is not None and len(self.record) != state.ply:
            self.say(f"game {state.game}: moves were missed; playing greedy steps from here")
            self.record = None

    def log_move(self, state: State, last: LastMove) -> None:
        who = state.players[last.seat].name or f"seat {last.seat}"
        chosen = self.chosen
        ours = chosen is not None and last.seat == self.seat and chosen.ply == last.ply
        took = f", thought {chosen.seconds:.2f} s" if chosen is not None and ours else ""
        number = last.ply + 1
        self.say(f"game {state.game} move {number}: {who} (seat {last.seat}) {last.move}{took}")

    async def our_turn(self, state: State) -> None:
        """Send our move for this position: the one chosen, or think of one."""
        position = (state.game, state.ply)
        if self.sent == position or self.thinking == position:
            return  # its answer, or the search's, is on the way
        chosen = self.chosen
        if chosen is not None and (chosen.game, chosen.ply) == position:
            await self.play(chosen)
            return
        self.thinking = position
        task = asyncio.create_task(self.think(state, self.record))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def think(self, state: State, record: list[str] | None) -> None:
        """Choose a move for ``state``, off the event loop; post it as a Thought."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        greedy = (
            record is None
            or not all(player.active for player in state.players)
            or self.distrust == (state.game, state.ply)
        )
        move = None
        if not greedy:
            search = functools.partial(
                choose_move,
                list(record or []),
                players=state.variant.players,
                size=state.variant.size,
                walls=state.variant.walls,
                level=self.level,
                budget=self.budget(state),
                seed=random.randrange(2**32),
            )
            try:
                move = await loop.run_in_executor(self.thinker, search)
            except ValueError as error:  # the record does not replay: trust the state instead
                self.say(f"the search failed ({error}); stepping greedily")
        if move is None:
            move = greedy_step(state, self.seat or 0)
        self.inbox.put_nowait(Thought(state.game, state.ply, move, loop.time() - started))

    def budget(self, state: State) -> float:
        """Seconds to think: ours, or the level's; less when a clock runs low."""
        budget = self.seconds or LEVELS[self.level].time
        clock = state.clock
        if clock is not None and self.seat is not None:
            left = clock.remaining_ms[self.seat] / 1000
            budget = move_budget(left, clock.increment_ms / 1000, budget)
        return budget

    async def on_thought(self, thought: Thought) -> None:
        self.thinking = None
        state = self.state
        still = (
            state is not None
            and state.status == "playing"
            and state.turn == self.seat
            and (state.game, state.ply) == (thought.game, thought.ply)
        )
        if still:  # else the game moved on while we thought (a resignation, a flag...)
            self.chosen = thought
            await self.play(thought)

    async def play(self, thought: Thought) -> None:
        self.sent = (thought.game, thought.ply)
        move = MoveRequest(move=thought.move, ply=thought.ply)
        if not await self.send(move, f"move {thought.game}/{thought.ply}"):
            self.sent = None  # no link: sent again once we are back

    async def on_error(self, error: Error) -> None:
        what = error.id if isinstance(error.id, str) else ""
        self.say(f"{what or 'request'} refused: {error.message} ({error.code})")
        if what in ("intent", "rejoin"):
            self.stop(1, f"cannot play: {error.message}")
            return
        if what.startswith("move"):
            self.sent = None
            if error.code == ErrorCode.ILLEGAL_MOVE and self.state is not None:
                self.chosen = None
                self.distrust = (self.state.game, self.state.ply)
        if error.state is not None:
            await self.on_state(error.state)  # read the room again and decide again

    async def game_over(self, state: State) -> None:
        if state.game in self.seen_over:
            return
        self.seen_over.add(state.game)
        result = state.result
        if result is None or result.reason != "aborted":
            self.played += 1
        self.say(f"game {state.game}: {result_text(state, self.seat)}")
        if state.match is not None and not state.match.over:
            return  # the match's next game starts by itself
        if self.played >= self.games:
            self.stop(0, f"done: played {self.played} game{'s' * (self.played != 1)}")
            return
        self.say("asking for a rematch")
        await self.send(Rematch(), "rematch")
        loop = asyncio.get_running_loop()
        self._rematch_timer = loop.call_later(
            REMATCH_WAIT, self.inbox.put_nowait, NoRematch(state.game)
        )

    async def on_reconnect(self, room: str | None, seat: int | None) -> None:
        self.sent = None  # its answer may be lost: the move goes again (never played twice)
        if room is not None:
            self.say(f"reconnected: back in room {room}")
            self.seat = seat  # the seats may have turned meanwhile
        elif self.room is not None and self.secret is not None:
            self.say("reconnected as a new session: taking the seat back with its secret")
            await self.send(Join(room=self.room, secret=self.secret), "rejoin")
        else:
            self.say("reconnected: asking again")
            await self.send(self.intent, "intent")


def greedy_step(state: State, seat: int) -> str:
    """The legal pawn move nearest our goal edge, without knowing the rules (section 23)."""

    def progress(square: str) -> int:
        spot = parse(square)
        if spot is None:
            return -1
        col, row, last = spot.col, spot.row, state.variant.size - 1
        if state.variant.players == 2:
            return row if seat == 0 else last - row
        return (row, col, last - row, last - col)[seat]

    return max(state.legal_pawn_moves, key=progress)


async def run_bot(args: argparse.Namespace, log: TextIO) -> int:
    """``quoridor bot``, from its command-line arguments."""
    intent: Join | QuickMatch
    if args.join is not None:
        intent = Join(room=args.join)
    else:
        variant = VariantSpec(players=args.players, size=args.size, walls=args.walls)
        clock: TimeControl | None = args.clock
        intent = QuickMatch(variant=variant, clock=clock)
    try:
        url = normalize_url(args.server)
    except ConnectError as error:
        log.write(f"quoridor bot: {error.message}\n")
        return 1
    bot = Bot(
        url,
        args.name or f"bot-{args.level}",
        intent,
        level=args.level,
        seconds=args.seconds,
        games=args.games,
        log=log,
    )
    return await bot.run()
