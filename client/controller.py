"""The glue: server events and typed lines in, requests and notices out.

The controller keeps what the client knows (the latest ``state``, its seat,
room and seat secret), turns typed lines into requests, and tells a view
what happened. It runs one loop over one inbox, so server events and typed
lines are handled strictly one at a time. It never judges a move: a move
goes to the server with the current ``ply`` and the server's answer is shown.

Both modes treat a move typed before the player's turn alike (``premove``):
it waits and is sent when the turn comes (``cancel`` drops it), so a script
can pipe a whole game in at once. A script's lines run strictly in order, its
``quit`` too; a person's other commands (``interactive``) run at once, their
``quit`` too. A person is asked before resigning or leaving a game in progress.
Seats handed out are kept in ``seats`` (``client.seats``) until their game
is over, so the player can come back to them from another run.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import urllib.parse
from collections import deque
from dataclasses import dataclass
from typing import Literal, Protocol

from client import commands
from client.connection import Connected, Connection, Event, Failed, Garbled, Lost, Received
from client.describe import (
    aborted_why,
    after_game,
    describe,
    goal,
    opponents,
    rooms_text,
    situation,
    who,
    with_names,
)
from client.notation import is_wall
from client.offers import DrawOffers
from client.printed import Command, ProseAndCommand, as_lines
from client.render import view_turns
from client.seats import SavedSeat, SeatBook
from protocol.messages import (
    Abort,
    Chat,
    ChatMessage,
    Claim,
    Create,
    Draw,
    Error,
    ErrorCode,
    Evaluation,
    Hint,
    Join,
    Joined,
    Left,
    ListRooms,
    LiveEval,
    LiveEvalSet,
    MoveRequest,
    Queued,
    QuickMatch,
    Rematch,
    Resign,
    Rooms,
    ServerMessage,
    State,
    Suggestion,
    Takeback,
    Watch,
    Welcome,
)

Intent = Create | Join | QuickMatch | Watch | ListRooms
"""What the player came for: the request sent after the first welcome."""

InRoom = MoveRequest | Chat | Resign | Draw | Claim | Abort | Rematch | Hint | Takeback | LiveEval
"""Requests that act in the room."""

Kind = Literal["info", "event", "error", "chat", "help", "link", "situation", "command"]
"""What a notice is: the views style (and may filter) by kind."""

ROOM_CLOSED = (
    "The server is full and closed this room to make space for new games: the game is over and "
    "kept in the history."
)
"""Said when the server takes a finished game's room away (``left``, reason ``closed``)."""
WALKED_OUT = (
    "You left the game before playing it: you are out of the room, which waits for another "
    "player, and it will not seat you again."
)
"""Said to a player taken out of a public room whose first game they left unplayed, the room
waiting for another (``left``, reason ``walked_out``)."""

CLAIMS_AGAIN = 3
"""Claims sent again by themselves, each after one refused as early (``_early_claim``)."""
PRESENCE_QUIET = 10.0
"""Seconds after this client's link came back during which other players' going away and
coming back are not told: after a server restart every player is away until their client
resumes, and each restart read "Bob is away; ... claim the game in 59 s", then "Bob is
back." (an operator's review). The status panel and the claim notices still say it."""


class View(Protocol):
    """What the controller needs from a screen."""

    def notice(self, kind: Kind, text: str) -> None:
        """Tell the player something (text may span lines)."""

    def changed(self) -> None:
        """The state, the seat or the link changed: redraw."""

    def show_board(self) -> None:
        """The player asked to see the board."""

    @property
    def live_board(self) -> bool:
        """Whether the board, the status panel and the move list are always on screen (then
        notices leave the moves and the situation out)."""


@dataclass(frozen=True)
class _Typed:
    line: str


@dataclass(frozen=True)
class _InputEnded:
    pass


@dataclass(frozen=True)
class _Leave:
    """Leave now, without asking (the screen is gone)."""


@dataclass(frozen=True)
class _ClaimDue:
    """The claim countdown shown in the state with this event has run out."""

    event: int


@dataclass(frozen=True)
class _ClaimAgain:
    """A claim refused as early goes again, unless the room moved on past this event."""

    event: int


@dataclass(frozen=True)
class _Pending:
    """A request awaiting its answer: what it was, for the messages about it."""

    what: str
    """``intent``, ``rejoin``, ``move`` or the command's word (``chat``, ``resign``...)."""
    move: str = ""


_Item = Event | _Typed | _InputEnded | _ClaimDue | _ClaimAgain | _Leave
"""What the controller's inbox holds: the connection's events, and its own."""


ORDINALS = ("first", "second", "third", "fourth")
"""The order of play of seats 0 to 3."""


def went_back_in_game(before: State | None, state: State) -> bool:
    """Whether ``state``, of the room ``before`` was of, is an earlier point of its game (or
    of an earlier game): its moves do not go on from ``before``'s. The first state after a
    reconnection says so when the server came back from an older backup, even where the room's
    events, renumbered from the backup's, have caught up with the number last seen (an
    operator's review: one player was told, the other was not)."""
    if before is None or before.room != state.room:
        return False
    if state.game != before.game:
        return state.game < before.game
    return state.moves[: len(before.moves)] != before.moves


