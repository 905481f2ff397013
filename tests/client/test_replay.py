"""``quoridor replay`` and ``quoridor history`` against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import functools
import io
import sys
from pathlib import Path

import msgspec
import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from client import archive
from client.__main__ import dispatch, parse
from client.connection import invoked_as
from client.replay import RecordError, history_text, numbered, parse_record
from client.viewer import ReplayViewer
from client.width import columns
from protocol.messages import (
    Abort,
    Create,
    FetchGame,
    GameRecordReply,
    GameSummary,
    Join,
    Joined,
    MoveRequest,
    Resign,
    State,
    VariantSpec,
)
from tests.client.recorder import until
from tests.client.shown import unbroken
from tests.wsclient import Client

GAME = "c2 c4 d3h c3 c4 c2 c5".split()
"""The protocol transcript's game on 5x5 with 3 walls each: Alice (seat 0) wins on move 7."""
NUMBERED = "1. c2 c4 2. d3h c3 3. c4 c2 4. c5"
SMALL = VariantSpec(size=5, walls=3)


async def command(url: str, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    """``quoridor --server URL ARGV`` in this process, plain (no terminal)."""
    out, err = io.StringIO(), io.StringIO()
    code = await dispatch(parse(["--server", url, *argv]), io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


async def finished_game(url: str, moves: list[str], *, resign: bool = False) -> None:
    """Alice and Bob play ``moves`` on 5x5 (then Bob resigns, with ``resign``)."""
    alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
    await alice.send(Create(variant=SMALL))
    room = (await alice.expect(Joined)).room
    await bob.send(Join(room=room))
    await bob.expect(Joined)
    players = (alice, bob)
    for ply, move in enumerate(moves):
        await players[ply % 2].send(MoveRequest(id=ply, move=move, ply=ply))
        await until(functools.partial(_answered, players[ply % 2], ply))
    if resign:
        await bob.send(Resign(id="resign"))
        await until(lambda: _answered(bob, "resign"))
    await alice.close()
    await bob.close()


def _answered(client: Client, request_id: object) -> bool | None:
    return any(isinstance(m, State) and m.id == request_id for m in client.seen) or None


def showing(viewer: ReplayViewer, index: int) -> bool | None:
    return viewer.replay.index == index or None


def frame_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("Start:", "Move "))]


# -- record files, no server -----------------------------------------------------------


def test_records_are_read_plain_or_numbered() -> None:
    assert parse_record("c2 c4 d3h c3") == ["c2", "c4", "d3h", "c3"]
    assert parse_record("1. c2 c4 2. d3h c3\n3.c4 C2 # a comment\n4... c5\n") == GAME
    assert parse_record("# nothing but a comment\n\n") == []
    with pytest.raises(RecordError, match=r"line 2: 'z9' is not a move in standard notation"):
        parse_record("1. e2 e8\n2. z9")
    assert numbered(GAME, 2) == NUMBERED
    assert numbered(["e2", "a5", "e8", "i5", "e3"], 4) == "1. e2 a5 e8 i5 2. e3"


async def test_a_record_file_is_replayed_frame_by_frame(url: str, tmp_path: Path) -> None:
    record = tmp_path / "short.txt"
    record.write_text(f"# the transcript's game\n{NUMBERED}\n")
    code, out, err = await command(
        url, "replay", "--file", str(record), "--size", "5", "--walls", "3", "--ascii"
    )
    assert (code, err) == (0, "")
    assert frame_lines(out) == [
        "Start: seat 0 against seat 1; 2 players, 5x5, 3 walls each. Seat 0 to move.",
        "Move 1 of 4: Seat 0 moved to c2. Seat 1 to move.",
        "Move 1 of 4: Seat 1 moved to c4. Seat 0 to move.",
        "Move 2 of 4: Seat 0 placed a wall at d3h. Seat 1 to move.",
        "Move 2 of 4: Seat 1 moved to c3. Seat 0 to move.",
        "Move 3 of 4: Seat 0 moved to c4. Seat 1 to move.",
        "Move 3 of 4: Seat 1 moved to c2. Seat 0 to move.",
        "Move 4 of 4: Seat 0 moved to c5. Seat 0 reached row 5 and wins.",
    ]
    frames = out.split("\n\n")
    assert len(frames) == 9  # eight frames, each with its board, and the end
    assert frames[3] == "\n".join(
        [
            "Move 2 of 4: Seat 0 placed a wall at d3h. Seat 1 to move.",
            "    a   b   c   d   e",
            "  +---+---+---+---+---+",
            "5 |   |   |   |   |   | 5",
            "  +---+---+---+---+---+",
            "4 |   |   | B |   |   | 4",
            "  +---+---+---+*******+",
            "3 |   |   |   |   |   | 3",
            "  +---+---+---+---+---+",
            "2 |   |   | A |   |   | 2",
            "  +---+---+---+---+---+",
            "1 |   |   |   |   |   | 1",
            "  +---+---+---+---+---+",
            "    a   b   c   d   e",
        ]
    )
    assert "|[A]|" in frames[7]  # the pawn that just moved is bracketed


