"""Typed lines become commands; completion offers words and legal pawn moves."""

from __future__ import annotations

import argparse

import pytest

from client import commands
from client.__main__ import build_parser, time_control
from client.commands import (
    Abort,
    Board,
    Chat,
    Claim,
    Draw,
    Help,
    Invalid,
    Move,
    Moves,
    Quit,
    Rematch,
    Resign,
)
from client.status import status_lines
from tests.client.states import make_state


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("e2", Move("e2")),
        ("  E3H ", Move("e3h")),
        ("e3v", Move("e3v")),
        ("k11", Move("k11")),
        ("move e2", Move("e2")),
        ("m d5", Move("d5")),
        ("wall e3h", Move("e3h")),
        ("wall e3 v", Move("e3v")),
        ("w a1h", Move("a1h")),
        ("chat good game!", Chat("good game!")),
        ("say hi", Chat("hi")),
        ("resign", Resign()),
        ("draw", Draw("offer")),
        ("draw accept", Draw("accept")),
        ("accept", Draw("accept")),
        ("decline", Draw("decline")),
        ("claim", Claim()),
        ("abort", Abort()),
        ("rematch", Rematch()),
        ("rematch decline", Rematch("decline")),
        ("help", Help()),
        ("?", Help()),
        ("quit", Quit()),
        ("exit", Quit()),
        ("board", Board()),
        ("moves", Moves()),
    ],
)
def test_lines_parse_to_commands(line: str, command: commands.Command) -> None:
    assert commands.parse(line) == command


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("wall e3", "add h or v"),
        ("wall", "wall where?"),
        ("wall d3x", "'d3x' is not a wall: a square then h or v"),
        ("move", "move where?"),
        ("move to e2", "move where?"),
        ("chat", "chat what?"),
        ("draw maybe", "draw accept"),
        ("z9", "not a move or a command"),
        ("dance", "not a move or a command"),
    ],
)
def test_lines_that_are_not_commands_say_why(line: str, message: str) -> None:
    command = commands.parse(line)
    assert isinstance(command, Invalid)
    assert message in command.message


def test_blank_lines_are_nothing() -> None:
    assert commands.parse("   ") is None


def test_notation_is_only_read_never_judged() -> None:
    # Off a 9x9 board or an impossible wall: the server says so, not the client.
    assert commands.parse("k11h") == Move("k11h")
    assert commands.parse("a9h") == Move("a9h")


def test_completion_offers_words_and_legal_pawn_moves() -> None:
    legal = ["e2", "d1", "f1"]
    assert commands.completions("", legal)[:3] == legal
    assert commands.completions("e", legal) == ["e2"]
    assert commands.completions("mo", legal) == ["move", "moves"]
    assert commands.completions("move ", legal) == legal
    assert commands.completions("move d", legal) == ["d1"]
    assert commands.completions("chat e", legal) == []
    assert commands.completions("re", []) == ["resign", "rematch"]


def test_help_lists_every_command() -> None:
    for word in commands.WORDS:
        assert word in commands.HELP


def test_the_help_says_what_each_mode_has() -> None:
    """A newcomer at 80x24: the plain help promised Tab completion and line recall, which
    only the full screen has, on a row of 83 columns the terminal broke mid-word; the full
    screen's help explained a column "goal" that the panel heads "to go"."""
    assert "Tab" not in commands.HELP
    assert "recall" not in commands.HELP
    assert max(len(row) for row in commands.HELP.splitlines()) <= 80
    state = make_state()
    heading = "".join(text for _, text in status_lines(state, 0, width=40)[2])
    assert heading.split()[-2:] == ["to", "go"]
    assert "to go: " in commands.SCREEN_HELP
    assert "goal:" not in commands.SCREEN_HELP


def test_help_places_walls_without_up_down_left_or_right() -> None:
    """Seat 1 sees the board turned half a turn: 'a wall above e3' was below it there. The
    examples are squares and walls of every board: e3h, with its column f, is not one of 5x5
    (an outside review read the help in such a game)."""
    for text in (commands.HELP, commands.SCREEN_HELP):
        wall = [line for line in text.splitlines() if "c3h" in line or "c3v" in line]
        assert any("between rows 3 and 4" in line for line in wall)
        assert any("between columns c and d" in line for line in wall)
        assert "e3" not in text
        assert "column e" not in text
        for word in ("above", "under", "below", "right of", "left of", "from the bottom"):
            assert word not in text, word


def test_time_controls_read_minutes_plus_seconds() -> None:
    assert (time_control("5+3").base, time_control("5+3").increment) == (300, 3)
    assert (time_control("90s+2").base, time_control("90s+2").increment) == (90, 2)
    assert time_control("10").increment == 0
    for bad in ("fast", "0+1", "5+x"):
        with pytest.raises(argparse.ArgumentTypeError):
            time_control(bad)


def test_common_options_go_before_or_after_the_subcommand() -> None:
    parser = build_parser()
    before = parser.parse_args(["--server", "ws://h:1", "--plain", "join", "abc"])
    after = parser.parse_args(["join", "abc", "--server", "ws://h:1", "--plain"])
    for args in (before, after):
        assert (args.server, args.plain, args.code, args.ascii) == ("ws://h:1", True, "abc", False)
    create = parser.parse_args(["create", "--players", "4", "--size", "11", "--private"])
    assert (create.players, create.size, create.private, create.clock) == (4, 11, True, None)
    with pytest.raises(SystemExit):
        parser.parse_args(["create", "--size", "8"])


def test_a_wall_count_out_of_range_is_refused_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    """The server's refusal of 99 walls read "Expected `int` <= 30 - at `$.variant.walls`"."""
    parser = build_parser()
    assert parser.parse_args(["match", "--walls", "0"]).walls == 0
    assert parser.parse_args(["create", "--walls", "30"]).walls == 30
    for bad in ("99", "-1", "many"):
        with pytest.raises(SystemExit):
            parser.parse_args(["create", "--walls", bad])
        assert f"'{bad}': give a number of walls from 0 to 30" in capsys.readouterr().err


def test_a_name_too_long_is_refused_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    """A name past 32 characters was cut without a word (an outside newcomer's review)."""
    parser = build_parser()
    assert parser.parse_args(["--name", "x" * 32, "list"]).name == "x" * 32
    for argv in (["--name", "y" * 33, "list"], ["bot", "--name", "z" * 40]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        assert "characters: give a name of at most 32" in capsys.readouterr().err


def test_every_help_fits_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """``quoridor leaderboard --help`` listed its pools on a usage row past 80 columns,
    broken at column 0 by the terminal (a newcomer's review)."""
    monkeypatch.setenv("COLUMNS", "80")
    parser = build_parser()
    subcommands = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    helps = [parser.format_help()] + [sub.format_help() for sub in subcommands.choices.values()]
    assert len(helps) > 10
    for text in helps:
        wide = [row for row in text.splitlines() if len(row) > 80]
        assert wide == [], wide
    # Each subcommand's page says what it does before its options.
    for name, sub in subcommands.choices.items():
        assert sub.description, name
        assert sub.format_help().index(sub.description[:30]) < sub.format_help().index("options:")
