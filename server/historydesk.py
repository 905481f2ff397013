"""The history desk: finished games, their replays and their analyses.

It answers ``history``, ``fetch_game``, ``replay`` and ``analyse`` from what it keeps in
memory (``server.history``, ``server.analysis``), and takes in the games the room host
finishes (``archive``). It holds no room and no session: in a cluster each node keeps its
own desk, and what is not in memory comes from the shared database.
"""

from __future__ import annotations

import itertools

import msgspec

from engine import Game
from engine.ai.evaluation import MoveReview
from protocol.codec import encode
from protocol.messages import (
    Analyse,
    ErrorCode,
    FetchGame,
    Frame,
    History,
    HistoryList,
    ReplayFrames,
    ReplayRequest,
)
from server.actions import Action, Send
from server.analysis import Analyses, Refused, stored_reply
from server.context import Context, full_variant
from server.history import GameHistory
from server.ratelimit import KeyedBuckets, TokenBucket
from server.records import AccountRecord, GameRecord
from server.rooms import Room, spliceable

REPLAY_PLIES_PER_TOKEN = 40
"""A ``replay`` costs one request of the rate limit per this many moves, on top of its own."""
GAMES_PER_HOUR = 120
GAMES_BURST = 60
"""The games one IP address, and one account, may finish, at most, and count as played in
the history (its newest 1000, kept for ever by default): past it, a game all of whose people
are over it (their address's or their account's) is kept as a short one. An outside review
finished 450 four-move games in 20 s from one address (two clients per game, resigning and
asking for a rematch), which pushed every real game out of the history in a minute and grew
the database without end; a second one did it with an account, whose games were never
deleted. A player finishes a one-minute game a minute at most, and a school's players
share one address."""
REPLAY_BURST = 1000
"""Plies the server's replay budget holds at most: one replay of the most moves allowed."""
REPLAY_ADDRESS_SHARE = 0.25
"""The share of the server's replay budget one address may use a second (its connections
together): a few connections of one address, each within its rate limit, no longer keep
the budget empty for everyone else."""
HistoryListFrame = spliceable(HistoryList)
"""``HistoryList`` whose games arrive already encoded (``GameHistory.listing_json``)."""


