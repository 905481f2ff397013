"""The history of finished games: kept in memory, written to the database, served to clients."""

from __future__ import annotations

import heapq
import itertools
import logging
from collections import deque
from collections.abc import Callable

from engine import format_record
from protocol.messages import GameRecordReply, GameSummary, RequestId
from server.records import UNNUMBERED, GameRecord
from server.retention import SHORT_KEPT, is_short
from server.rooms import Room

log = logging.getLogger("quoridor.history")


# Short games (aborted, over before every seat made two moves, or one of a flood of games
# from one address: retention.is_short) are kept apart, the
# newest SHORT_KEPT of them, so that a flood of them (they cost a few requests each) can
# never push played games out; the database keeps at least those (server.retention).


class GameHistory:
    """The last ``size`` played games and the last ``SHORT_KEPT`` short ones (each newest
    last), and those not yet saved."""

    def __init__(self, size: int) -> None:
        self.games: deque[GameRecord] = deque(maxlen=size)
        self.short: deque[GameRecord] = deque(maxlen=SHORT_KEPT)
        self.unsaved: list[GameRecord] = []
        """Finished games the database has not received yet (when there is one)."""
        self.keep_unsaved = False
        self._next_id = 1
        self.blocks: deque[range] | None = None
        """On a node of a cluster: ids reserved for this node in the shared database (blocks
        of ``server.cluster.node.GAME_ID_BLOCK``), used instead of counting from the highest
        id loaded, which every node would do alike."""
        self.running_low: Callable[[], None] = lambda: None
        """Called when the reserved ids run low (the node reserves another block)."""
        self._block_size = 0

    def load(self, games: list[GameRecord], last_id: int = 0) -> None:
        """Take back the games read from the database, oldest first; new games are numbered
        after them and after ``last_id`` (the database's highest, unreadable rows included)."""
        for game in games:
            (self.short if is_short(game) else self.games).append(game)
        self._next_id = max([last_id, *(game.id for game in games)]) + 1

    def archive(self, room: Room, now: float, flood: bool = False) -> int:
        """Move the room's finished games here; how many there were (``flood``: see
        ``GameRecord.flood``)."""
        count = len(room.finished)
        for finished in room.finished:
            game = GameRecord(
                id=self._take_id(),
                room=room.code,
                number=finished.number,
                variant=room.spec,
                players=finished.names,
                winner=finished.result.winner,
                reason=finished.result.reason,
                moves=finished.actions,
                finished=now,
                public=room.public,
                pool=finished.pool,
                accounts=finished.accounts,
                ranks=finished.ranks,
                flood=flood,
            )
            log.info(
                "game %d finished: %s, winner seat %s, %d moves",
                game.id,
                game.reason,
                game.winner,
                len(game.moves),
                extra={"room": room.code},
            )
            (self.short if is_short(game) else self.games).append(game)
            if self.keep_unsaved:
                self.unsaved.append(game)
        room.finished.clear()
        return count

    def _take_id(self) -> int:
        blocks = self.blocks
        if blocks is None:  # a single server: past every id seen here
            game_id = self._next_id
            self._next_id += 1
            return game_id
        if not blocks:
            # Numbering past the last id seen here could take an id of another node's block.
            log.warning("no reserved game id left; the database numbers this game")
            self.running_low()
            return UNNUMBERED
        block = blocks[0]
        game_id = block[0]
        blocks[0] = block[1:]
        if not blocks[0]:
            blocks.popleft()
        self._next_id = max(self._next_id, game_id + 1)
        if sum(map(len, blocks)) < self._block_size // 2:
            self.running_low()
        return game_id

    def reserved(self, block: range) -> None:
        """A block of ids reserved for this node in the shared database."""
        if self.blocks is None:
            self.blocks = deque()
        self.blocks.append(block)
        self._block_size = len(block)
        self._next_id = max(self._next_id, block[-1] + 1)

    def take_unsaved(self) -> list[GameRecord]:
        unsaved, self.unsaved = self.unsaved, []
        return unsaved

    def listing(self, limit: int) -> list[GameSummary]:
        """The newest games played to a result, aborted ones left out (short games are
        listed while they are kept)."""
        newest = heapq.merge(reversed(self.games), reversed(self.short), key=_newest_first)
        played = (game for game in newest if game.reason != "aborted")
        return [summary(game) for game in itertools.islice(played, limit)]

    def find(self, game_id: int) -> GameRecord | None:
        """The game with this id, if the history still holds it."""
        kept = itertools.chain(self.games, self.short)
        return next((game for game in kept if game.id == game_id), None)

    def record(self, game_id: int, request_id: RequestId) -> GameRecordReply | None:
        game = self.find(game_id)
        return None if game is None else record_reply(game, request_id)


def record_reply(game: GameRecord, request_id: RequestId) -> GameRecordReply:
    """The ``game_record`` answering ``fetch_game``."""
    moves = [move for move in game.moves if not move.startswith("retire")]
    return GameRecordReply(
        id=request_id,
        summary=summary(game),
        moves=game.moves,
        record=format_record(moves),
        numbered=format_record(moves, game.variant.players, numbered=True),
    )


def _newest_first(game: GameRecord) -> int:
    return -game.id


def summary(game: GameRecord) -> GameSummary:
    return GameSummary(
        game=game.id,
        room=game.room if game.public else None,
        number=game.number,
        variant=game.variant,
        players=game.players,
        winner=game.winner,
        reason=game.reason,
        plies=sum(1 for move in game.moves if not move.startswith("retire")),
        finished=game.finished,
        pool=game.pool,
    )
