"""``quoridor`` / ``python -m client``: play Quoridor in a terminal.

Subcommands: ``create``, ``join CODE``, ``match``, ``list`` and
``watch CODE``. The common options (``--server``, ``--name``, ``--plain``,
``--ascii``, ``--no-color``) go before or after the subcommand.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from client.connection import ConnectError, Connection, normalize_url
from client.controller import Controller, Intent
from client.plain import PlainView, read_lines
from client.tui import TuiView, run_tui
from protocol.messages import (
    AiSpec,
    Create,
    Join,
    ListRooms,
    QuickMatch,
    TimeControl,
    VariantSpec,
    Watch,
)

DEFAULT_SERVER = "ws://127.0.0.1:8765"
NAME_LIMIT = 32


def default_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return name[:NAME_LIMIT] or "player"


def _common(defaults: bool) -> argparse.ArgumentParser:
    """The options every subcommand takes; real defaults only on the top parser."""

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("common options")
    group.add_argument(
        "--server",
        default=default(os.environ.get("QUORIDOR_SERVER", DEFAULT_SERVER)),
        help=f"the server's address (env QUORIDOR_SERVER, default {DEFAULT_SERVER})",
    )
    group.add_argument("--name", default=default(None), help="your name (default: your login name)")
    group.add_argument(
        "--plain",
        action="store_true",
        default=default(False),
        help="one line per event, no full screen (automatic when not on a terminal)",
    )
    group.add_argument(
        "--ascii",
        action="store_true",
        default=default(False),
        help="draw with ASCII only, for terminals without Unicode",
    )
    group.add_argument(
        "--no-color",
        dest="color",
        action="store_false",
        default=default(True),
        help="no colours (also with NO_COLOR set)",
    )
    return parser


def time_control(text: str) -> TimeControl:
    """``5+3``: 5 minutes each, 3 seconds more a move; ``90s+2``: 90 seconds; ``10``: no bonus."""
    base_text, _, increment_text = text.strip().partition("+")
    try:
        seconds = base_text.endswith("s")
        base = float(base_text[:-1]) if seconds else float(base_text) * 60
        increment = float(increment_text) if increment_text else 0.0
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time control: use MINUTES+SECONDS, like 5+3"
        ) from None
    if not (0 < base <= 86_400 and 0 <= increment <= 3_600):
        raise argparse.ArgumentTypeError(f"{text!r}: time must be positive and at most a day")
    return TimeControl(base=base, increment=increment)


def _variant_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, choices=(2, 4), default=2, help="2 or 4 players")
    parser.add_argument(
        "--size", type=int, choices=(5, 7, 9, 11), default=9, help="board size (default 9)"
    )
    parser.add_argument(
        "--walls", type=int, default=None, help="walls per player (default: 20 shared out)"
    )
    parser.add_argument(
        "--clock",
        type=time_control,
        default=None,
        metavar="M+S",
        help="a clock: M minutes each plus S seconds per move, like 5+3 (default: untimed)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quoridor",
        description="Play Quoridor in a terminal against people on a quoridor-server.",
        parents=[_common(defaults=True)],
        epilog="Two players: one runs 'quoridor create', the other 'quoridor join CODE'.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = [_common(defaults=False)]

    create = sub.add_parser("create", parents=common, help="create a room and wait for players")
    _variant_options(create)
    create.add_argument("--private", action="store_true", help="do not list the room")
    create.add_argument(
        "--match", action="store_true", help="a two-game match: each player opens once"
    )
    create.add_argument(
        "--computer",
        type=int,
        choices=range(1, 6),
        default=None,
        metavar="LEVEL",
        help="play the computer at this level, 1 (beginner) to 5 (expert)",
    )

    join = sub.add_parser("join", parents=common, help="take a seat in a room")
    join.add_argument("code", help="the room's code")
    join.add_argument("--seat", type=int, default=None, help="the seat to take (0-3)")
    join.add_argument("--secret", default=None, help="your seat's secret, to come back to it")

    match = sub.add_parser("match", parents=common, help="play the next player who asks too")
    _variant_options(match)

    sub.add_parser("list", parents=common, help="list the public rooms")

    watch = sub.add_parser("watch", parents=common, help="watch a room as a spectator")
    watch.add_argument("code", help="the room's code")
    return parser


def _variant(args: argparse.Namespace) -> VariantSpec:
    return VariantSpec(players=args.players, size=args.size, walls=args.walls)


INTENTS: dict[str, Callable[[argparse.Namespace], Intent]] = {
    "create": lambda args: Create(
        variant=_variant(args),
        private=args.private,
        clock=args.clock,
        match=args.match,
        ai=None if args.computer is None else AiSpec(level=args.computer),
    ),
    "join": lambda args: Join(room=args.code, seat=args.seat, secret=args.secret),
    "match": lambda args: QuickMatch(variant=_variant(args), clock=args.clock),
    "list": lambda args: ListRooms(),
    "watch": lambda args: Watch(room=args.code),
}
"""Each subcommand's request; a later ``bot`` subcommand adds its own entry point."""


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


async def play(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Connect, then run the plain or the full-screen mode; the exit status."""
    name = (args.name or default_name()).strip()[:NAME_LIMIT] or "player"
    intent = INTENTS[args.command](args)
    plain = (
        args.plain or args.command == "list" or not (_is_terminal(stdin) and _is_terminal(stdout))
    )
    tui_view = TuiView(name, ascii=args.ascii, color=args.color and "NO_COLOR" not in os.environ)
    plain_view = PlainView(stdout, ascii=args.ascii)
    view = plain_view if plain else tui_view
    try:
        url = normalize_url(args.server)
        connection = Connection(url, name, post=lambda event: None)
        # A script (input not a terminal) is done when the game is; a person may want a rematch.
        scripted = not _is_terminal(stdin)
        controller = Controller(
            connection, intent, view, premove=plain, exit_when_over=plain and scripted
        )
        plain_view.controller = tui_view.controller = controller
        welcome = await connection.open()
    except ConnectError as error:
        stderr.write(f"quoridor: {error.message}\n")
        return 1
    if not plain:
        return await run_tui(controller, tui_view, welcome, stdout)
    if args.command != "list":
        read_lines(stdin, controller)
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals on Windows
        # Ctrl-C quits like "quit": with the last words, not a stack.
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, controller.type, "quit")
    return await controller.run(welcome)


def run(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(play(args, stdin, stdout, stderr))
    except KeyboardInterrupt:
        stderr.write("quoridor: interrupted\n")
        return 130
    except Exception as exc:  # never a traceback for the player
        if os.environ.get("QUORIDOR_DEBUG"):
            raise
        stderr.write(
            f"quoridor: unexpected error: {exc!r} (set QUORIDOR_DEBUG=1 for the details)\n"
        )
        return 1


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