class HistoryDesk:
    """Finished games of one server: kept, listed, fetched, replayed and analysed."""

    def __init__(self, context: Context) -> None:
        self.context = context
        limits = context.limits
        self.history = GameHistory(limits.history)
        self.analyses = Analyses(
            limits.analyses, limits.analyses_per_session, limits.analyses_per_address
        )
        self._replays = TokenBucket(limits.replay_plies, REPLAY_BURST, context.clock())
        """Plies ``replay`` may work through each second, server-wide. The burst is one
        longest replay (about 12 ms of work): a bigger one let a dozen replays run back
        to back and held the games' moves for 100 ms."""
        self._shares = KeyedBuckets(limits.replay_plies * REPLAY_ADDRESS_SHARE, REPLAY_BURST)
        self._games = KeyedBuckets(GAMES_PER_HOUR / 3600, GAMES_BURST)
        """Each address's and account's games counted as played (``GAMES_PER_HOUR``)."""
        """Each address's share of ``_replays``, in bursts of one longest replay."""

    def archive(self, room: Room) -> None:
        """Take in the games that ended in ``room``."""
        flood = self._flood(room, len(room.finished))
        finished = self.history.archive(room, self.context.wall_clock(), flood)
        self.context.counters["games_finished"] += finished

    def _flood(self, room: Room, games: int) -> bool:
        """Whether every person in ``room`` is past their address's or their account's rate
        of games, once ``games`` more are counted (each address and account once a game)."""
        now = self.context.clock()
        people = [
            keys
            for holder in room.seats
            if holder is not None and holder.bot is None
            if (keys := _counted_as(holder.session.address, holder.account))
        ]
        over: dict[str, bool] = {}
        for key in {key for keys in people for key in keys}:
            taken = [self._games.take(key, now) for _ in range(games)]  # each one counts
            over[key] = not all(taken)
        return bool(people) and all(any(over[key] for key in keys) for keys in people)

    def listing(self, conn: int, request: History) -> Send:
        games = msgspec.Raw(self.history.listing_json(request.limit))
        return Send([conn], encode(HistoryListFrame(id=request.id, games=games)))

    def fetch_game(self, conn: int, request: FetchGame) -> Send | None:
        """The game's record if it is in memory; None if only the database may hold it
        (then the caller asks the database, or says there is no such game)."""
        frame = self.history.record(request.game, request.id)
        return None if frame is None else Send([conn], frame)

    def no_game(self, conn: int, request: FetchGame | Analyse) -> Send:
        message = f"no finished game {request.game} in the history"
        return self.context.error(conn, ErrorCode.GAME_NOT_FOUND, message, request.id)

    def replay(
        self, conn: int, address: str, allowance: TokenBucket, request: ReplayRequest
    ) -> Send:
        """Play ``moves`` from the start and send every position (clients hold no rules).

        Its work grows with the moves (about 12 us of CPU and 300 bytes out a ply), so it
        is paid for by the ply: from the connection's own ``allowance``, from its address's
        share of the server's budget, and from that budget, which keeps the event loop for
        the games being played whoever asks for replays and from however many addresses."""
        error = self.context.error
        plies = len(request.moves)
        cost = plies / REPLAY_PLIES_PER_TOKEN
        now = self.context.clock()
        if not allowance.spend(cost, now):
            # The request itself is one (spent before this), the moves the rest: say the whole.
            whole = f"{1 + cost:g} requests (one more for every {REPLAY_PLIES_PER_TOKEN:g} moves)"
            message = f"a replay of {plies} moves costs {whole}; slow down"
            return error(conn, ErrorCode.RATE_LIMITED, message, request.id)
        share = self._shares.get(address, now)
        if not share.holds(plies, now):
            message = "your address is replaying too many games; try again in a moment"
            return error(conn, ErrorCode.RATE_LIMITED, message, request.id)
        if not self._replays.spend(plies, now):
            message = "the server is replaying too many games right now; try again in a moment"
            return error(conn, ErrorCode.SERVER_BUSY, message, request.id)
        share.spend(plies, now)
        spec = full_variant(request.variant)
        game = Game(spec.players, spec.size, spec.walls)
        frames, problem = [_frame(game, None)], None
        standing: int | None = None  # a four-player game's last seat in it: the game is over
        for move in request.moves:
            try:
                if standing is not None:
                    raise ValueError(f"the game is over: seat {standing} is the last one in it")
                game.apply(move)
            except ValueError as reason:
                problem = f"move {game.ply + 1} ({move}): {reason}"
                break
            if spec.players == 4 and len(retired := game.retired) == 3:
                standing = next(seat for seat in range(4) if seat not in retired)
            frames.append(_frame(game, move, standing))
        reply = ReplayFrames(id=request.id, variant=spec, frames=frames, error=problem)
        return Send([conn], encode(reply))

    def analyse(
        self, conn: int, session: str, address: str, request: Analyse
    ) -> list[Action] | None:
        """Answer from the stored analysis, or queue the game (``server.analysis``); None
        if the game is not in memory (then the caller asks the database, or says there is no
        such game)."""
        game = self.history.find(request.game)
        if game is None:
            return None
        return self.analyse_game(conn, session, address, request, game)

    def analyse_game(
        self,
        conn: int,
        session: str,
        address: str,
        request: Analyse,
        game: GameRecord,
        stored: bytes | None = None,
    ) -> list[Action]:
        """``analyse`` of ``game``, from memory or read from the database with the analysis
        ``stored`` for it there, if any (a profile's older game)."""
        counters, error = self.context.counters, self.context.error
        # A stored analysis of an older game is answered, not kept: the memory holds those of
        # the history's games only (``prune_analyses``), and a reader of many older games
        # would grow it until the next analysis ended.
        if stored is not None:
            return [Send([conn], stored_reply(stored, request.id))]
        cached = self.analyses.cached(game.id, request.id)
        if cached is not None:
            return [Send([conn], cached)]
        moves = [move for move in game.moves if not move.startswith("retire")]
        reason = None
        if game.variant.players != 2:
            reason = "only two-player games can be analysed"
        elif not moves:
            reason = f"game {game.id} has no moves"
        if reason is not None:
            return [error(conn, ErrorCode.CANNOT_ANALYSE, reason, request.id)]
        try:
            waiter = (conn, request.id)
            steps = self.analyses.ask(game.id, moves, game.variant, session, address, waiter)
        except Refused as refused:
            counters["analysis:refused"] += 1
            return [error(conn, ErrorCode.SERVER_BUSY, str(refused), request.id)]
        counters["analysis:queued"] += 1
        return list(steps)

    def analysis_step(self, game: int, ply: int, review: MoveReview | None) -> list[Action]:
        """A step of an analysis came back (None: it failed); the next one, and the
        answers to whoever waits for an analysis that ended."""
        counters = self.context.counters
        steps, job, body = self.analyses.step_done(game, ply, review)
        actions: list[Action] = list(steps)
        if job is None:
            return actions
        if body is None:
            counters["analysis:failed"] += 1
            for conn, rid in job.waiters:
                message = f"the analysis of game {game} failed: try again later"
                actions.append(self.context.error(conn, ErrorCode.SERVER_BUSY, message, rid))
            return actions
        counters["analysis:done"] += 1
        for conn, rid in job.waiters:
            reply = self.analyses.cached(game, rid)
            if reply is not None:
                actions.append(Send([conn], reply))
        self.prune_analyses()  # after answering: the game may have left the history since
        return actions

    def prune_analyses(self) -> None:
        """Forget the analyses of the games the history no longer holds (a short game's
        goes with it: retention.py)."""
        history = self.history
        self.analyses.prune({game.id for game in itertools.chain(history.games, history.short)})

    def forget(self, conn: int) -> None:
        """The connection is gone: nobody waits for its analyses any more."""
        self.analyses.forget(conn)

    # -- the database ------------------------------------------------------------

    def keep_unsaved(self, on: bool) -> None:
        """Keep what the database has not received yet (when there is one)."""
        self.history.keep_unsaved = self.analyses.keep_unsaved = on

    def has_unsaved(self) -> bool:
        return bool(self.history.unsaved) or bool(self.analyses.unsaved)


def _counted_as(address: str, account: AccountRecord | None) -> list[str]:
    """Whose rates of games a person's games count against: their address's and, when
    they are logged in, their account's."""
    keys = [f"address:{address}"] if address else []
    return keys + ([f"account:{account.id}"] if account is not None else [])


def _frame(game: Game, last: str | None, standing: int | None = None) -> Frame:
    """The position; ``standing``: the winner of a four-player game all others left."""
    return Frame(
        ply=game.ply,
        pawns=game.pawns,
        walls=game.walls,
        walls_left=game.walls_left,
        turn=game.turn if standing is None else standing,
        last_move=last,
        winner=game.winner if standing is None else standing,
        distances=game.distances(),
    )
