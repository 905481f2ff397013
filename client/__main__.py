"""``quoridor`` / ``python -m client``: play Quoridor in a terminal.

Subcommands that take a room (``create``, ``join CODE``, ``match``,
``play --vs-ai N``, ``list``, ``watch CODE``) run the controller with the
request in ``INTENTS``; the others have runners of their own in ``RUNNERS``:
``replay`` and ``history`` (``client.archive``) and ``bot`` (``client.bot``,
loaded only when asked for: it is the one module that runs the engine). The
common options (``--server``, ``--name``, ``--plain``, ``--ascii``,
``--no-color``) go before or after the subcommand.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import io
import os
import shlex
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TextIO, cast

from client import account, analysis, archive
from client.connection import (
    DEFAULT_SERVER,
    ConnectError,
    Connection,
    invoked_as,
    normalize_url,
)
from client.controller import Controller, Intent
from client.describe import result_text
from client.layout import smallest
from client.plain import PlainView, read_once_answered
from client.printed import Command, say
from client.seats import SavedSeat, SeatBook
from client.tui import TuiView, run_tui
from protocol.messages import (
    MAX_WALLS,
    AiSpec,
    Create,
    Error,
    ErrorCode,
    Join,
    ListRooms,
    QuickMatch,
    TimeControl,
    VariantSpec,
    Watch,
)

NAME_LIMIT = 32


def default_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return name[:NAME_LIMIT] or "player"


def _common(defaults: bool, *, screen: bool = True) -> argparse.ArgumentParser:
    """The options every subcommand takes; real defaults only on the top parser.

    ``screen=False`` leaves out the display options (for the headless bot).
    """

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("common options")
    group.add_argument(
        "--server",
        default=default(os.environ.get("QUORIDOR_SERVER", DEFAULT_SERVER)),
        help=f"the server's address (env QUORIDOR_SERVER, default {DEFAULT_SERVER})",
    )
    if not screen:  # the bot
        group.add_argument(
            "--name", type=_name, default=default(None), help="its name (default: bot-LEVEL)"
        )
        return parser
    group.add_argument(
        "--name", type=_name, default=default(None), help="your name (default: your login name)"
    )
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
        "--absolute",
        action="store_true",
        default=default(False),
        help="draw the board with row 1 at the bottom whatever your seat "
        "(default: your own pawn starts at the bottom)",
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


def positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return number


def seconds(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = 0.0
    if not 0 < number <= 60:
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds, more than 0 and at most 60")
    return number


def _walls(text: str) -> int:
    """``--walls``, checked here: the server's refusal read "Expected `int` <= 30 - at
    `$.variant.walls`" (an outside review)."""
    try:
        number = int(text)
    except ValueError:
        number = -1
    if not 0 <= number <= MAX_WALLS:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of walls from 0 to {MAX_WALLS}")
    return number


def _name(text: str) -> str:
    """``--name``, checked here: a longer one was cut to its first 32 characters without a
    word (an outside review)."""
    if len(text.strip()) > NAME_LIMIT:
        raise argparse.ArgumentTypeError(
            f"{text!r} has {len(text.strip())} characters: give a name of at most {NAME_LIMIT}"
        )
    return text


def _variant_options(parser: argparse.ArgumentParser, *, clock: bool = True) -> None:
    parser.add_argument("--players", type=int, choices=(2, 4), default=2, help="2 or 4 players")
    parser.add_argument(
        "--size", type=int, choices=(5, 7, 9, 11), default=9, help="board size (default 9)"
    )
    parser.add_argument(
        "--walls",
        type=_walls,
        default=None,
        help=f"walls per player, 0 to {MAX_WALLS} (default: 20 shared out)",
    )
    if not clock:
        return
    parser.add_argument(
        "--clock",
        type=time_control,
        default=None,
        metavar="M+S",
        help="a clock: M minutes each plus S seconds per move, like 5+3 (default: untimed)",
    )


def _spectator_eval_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spectator-eval",
        action="store_true",
        help="let spectators follow the computer's evaluation of your game (an untimed "
        "two-player game, once every player allowed it; never shown to the players)",
    )


