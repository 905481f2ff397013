"""The finished games: ``quoridor history`` and ``quoridor replay``.

These commands need no room. They connect, ask the server once or twice
and show the answer: ``history`` lists the recent games; ``replay`` fetches
a game of the history (``fetch_game``) or reads a record file, has the
server play its moves (``replay``: the client holds no rules) and shows the
positions one by one, full-screen with keys or, in the plain mode, one line
(and one board) per move. ``--export`` prints the record instead.
"""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from client.connection import ConnectError, Connection, invoked_as, normalize_url
from client.printed import Command, say
from client.render import board_text
from client.replay import (
    RecordError,
    Replay,
    export_text,
    history_hint,
    history_text,
    parse_record,
    summary_result,
)
from protocol.codec import encode
from protocol.messages import (
    Error,
    ErrorCode,
    FetchGame,
    GameRecordReply,
    History,
    HistoryList,
    ReplayFrames,
    ReplayRequest,
    Request,
    Result,
    ServerMessage,
    VariantSpec,
)

MAX_REQUEST = 4096
"""Bytes a request frame may take with the server's default ``--max-message``."""


class Failure(Exception):
    """The command cannot go on; the message says why, in one sentence, and ``commands`` what
    to type instead, each on a row of its own (``failed`` prints both)."""

    def __init__(self, message: str, *commands: Command) -> None:
        super().__init__(message)
        self.commands = commands


def failed(stderr: TextIO, failure: Failure) -> int:
    """Say why the command failed, and what to type instead; the exit status."""
    say(stderr, f"quoridor: {failure}", *failure.commands)
    return 1


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


async def _connect(args: argparse.Namespace) -> Connection:
    try:
        connection = Connection(normalize_url(args.server), args.name, post=lambda event: None)
        await connection.open()
    except ConnectError as error:
        raise Failure(error.message) from None
    return connection


async def _ask(connection: Connection, request: Request, what: str) -> ServerMessage:
    try:
        reply = await connection.ask(request)
    except ConnectError as error:
        raise Failure(error.message) from None
    if isinstance(reply, Error) and reply.code == ErrorCode.UNKNOWN_TYPE:
        raise Failure(f"this server does not support {what} yet")
    return reply


async def history(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """``quoridor history``: the recently finished games, newest first."""
    try:
        connection = await _connect(args)
        try:
            reply = await _ask(connection, History(limit=args.limit), "the history")
        finally:
            await connection.close()
        if not isinstance(reply, HistoryList):
            raise Failure(_refusal(reply))
    except Failure as failure:
        return failed(stderr, failure)
    stdout.write("\n".join(history_text(reply.games)) + "\n")
    if reply.games:
        say(stdout, *history_hint(invoked_as(normalize_url(args.server))))
    return 0


async def replay(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """``quoridor replay GAME`` or ``quoridor replay --file PATH``; ``--export``."""
    try:
        moves = None if args.file is None else _read_record(args.file, stdin)
        connection = await _connect(args)
        try:
            if moves is None:
                record = await _fetch(connection, args.game)
                if args.export and record.summary.reason == "aborted":
                    raise Failure(
                        f"game {args.game} was aborted (before every player had moved, or "
                        "when every player went away): it has no result and no record to export"
                    )
                if args.export:
                    summary = record.summary
                    about = f"Game {summary.game}: {' v '.join(summary.players)}, "
                    about += summary_result(summary)
                    command = invoked_as(connection.url)
                    stdout.write(export_text(record.moves, summary.variant, command, about))
                    return 0
                shown = await _server_game(connection, record)
            else:
                shown = await _record_file(connection, args, moves)
        finally:
            await connection.close()
    except Failure as failure:
        return failed(stderr, failure)
    if args.export:  # a file: the moves the server played, which is all of them unless refused
        played = shown.moves
        stdout.write(export_text(played, shown.variant, invoked_as(normalize_url(args.server))))
        if shown.stop is not None:
            say(stderr, f"quoridor: the record stops after move {len(played)}: {shown.stop}")
        return 0 if shown.stop is None else 1
    plain = args.plain or not (_is_terminal(stdin) and _is_terminal(stdout))
    if plain:
        print_replay(shown, stdout, boards=not args.brief, ascii=args.ascii)
    else:
        from client.viewer import run_viewer  # prompt_toolkit only for the full screen

        await run_viewer(shown, ascii=args.ascii, color=args.color and "NO_COLOR" not in os.environ)
    refused = args.file is not None and shown.stop is not None
    return 1 if refused else 0  # a record file with a move the server refused


def print_replay(shown: Replay, out: TextIO, *, boards: bool = True, ascii: bool = False) -> None:
    """The plain mode: every frame in order, a line of words and (with ``boards``) the board."""
    for index in range(len(shown.frames)):
        out.write(shown.line(index) + "\n")
        if index < len(shown.notes):
            out.write(shown.notes[index] + "\n")
        if boards:
            out.write(board_text(shown.state(index), ascii=ascii) + "\n\n")
    out.flush()


def _read_record(path: str, stdin: TextIO) -> list[str]:
    try:
        if path == "-":
            text = stdin.read()
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise Failure(f"cannot read {path}: {reason}") from None
    try:
        return parse_record(text)
    except RecordError as error:
        raise Failure(f"{'standard input' if path == '-' else path}, {error}") from None


async def _fetch(connection: Connection, game: int) -> GameRecordReply:
    reply = await _ask(connection, FetchGame(game=game), "fetching games")
    if isinstance(reply, Error) and reply.code == ErrorCode.GAME_NOT_FOUND:
        raise Failure(
            f"no game {game} in the server's history. To list its games:",
            Command(f"{invoked_as(connection.url)} history"),
        )
    if not isinstance(reply, GameRecordReply):
        raise Failure(_refusal(reply))
    return reply


async def _server_game(connection: Connection, record: GameRecordReply) -> Replay:
    summary = record.summary
    title = f"Game {summary.game}: " + " vs ".join(summary.players)
    # The moves as the server keeps them, ``retire N`` included: ``replay`` plays those too.
    shown = await _positions(connection, summary.variant, record.moves, title, summary.players)
    if shown.stop is None:
        shown.result = Result(winner=summary.winner, reason=summary.reason)
    return shown


async def _record_file(
    connection: Connection, args: argparse.Namespace, moves: list[str]
) -> Replay:
    variant = VariantSpec(players=args.players, size=args.size, walls=args.walls)
    title = "standard input" if args.file == "-" else os.path.basename(args.file)
    return await _positions(connection, variant, moves, title, [])


async def _positions(
    connection: Connection, variant: VariantSpec, moves: list[str], title: str, names: list[str]
) -> Replay:
    """Have the server play ``moves`` and keep every position it sends back."""
    request = ReplayRequest(variant=variant, moves=moves)
    if len(moves) > 1000 or len(encode(request)) > MAX_REQUEST - 64:  # room for the id
        raise Failure(f"the record is too long to replay ({len(moves)} moves)")
    reply = await _ask(connection, request, "replaying games")
    if not isinstance(reply, ReplayFrames):
        raise Failure(_refusal(reply))
    return Replay(
        variant=reply.variant, frames=reply.frames, title=title, names=names, stop=reply.error
    )


def _refusal(reply: ServerMessage) -> str:
    if isinstance(reply, Error):
        return f"the server refused: {reply.message}"
    return f"the server answered {type(reply).__name__} instead"