class Controller:
    def __init__(
        self,
        connection: Connection,
        intent: Intent,
        view: View,
        *,
        premove: bool = True,
        exit_when_over: bool = False,
        interactive: bool = False,
        seats: SeatBook | None = None,
    ) -> None:
        self.connection = connection
        connection.post = self.post
        connection.last_event = lambda: self.last_event
        self.intent = intent
        self.view = view
        self.premove = premove
        self.exit_when_over = exit_when_over
        self.interactive = interactive
        """A person types (not a script): ask before resigning or leaving a running game."""
        self.seats = seats
        self.asking: commands.Resign | commands.Quit | commands.Abort | None = None
        """The command waiting for the player's yes."""
        self.link_note = ""
        """While reconnecting: the last attempt, in words (one line the views update)."""
        self.command = "quoridor"
        """How to run this client again, in the hints (``.venv/bin/quoridor --server ...``)."""
        self.own_command = "quoridor"
        """``command`` with this player's ``--name``: for the hints to come back."""
        self.greeting_note = ""
        """Said after "Connected ...": why the player is not playing as their login."""
        self.invitation: str | None = None
        """The command the others join this player's new room with (the full screen shows it
        while the room waits for them)."""
        self.inbox: asyncio.Queue[_Item] = asyncio.Queue()
        self.ready = asyncio.Event()
        """Set once the intent is answered (or the controller is done)."""
        self.state: State | None = None
        self.received_at = 0.0
        """When the state arrived (event loop time), to run its clocks down."""
        self.last_event: int | None = None
        self.rebase = False
        """A new connection: its first state of the room is the truth, whatever its event
        (a server restored from an older backup numbers events from there); older events are
        ignored only within one connection."""
        self.room: str | None = None
        self.role: str | None = None
        self.seat: int | None = None
        self.secret: str | None = None
        self.seat_refused = False
        """A kept seat was refused (its room gone, its secret out of date) and forgotten."""
        self.queued = False
        self.link: Literal["connected", "reconnecting", "closed"] = "connected"
        self.lost_at: float | None = None
        """When the link dropped (event loop time), while it is down."""
        self.back_at: float | None = None
        """When the link last came back (``PRESENCE_QUIET``)."""
        self.exit_code: int | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._answered = False
        self._lines: deque[commands.Command] = deque()
        """Typed commands waiting their turn (plain mode)."""
        self._in_flight: tuple[int, MoveRequest] | None = None
        """The game number and the move sent and not answered yet (resent after a drop)."""
        self._input_ended = False
        self._told: commands.Command | None = None
        """The queued move last said to wait for the player's turn (said once)."""
        self._claim_timer: asyncio.TimerHandle | None = None
        self._claim_said = False
        """Whether this client said a claim may be made (its countdown ran out) since the
        last new state."""
        self._claims_again = 0
        """Claims sent again since then, each one refused as early (``_early_claim``)."""
        self._offers = DrawOffers()
        """Whether a draw offer can work now (one offer per move), from the states seen."""

    # -- fed from outside --------------------------------------------------------

    def post(self, event: Event) -> None:
        """From the connection."""
        self.inbox.put_nowait(event)

    def type(self, line: str) -> None:
        """A line the player typed."""
        self.inbox.put_nowait(_Typed(line))

    def leave(self) -> None:
        """Quit at once, without the question ``quit`` may ask."""
        self.inbox.put_nowait(_Leave())

    def interrupt(self) -> None:
        """Ctrl-C: ``quit`` now, not after the lines waiting before it (a script's), and as a
        typed ``quit`` for a person (asked first in a game in progress)."""
        self.inbox.put_nowait(_Typed("quit") if self.interactive else _Leave())

    def input_ended(self) -> None:
        """No more lines will come (end of a piped standard input)."""
        self.inbox.put_nowait(_InputEnded())

    def elapsed(self) -> float:
        """Seconds since the state arrived."""
        return asyncio.get_running_loop().time() - self.received_at

    def clock_elapsed(self) -> float:
        """Seconds the clocks ran since the state arrived: they stop when the link drops
        (the server will say what they read once it is back)."""
        now = asyncio.get_running_loop().time() if self.lost_at is None else self.lost_at
        return max(0.0, now - self.received_at)

    # -- the loop ----------------------------------------------------------------

    async def run(self, welcome: Welcome) -> int:
        """Play until quit or a fatal error (or game over, with ``exit_when_over``)."""
        reader = asyncio.create_task(self.connection.run())
        reader.add_done_callback(self._reader_done)
        try:
            if not isinstance(self.intent, ListRooms):
                self.view.notice("link", f"Connected to {self.connection.url} as {welcome.name}.")
                if self.greeting_note:
                    self.view.notice("info", self.greeting_note)
            await self._send(self.intent, _Pending("intent"))
            while self.exit_code is None:
                item = await self.inbox.get()
                await self._handle(item)
                await self._advance()
        finally:
            self.ready.set()
            self.link = "closed"
            if self._claim_timer is not None:
                self._claim_timer.cancel()
            await self.connection.close()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        return self.exit_code

    def _reader_done(self, reader: asyncio.Task[None]) -> None:
        """The connection's reader stopped: a bug in it must not leave the player hanging."""
        if not reader.cancelled() and (error := reader.exception()) is not None:
            self.post(Failed(f"the client failed: {error!r}"))

    def _review(self, state: State) -> list[str]:
        """How to see the game just over again: its id in the history (``result.game_id``)
        with the computer's analysis where there is one (two players)."""
        game_id = state.result.game_id if state.result is not None else None
        if game_id is None or not state.moves:
            return []
        if len(state.players) == 2:
            return [
                "Replay it with the computer's analysis:",
                Command(f"{self.own_command} analyse {game_id} --replay"),
            ]
        return ["Replay it:", Command(f"{self.own_command} replay {game_id}")]

    def finish(self, code: int) -> None:
        if self.exit_code is None:
            self.exit_code = code
            self.ready.set()

    def summary(self) -> list[str]:
        """The last words: the result, or how to come back to a game left running."""
        state = self.state
        if state is None:
            return []
        if state.status == "finished":
            return [situation(state, self.seat, brief=True), *self._review(state)]
        if (
            state.status == "playing"
            and self.role == "player"
            and self.seat is not None
            and self.secret is not None
        ):
            # Each command alone, to be copied whole (printed.rows keeps it on one row).
            computer = any(p.bot is not None for p in state.players if p.seat != self.seat)
            come_back = f"{self.own_command} join {state.room}"
            elsewhere, anywhere = "From another machine:", come_back
            if _loopback(self.connection.url):  # that machine's 127.0.0.1 is not this one
                elsewhere = "From another machine, HOST being this machine's address:"
                anywhere = _remote(come_back, self.connection.url)
            return [
                (
                    "You left a game against the computer: it is lost unless you come back "
                    "within 15 seconds (a server's default; nobody else waits)."
                    if computer
                    else "You left a game in progress: come back within 15 seconds (a "
                    f"server's default), or {opponents(state)} may claim it."
                ),
                "To come back:",
                Command(come_back),
                "Or simply (it asks to resume your game):",
                Command(self.own_command),
                elsewhere,
                Command(f"{anywhere} --seat {self.seat} --secret {self.secret}"),
            ]
        if state.status == "waiting" and self.role == "player" and self.seat is not None:
            # Gone without a word (the connection closed, no `leave`), the seat is held for
            # the server's grace period (PROTOCOL.md section 13: 15 s after a close on
            # purpose, as the client's is, on a server's defaults), then given up.
            return [
                f"You left room {state.room} before its game began: your seat is kept for a "
                "few seconds (15 on a server's defaults), then given up. To come back:",
                Command(f"{self.own_command} join {state.room}"),
            ]
        return []

    async def _handle(self, item: _Item) -> None:
        match item:
            case _Typed(line):
                command = commands.parse(line)
                if command is not None and (asked := self.asking) is not None:
                    command = self._answer(command)
                    if command is asked:
                        await self._command(command, confirmed=True)
                        return
                if command is None:
                    return
                move = isinstance(command, commands.Move)
                # A script's ``quit`` waits its turn as every line of it does: at once, it
                # dropped the moves piped before it (an outside review: ``c2``, ``c3``, ``quit``
                # played nothing). A person's runs at once.
                at_once = isinstance(command, commands.Cancel | commands.Help) or (
                    self.interactive and isinstance(command, commands.Quit)
                )
                if not self.premove or at_once or (self.interactive and not move):
                    await self._command(command)
                    return
                if self.interactive and self._lines:
                    # A person keeps one move waiting, as on a board: a second one typed
                    # before the turn replaces it (two were both sent, the second refused
                    # as well, and the log said the refusal twice).
                    waiting = [c.notation for c in self._lines if isinstance(c, commands.Move)]
                    dropped = ", ".join(waiting)
                    self._lines.clear()
                    self._told = command
                    assert isinstance(command, commands.Move)
                    self.view.notice(
                        "info",
                        f"{command.notation} replaces {dropped}: sent when it is your turn "
                        "(cancel drops it).",
                    )
                self._lines.append(command)
            case _Leave():
                await self._command(commands.Quit(), confirmed=True)
            case _InputEnded() if self.interactive:
                # Ctrl-D on a terminal: the person leaves, now (their seat is kept).
                for line in as_lines(self.summary()):
                    self.view.notice("info", line)
                self.finish(0)
            case _InputEnded():
                self._input_ended = True
            case _ClaimDue(event):
                self._claim_due(event)
            case _ClaimAgain(event):
                if self.state is not None and self.state.event == event:
                    await self._send(Claim(), _Pending("claim"))
            case Received(message):
                await self._message(message)
            case Connected(welcome=welcome):
                await self._reconnected(welcome)
            case Lost(reason, retry_in, attempt):
                if self.lost_at is None:
                    self.lost_at = asyncio.get_running_loop().time()
                    self.view.notice("link", f"Connection lost: {_clause(reason)}. Reconnecting...")
                self.link = "reconnecting"
                self.link_note = (
                    f"Reconnecting (try {attempt}, in {retry_in:.1f} s): {_clause(reason)}."
                )
                self.view.changed()
            case Failed(reason):
                self.view.notice("error", f"Disconnected: {reason}.")
                self.finish(1)
            case Garbled(text):
                self.view.notice("error", text)

    async def _advance(self) -> None:
        """Run queued commands (plain mode) as far as they can go now."""
        while self._lines and self.exit_code is None:
            command = self._lines[0]
            if self._in_flight is not None:
                break  # the move's answer first: what each line did is said in the lines' order
            if (
                isinstance(command, commands.Move)
                and self._told is command
                and self.interactive
                and self._game_over()
            ):
                # A person's move waiting for a turn that will not come: the game ended on
                # the opponent's move (sent, it came back refused, an outside review).
                self._lines.popleft()
                self.view.notice("info", f"{command.notation}: not sent, the game is over.")
                continue
            if isinstance(command, commands.Hint | commands.Takeback) and not self._may_send_move():
                # A script's ``e2`` then ``hint``: asked while the computer thought, refused
                # ("only on your turn", a newcomer's review); it waits for the turn, as a move.
                break
            if isinstance(command, commands.Move) and not self._may_send_move():
                if self._told is not command:
                    self._told = command
                    self.view.notice(
                        "info", f"{command.notation}: sent when it is your turn (cancel drops it)."
                    )
                break
            self._lines.popleft()
            await self._command(command)
        if self._input_ended and not self._lines and self.exit_code is None:
            state = self.state
            asked = any(p.what in ("hint", "takeback") for p in self._pending.values())
            stuck = (
                state is not None
                and state.status == "playing"
                and state.turn == self.seat
                and self._in_flight is None
                and not asked  # a script's last hint is answered before it leaves
            )
            if stuck:
                self._leave_at_end_of_input()

    def _leave_at_end_of_input(self) -> None:
        """A script's input is over and nothing it could still do will come: say how to come
        back, and go."""
        self.view.notice("info", "End of input: leaving.")
        for line in as_lines(self.summary()):
            self.view.notice("info", line)
        self.finish(0)

    def board_turns(self) -> int:
        """Quarter turns that draw the board from this client's side, its pawn's starting
        edge at the bottom (none for a spectator, or before a state)."""
        if self.state is None:
            return 0
        seat = self.seat if self.role == "player" else None
        return view_turns(self.state.variant.players, seat)

    def _may_send_move(self) -> bool:
        """Whether a queued move can go now: connected, and our turn (or never will be)."""
        state = self.state
        if self.link != "connected" or state is None or self.role is None:
            return False
        if self.role == "spectator" or state.status == "finished":
            return True  # the server will say why not
        return state.status == "playing" and state.turn == self.seat and self._in_flight is None

    # -- commands ----------------------------------------------------------------

    def _answer(self, command: commands.Command) -> commands.Command | None:
        """The player's answer to the question asked; what to run now."""
        asked, self.asking = self.asking, None
        self.view.changed()
        if isinstance(command, commands.Yes) or type(command) is type(asked):
            return asked  # yes (or the same command again: Ctrl-C twice)
        staying = {commands.Resign: "Not resigning.", commands.Abort: "Not aborting."}.get(
            type(asked), "Staying."
        )
        self.view.notice("info", staying)
        return None if isinstance(command, commands.No) else command

    def _ask(self, command: commands.Resign | commands.Quit | commands.Abort) -> bool:
        """Ask before resigning or leaving a running game, or aborting one when that walks
        out of a quick match's pairing; True when asked (wait)."""
        state = self.state
        running = (
            self.interactive
            and state is not None
            and state.status == "playing"
            and self.role == "player"
            and self.seat is not None
            and state.players[self.seat].active
        )
        if not running or state is None or self.asking is not None:
            return False
        walkout = walks_out(state)
        if isinstance(command, commands.Abort) and not walkout:
            return False
        self.asking = command
        computer = any(p.bot is not None for p in state.players if p.seat != self.seat)
        warning = f"{WALKOUT} " if walkout else ""
        if isinstance(command, commands.Abort):
            question = f"Abort this game? {warning}y and Enter aborts; anything else plays on."
        elif isinstance(command, commands.Resign):
            question = f"Resign this game? {warning}y and Enter resigns; anything else plays on."
        elif computer:  # it never claims: the server ends the game once the grace is over
            question = (
                "Leave this game against the computer? It does not wait: unless you come back "
                f"within about 15 s, the game is lost. {warning}y and Enter (or Ctrl-C again) "
                "leaves, n stays."
            )
        else:
            question = (
                f"Leave this game in progress? Your seat stays yours, but {opponents(state)} "
                f"may claim the game if you stay away more than about 15 s. {warning}y and Enter "
                "(or Ctrl-C again) leaves, n stays."
            )
        self.view.notice("situation", question)
        return True

    async def _command(self, command: commands.Command, confirmed: bool = False) -> None:
        if (
            isinstance(command, commands.Resign | commands.Quit | commands.Abort)
            and not confirmed
            and self._ask(command)
        ):
            return
        match command:
            case commands.Move(notation):
                await self._move(notation)
            case commands.Chat(text):
                await self._send(Chat(text=text), _Pending("chat"))
            case commands.Resign():
                await self._send(Resign(), _Pending("resign"))
            case commands.Draw("decline") if self._game_over():
                await self._send(Rematch(action="decline"), _Pending("rematch"))
            case commands.Draw(action):
                refusal = self._offers.refusal(self.state, self._my_seat(), action)
                if refusal is not None:  # bound to be refused: said, not sent
                    self.view.notice("info", refusal)
                else:
                    await self._send(Draw(action=action), _Pending("draw"))
            case commands.Claim():
                await self._send(Claim(), _Pending("claim"))
            case commands.Abort():
                await self._send(Abort(), _Pending("abort"))
            case commands.Rematch(action):
                await self._send(Rematch(action=action), _Pending("rematch"))
            case commands.Hint():
                await self._send(Hint(), _Pending("hint"))
            case commands.Takeback():
                await self._send(Takeback(), _Pending("takeback"))
            case commands.Eval(on):
                await self._send(LiveEval(on=on), _Pending("eval"))
            case commands.Help():
                self.view.notice("help", commands.HELP)
            case commands.Quit():
                for line in as_lines(self.summary()):
                    self.view.notice("info", line)
                self.finish(0)
            case commands.Board():
                self.view.show_board()
            case commands.Moves():
                self._list_moves()
            case commands.Cancel():
                dropped = [c.notation for c in self._lines if isinstance(c, commands.Move)]
                self._lines = deque(c for c in self._lines if not isinstance(c, commands.Move))
                text = "No move was waiting." if not dropped else f"Dropped {', '.join(dropped)}."
                self.view.notice("info", text)
            case commands.Yes() | commands.No():
                self.view.notice("info", "Nothing was asked.")
            case commands.Invalid(message):
                self.view.notice("error", message)

    async def _move(self, notation: str) -> None:
        state = self.state
        if state is None:
            self.view.notice("error", f"{notation}: there is no game yet")
            return
        request = MoveRequest(move=notation, ply=state.ply)
        self._in_flight = (state.game, request)
        if not await self._send(request, _Pending("move", notation)):
            self._in_flight = None

    def _list_moves(self) -> None:
        state = self.state
        if state is None or state.status != "playing":
            self.view.notice("info", "No game in progress.")
        elif state.turn != self.seat:
            self.view.notice("info", situation(state, self.seat))
        else:
            self.view.notice("info", "Pawn moves: " + ", ".join(state.legal_pawn_moves) + ".")

    async def _send(self, request: Intent | InRoom, pending: _Pending) -> bool:
        request.id = request_id = next(self._ids)
        self._pending[request_id] = pending
        if await self.connection.send(request):
            return True
        del self._pending[request_id]
        self.view.notice("error", "Not connected right now: wait for the reconnection and retry.")
        return False

    # -- server messages -----------------------------------------------------------

    async def _message(self, message: ServerMessage) -> None:
        match message:
            case State():
                self._state(message)
            case Error():
                await self._error(message)
            case Joined():
                self._joined(message)
            case ChatMessage():
                self._chat(message)
            case Suggestion(move=move, ply=ply):
                self._answered_request(message.id)
                state = self.state
                late = state is not None and state.ply != ply  # the position moved on since
                where = f" (for move {ply + 1}, played since)" if late else ""
                self.view.notice("info", f"Hint: the computer would play {move}{where}.")
            case LiveEvalSet(on=on):
                self._answered_request(message.id)
                text = "Following the computer's evaluation." if on else "Evaluation off."
                self.view.notice("info", text)
            case Evaluation():
                self.view.notice("info", evaluation_text(message, self.state))
            case Queued(variant=variant):
                self.queued = True
                self._answered_intent()
                size = variant.size
                self.view.notice(
                    "info",
                    f"Waiting for an opponent ({variant.players} players, {size}x{size})...",
                )
            case Rooms(rooms=rooms):
                self.view.notice("info", "\n".join(rooms_text(rooms, self.command)))
                if isinstance(self.intent, ListRooms):
                    self._answered_intent()
                    self.finish(0)
            case Left(id=None, reason="closed" | "walked_out" as reason):
                self.view.notice("info", ROOM_CLOSED if reason == "closed" else WALKED_OUT)
                self.room = self.role = self.seat = self.secret = None
                self.finish(0)
            case Left(id=None):  # "reclaimed" (or a reason this client does not know)
                self.view.notice(
                    "error", "Your seat was taken back with its secret from another connection."
                )
                self.room = self.role = self.seat = self.secret = None
                self.finish(1)

    def _answered_request(self, request_id: object) -> None:
        if isinstance(request_id, int):
            self._pending.pop(request_id, None)

    def _answered_intent(self) -> None:
        self._answered = True
        self.ready.set()

    def _saw(self, event: int) -> None:
        if self.last_event is None or event > self.last_event:
            self.last_event = event

    def _joined(self, joined: Joined) -> None:
        pending = self._pending.pop(joined.id, None) if isinstance(joined.id, int) else None
        moved = joined.room == self.room and joined.seat != self.seat and pending is None
        rejoin = pending is not None and pending.what == "rejoin"
        if joined.room != self.room:
            self.last_event = None
        self.queued = False
        self.room, self.role, self.seat = joined.room, joined.role, joined.seat
        intent = self.intent
        # The secret this seat was taken back with, if it was: its entry is replaced.
        used = self.secret or (intent.secret if isinstance(intent, Join) else None)
        if joined.secret is not None:
            self.secret = joined.secret
        self._keep_seat(replaces=used)
        self._answered_intent()
        if rejoin:
            self.view.notice("link", f"Back in room {joined.room}.")
        elif moved:
            self.view.notice("info", self._seats_turned(joined.seat))
        elif joined.role == "spectator":
            self.view.notice("info", f"Watching room {joined.room}.")
        elif pending is not None:
            text = f"You have seat {joined.seat} in room {joined.room}."
            command = ""
            if isinstance(self.intent, Create) and self.intent.ai is None:
                two = self.intent.variant.players == 2
                others = "Your opponent joins" if two else "Your opponents join"
                text += f" {others} with:"
                command = f"{self.command} join {joined.room}"
                if self.intent.spectator_eval:
                    # Spectators get the evaluation only if every player allows it: the
                    # command without the flag never turned it on (an outside review).
                    command += " --spectator-eval"
                self.invitation = command
            if command and self.view.live_board:
                # The full screen's log is narrower than the command: it gets rows of its
                # own, to be read (or typed) as one command.
                self.view.notice("info", text)
                self.view.notice("command", command)
            else:
                self.view.notice("info", ProseAndCommand(text, command) if command else text)
        self.view.changed()

    def _seats_turned(self, seat: int | None) -> str:
        """What the new seat means, in the words of the game: the order of play and the goal
        ("you now play seat 1" was the protocol's word, an outside review)."""
        state = self.state
        if seat is None or state is None or seat >= len(ORDINALS):
            return f"The seats turn: you now play seat {seat}."
        variant = state.variant
        where = goal(variant.players, variant.size, seat)
        return f"The seats turn: you now move {ORDINALS[seat]} and race to {where}."

    def _keep_seat(self, replaces: str | None = None) -> None:
        """Write our seat down (client.seats), to come back to it from another run."""
        if self.seats is None or self.role != "player" or self.room is None:
            return
        if self.seat is None or self.secret is None:
            return
        saved = SavedSeat(
            server=self.connection.url,
            room=self.room,
            seat=self.seat,
            secret=self.secret,
            resume_token=self.connection.resume_token,
            name=self.connection.name,
        )
        self.seats.keep(saved, replaces)

    def _forget_seat(self) -> None:
        """Forget our seat, by its secret: the other seats of the room kept in the same file
        are another player's of this machine (the README's first game, in three terminals),
        who may be away and come back to read how the game ended."""
        if self.seats is not None and self.room is not None and self.secret is not None:
            self.seats.forget(self.connection.url, self.room, self.secret)

    def _chat(self, line: ChatMessage) -> None:
        if line.room != self.room:
            return
        self._saw(line.event)
        if isinstance(line.id, int):
            self._pending.pop(line.id, None)
        speaker = "you" if line.seat == self.seat and self.role == "player" else line.name
        self.view.notice("chat", f"{speaker}: {line.text}")

    def _state(self, state: State) -> None:
        pending = self._pending.pop(state.id, None) if isinstance(state.id, int) else None
        before = self.state
        if self._older(state):
            return  # older than what we show (a replayed event)
        mine = pending is not None and pending.what == "draw"
        self._offers.saw(before, state, self._my_seat(), mine)
        restored = False
        if state.room == self.room and self.rebase:
            self.rebase = False
            self.last_event = None
            if self._went_back(state) or went_back_in_game(self.state, state):
                restored = True
                self.view.notice(
                    "link",
                    "The server is back at an earlier point of the game: playing on from there.",
                )
        if state.room == self.room:
            self._saw(state.event)
        why = aborted_why(before, state, self._my_seat(), self.elapsed())
        flight = self._in_flight
        if flight is not None and (
            state.status != "playing" or state.game != flight[0] or state.ply > flight[1].ply
        ):
            self._in_flight = None
        self.received_at = asyncio.get_running_loop().time()
        # After a restore the notice above says it all: the moves missing from the board
        # were not taken back by anyone, as ``describe`` would have put it.
        changed = before is None or before.event != state.event or before.room != state.room
        if changed and not restored:
            text = describe(
                before,
                state,
                self.seat,
                brief=self.exit_when_over,
                screen=self.view.live_board,
                why=why,
                presence=self._presence_told(),
            )
            if text:
                self.view.notice("event", text)
        self._tell_rated(before, state)
        self.state = state
        self._watch_claims(state)
        self.view.changed()
        over = state.status == "finished" and (state.match is None or state.match.over)
        if over and self.role == "player":
            self._forget_seat()  # nothing left to come back to
        if over and self.exit_when_over and not _awaiting_ratings(state):
            self.finish(0)

    def _presence_told(self) -> bool:
        """Whether players going away and coming back are told now (``PRESENCE_QUIET``)."""
        back = self.back_at
        return back is None or asyncio.get_running_loop().time() - back >= PRESENCE_QUIET

    def _tell_rated(self, before: State | None, state: State) -> None:
        """Say so when the room this player created is rated: rooms are rated by default for a
        logged-in player, and nothing said it, so a guest friend invited was refused and a
        hint against the computer was refused for no reason given (a newcomer's review)."""
        intent = self.intent
        first = before is None or before.room != state.room
        if not first or state.pool is None or not isinstance(intent, Create) or intent.rated:
            return
        if intent.ai is not None:
            text = (
                "A rated game: no hints or takebacks (for them, play a casual game: add "
                "--casual to the command)."
            )
        elif state.status == "waiting":
            text = (
                "This room is rated: only players logged in can join it (for a guest, leave it "
                "and add --casual to the command)."
            )
        else:
            return
        self.view.notice("info", text)

    def _went_back(self, state: State) -> bool:
        """Whether ``state`` is numbered before the one shown, in the same room."""
        before = self.state
        return before is not None and before.room == state.room and state.event < before.event

    def _older(self, state: State) -> bool:
        """Whether ``state`` is older than the one shown, in the same room and connection."""
        return self._went_back(state) and not (self.rebase and state.room == self.room)

    def _watch_claims(self, state: State) -> None:
        """Tell the player when an absent opponent may be claimed against."""
        if self._claim_timer is not None:
            self._claim_timer.cancel()
            self._claim_timer = None
        self._claim_said, self._claims_again = False, 0
        if self.role != "player" or state.status != "playing":
            return
        wait = claim_wait(state, self.seat)
        if wait is not None:
            loop = asyncio.get_running_loop()
            self._claim_timer = loop.call_later(
                wait / 1000, self.inbox.put_nowait, _ClaimDue(state.event)
            )

    def _early_claim(self, state: State | None) -> bool:
        """Whether a refused claim was early, though this client had said it was due: the
        server's countdowns leave out its own stalls, which a countdown in real time does
        not see (PROTOCOL.md section 12). It goes again once the refusal's countdown has
        run out, ``CLAIMS_AGAIN`` times at most."""
        wait = None if state is None else claim_wait(state, self.seat)
        if state is None or not wait or not self._claim_said or self._claims_again >= CLAIMS_AGAIN:
            return False
        self._claims_again += 1
        self.view.notice(
            "info", f"Not quite yet on the server's clock: claiming again in {wait / 1000:.1f} s."
        )
        again = _ClaimAgain(state.event)
        asyncio.get_running_loop().call_later(wait / 1000, self.inbox.put_nowait, again)
        return True

    def _claim_due(self, event: int) -> None:
        state = self.state
        if state is None or state.event != event:
            return
        self._claim_said = True
        away = [
            who(state, p.seat, self.seat)
            for p in state.players
            if p.seat != self.seat and p.active and p.claim_in_ms is not None
        ]
        if away:
            self.view.notice(
                "info", f"{', '.join(away)} stayed away too long: type claim to win the game."
            )
        elif state.turn is not None:
            slow = who(state, state.turn, self.seat)
            self.view.notice("info", f"{slow} has not moved in time: type claim to win the game.")
        if self._input_ended and state.turn != self.seat:
            self._leave_at_end_of_input()  # nobody can type claim

    async def _error(self, error: Error) -> None:
        pending = self._pending.pop(error.id, None) if isinstance(error.id, int) else None
        if error.state is not None and not self._older(error.state):
            self.state = error.state
            self.received_at = asyncio.get_running_loop().time()
            self.view.changed()
        what = pending.what if pending is not None else None
        if what == "move":
            self._in_flight = None
        early = what == "claim" and error.code == ErrorCode.CANNOT_CLAIM
        if early and self._early_claim(error.state):
            return
        if what == "draw" and error.code == ErrorCode.CANNOT_DRAW:
            self._offers.refused(error.state or self.state)
        if what == "rejoin" and self._may_start_over():
            self.view.notice("link", "The waiting room closed while you were away; starting over.")
            self.room = self.role = self.seat = self.secret = self.state = None
            self._answered = False
            await self._send(self.intent, _Pending("intent"))
        elif what in ("intent", "rejoin"):
            intent = self.intent
            came_back = isinstance(intent, Join) and intent.secret is not None
            if what == "intent" and came_back and self.seats is not None:
                assert isinstance(intent, Join)
                # That seat is gone: never offer it again.
                self.seats.forget(self.connection.url, intent.room, intent.secret)
                self.seat_refused = True
                another = self.seats.find(self.connection.url, intent.room) is not None
                self.view.notice("error", _gone(intent.room, error, self.command, another))
                self.finish(1)
                return
            message = error.message
            if error.code == ErrorCode.ROOM_FULL and isinstance(intent, Join):
                # The server's words ("room X is full; you can watch it") start lower-case,
                # to go inside a sentence: here they are the whole of it.
                message = (
                    f"Room {intent.room} is full: every seat is taken. "
                    f"To watch its game: {self.command} watch {intent.room}"
                )
            elif error.code == ErrorCode.ROOM_NOT_FOUND and isinstance(intent, Join | Watch):
                message = (
                    f"No room {intent.room} on this server: check the code, or see the public "
                    f"rooms with {self.command} list"
                )
            elif error.code == ErrorCode.ACCOUNT_REQUIRED:
                # A guest following a logged-in friend's invitation (a newcomer's review).
                message = (
                    f"{message[:1].upper()}{message[1:]}. To log in: {self.command} login "
                    f"NAME (new here: {self.command} register NAME), then join again; or ask "
                    "for a casual room (create --casual)."
                )
            self.view.notice("error", message)
            self.finish(1)
        elif error.code == ErrorCode.UNKNOWN_TYPE and what is not None:
            self.view.notice("error", f"This server does not support {what} yet.")
        elif pending is not None and what == "move":
            text = f"{pending.move} refused: {self._reason(error)}."
            if error.code == ErrorCode.ILLEGAL_MOVE and not is_wall(pending.move):
                text += self._pawn_can_go(error.state or self.state)
            self.view.notice("error", text + self._next_step(error))
            if error.state is not None and error.code == ErrorCode.STALE_PLY:
                self.view.notice("info", situation(error.state, self.seat))
        else:
            self.view.notice("error", _sentence(self._reason(error)) + self._next_step(error))

    def _pawn_can_go(self, state: State | None) -> str:
        """After a refused pawn move on our turn, what to type instead: the server's legal
        pawn moves (" Your pawn can go to d1, f1 or e2."); nothing otherwise."""
        if state is None or state.status != "playing" or state.turn != self._my_seat():
            return ""
        moves = list(state.legal_pawn_moves)
        if not moves:
            return ""
        listed = moves[0] if len(moves) == 1 else f"{', '.join(moves[:-1])} or {moves[-1]}"
        return f" Your pawn can go to {listed}."

    def _game_over(self) -> bool:
        """Whether the room's game is over: no draw offer can stand then, so ``decline``
        answers the rematch asked for (the server says so if none was)."""
        return self.state is not None and self.state.status == "finished"

    def _my_seat(self) -> int | None:
        """The seat this client plays, if it plays."""
        return self.seat if self.role == "player" else None

    def _reason(self, error: Error) -> str:
        """The server's reason, with the players' names (or "you") for its seat numbers:
        "seat 1 has no walls left" to seat 1 is "you have no walls left"."""
        state = error.state or self.state
        me = self.seat if self.role == "player" else None
        return with_names(error.message, state if self.room is not None else None, me)

    def _next_step(self, error: Error) -> str:
        """After "the game is over" (a move, resign or claim as the game ended), what the
        player may do now: " Type rematch to play again, or quit." (nothing while their own
        rematch request stands, or the match goes on)."""
        state = error.state or self.state
        me = self._my_seat()
        if error.code != ErrorCode.GAME_OVER or state is None or me is None:
            return ""
        if state.status != "finished" or me in state.rematch:
            return ""
        if state.match is not None and not state.match.over:
            return ""
        return f" {after_game(state, me)}"

    def _may_start_over(self) -> bool:
        """A rejoin failed: start over if the room was only waiting (its game never began)."""
        return self.state is not None and self.state.status == "waiting"

    async def _reconnected(self, welcome: Welcome) -> None:
        self.rebase = True
        self.back_at = asyncio.get_running_loop().time()
        self.link = "connected"
        self.lost_at = None
        self.link_note = ""
        self.view.changed()
        if welcome.room is not None:
            if welcome.seat is not None and welcome.seat != self.seat:
                self.seat = welcome.seat  # the seats turned while we were away
            self.view.notice("link", f"Reconnected: back in room {welcome.room}.")
            if self._in_flight is not None:
                # Its answer may have been lost: the same move for the same ply is never
                # played twice, so sending it again is safe (the server answers a state).
                move = self._in_flight[1]
                await self._send(
                    MoveRequest(move=move.move, ply=move.ply), _Pending("move", move.move)
                )
            return
        self._in_flight = None  # a new session: a move left unanswered is for the player to retry
        if self.room is not None and self.role == "player" and self.secret is not None:
            self.view.notice("link", "Reconnected; reclaiming the seat...")
            request: Intent = Join(room=self.room, seat=self.seat, secret=self.secret)
            await self._send(request, _Pending("rejoin"))
        elif self.room is not None and self.role == "spectator":
            self.view.notice("link", "Reconnected.")
            await self._send(Watch(room=self.room), _Pending("rejoin"))
        elif self.queued or not self._answered:
            self.view.notice("link", "Reconnected.")
            self.queued = False
            await self._send(self.intent, _Pending("intent"))
        else:
            self.view.notice("link", "Reconnected.")


