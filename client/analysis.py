"""``quoridor analyse GAME``: the computer's analysis of a finished game, in the terminal.

The server does the analysing (the ``analyse`` request); this module only
draws its answer:

* an evaluation graph: seat 0's win probability after each move, as a chart
  a few rows high (one column per move, ``^`` under the marked moves), and
  the same as a one-line sparkline;
* every move with its mark (``?!`` inaccuracy, ``?`` mistake, ``??``
  blunder), the score after it and, where the engine preferred another
  move, the better move and what it would have kept; under a marked move,
  how it goes wrong: the line the engine expects after it;
* each player's summary: average win-probability loss and the marks.

``--replay`` then opens the replay viewer (or, in the plain mode, prints each
position) with the evaluation beside the board.
"""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from client.archive import (
    Failure,
    _connect,
    _fetch,
    _is_terminal,
    _refusal,
    failed,
    print_replay,
)
from client.archive import _server_game as server_game
from client.connection import ConnectError, Connection
from client.printed import terminal_width
from client.width import clip, pad, wrap
from protocol.messages import Analyse, AnalysisReply, Error, ErrorCode, MoveAnalysis

SUFFIX = {"inaccuracy": "?!", "mistake": "?", "blunder": "??", None: ""}
BLOCKS = " ▁▂▃▄▅▆▇█"
ASCII_LEVELS = " .-=#"
CHART_ROWS = 5
POINTERS = {"inaccuracy": "'", "mistake": "^", "blunder": "!"}
"""Under the chart, the column of each marked move."""
WAIT = 600.0
"""Seconds to wait for an analysis: the server computes it behind the games in play."""


def seat0_win(move: MoveAnalysis) -> float:
    """Seat 0's win probability after ``move`` (the reply is from the mover's view)."""
    return move.win_after if move.seat == 0 else 1.0 - move.win_after


def sparkline(values: list[float], *, ascii: bool = False) -> str:
    """One character per value in 0..1, taller for higher."""
    levels = ASCII_LEVELS if ascii else BLOCKS
    top = len(levels) - 1
    return "".join(levels[round(max(0.0, min(1.0, v)) * top)] for v in values)


SEVERITY = (None, "inaccuracy", "mistake", "blunder")
WIDTH = 80
"""Columns of the report when it is not printed on a terminal (a file, a pipe)."""
INDENT = " " * 18
"""Where a move's continued row and its line of play start: under the moves played."""