async def test_a_refused_move_ends_the_replay_there(url: str) -> None:
    code, out, err = await command(
        url, "replay", "--file", "-", "--brief", stdin="e2 e8 e3h e3v e4"
    )
    assert code == 1
    assert err == ""
    assert frame_lines(out)[-1] == (
        "Move 2 of 2: Seat 0 placed a wall at e3h. Seat 1 to move. "
        "The record stops here: move 4 (e3v): wall e3v crosses e3h."
    )
    assert len(frame_lines(out)) == 4
    assert out.count("\n") == 4  # --brief: one line a frame, no boards


async def test_a_file_that_is_not_a_record_is_told_plainly(url: str, tmp_path: Path) -> None:
    code, out, err = await command(url, "replay", "--file", str(tmp_path / "missing.txt"))
    assert (code, out) == (1, "")
    assert err == f"quoridor: cannot read {tmp_path / 'missing.txt'}: No such file or directory\n"
    code, out, err = await command(url, "replay", "--file", "-", stdin="e2 e8 hello")
    assert (code, out) == (1, "")
    assert err == "quoridor: standard input, line 1: 'hello' is not a move in standard notation\n"


async def test_a_record_too_long_for_one_request_is_refused_before_sending(url: str) -> None:
    code, _, err = await command(url, "replay", "--file", "-", stdin="e2 e8 " * 400)
    assert code == 1
    assert err == "quoridor: the record is too long to replay (800 moves)\n"


# -- games of the server's history ---------------------------------------------------------


async def test_history_replay_and_export_of_a_finished_game(url: str) -> None:
    code, out, _ = await command(url, "history")
    assert (code, out) == (0, "No finished games yet.\n")
    await finished_game(url, GAME)

    code, out, err = await command(url, "history")
    assert (code, err) == (0, "")
    header, row, *hints = out.splitlines()
    assert header.split() == ["GAME", "ENDED", "VARIANT", "PLAYERS", "MOVES", "RESULT"]
    assert row.split()[0] == "1"
    # 7 plies of two players: 4 moves, as the move list and the browser count them.
    assert " ".join(row.split()[3:]) == "5x5 3w Alice v Bob 4 Alice won"
    assert header.index("RESULT") == row.index("Alice won")  # the headings over their columns
    assert header.index("MOVES") + len("MOVES") == row.index("4  Alice") + 1
    assert max(len(line) for line in out.splitlines()) <= 80
    # Commands to type as this client was run, with the server's address.
    assert hints == [
        "Replay one:",
        f"  {invoked_as(url)} replay GAME",
        "With the computer's analysis (two players):",
        f"  {invoked_as(url)} analyse GAME --replay",
        "Its record:",
        f"  {invoked_as(url)} replay GAME --export",
    ]
    assert f"--server {url}" in hints[1]

    code, out, err = await command(url, "replay", "1", "--brief")
    assert (code, err) == (0, "")
    assert frame_lines(out) == [
        "Start: Alice against Bob; 2 players, 5x5, 3 walls each. Alice to move.",
        "Move 1 of 4: Alice moved to c2. Bob to move.",
        "Move 1 of 4: Bob moved to c4. Alice to move.",
        "Move 2 of 4: Alice placed a wall at d3h. Bob to move.",
        "Move 2 of 4: Bob moved to c3. Alice to move.",
        "Move 3 of 4: Alice moved to c4. Bob to move.",
        "Move 3 of 4: Bob moved to c2. Alice to move.",
        "Move 4 of 4: Alice moved to c5. Alice reached row 5 and wins.",
    ]

    # The export is the server's own record, and a file of it exports the same.
    code, exported, err = await command(url, "replay", "1", "--export")
    assert (code, err) == (0, "")
    reader = await Client.connect(url, "Reader")
    await reader.send(FetchGame(id="f", game=1))
    record = await reader.expect(GameRecordReply)
    await reader.close()
    # Written once (the README's export then --file replayed the moves twice and stopped at
    # the second copy's first move), under comments that say how to replay it.
    assert record.numbered == NUMBERED
    replaying = f"2 players, 5x5, 3 walls each: {invoked_as(url)} replay --file FILE"
    assert exported == (
        f"# Game 1: Alice v Bob, Alice won\n# {replaying} --size 5 --walls 3\n{NUMBERED}\n"
    )
    code, again, err = await command(
        url, "replay", "--file", "-", "--size", "5", "--walls", "3", "--export", stdin=exported
    )
    assert (code, err) == (0, "")
    assert again == f"# {replaying} --size 5 --walls 3\n{NUMBERED}\n"
    code, out, err = await command(
        url, "replay", "--file", "-", "--size", "5", "--walls", "3", "--brief", stdin=exported
    )
    assert (code, err) == (0, "")
    assert frame_lines(out)[-1] == "Move 4 of 4: Seat 0 moved to c5. Seat 0 reached row 5 and wins."


