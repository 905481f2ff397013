"""Accounts from the terminal: ``quoridor register``, ``login``, ``logout``, ``leaderboard``
and ``profile NAME``.

The login token the server gives is kept in the user's configuration folder
(``$XDG_CONFIG_HOME/quoridor/logins.json``, ``~/.config`` by default,
``%APPDATA%`` on Windows), one per server, in a file only its owner may read
(mode 0600). While it is there, ``quoridor`` says hello with it and plays as
the account (rated games by default); ``logout`` revokes it and forgets it.
Passwords are asked for without echo (or read from standard input when it is
not a terminal) and never stored.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from client.connection import ConnectError, Connection, normalize_url
from client.describe import plural
from client.printed import say
from protocol.messages import (
    PASSWORD_LENGTH,
    ChangePassword,
    Error,
    GameSummary,
    Leaderboard,
    LeaderboardList,
    LoggedIn,
    LoggedOut,
    Login,
    Logout,
    Profile,
    ProfileRequest,
    Register,
    Request,
    ServerMessage,
)

POOLS = ("9x9-bullet", "9x9-blitz", "9x9-rapid", "9x9-untimed", "small", "11x11", "4-player")


class Failure(Exception):
    """The command cannot go on; the message says why."""


# -- where the token lives -----------------------------------------------------------


def logins_path() -> Path:
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        base = Path(os.environ["APPDATA"])
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "quoridor" / "logins.json"


def _read_logins() -> dict[str, Any]:
    try:
        data = json.loads(logins_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_logins(logins: dict[str, Any]) -> None:
    """Write the file readable by its owner only, replacing it in one step."""
    path = logins_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(".tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump(logins, file, indent=1)
    os.replace(temporary, path)


def saved_login(server: str) -> dict[str, Any] | None:
    """The saved login for ``server`` (name, token, expires), unless it expired."""
    login = _read_logins().get(normalize_url(server))
    if not isinstance(login, dict) or not isinstance(login.get("token"), str):
        return None
    if float(login.get("expires", 0)) <= time.time():
        return None
    return login


def saved_token(server: str) -> str | None:
    login = saved_login(server)
    return str(login["token"]) if login else None


def _save(server: str, logged_in: LoggedIn) -> None:
    logins = _read_logins()
    logins[normalize_url(server)] = {
        "name": logged_in.name,
        "token": logged_in.token,
        "expires": logged_in.expires,
    }
    _write_logins(logins)


def _forget(server: str) -> None:
    logins = _read_logins()
    if logins.pop(normalize_url(server), None) is not None:
        _write_logins(logins)


# -- the commands ---------------------------------------------------------------------


def _password(stdin: TextIO, stderr: TextIO, prompt: str) -> str:
    if stdin.isatty():
        return getpass.getpass(prompt, stream=stderr)
    return stdin.readline().rstrip("\n")


async def _ask(args: argparse.Namespace, request: Request, token: str | None = None) -> Any:
    """Send one request (after a hello: with ``token``, as the account) and its reply."""
    try:
        connection = Connection(
            normalize_url(args.server), args.name, post=lambda event: None, token=token
        )
        await connection.open()
        try:
            reply: ServerMessage = await connection.ask(request)
        finally:
            await connection.close()
    except ConnectError as error:
        raise Failure(error.message) from None
    if isinstance(reply, Error):
        # The field's path is for programs ("- at `$.name`"); a person reads the words.
        raise Failure(reply.message.split(" - at `$")[0])
    return reply


async def register(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    return await _log_in(args, stdin, stdout, stderr, new=True)


async def login(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    return await _log_in(args, stdin, stdout, stderr, new=False)


async def _log_in(
    args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO, new: bool
) -> int:
    name = args.account or args.name
    try:
        password = _password(stdin, stderr, f"Password for {name}: ")
        if new:
            _check_length(password)
        if new and stdin.isatty() and _password(stdin, stderr, "Again: ") != password:
            raise Failure("the two passwords differ")
        request = (
            Register(name=name, password=password) if new else Login(name=name, password=password)
        )
        reply = await _log_in_with(args, request)
    except Failure as failure:
        say(stderr, f"quoridor: {failure}")
        return 1
    what = "Registered and logged in" if new else "Logged in"
    say(stdout, f"{what} as {reply.name}; your games will be rated by default.")
    return 0


async def password(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Change the password of the account logged in on this server: every other login of
    it ends, this one keeps the new token."""
    token = saved_token(args.server)
    if token is None:
        say(stderr, "quoridor: not logged in to this server: quoridor login NAME first")
        return 1
    try:
        current = _password(stdin, stderr, "Current password: ")
        new = _password(stdin, stderr, "New password: ")
        _check_length(new)
        if stdin.isatty() and _password(stdin, stderr, "Again: ") != new:
            raise Failure("the two new passwords differ")
        reply = await _log_in_with(args, ChangePassword(password=current, new_password=new), token)
    except Failure as failure:
        say(stderr, f"quoridor: {failure}")
        return 1
    say(stdout, f"Password changed for {reply.name}; your other logins have ended.")
    return 0