def squeezed(
    values: list[float], marks: list[str | None], width: int
) -> tuple[list[float], list[str | None], int]:
    """At most ``width`` columns for the chart: each column the value after the last of its
    moves and the worst mark among them, and how many moves a column shows (a 9x9 game of
    100 plies drawn a column a move went past 80 columns: the terminal broke every row)."""
    per = max(1, -(-len(values) // max(1, width)))
    if per == 1:
        return values, marks, 1
    groups = range(0, len(values), per)
    worst = [max(marks[i : i + per], key=SEVERITY.index) for i in groups]
    return [values[min(i + per, len(values)) - 1] for i in groups], worst, per


def chart(values: list[float], marks: list[str | None], *, ascii: bool = False) -> list[str]:
    """A chart ``CHART_ROWS`` high of values in 0..1 (0.5 is the middle row), one column
    per value, with a row under it pointing at the marked moves."""
    full, half = ("#", ".") if ascii else ("█", "▄")
    rows: list[str] = []
    for row in range(CHART_ROWS, 0, -1):
        low, high = (row - 1) / CHART_ROWS, row / CHART_ROWS
        line = ""
        for value in values:
            if value >= high:
                line += full
            elif value > low + (high - low) / 2:
                line += half
            else:
                line += " "
        label = {CHART_ROWS: "100%", (CHART_ROWS + 1) // 2: " 50%", 1: "  0%"}.get(row, "    ")
        rows.append(f"{label} |{line}")
    pointers = "".join(POINTERS.get(mark or "", " ") for mark in marks)
    rows.append(f"     +{'-' * len(values)}")
    rows.append(f"      {pointers.rstrip()}")
    return rows


def score_text(score: float, win_in: int | None = None) -> str:
    if win_in is not None:
        return f"wins in {win_in}" if win_in > 0 else f"loses in {-win_in}"
    return f"{score:+.1f}"


NAME_COLUMNS = 11
"""The player column of the move table: the computer's names ("Computer L2") whole."""


def move_line(move: MoveAnalysis, names: list[str], *, ascii: bool = False) -> str:
    """One move: number, player, move and mark, the evaluation after it, the better move."""
    number = f"{(move.ply + 1) // 2}." if move.seat == 0 else f"{(move.ply + 1) // 2}..."
    played = f"{move.move}{SUFFIX[move.mark]}"
    # Measured in columns and cut at 11, so a long or wide name keeps the columns.
    name = pad(clip(names[move.seat], NAME_COLUMNS, "~" if ascii else "…"), NAME_COLUMNS)
    line = f"{number:<5} {name} {played:<7} {score_text(move.score_after):>6}"
    line += f"  {move.win_after:4.0%}"
    if move.best != move.move and move.loss > 0:
        better = score_text(move.score_before, move.win_in)
        line += f"   better {move.best} ({better}, {move.win_before:.0%})"
        if move.mark is not None:
            line += f" - {move.mark}"
    return line


def line_text(move: MoveAnalysis, names: list[str]) -> str:
    """The line the engine expects after ``move`` (how a marked move goes wrong), with who
    plays each move: ``c2 (bob), b1h (alice)``."""
    replies = (
        f"{reply} ({names[(move.seat + 1 + i) % 2]})" for i, reply in enumerate(move.pv_after)
    )
    return ", ".join(replies)


def report(
    reply: AnalysisReply, names: list[str], *, ascii: bool = False, width: int = WIDTH
) -> list[str]:
    """The whole analysis as rows of at most ``width`` columns (a move's row, or its line of
    play, too long for them goes on under the moves played, broken between words: the
    terminal broke them mid-word, "(An" / "a)")."""
    values = [seat0_win(move) for move in reply.moves]
    marks: list[str | None] = [move.mark for move in reply.moves]
    shown, marks, per = squeezed(values, marks, width - 6)  # the chart's rows start "100% |"
    heading = (
        f"Game {reply.game}: {names[0]} (seat 0) against {names[1]} (seat 1)\n"
        f"Computer analysis, {reply.depth} plies deep. {names[0]}'s chances after each move"
        + (f" ({per} moves a column):" if per > 1 else ":")
    )
    lines = [
        *wrap(heading, width, cut=False),
        "",
        *chart(shown, marks, ascii=ascii),
        "      (under the chart: ' inaccuracy, ^ mistake, ! blunder)",
        "",
        f"     {sparkline(shown, ascii=ascii)}",
        "",
        f"move  {'player':<{NAME_COLUMNS}} played   score  win   (the mover's, after the move)",
    ]
    for move in reply.moves:
        lines += wrap(move_line(move, names, ascii=ascii), width, INDENT, cut=False)
        if move.mark is not None and move.pv_after:  # how the marked move goes wrong
            play = f"{INDENT}after {move.move}, best play goes: {line_text(move, names)}"
            lines += wrap(play, width, INDENT, cut=False)
    lines.append("")
    for seat in reply.seats:
        summary = (
            f"{names[seat.seat]}: {_count(seat.moves, 'move')}, average loss "
            f"{seat.average_loss:.1%}; {_count(seat.inaccuracies, 'inaccuracy', 'inaccuracies')}, "
            f"{_count(seat.mistakes, 'mistake')}, {_count(seat.blunders, 'blunder')}"
        )
        lines += wrap(summary, width, cut=False)
    return lines


def frame_notes(reply: AnalysisReply, names: list[str]) -> list[str]:
    """For the replay: one evaluation line per frame (the start, then after each move)."""
    notes = []
    first = reply.moves[0] if reply.moves else None
    if first is not None:
        notes.append(
            f"Eval: {names[0]} {first.win_before:.0%}, best {first.best} "
            f"({score_text(first.score_before, first.win_in)})"
        )
    for move in reply.moves:
        note = f"Eval: {names[0]} {seat0_win(move):.0%}"
        if move.mark is not None:
            note += f"; {move.move}{SUFFIX[move.mark]} {move.mark}, better {move.best}"
            if move.pv_after:
                note += f"; after it: {line_text(move, names)}"
        notes.append(note)
    return notes


async def analyse(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """``quoridor analyse GAME``."""
    try:
        connection = await _connect(args)
        try:
            record = await _fetch(connection, args.game)
            reply = await _analysis(connection, args.game)
            shown = await server_game(connection, record) if args.replay else None
        finally:
            await connection.close()
    except Failure as failure:
        return failed(stderr, failure)
    names = record.summary.players
    width = min(WIDTH, terminal_width(stdout) or WIDTH)
    written = "\n".join(report(reply, names, ascii=args.ascii, width=width)) + "\n"
    plain = args.plain or not (_is_terminal(stdin) and _is_terminal(stdout))
    if shown is None or plain:
        stdout.write(written)
        stdout.flush()
    if shown is None:
        return 0
    shown.notes = frame_notes(reply, names)
    if plain:
        print_replay(shown, stdout, boards=not args.brief, ascii=args.ascii)
        return 0
    from client.viewer import run_viewer  # prompt_toolkit only for the full screen

    await run_viewer(shown, ascii=args.ascii, color=args.color and "NO_COLOR" not in os.environ)
    # After the full screen, not before: printed first, the report was gone under it, and
    # once it closed only its last rows were left on screen (an outside review).
    stdout.write(written)
    stdout.flush()
    return 0


async def _analysis(connection: Connection, game: int) -> AnalysisReply:
    try:
        reply = await connection.ask(Analyse(game=game), within=WAIT)
    except ConnectError as error:
        raise Failure(error.message) from None
    if isinstance(reply, Error):
        if reply.code == ErrorCode.UNKNOWN_TYPE:
            raise Failure("this server does not analyse games yet")
        if reply.code == ErrorCode.CANNOT_ANALYSE:
            raise Failure(f"game {game} cannot be analysed: {reply.message}")
        if reply.code == ErrorCode.SERVER_BUSY:
            raise Failure(f"the server is busy: {reply.message}")
    if not isinstance(reply, AnalysisReply):
        raise Failure(_refusal(reply))
    return reply


def _count(number: int, word: str, plural: str = "") -> str:
    """``1 blunder``, ``2 blunders``."""
    return f"{number} {word if number == 1 else plural or word + 's'}"