class Terminal(io.StringIO):
    """Standard output that says it is a terminal (its width: ``COLUMNS``)."""

    def isatty(self) -> bool:
        return True


async def test_the_history_hints_wrap_with_each_command_whole_at_80_columns(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run by its path from a virtual environment, each hint below the table was one row of
    words and command together, over 80 columns: the terminal broke it mid-command
    ("... replay" / " GAME"). Now the words wrap and each command has a row of its own."""
    await finished_game(url, GAME)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("PATH", "/nonexistent")  # not on the PATH: hints say the path typed
    monkeypatch.setattr(sys, "argv", ["/home/alice/quoridor/.venv/bin/quoridor", "history"])
    out = Terminal()
    assert await dispatch(parse(["--server", url, "history"]), io.StringIO(), out, out) == 0
    command = f"/home/alice/quoridor/.venv/bin/quoridor --server {url}"
    assert unbroken(out.getvalue().splitlines()[2:], 80) == [
        "Replay one:",
        f"  {command} replay GAME",
        "With the computer's analysis (two players):",
        f"  {command} analyse GAME --replay",
        "Its record:",
        f"  {command} replay GAME --export",
    ]


async def test_a_game_that_ended_otherwise_says_how(url: str) -> None:
    await finished_game(url, GAME[:3], resign=True)
    code, out, _ = await command(url, "replay", "1", "--brief")
    assert code == 0
    assert frame_lines(out)[-1] == (
        "Move 2 of 2: Alice placed a wall at d3h. Game over: Alice wins (by resignation)."
    )
    code, out, _ = await command(url, "history")
    assert out.splitlines()[1].split()[-4:] == ["2", "Alice", "won", "(resign)"]


async def test_a_game_not_in_the_history(url: str) -> None:
    """The hint is the command to type, on a row of its own, with --server: "quoridor
    history" listed the games of the default server (a newcomer on another port)."""
    code, out, err = await command(url, "replay", "41")
    assert (code, out) == (1, "")
    assert err == (
        "quoridor: no game 41 in the server's history. To list its games:\n"
        f"  {invoked_as(url)} history\n"
    )


def test_replay_takes_a_game_or_a_file() -> None:
    for argv in (["replay"], ["replay", "3", "--file", "x.txt"]):
        with pytest.raises(SystemExit):
            parse(argv)


# -- the full-screen viewer ------------------------------------------------------------------


async def test_the_full_screen_replay_moves_on_keys(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await finished_game(url, GAME)
    viewers: list[ReplayViewer] = []
    build = ReplayViewer.build

    def keep(viewer: ReplayViewer) -> object:
        viewers.append(viewer)
        return build(viewer)

    monkeypatch.setattr(ReplayViewer, "build", keep)
    monkeypatch.setattr(archive, "_is_terminal", lambda stream: True)
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        task = asyncio.create_task(command(url, "replay", "1"))
        viewer = await until(lambda: viewers[0] if viewers else None)
        app = await until(lambda: viewer.app)
        await until(lambda: app.render_counter > 0 or None)
        replay = viewer.replay
        steps = [
            ("n", 1),
            ("\x1b[C", 2),  # right
            (" ", 3),
            ("p", 2),
            ("\x1b[D", 1),  # left
            ("\x1b[F", 7),  # End
            ("n", 7),  # no further than the end
            ("\x1b[H", 0),  # Home
            ("G", 7),
            ("g", 0),
        ]
        for key, index in steps:
            keys.send_text(key)
            await until(functools.partial(showing, viewer, index))
        replay.go(3)
        title = "".join(fragment[1] for fragment in viewer.title())
        assert title == " Quoridor replay   Game 1: Alice vs Bob   move 2 of 4 "
        panel = "".join(fragment[1] for fragment in viewer.panel())
        assert "Alice placed a wall at d3h. Bob to move." in panel
        moves = "".join(fragment[1] for fragment in viewer.moves())
        rows = ["  1. c2   c4  ", "  2. d3h  c3  ", "  3. c4   c2  ", "  4. c5  "]
        assert moves.split("\n") == rows
        keys.send_text("q")
        code, out, err = await asyncio.wait_for(task, 5)
    assert (code, out, err) == (0, "", "")


async def test_history_rows_fit_80_columns_whatever_the_names(url: str) -> None:
    long_names = [
        GameSummary(
            game=123456,
            room=None,
            number=1,
            variant=VariantSpec(players=4, size=11, walls=7),
            players=["Alexandra-the-Great", "Bartholomew", "Cunegonde", "Dagobert"],
            winner=1,
            reason="last_standing",
            plies=345,
            finished=1_790_000_000.0,
        )
    ]
    lines = history_text(long_names, now=1_790_000_000.0)
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[1].split()[:4] == ["123456", *lines[1].split()[1:3], "11x11"]
    # How it ended is said whole: the players' column gives way ("(abando~" at 80 columns).
    abandoned = msgspec.structs.replace(
        long_names[0],
        game=7,
        variant=VariantSpec(),
        players=["Alice", "Computer L1"],
        winner=1,
        reason="abandon",
        plies=3,
    )
    lines = history_text([abandoned], now=1_790_000_000.0)
    assert lines[1].endswith("Computer L1 won (abandon)"), lines
    assert all(len(line) <= 80 for line in lines), lines
    # Players wider than their column go on below it, each name whole (the opponent's
    # level was cut: "Alexandra v Compute~").
    alexandra = msgspec.structs.replace(abandoned, players=["Alexandra", "Computer L2"], winner=0)
    assert [line[29:] for line in history_text([alexandra], now=1_790_000_000.0)[1:]] == [
        "Alexandra                2  Alexandra won (abandon)",
        "v Computer L2",
    ]
    # Four names in a column narrowed to 12 by the result: only a name wider than it is cut.
    lines = history_text(long_names, now=1_790_000_000.0)
    assert [line[31:].split("  ")[0] for line in lines[1:]] == [
        "Alexandra-t~",
        "v Bartholom~",
        "v Cunegonde",
        "v Dagobert",
    ], lines


def test_history_rows_measure_wide_names_in_columns() -> None:
    """A CJK character takes two columns: counted as one, "山田太郎山田 v Bob" was
    padded 6 columns too wide, pushing its row's moves and result out of line and past 80."""
    game = GameSummary(
        game=4,
        room=None,
        number=1,
        variant=VariantSpec(),
        players=["山田太郎山田", "Bob"],
        winner=0,
        reason="resign",
        plies=12,
        finished=1_790_000_000.0,
    )
    latin = msgspec.structs.replace(game, game=3, players=["Carol", "Dave"])
    _, wide, narrow = history_text([game, latin], now=1_790_000_000.0)
    assert columns(wide) <= 80, wide
    # The same columns as its neighbour's: "12" and the result in line.
    result = wide.index("山田太郎山田 won (resign)")
    assert columns(wide[:result]) == narrow.index("Carol won (resign)"), [wide, narrow]
    assert columns(wide[: wide.index(" 6 ")]) == narrow.index(" 6 "), [wide, narrow]


async def test_exporting_an_aborted_game_says_it_was_aborted(url: str) -> None:
    alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
    await alice.send(Create(variant=SMALL))
    room = (await alice.expect(Joined)).room
    await bob.send(Join(room=room))
    await bob.expect(Joined)
    await alice.send(MoveRequest(id=0, move="c2", ply=0))
    await until(functools.partial(_answered, alice, 0))
    await alice.send(Abort(id="abort"))
    await until(functools.partial(_answered, alice, "abort"))
    code, out, err = await command(url, "history")
    assert out == "No finished games yet.\n"  # an aborted game is no finished game...
    code, out, err = await command(url, "replay", "1", "--export")  # ...but it has its id
    assert (code, out) == (1, "")
    assert err == (
        "quoridor: game 1 was aborted (before every player had moved, or when every player "
        "went away): it has no result and no record to export\n"
    )
    await alice.close()
    await bob.close()