WALKOUT = (
    "Ending a quick match's game before every player has moved makes you wait before your "
    "next quick match (15 s, longer each time)."
)
"""Said before an ending that walks out of a quick match's pairing (PROTOCOL.md, section 4)."""


def walks_out(state: State) -> bool:
    """Whether ending the game now walks out of a quick match's pairing: its first game,
    before every seat has moved (``state.quick``)."""
    seats = sum(1 for player in state.players if player.active)
    return state.quick and state.game == 1 and state.ply < seats


def claim_wait(state: State, seat: int | None) -> int | None:
    """Milliseconds until ``state`` lets ``seat`` claim (the soonest of its countdowns,
    PROTOCOL.md section 13), or None while none runs."""
    waits = [
        p.claim_in_ms
        for p in state.players
        if p.seat != seat and p.active and p.claim_in_ms is not None
    ]
    if state.move_claim_in_ms is not None and state.turn != seat:
        waits.append(state.move_claim_in_ms)  # the seat to move past the thinking limit
    return min(waits, default=None)


def _loopback(url: str) -> bool:
    """Whether ``url`` names this machine only (127.0.0.1, localhost, ::1)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def _remote(command: str, url: str) -> str:
    """``command`` (``quoridor [--server URL] ...``) for another machine than this one, whose
    ``url`` names this machine only: its host said ``HOST``, to be put in (the command as
    printed named 127.0.0.1, which on that machine is itself: a newcomer's review)."""
    parts = urllib.parse.urlsplit(url)
    remote = f"{parts.scheme}://HOST" + (f":{parts.port}" if parts.port else "") + parts.path
    if f"--server {url}" in command:
        return command.replace(f"--server {url}", f"--server {remote}", 1)
    program = "python -m client"  # as ``invoked_as`` says the client run from its source
    if not command.startswith(f"{program} "):
        program = command.partition(" ")[0]
    return f"{program} --server {remote}{command.removeprefix(program)}"


def _clause(text: str) -> str:
    """``text`` without its final full stop or question mark, to go inside a sentence."""
    return text.rstrip(".?!")


def _gone(room: str, error: Error, command: str, another: bool) -> str:
    """Why a kept seat cannot be taken back, for someone who left a game a while ago;
    ``another``: a second seat is kept for the room (it may be the right one)."""
    if error.code == ErrorCode.ROOM_NOT_FOUND:
        return f"Room {room} is gone (its game ended or was aborted): nothing to go back to."
    if error.code == ErrorCode.BAD_SECRET:
        # The game may well go on: the entry was out of date (the seat taken back from
        # another terminal, or another player's on this machine), not the room.
        text = (
            f"The seat kept for room {room} was refused: its secret is out of date, "
            "so it is forgotten."
        )
        if another:
            return f"{text} Another seat is kept for this room: run the same command again."
        return (
            f"{text} If you still play there, use the --seat and --secret your other terminal "
            f"printed; to watch: {command} watch {room}"
        )
    return _sentence(error.message)


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def evaluation_text(evaluation: Evaluation, state: State | None) -> str:
    """One line for a spectator: seat 0's chances, the score and the best move."""
    names = [player.name for player in state.players] if state is not None else []
    first = names[0] if names else "seat 0"
    if evaluation.win_in is not None:
        winner = first if evaluation.win_in > 0 else (names[1] if len(names) > 1 else "seat 1")
        verdict = f"{winner} wins by force in {abs(evaluation.win_in)}"
    else:
        verdict = f"{first} {evaluation.win:.0%} ({evaluation.score:+.1f} steps)"
    return f"Eval at ply {evaluation.ply}: {verdict}; best {evaluation.best}."


def _awaiting_ratings(state: State) -> bool:
    """A rated game just ended and the state with its rating changes is still to come."""
    result = state.result
    if not state.rated or result is None or result.reason == "aborted":
        return False
    return any(p.name is not None and p.rating_change is None for p in state.players)