def _rated_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--casual",
        dest="rated",
        action="store_const",
        const=False,
        default=None,
        help="not rated (logged-in players play rated games by default; see 'quoridor login')",
    )


def _subcommand(sub: Any, name: str, help: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose help page opens with what it does (``quoridor create --help``
    began with its options: an outside newcomer's review)."""
    kwargs.setdefault("description", f"{help[0].upper()}{help[1:]}.")
    return cast(argparse.ArgumentParser, sub.add_parser(name, help=help, **kwargs))


def _account_commands(sub: Any, common: list[argparse.ArgumentParser]) -> None:
    for command, text in (
        ("register", "create an account on the server and log in to it"),
        ("login", "log in, so that your games are rated (the token is kept in ~/.config)"),
    ):
        parser = _subcommand(
            sub,
            command,
            parents=common,
            help=text,
            description=f"{text[0].upper()}{text[1:]}. The password is asked for without echo "
            "(or read from the first line of standard input when it is not a terminal).",
        )
        parser.add_argument(
            "account", nargs="?", default=None, help="the account's name (default: --name)"
        )
    _subcommand(sub, "logout", parents=common, help="log out: the saved login token is revoked")
    _subcommand(
        sub,
        "password",
        parents=common,
        help="change your password (logged in): your other logins end",
        description="Change the password of the account you are logged in as on this server; "
        "its other logins end. The passwords are asked for without echo (or read from the "
        "first two lines of standard input when it is not a terminal: the current, the new).",
    )
    board = _subcommand(sub, "leaderboard", parents=common, help="the best established ratings")
    board.add_argument(
        "--pool",
        choices=account.POOLS,
        default="9x9-untimed",
        metavar="POOL",  # the list of them in the usage line ran past 80 columns
        help=f"which ratings: {', '.join(account.POOLS)} (default: %(default)s)",
    )
    board.add_argument(
        "--limit", type=int, choices=range(1, 101), default=20, metavar="N", help="1-100"
    )
    profile = _subcommand(sub, "profile", parents=common, help="a player's ratings and games")
    profile.add_argument("player", help="the player's name (or 'Computer L3')")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quoridor",
        description="Play Quoridor in a terminal against people on a quoridor-server.",
        parents=[_common(defaults=True)],
        epilog="Two players: one runs 'quoridor create', the other 'quoridor join CODE'.",
    )
    # No COMMAND: offer to resume the game in progress kept in the state directory.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = [_common(defaults=False)]

    create = _subcommand(sub, "create", parents=common, help="create a room and wait for players")
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
    _rated_option(create)
    _spectator_eval_option(create)

    join = _subcommand(sub, "join", parents=common, help="take a seat in a room")
    join.add_argument("code", help="the room's code")
    join.add_argument("--seat", type=int, default=None, help="the seat to take (0-3)")
    join.add_argument(
        "--secret",
        default=None,
        help="your seat's secret, to come back to it (default: the one kept for this room)",
    )
    _spectator_eval_option(join)

    match = _subcommand(sub, "match", parents=common, help="play the next player who asks too")
    _variant_options(match)
    _rated_option(match)

    play = _subcommand(sub, "play", parents=common, help="play the server's computer at once")
    play.add_argument(
        "--vs-ai",
        type=int,
        choices=range(1, 6),
        required=True,
        metavar="LEVEL",
        help="the computer's level, 1 (beginner) to 5 (expert)",
    )
    play.add_argument(
        "--seat",
        type=int,
        choices=range(4),
        default=None,
        metavar="N",
        help="your seat, 0-3: 1 lets the computer open (default 0: you open)",
    )
    _variant_options(play)
    _rated_option(play)

    _subcommand(sub, "list", parents=common, help="list the public rooms")

    watch = _subcommand(sub, "watch", parents=common, help="watch a room as a spectator")
    watch.add_argument("code", help="the room's code")

    history = _subcommand(sub, "history", parents=common, help="list recently finished games")
    history.add_argument(
        "--limit", type=int, choices=range(1, 101), default=20, metavar="N", help="1-100"
    )

    replay = _subcommand(
        sub,
        "replay",
        parents=common,
        help="replay a finished game, or a record file, move by move",
        description="Replay a game of the server's history (its number in 'quoridor history') "
        "or a record file in standard notation ('e2 e8 e3h' or '1. e2 e8 2. e3h'). "
        "The server plays the moves; keys: right/n next, left/p previous, Home/End, q quit.",
    )
    replay.add_argument("game", nargs="?", type=int, help="the game's number in the history")
    replay.add_argument("--file", metavar="PATH", help="a record file ('-': standard input)")
    _variant_options(replay, clock=False)
    replay.add_argument(
        "--export",
        action="store_true",
        help="print the record ('#' lines, then the numbered moves), which --file reads back",
    )
    replay.add_argument(
        "--brief", action="store_true", help="plain mode: one line per move, no boards"
    )

    analyse = _subcommand(
        sub,
        "analyse",
        parents=common,
        help="the computer's analysis of a finished game: graph, mistakes, better moves",
        description="Ask the server to analyse a finished two-player game of its history (its "
        "number in 'quoridor history'): a graph of the players' chances, every move with its "
        "mark (?! inaccuracy, ? mistake, ?? blunder) and the better move, and a summary per "
        "player. The first request for a game takes a few seconds; later ones are instant.",
    )
    analyse.add_argument("game", type=int, help="the game's number in the history")
    analyse.add_argument(
        "--replay",
        action="store_true",
        help="then replay the game with the evaluation beside the board",
    )
    analyse.add_argument(
        "--brief", action="store_true", help="plain replay: one line per move, no boards"
    )

    _account_commands(sub, common)

    bot = _subcommand(
        sub,
        "bot",
        parents=[_common(defaults=False, screen=False)],
        help="a computer player that plays on the server (headless)",
        description="A headless computer player: it joins a room by its code or quick-matches, "
        "plays its games to the end and exits. It logs one line per move on standard error.",
    )
    bot.add_argument(
        "--level", type=int, choices=range(1, 6), default=3, help="1 (beginner) to 5 (expert)"
    )
    where = bot.add_mutually_exclusive_group()
    where.add_argument("--join", metavar="CODE", help="take a free seat in this room")
    where.add_argument(
        "--match",
        action="store_true",
        help="quick match with the same --players/--size/--walls/--clock (the default)",
    )
    _variant_options(bot)
    bot.add_argument(
        "--games", type=positive, default=1, help="games to play, asking for rematches"
    )
    bot.add_argument(
        "--seconds",
        type=seconds,
        default=None,
        metavar="S",
        help="thinking time per move (default: the level's own)",
    )
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
        rated=args.rated,
        spectator_eval=args.spectator_eval,
    ),
    "join": lambda args: Join(
        room=args.code, seat=args.seat, secret=args.secret, spectator_eval=args.spectator_eval
    ),
    "match": lambda args: QuickMatch(variant=_variant(args), clock=args.clock, rated=args.rated),
    "play": lambda args: Create(
        variant=_variant(args),
        clock=args.clock,
        ai=AiSpec(level=args.vs_ai),
        seat=args.seat,
        rated=args.rated,
    ),
    "list": lambda args: ListRooms(),
    "watch": lambda args: Watch(room=args.code),
}
"""Each room subcommand's request, sent once connected."""

