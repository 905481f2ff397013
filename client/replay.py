"""Replaying a finished game: record files read, frames kept in order and told in words.

The client holds no rules. A record (a file, or a game fetched from the
history) is a list of moves; the server plays them (the ``replay`` request)
and sends every position back as a frame. This module reads the words of a
record file, keeps the place among the frames, draws a frame as a ``state``
so the board renderer can show it, and tells each frame in words. It is
pure: no I/O.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from client.describe import (
    goal,
    opening,
    result_text,
    retire_text,
    short_variant,
    variant_text,
)
from client.notation import is_move, rounds
from client.printed import Command
from client.render import Line, pawn_glyph
from client.width import clip, clip_name, columns, pad
from protocol.messages import (
    Frame,
    GameSummary,
    LastMove,
    PlayerInfo,
    Result,
    State,
    VariantSpec,
)

MOVE_NUMBER = re.compile(r"\d+\.+")
"""``1.`` (or ``1...``) before a round of moves in a numbered record."""


class RecordError(ValueError):
    """A record file with a word that is not notation; the message says which."""


def parse_record(text: str) -> list[str]:
    """The moves of a record, plain (``e2 e8 e3h``) or numbered (``1. e2 e8 2. e3h``).

    Move numbers are only text and are dropped; ``#`` starts a comment that
    runs to the end of its line. Whether the moves are legal is the server's
    to say: here a word only has to look like notation.
    """
    moves: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        for word in line.partition("#")[0].split():
            found = MOVE_NUMBER.match(word)
            move = (word[found.end() :] if found else word).lower()
            if not move:
                continue
            if not is_move(move):
                raise RecordError(f"line {number}: {word!r} is not a move in standard notation")
            moves.append(move)
    return moves


def numbered(moves: list[str], players: int) -> str:
    """``1. e2 e8 2. e3h``: rounds of one move per seat, as the server numbers them."""
    rounds = [moves[start : start + players] for start in range(0, len(moves), players)]
    return " ".join(f"{index}. {' '.join(moves)}" for index, moves in enumerate(rounds, 1))


def export_text(
    moves: list[str], variant: VariantSpec, command: str, about: str | None = None
) -> str:
    """A record file as ``--export`` prints it: ``#`` lines (what game, how ``command``
    replays the file), then the numbered moves, which ``replay --file`` reads back. The moves
    are written once: a second copy in the file was read as more moves."""
    flags = "".join(
        f" --{flag} {value}"
        for flag, value, usual in (
            ("players", variant.players, 2),
            ("size", variant.size, 9),
            ("walls", variant.walls, None),
        )
        if value != usual
    )
    lines = [f"# {about}"] if about else []
    lines.append(f"# {variant_text(variant)}: {command} replay --file FILE{flags}")
    lines.append(numbered(moves, variant.players))
    return "\n".join(lines) + "\n"


def summary_result(summary: GameSummary) -> str:
    """How a game of the history ended, in a few words (the table's column is narrow: the
    reason is the protocol's one word, ``Bob won (resign)``; the replay says it whole)."""
    if summary.winner is None:
        return {"draw": "drawn", "aborted": "aborted"}.get(summary.reason, summary.reason)
    name = (
        summary.players[summary.winner]
        if summary.winner < len(summary.players)
        else f"seat {summary.winner}"
    )
    return f"{name} won" + (f" ({summary.reason})" if summary.reason != "goal" else "")


HISTORY_WIDTH = 80
"""Columns of the history table: it fits a standard terminal without wrapping."""


def _fit(text: str, width: int) -> str:
    """``text`` in ``width`` terminal columns at most (a CJK character takes two), cut
    with "~"."""
    return clip(text, width, "~")


def _player_rows(names: list[str], width: int) -> list[str]:
    """``Alice v Bob`` in rows of ``width`` columns, broken before a ``v``: a table row
    cut at 20 columns lost the opponent's level ("Alexandra v Compute~", an outside review).
    Only a single name wider than the column is cut."""
    rows: list[str] = []
    for index, name in enumerate(names):
        piece = clip_name(name if index == 0 else f"v {name}", width, "~")
        if rows and columns(rows[-1]) + 1 + columns(piece) <= width:
            rows[-1] += " " + piece
        else:
            rows.append(piece)
    return rows


def history_text(games: list[GameSummary], now: float | None = None) -> list[str]:
    """The finished games as a table of at most 80 columns, newest first; players that
    do not fit their column go on below it."""
    if not games:
        return ["No finished games yet."]
    year = time.localtime(now).tm_year
    # The players' column gives way to the longest result ("Computer L1 won (abandon)" was
    # cut to "(abando~"), down to 12 columns; the rows stay aligned.
    longest = max(columns(summary_result(game)) for game in games)
    width = max(12, min(20, HISTORY_WIDTH - 37 - longest))
    lines = [f"{'GAME':>5} {'ENDED':<11} {'VARIANT':<10} {'PLAYERS':<{width}} {'MOVES':>5}  RESULT"]
    for game in games:
        ended_at = time.localtime(game.finished)
        ended = time.strftime("%m-%d %H:%M" if ended_at.tm_year == year else "%Y-%m-%d", ended_at)
        first, *more = _player_rows(game.players, width)  # "Carol v Computer L2" whole at 20
        before = f"{game.game:>5} {ended:<11} {short_variant(game.variant):<10} "
        # Moves as the move lists count them, a round each (the browser's too): 39 plies of
        # two players are 20 moves; "83" beside a list that ended at "42." read as a mistake.
        moves = -(-game.plies // game.variant.players)
        line = f"{before}{pad(first, width)} {moves:>5}  {summary_result(game)}"
        lines.append(_fit(line, HISTORY_WIDTH))
        lines.extend(_fit(" " * columns(before) + row, HISTORY_WIDTH) for row in more)
    return lines


def history_hint(command: str) -> list[str]:
    """What to type next, below the table, for ``client.printed.say`` (``command``: how this
    client is run): each command on a row of its own, whole (on one line with its words, a
    long path and address made the terminal break it mid-word at 80 columns)."""
    return [
        "Replay one:",
        Command(f"{command} replay GAME"),
        "With the computer's analysis (two players):",
        Command(f"{command} analyse GAME --replay"),
        "Its record:",
        Command(f"{command} replay GAME --export"),
    ]


@dataclass
class Replay:
    """The frames of one game and the one on show."""

    variant: VariantSpec
    frames: list[Frame]
    """The start position, then one after each move; never empty."""
    title: str
    """What is replayed: ``game 12: alice vs bob``, or the file's name."""
    names: list[str] = field(default_factory=list)
    """Each seat's player; ``seat N`` when the record does not say."""
    result: Result | None = None
    """How the game ended, when known (a game of the history)."""
    stop: str | None = None
    """Why the frames end before the record does (a move the server refused)."""
    index: int = 0
    """The frame on show."""
    notes: list[str] = field(default_factory=list)
    """Optional words per frame (the computer's evaluation), shown beside the board."""

    def __post_init__(self) -> None:
        seats = self.variant.players
        self.names = [*self.names[:seats], *(f"seat {n}" for n in range(len(self.names), seats))]

    # -- moving around -------------------------------------------------------------

    @property
    def last(self) -> int:
        return len(self.frames) - 1

    def go(self, index: int) -> bool:
        """Show frame ``index`` (kept within the frames); whether the frame changed."""
        index = max(0, min(self.last, index))
        moved = index != self.index
        self.index = index
        return moved

    def next(self) -> bool:
        return self.go(self.index + 1)

    def previous(self) -> bool:
        return self.go(self.index - 1)

    def first(self) -> bool:
        return self.go(0)

    def end(self) -> bool:
        return self.go(self.last)

    # -- what a frame is -------------------------------------------------------------

    @property
    def moves(self) -> list[str]:
        """The moves that were played, one per frame after the first."""
        return [frame.last_move or "" for frame in self.frames[1:]]

    def numbered(self, index: int) -> str:
        """``Move 2 of 20``: frame ``index``'s move as the move lists number them, by
        rounds (the browser's replay too); by plies, "Move 3 of 39" beside a history that
        counts 20 moves read as two counts."""
        players = self.variant.players
        moves = self.moves
        return f"Move {len(rounds(moves[:index], players))} of {len(rounds(moves, players))}"

    def mover(self, index: int) -> int | None:
        """The seat that made the move leading to frame ``index`` (a ``retire N``: seat N)."""
        if index <= 0:
            return None
        last = self.frames[index].last_move or ""
        if last.startswith("retire "):
            return int(last.split()[1])
        return self.frames[index - 1].turn

    def outcome(self, index: int) -> Result | None:
        """The game's result, as of frame ``index``."""
        frame = self.frames[index]
        if frame.winner is not None:
            return Result(winner=frame.winner, reason="goal")
        if index == self.last and self.stop is None:
            return self.result
        return None

    def state(self, index: int | None = None) -> State:
        """Frame ``index`` (default: the one on show) as a room state, for the renderer."""
        index = self.index if index is None else index
        frame = self.frames[index]
        result = self.outcome(index)
        mover = self.mover(index)
        last = None
        if frame.last_move is not None and mover is not None:
            last = LastMove(seat=mover, move=frame.last_move, ply=frame.ply - 1)
        return State(
            event=index,
            room=self.title,
            variant=self.variant,
            status="finished" if result is not None else "playing",
            ply=frame.ply,
            turn=None if result is not None else frame.turn,
            pawns=frame.pawns,
            walls=frame.walls,
            walls_left=frame.walls_left,
            last_move=last,
            legal_pawn_moves=[],
            distances=frame.distances,
            players=[
                PlayerInfo(seat=seat, name=name, connected=True)
                for seat, name in enumerate(self.names)
            ],
            spectators=0,
            result=result,
            moves=self.moves[:index],
        )

    # -- in words -------------------------------------------------------------------

    def line(self, index: int | None = None) -> str:
        """Frame ``index`` (default: the one on show) in one line of words."""
        index = self.index if index is None else index
        frame = self.frames[index]
        parts: list[str] = []
        if index == 0:
            players = " against ".join(self.names)
            parts.append(f"Start: {players}; {variant_text(self.variant)}.")
        else:
            mover = self.names[self.mover(index) or 0]
            move = frame.last_move or "?"
            if move.startswith("retire "):
                parts.append(f"{self.numbered(index)}: {opening(retire_text(mover))}.")
            else:
                verb = "placed a wall at" if move.endswith(("h", "v")) else "moved to"
                parts.append(f"{self.numbered(index)}: {opening(mover)} {verb} {move}.")
        result = self.outcome(index)
        if frame.winner is not None:
            where = goal(self.variant.players, self.variant.size, frame.winner)
            parts.append(f"{opening(self.names[frame.winner])} reached {where} and wins.")
        elif result is not None:
            parts.append(result_text(self.state(index), None))
        else:
            parts.append(f"{opening(self.names[frame.turn])} to move.")
        if index == self.last and self.stop is not None:
            parts.append(f"The record stops here: {self.stop}.")
        return " ".join(parts)

    def panel(self, *, ascii: bool = False) -> list[Line]:
        """The side panel: what is replayed, the players, where the replay stands."""
        frame = self.frames[self.index]
        lines: list[Line] = [
            [("class:title", self.title)],
            [("", variant_text(self.variant))],
            [("class:coord", f"  {'player':<12} walls to go")],
        ]
        for seat, name in enumerate(self.names):
            shown = pad(clip_name(name, 12, "~" if ascii else "…"), 12)
            distance = frame.distances[seat]
            line: Line = [
                (f"class:pawn.{seat}", pawn_glyph(seat, ascii)),
                ("", f" {shown} {frame.walls_left[seat]:>5} "),
                ("", f"{distance if distance >= 0 else '-':>5}"),
            ]
            if frame.winner is None and frame.turn == seat and self.outcome(self.index) is None:
                line.append(("class:turn", " <" if ascii else " ◀"))
            lines.append(line)
        lines.append([("class:situation", self.line())])
        if self.index < len(self.notes):
            lines.append([("class:situation", self.notes[self.index])])
        return lines

    def move_rows(self) -> tuple[list[Line], int]:
        """The moves, numbered by rounds, the current one marked; and the row it is on."""
        players = self.variant.players
        rows: list[Line] = []
        current = 0
        for start in range(0, self.last, players):
            row: Line = [("class:coord", f"{start // players + 1:>3}.")]
            for index in range(start + 1, min(start + players, self.last) + 1):
                move = self.frames[index].last_move or "?"
                style = "class:current" if index == self.index else ""
                row += [("", " "), (style, f"{move:<4}")]
                if index == self.index:
                    current = len(rows)
            rows.append(row)
        return rows, current
