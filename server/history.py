"""The history of finished games: kept in memory, written to the database, served to clients."""

from __future__ import annotations

import heapq
import itertools
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator

import msgspec

from engine import format_record
from protocol.messages import GameRecordReply, GameSummary, RequestId
from server.records import UNNUMBERED, GameRecord
from server.retention import SHORT_KEPT, is_short
from server.rooms import Room, spliceable

log = logging.getLogger("quoridor.history")
_encode = msgspec.json.Encoder().encode
LISTED = 100
"""The most games one ``history`` reply lists (the bound of its ``limit``)."""
RECORDS_KEPT = 64
"""Games whose ``game_record`` is kept encoded (the most recently fetched): built again at
every ``fetch_game``, a record of 999 moves took 0.7 ms, and one address's 20 connections
fetching it within their rate limits took a quarter of a core (an outside review). Each is
at most about 20 KB."""
RecordFrame = spliceable(GameRecordReply)
"""``GameRecordReply`` whose parts arrive already encoded (``GameHistory.record``)."""


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
        self._entries: dict[int, tuple[GameRecord, int, bytes]] = {}
        """The games' summaries, encoded once for every ``history`` reply: by the game's
        identity, the game itself (so the identity is not another's) and its id then (a
        cluster's database may number a game after it is archived)."""
        self._newest: list[bytes] = []
        self._newest_of: tuple[GameRecord | None, GameRecord | None, bool] | None = None
        """The summaries of the newest LISTED games played, and what they were read after:
        the newest game of each kind then, and whether every one of them had its id."""
        self._records: OrderedDict[int, tuple[GameRecord, RecordParts]] = OrderedDict()
        """The ``RECORDS_KEPT`` records fetched last, encoded but for the request's id: by
        the game's id, with the game itself (so that it is not another's)."""

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
                "game %d finished: %s, winner seat %s, %d plies",
                game.id,
                game.reason,
                game.winner,
                len(game.moves),
                extra={"room": room.code},
            )
            if game.id != UNNUMBERED:
                finished.result.game_id = game.id  # the room's state names it from now on
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
        return [summary(game) for game in itertools.islice(self._played(), limit)]

    def listing_json(self, limit: int) -> bytes:
        """``listing`` as the JSON array a ``history_list`` carries, of summaries encoded once
        each and read again only once a game was archived: made afresh for every request,
        100 of them took about 14 moves' work in the compiled server (counting the moves of
        long games, 70), for the same reply."""
        if limit > LISTED:
            entries = [self._entry(game) for game in itertools.islice(self._played(), limit)]
        else:
            entries = self._newest_entries()[:limit]
        return b"[" + b",".join(entries) + b"]"

    def _newest_entries(self) -> list[bytes]:
        games, short = self.games, self.short
        newest = games[-1] if games else None, short[-1] if short else None
        of = self._newest_of
        if of is None or of[0] is not newest[0] or of[1] is not newest[1] or not of[2]:
            played = list(itertools.islice(self._played(), LISTED))
            self._newest = [self._entry(game) for game in played]
            numbered = all(game.id != UNNUMBERED for game in played)
            self._newest_of = (*newest, numbered)
        return self._newest

    def _played(self) -> Iterator[GameRecord]:
        newest = heapq.merge(reversed(self.games), reversed(self.short), key=_newest_first)
        return (game for game in newest if game.reason != "aborted")

    def _entry(self, game: GameRecord) -> bytes:
        cached = self._entries.get(id(game))
        if cached is not None and cached[0] is game and cached[1] == game.id:
            return cached[2]
        entry = _encode(summary(game))
        kept = (self.games.maxlen or 0) + (self.short.maxlen or 0)
        if len(self._entries) >= 2 * kept:  # forget those of the games gone from here
            here = {id(game) for game in itertools.chain(self.games, self.short)}
            self._entries = {key: value for key, value in self._entries.items() if key in here}
        self._entries[id(game)] = (game, game.id, entry)
        return entry

    def find(self, game_id: int) -> GameRecord | None:
        """The game with this id, if the history still holds it."""
        kept = itertools.chain(self.games, self.short)
        return next((game for game in kept if game.id == game_id), None)

    def record(self, game_id: int, request_id: RequestId) -> bytes | None:
        """The ``game_record`` frame answering a ``fetch_game`` of this game, if the history
        still holds it: encoded once, then only the request's id is spliced in."""
        game = self.find(game_id)
        if game is None:
            return None
        records = self._records
        cached = records.get(game_id)
        if cached is not None and cached[0] is game and game.id == game_id:
            records.move_to_end(game_id)
            parts = cached[1]
        else:
            parts = record_parts(game)
            records[game_id] = (game, parts)
            if len(records) > RECORDS_KEPT:
                records.popitem(last=False)
        summary_part, moves, record, numbered = parts
        frame = RecordFrame(
            id=request_id, summary=summary_part, moves=moves, record=record, numbered=numbered
        )
        return _encode(frame)


RecordParts = tuple[msgspec.Raw, msgspec.Raw, msgspec.Raw, msgspec.Raw]
"""A ``game_record``'s summary, moves, record and numbered record, encoded."""


def record_parts(game: GameRecord) -> RecordParts:
    reply, raw = record_reply(game, None), msgspec.Raw
    moves, record, numbered = reply.moves, reply.record, reply.numbered
    return (
        raw(_encode(reply.summary)),
        raw(_encode(moves)),
        raw(_encode(record)),
        raw(_encode(numbered)),
    )


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
        plies=plies(game),
        finished=game.finished,
        pool=game.pool,
    )


def plies(game: GameRecord) -> int:
    """The moves of ``game``, its ``retire N`` entries left out. Read for each game of every
    ``history`` reply: counted move by move, a reply of 100 games of 1000 plies (the move
    limit) took 5.6 ms in the interpreted server, 17 times one of short games. A two-player
    game has no such entries (a seat that leaves it ends it); a four-player one has at most
    three, counted in C."""
    moves = game.moves
    if game.variant.players == 2:
        return len(moves)
    return len(moves) - " ".join(moves).count("retire")