Runner = Callable[[argparse.Namespace, TextIO, TextIO, TextIO], Awaitable[int]]


async def _bot(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    # Imported here, not at the top: client.bot runs the engine's search, and the
    # terminal client must never load the engine (it holds no rules).
    from client.bot import run_bot

    return await run_bot(args, stderr)


RUNNERS: dict[str, Runner] = {
    "analyse": analysis.analyse,
    "history": archive.history,
    "replay": archive.replay,
    "bot": _bot,
    "register": account.register,
    "login": account.login,
    "logout": account.logout,
    "password": account.password,
    "leaderboard": account.leaderboard,
    "profile": account.profile,
}
"""Subcommands that are no room to play in, each with its own entry point."""


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


async def play(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Connect, then run the plain or the full-screen mode; the exit status."""
    code, _ = await _play(args, stdin, stdout, stderr)
    return code


async def _play(
    args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> tuple[int, Controller | None]:
    """``play``, with the controller that ran (None if none did)."""
    name = typed = player_name(args)
    seats = SeatBook()
    try:
        url = normalize_url(args.server)
    except ConnectError as error:
        say(stderr, f"quoridor: {error.message}")
        return 1, None
    name, token, guest_note = _who(args, url, name)
    if args.command == "join" and args.secret is None:
        # With --name, that player's seat only (two players of one machine share the file).
        saved = seats.find(url, args.code, name if getattr(args, "name_given", False) else None)
        if saved is not None and args.seat in (None, saved.seat):
            args.seat, args.secret = saved.seat, saved.secret  # your own seat, back
    intent = INTENTS[args.command](args)
    plain = (
        args.plain or args.command == "list" or not (_is_terminal(stdin) and _is_terminal(stdout))
    )
    if not plain and (refusal := _too_small(intent, stdout)):
        say(stderr, *refusal)
        return 1, None
    tui_view = TuiView(
        name,
        ascii=args.ascii,
        color=args.color and "NO_COLOR" not in os.environ,
        absolute=args.absolute,
    )
    plain_view = PlainView(stdout, ascii=args.ascii, absolute=args.absolute)
    view = plain_view if plain else tui_view
    try:
        connection = Connection(url, name, post=lambda event: None, token=token)
        # A script (input not a terminal) is done when the game is; a person may want a rematch.
        scripted = not _is_terminal(stdin)
        controller = Controller(
            connection,
            intent,
            view,
            exit_when_over=plain and scripted,
            interactive=not scripted,
            seats=seats,
        )
        controller.command = invoked_as(url)
        controller.own_command = own_command(url, typed)  # a login's name needs no --name
        controller.greeting_note = guest_note
        plain_view.controller = tui_view.controller = controller
        welcome = await connection.open()
    except ConnectError as error:
        say(stderr, f"quoridor: {error.message}")
        return 1, None
    if not plain:
        return await run_tui(controller, tui_view, welcome, stdout), controller
    reading = None
    if args.command != "list":
        reading = asyncio.create_task(read_once_answered(stdin, controller))
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals on Windows
        # Ctrl-C quits like "quit": with the last words, not a stack.
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, controller.interrupt)
    try:
        return await controller.run(welcome), controller
    finally:
        if reading is not None:
            reading.cancel()


def _too_small(intent: object, stdout: TextIO) -> list[str | Command]:
    """What to say instead of starting a game whose board this terminal cannot show: the
    full screen said so, but the game had begun, its first move's countdown running (a
    newcomer's review). Empty when it fits, or when the board's size is not known yet (a
    room joined by its code: the full screen says so then)."""
    variant = getattr(intent, "variant", None)
    if not isinstance(variant, VariantSpec):
        return []
    try:
        columns, rows = os.get_terminal_size(stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return []
    least = smallest(variant.size)
    if columns >= least[0] and rows >= least[1]:
        return []
    program = invoked_as(normalize_url(DEFAULT_SERVER))  # the client alone, as typed
    again = f"{program} --plain {shlex.join(sys.argv[1:])}".rstrip()
    return [
        f"This terminal is {columns}x{rows}: a {variant.size}x{variant.size} board needs at "
        f"least {least[0]}x{least[1]}. Make the window larger and run the command again, or "
        "play in words, a line an event, with --plain:",
        Command(again),
    ]


def _who(args: argparse.Namespace, url: str, name: str) -> tuple[str, str | None, str]:
    """The name to play under, the login token to send, and what to tell the player: the
    account this machine is logged in as on ``url``, unless ``--name`` names someone else
    (two players of one machine: the second one's ``--name Bob`` took the first one's account
    and its seat, a newcomer's review), who then plays as a guest, told so."""
    login = account.saved_login(url)
    if login is None:
        return name, None, ""
    account_name = str(login["name"])
    if getattr(args, "name_given", False) and name.casefold() != account_name.casefold():
        return (
            name,
            None,
            (
                f"Playing as the guest {name}: this machine is logged in as {account_name} on this "
                f"server (leave out --name to play as {account_name})."
            ),
        )
    return account_name, str(login["token"]), ""


async def resume(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """No subcommand: offer to go back to the newest game kept in the state directory; one
    found gone is forgotten and the next is offered in the same run."""
    try:
        url = normalize_url(args.server)
    except ConnectError as error:
        say(stderr, f"quoridor: {error.message}")
        return 1
    book = SeatBook()
    # Two players of one machine share the seats file: with --name, that player's seats only.
    named = args.name if getattr(args, "name_given", False) else None
    looks = Looks(args, url)
    try:
        return await _resume(args, url, book, named, looks, stdin, stdout, stderr)
    finally:
        await looks.close()


async def _resume(
    args: argparse.Namespace,
    url: str,
    book: SeatBook,
    named: str | None,
    looks: Looks,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    also = ""
    while True:
        kept = [s for s in book.free(url) if named is None or s.name == named]
        if kept and (decided := await looks.decided(kept[0])) is not None:
            # Over or gone while its player was away: said, forgotten, and the next one.
            say(stdout, decided)
            book.forget(url, kept[0].room, kept[0].secret)
            also = "also "
            continue
        playing = [s for s in book.seats(url) if s.in_use() and named in (None, s.name)]
        if not kept and playing and not also:
            # Its client still runs: "No game in progress" was wrong (a newcomer's review).
            rooms = ", ".join(sorted({seat.room for seat in playing}))
            say(stdout, f"Your game in room {rooms} is open in another terminal: play on there.")
            return 0
        if not kept:
            whose = f"of {named}'s" if named else "of yours"
            command = own_command(url, args.name)
            say(
                stdout,
                # After a game found gone, the same advice (a newcomer review: it ended there).
                f"No {'other ' if also else ''}game {whose} is in progress on {url}. Start one:",
                Command(f"{command} create"),
                "or join one:",
                Command(f"{command} join CODE"),
                "Every command:",
                Command(f"{invoked_as(url)} --help"),
            )
            return 1 if also else 0  # what was asked for (the last game offered) was gone
        saved = kept[0]
        where = f"room {saved.room} (seat {saved.seat}, as {saved.name or 'you'})"
        if not _is_terminal(stdin):
            for seat in kept:
                if (decided := await looks.decided(seat)) is not None:
                    say(stdout, decided)
                    book.forget(url, seat.room, seat.secret)
                    continue
                command = own_command(url, named or seat.name or default_name())
                say(
                    stdout,
                    f"Your game in room {seat.room}:",
                    Command(f"{command} join {seat.room}"),
                )
            return 0
        say(
            stdout,
            # Not "in progress": it may have been decided since (a newcomer's review).
            f"You {also}have a game in {where} on {url}. Resume it? [Y/n]",
            end=" ",
        )
        answer = (await read_answer(stdin)).strip().lower()
        if answer not in ("", "y", "yes"):
            command = own_command(url, named or saved.name or default_name())
            say(stdout, "Later, then:", Command(f"{command} join {saved.room}"))
            return 0
        args.command, args.code = "join", saved.room
        args.seat, args.secret = saved.seat, saved.secret
        args.spectator_eval = False  # a reclaim keeps what the seat allowed
        args.name = named or saved.name or default_name()
        await looks.close()  # not held open for the whole game
        code, controller = await _play(args, stdin, stdout, stderr)
        if controller is None or not controller.seat_refused:
            return code
        also = "also "  # that one was gone (and is forgotten): the next, if any


class Looks:
    """Whether the games of the seats kept are still going, asked of the server: the seats
    file only knows a game was not over when its player left, and plain ``quoridor`` offered
    to resume games decided since (a newcomer's review). Each room is watched for a moment
    and left, as the browser's lobby does; one connection for them all, opened at the first."""

    def __init__(self, args: argparse.Namespace, url: str) -> None:
        self.args, self.url = args, url
        self.connection: Connection | None = None
        self.unreachable = False

    async def decided(self, seat: SavedSeat) -> str | None:
        """What to say instead of offering ``seat``: its room is gone, or its game over;
        None while it goes on (or the server cannot be asked: then it is offered as before)."""
        connection = await self._connected(seat)
        if connection is None:
            return None
        try:
            seen = await connection.look(seat.room)
        except ConnectError:
            return None
        if isinstance(seen, Error):
            if seen.code != ErrorCode.ROOM_NOT_FOUND:
                return None
            room = seat.room
            return (
                f"Your game in room {room} is gone: it ended, or was aborted, while you were away."
            )
        if seen.status != "finished":
            return None
        ended = result_text(seen, seat.seat)
        return f"Your game in room {seat.room} ended while you were away. {ended}"

    async def _connected(self, seat: SavedSeat) -> Connection | None:
        if self.connection is None and not self.unreachable:
            name, token, _ = _who(self.args, self.url, seat.name or default_name())
            connection = Connection(self.url, name, post=lambda event: None, token=token)
            try:
                async with asyncio.timeout(LOOK_WITHIN):
                    await connection.open()
            except (ConnectError, TimeoutError):
                self.unreachable = True  # offered as before; joining says what is wrong
                return None
            self.connection = connection
        return self.connection

    async def close(self) -> None:
        """Close the connection (a later look opens another)."""
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()


LOOK_WITHIN = 3.0
"""Seconds to reach the server before offering the seats kept without asking it."""


async def read_answer(stdin: TextIO) -> str:
    """One line typed at a question, read by a daemon thread: Ctrl-C ends the run at once
    (``asyncio.to_thread``'s worker would be waited for at exit, until Enter or a third
    Ctrl-C: a newcomer review found the client seemingly frozen at "Resume it?")."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[str] = loop.create_future()

    def settle(line: str) -> None:
        if not answered.done():
            answered.set_result(line)

    def read() -> None:
        try:
            line = stdin.readline()
        except (OSError, ValueError):
            line = ""
        with contextlib.suppress(RuntimeError):  # the loop is gone: we are exiting
            loop.call_soon_threadsafe(settle, line)

    threading.Thread(target=read, name="answer", daemon=True).start()
    return await answered


def own_command(url: str, name: str) -> str:
    """How this player runs the client again: ``invoked_as`` and, unless it is the default,
    ``--name`` (without it a comeback shows the login name in the title bar)."""
    command = invoked_as(url)
    return command if name == default_name() else f"{command} --name {shlex.quote(name)}"


def player_name(args: argparse.Namespace) -> str:
    return (args.name or default_name()).strip()[:NAME_LIMIT] or "player"


async def dispatch(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run the subcommand in ``args``; its exit status."""
    if args.command == "bot":
        args.name = (args.name or f"bot-{args.level}").strip()[:NAME_LIMIT] or "bot"
    else:
        # Two players of one machine tell their kept seats apart by --name: whether it was
        # given, even as the login name, is what says whose seats to take back.
        args.name_given = args.name is not None
        args.name = player_name(args)
    if args.command is None:
        return await resume(args, stdin, stdout, stderr)
    return await RUNNERS.get(args.command, play)(args, stdin, stdout, stderr)


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "replay" and (args.game is None) == (args.file is None):
        parser.error("replay takes a GAME number or --file PATH (one of them)")
    return args


def run(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    args = parse(argv)
    try:
        return asyncio.run(dispatch(args, stdin, stdout, stderr))
    except KeyboardInterrupt:
        stderr.write("quoridor: interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (| head): nothing more to say
        if stdout is sys.stdout:
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # never a traceback for the player
        if os.environ.get("QUORIDOR_DEBUG"):
            raise
        say(stderr, f"quoridor: unexpected error: {exc!r} (set QUORIDOR_DEBUG=1 for the details)")
        return 1


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
