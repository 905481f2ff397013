"""Play: what players do in their room, and the computer's answers about it.

Moves, resignations, draw offers, claims, aborts, rematches and chat; hints and takebacks
in casual games against the computer; the computer's evaluation for spectators; the
computer's own moves. Everything here acts on a room of the room host, which pushes the
results (``RoomHost.after_results``). In a cluster this runs on the room's owner node.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from engine.ai.evaluation import Evaluation as EngineEvaluation
from protocol.codec import encode
from protocol.messages import (
    Abort,
    Chat,
    ChatMessage,
    Claim,
    Draw,
    ErrorCode,
    Hint,
    LiveEval,
    LiveEvalSet,
    MoveRequest,
    Rematch,
    Resign,
    Suggestion,
    Takeback,
)
from server import computer, text
from server.actions import Action, LiveEvalStep, Send, Suggest, Think
from server.context import Context
from server.roomhost import RoomHost
from server.rooms import Room
from server.sessions import Session

log = logging.getLogger("quoridor.core")

InRoomRequest = MoveRequest | Resign | Draw | Claim | Abort | Rematch | Chat | Hint | Takeback
"""Requests that act in the room the session is in."""


class Play:
    """The in-room requests of every room of ``host``."""

    def __init__(self, context: Context, host: RoomHost, connected: Callable[[int], bool]):
        self.context = context
        self.host = host
        self._error = context.error
        self._connected = connected
        """Whether a connection is still open (a hint for a closed one is dropped)."""
        self._hinting: set[int] = set()
        """Connections whose hint the computer is working out (one each at a time)."""

    def forget(self, conn: int) -> None:
        """The connection is gone: its hint, if any, is no longer awaited."""
        self._hinting.discard(conn)

    def in_room(self, session: Session, request: InRoomRequest) -> list[Action]:
        conn = session.conn
        assert conn is not None
        room = session.room
        if room is None:
            return [self._error(conn, ErrorCode.NOT_IN_ROOM, "join a room first", request.id)]
        seat = session.seat
        if seat is None:
            message = "spectators can watch and read the chat, not play or write"
            return [self._error(conn, ErrorCode.NOT_A_PLAYER, message, request.id)]
        # Exact classes: ``isinstance`` costs far more on msgspec's (``Core._dispatch``).
        if type(request) is Chat:
            return self._chat(session, room, seat, request)
        if type(request) is Rematch:
            return self._rematch(conn, room, seat, request)
        now = self.context.clock()
        if room.status == "waiting":
            message = "the game starts when every seat is taken"
            return [self._error(conn, ErrorCode.GAME_NOT_STARTED, message, request.id, room, now)]
        if type(request) is MoveRequest:
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
                room.remove(seat, "resign", now, by=seat)
            case Draw():
                refusal = self._draw(conn, room, seat, request, now)
                if refusal is not None:
                    return [refusal]
            case Claim():
                refusal = self._claim(conn, room, seat, request, now)
                if refusal is not None:
                    return [refusal]
            case Abort():
                why = None
                if room.game.ply >= room.spec.players:
                    why = "a game can only be aborted before every seat has moved"
                elif room.match_game > 1:
                    # An aborted game is played again: the winner of game 1 who aborted each
                    # game 2 won the match without playing it (an outside review).
                    why = "a match's later games cannot be aborted: resign to lose this one"
                if why is not None:
                    return [self._error(conn, ErrorCode.CANNOT_ABORT, why, request.id, room, now)]
                room.abort(seat, now)
        return self.host.after_results(room, request.id)

    def _move(
        self, conn: int, room: Room, seat: int, request: MoveRequest, now: float
    ) -> list[Action]:
        game = room.game
        ply = game.ply  # read once: a property, on every move
        resend = request.ply < ply and room.movers[request.ply] == seat
        if resend and game.moves[request.ply] == request.move:
            # A move already applied, sent again: answer it, never apply it twice.
            return [Send([conn], room.state_frame(now, request.id))]
        refusal: tuple[ErrorCode, str] | None = None
        if room.status == "finished":
            refusal = ErrorCode.GAME_OVER, "the game is over"
        elif request.ply != ply:
            refusal = (
                ErrorCode.STALE_PLY,
                f"move {request.move} is for ply {request.ply} but the game is at ply {ply}",
            )
        elif game.turn != seat:
            refusal = ErrorCode.NOT_YOUR_TURN, f"it is seat {game.turn}'s turn"
        if refusal is None:
            try:
                room.play(seat, request.move, now)
            except ValueError as reason:
                refusal = ErrorCode.ILLEGAL_MOVE, str(reason)
        if refusal is not None:
            self.context.counters[f"move:{refusal[0]}"] += 1
            return [self._error(conn, *refusal, request.id, room, now)]
        self.context.counters["move:accepted"] += 1
        return self.host.after_results(room, request.id, moved=True, now=now)

    def _claim(self, conn: int, room: Room, seat: int, request: Claim, now: float) -> Send | None:
        """Take out of the game every seat that may be claimed against; the error reply if
        none may, or if the claimant's own move is overdue (it holds the game up itself)."""
        claimable = room.claimable(now)
        if seat in claimable:
            message = "it is your move, and you have thought past the thinking limit: move first"
            return self._error(conn, ErrorCode.CANNOT_CLAIM, message, request.id, room, now)
        if not claimable:
            # When, said in words (the state's countdowns say it too, but a terminal player
            # who typed ``claim`` read only "too early", a newcomer's review).
            wait = room.claim_wait(now, seat)
            message = (
                "nobody has been away past the grace period, nor past the thinking limit"
                if wait is None
                else f"too early: you may claim in {math.ceil(wait)} s"
            )
            return self._error(conn, ErrorCode.CANNOT_CLAIM, message, request.id, room, now)
        for gone in claimable:
            if room.status == "playing":
                room.remove(gone, room.claim_reason(gone), now, by=seat)
        return None

    def _draw(self, conn: int, room: Room, seat: int, request: Draw, now: float) -> Send | None:
        """Apply a draw offer, acceptance or refusal; the error reply if it makes no sense."""
        others = room.draw_offers - {seat}
        if request.action != "decline" and any(
            room.holder(other).bot is not None for other in room.active_seats()
        ):
            # An offer would stand unanswered for ever: the computer never agrees.
            message = "the computer never agrees to a draw: play on, or resign"
            return self._error(conn, ErrorCode.CANNOT_DRAW, message, request.id, room, now)
        if request.action == "offer" and not others:
            refusal = self._offer_refused(room, seat)
            if refusal is not None:
                return self._error(conn, ErrorCode.CANNOT_DRAW, refusal, request.id, room, now)
        if request.action == "offer" or (request.action == "accept" and others):
            room.draw_offers.add(seat)
            if room.draw_agreed():
                room.finish(None, "draw", now, by=seat)
            return None
        if request.action == "decline" and others:
            room.draw_declined |= others  # they may offer again once they have moved
            room.draw_offers.clear()
            return None
        message = "there is no draw offer from another player to answer"
        return self._error(conn, ErrorCode.NO_OFFER, message, request.id, room, now)

    @staticmethod
    def _offer_refused(room: Room, seat: int) -> str | None:
        """Why ``seat`` may not make a new draw offer now, if it may not. As on chess sites,
        a declined offer is not made again before the offerer's next move, and an offer
        that stands is not made twice: each was an event pushed to the opponent and every
        spectator, 20 a second (an outside review)."""
        if seat in room.draw_declined:
            return "your draw offer was declined: you may offer again after your next move"
        if seat in room.draw_offers and not room.draw_agreed():
            return "your draw offer already stands"
        return None

    def _rematch(self, conn: int, room: Room, seat: int, request: Rematch) -> list[Action]:
        now = self.context.clock()
        if room.status != "finished" or (room.match_game and not room.match_over()):
            message = "a rematch can be asked for once the game (or match) is over"
            return [self._error(conn, ErrorCode.GAME_NOT_OVER, message, request.id, room, now)]
        if request.action == "decline":
            return self._decline_rematch(conn, room, seat, request, now)
        room.rematch.add(seat)
        room.rematch.update(s for s, h in enumerate(room.seats) if h is not None and h.bot)
        room.rematch_declined = None  # asked again: the decline is answered
        if not self.host.rematch_ready(room):
            return [self.host.push(room, request.id)]
        return self.host.start_rematch(room, request.id)

    def _decline_rematch(
        self, conn: int, room: Room, seat: int, request: Rematch, now: float
    ) -> list[Action]:
        """Say no to the rematch asked for: every request is withdrawn, as a draw decline
        withdraws every offer, and everyone reads who declined (``state.rematch_declined``).
        The computer asks only with its person (``_rematch``), so it never has a request
        of its own to decline."""
        if not room.rematch - {seat}:
            message = "there is no rematch request from another player to decline"
            return [self._error(conn, ErrorCode.NO_OFFER, message, request.id, room, now)]
        room.rematch.clear()
        room.rematch_declined = seat
        return [self.host.push(room, request.id)]

    def _chat(self, session: Session, room: Room, seat: int, request: Chat) -> list[Action]:
        assert session.conn is not None
        holder = room.holder(seat)
        if holder.chat is None:
            holder.chat = self.context.chat_bucket()
        # The seat's bucket, not the session's: reclaiming the seat on a fresh session
        # with its secret must not start a fresh allowance.
        if not holder.chat.take(self.context.clock()):
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
        return [self.host.publish(room, encode(line))]

    def _help(
        self, conn: int, room: Room, seat: int, request: Hint | Takeback, now: float
    ) -> list[Action]:
        code = ErrorCode.CANNOT_HINT if isinstance(request, Hint) else ErrorCode.CANNOT_TAKE_BACK
        game = room.game
        refusal = None
        if not room.against_computer(seat):
            refusal = "only in an untimed two-player game against the computer"
        elif room.rated:
            # "not in a rated game" was read as "you are not in a rated game" (a review).
            what = "hints" if isinstance(request, Hint) else "takebacks"
            refusal = f"no {what} in a rated game: they are for casual games"
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
            self.context.counters["takebacks"] += 1
            return self.host.after_results(room, request.id)
        self._hinting.add(conn)
        self.context.counters["hints"] += 1
        actions = list(room.actions)
        return [Suggest(conn, request.id, room.code, game.ply, actions, room.spec, room.share)]

    def hint_move(self, suggest: Suggest, move: str | None) -> list[Action]:
        """The computer's hint came back (None: it failed)."""
        self._hinting.discard(suggest.conn)
        if not self._connected(suggest.conn):
            return []
        if move is None:
            message = "the computer could not work out a hint: try again"
            return [self._error(suggest.conn, ErrorCode.CANNOT_HINT, message, suggest.request)]
        reply = Suggestion(id=suggest.request, ply=suggest.ply, move=move)
        return [Send([suggest.conn], encode(reply))]

    def live_eval(self, conn: int, session: Session, request: LiveEval) -> list[Action]:
        room = session.room
        if room is None:
            return [self._error(conn, ErrorCode.NOT_IN_ROOM, "watch a room first", request.id)]
        refusal = None
        if session.seat is not None:
            refusal = "players never see the computer's evaluation; spectators may"
        elif request.on and not room.evaluable():
            refusal = (
                "this room has no evaluation: only untimed two-player games whose players all "
                "let spectators see it"
            )
        elif request.on and _a_players(session, room):
            # A player watching their own game from a second connection read the computer's
            # best move each ply (an outside review).
            refusal = "the evaluation is not shown to a player's account while the game is played"
        if refusal is not None:
            return [self._error(conn, ErrorCode.CANNOT_EVALUATE, refusal, request.id)]
        reply = Send([conn], encode(LiveEvalSet(id=request.id, on=request.on)))
        if not request.on:
            room.eval_followers.discard(session)
            return [reply]
        room.eval_followers.add(session)
        if room.live is not None and room.live[0] == room.game.ply:
            return [reply, Send([conn], room.live[1])]
        return [reply, *computer.live(room)]

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
        room = self.host.rooms.get(step.room)
        return room is not None and room.game.ply == step.ply and room.status == "playing"

    def live_evaluated(self, step: LiveEvalStep, found: EngineEvaluation | None) -> list[Action]:
        """The computer's evaluation for spectators came back (None: it failed or was
        dropped); pushed to those following, if the game is still at that position."""
        room = self.host.rooms.get(step.room)
        if room is None:
            return []
        if room.live_pending == step.ply:
            room.live_pending = None
        if found is None or not self.still_live(step):
            return []
        frame = computer.evaluation(room, step.ply, found)
        room.live = (step.ply, frame)
        self.context.counters["live_evaluations"] += 1
        targets = self._eval_followers(room)
        return [Send(targets, frame)] if targets else []

    def still_thinking(self, think: Think) -> bool:
        """Whether the computer's move asked for by ``think`` is still awaited."""
        room = self.host.rooms.get(think.room)
        return room is not None and room.game.ply == think.ply and room.bot_to_move() is not None

    def bot_move(self, code: str, seat: int, ply: int, move: str | None) -> list[Action]:
        """The computer's answer to a ``Think`` (None: it failed; play any legal move).

        An answer for a position that moved on (a resign, a flag, a restart)
        is dropped.
        """
        room = self.host.rooms.get(code)
        if room is None or room.bot_to_move() is None:
            return []
        game = room.game
        if game.ply != ply or game.turn != seat:
            return []
        try:
            room.play(seat, move or game.legal_moves()[0], self.context.clock())
        except ValueError:
            log.exception("the computer chose an illegal move %r", move, extra={"room": code})
            room.play(seat, game.legal_moves()[0], self.context.clock())
        self.context.counters["move:accepted"] += 1
        return self.host.after_results(room, moved=True)


def _a_players(session: Session, room: Room) -> bool:
    """Whether ``session`` (a spectator) is logged in as a person seated in ``room``'s game in
    progress. (Not by address: people at one address, a household or a school, watch each
    other's games; a rated game, where it matters most, has only logged-in players.)"""
    if room.status != "playing" or session.account is None:
        return False
    account = session.account.id
    return any(
        holder is not None and holder.account is not None and holder.account.id == account
        for holder in room.seats
    )