def _check_length(password: str) -> None:
    """Before the password is asked again: the server's refusal came after both, in its
    validator's words ("Expected `str` of length >= 8", a newcomer's review)."""
    shortest, longest = PASSWORD_LENGTH
    if not shortest <= len(password) <= longest:
        raise Failure(f"a password has {shortest} to {longest} characters")


async def _log_in_with(
    args: argparse.Namespace, request: Request, token: str | None = None
) -> LoggedIn:
    """Send a request ``logged_in`` answers (register, login, a new password) and keep the
    login token it brings."""
    reply = await _ask(args, request, token)
    if not isinstance(reply, LoggedIn):
        raise Failure(f"unexpected answer {type(reply).__name__}")
    _save(args.server, reply)
    return reply


async def logout(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    token = saved_token(args.server)
    if token is None:
        stdout.write("Not logged in to this server.\n")
        _forget(args.server)
        return 0
    try:
        reply = await _ask(args, Logout(token=token))
        if not isinstance(reply, LoggedOut):
            raise Failure(f"unexpected answer {type(reply).__name__}")
    except Failure as failure:
        say(stderr, f"quoridor: {failure}")
        return 1
    finally:
        _forget(args.server)
    stdout.write("Logged out.\n")
    return 0


async def leaderboard(
    args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> int:
    try:
        reply = await _ask(args, Leaderboard(pool=args.pool, limit=args.limit))
        if not isinstance(reply, LeaderboardList):
            raise Failure(f"unexpected answer {type(reply).__name__}")
    except Failure as failure:
        say(stderr, f"quoridor: {failure}")
        return 1
    stdout.write("\n".join(leaderboard_text(reply)) + "\n")
    return 0


async def profile(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        reply = await _ask(args, ProfileRequest(name=args.player))
        if not isinstance(reply, Profile):
            raise Failure(f"unexpected answer {type(reply).__name__}")
    except Failure as failure:
        say(stderr, f"quoridor: {failure}")
        return 1
    stdout.write("\n".join(profile_text(reply)) + "\n")
    return 0


# -- what they print ------------------------------------------------------------------


def leaderboard_text(board: LeaderboardList) -> list[str]:
    if not board.players:
        return [f"{board.pool}: no established ratings yet (10 rated games make one)."]
    lines = [f"{board.pool} leaderboard", f"{'#':>3}  {'name':<20} {'rating':>6}  {'W-L-D':>9}"]
    for entry in board.players:
        record = f"{entry.wins}-{entry.losses}-{entry.draws}"
        lines.append(f"{entry.rank:>3}  {entry.name:<20} {entry.rating:>6}  {record:>9}")
    return lines


def profile_text(profile: Profile) -> list[str]:
    since = time.strftime("%Y-%m-%d", time.gmtime(profile.created))
    lines = [
        f"{profile.name}" + (" (the computer)" if profile.bot else "") + f", since {since}",
        f"{plural(profile.played, 'game')}: {profile.won} won, {profile.lost} lost, "
        f"{profile.drawn} drawn",
    ]
    for rating in profile.ratings:
        mark = "?" if rating.provisional else ""
        # The ratings after its last games, labelled (a bare column of numbers puzzled).
        trend = " ".join(str(point.rating) for point in rating.history[-8:])
        lines.append(
            f"  {rating.pool:<12} {rating.rating}{mark:<2} {plural(rating.games, 'game')} "
            f"({rating.wins}-{rating.losses}-{rating.draws})"
            + (f"  lately: {trend}" if trend else "")
        )
    if profile.recent:
        lines.append("Recent games (replay one with 'quoridor replay NUMBER'):")
        lines += [f"  {_game_line(game, profile.name)}" for game in profile.recent]
    return lines


def _game_line(game: GameSummary, name: str) -> str:
    opponents = ", ".join(player for player in game.players if player != name)
    seat = next((s for s, p in enumerate(game.players) if p == name), None)
    outcome = "draw" if game.winner is None else "won" if game.winner == seat else "lost"
    kind = game.pool or "casual"
    return f"#{game.game:<6} {outcome:<4} vs {opponents:<20} {kind}"
