"""``quoridor analyse`` against a real server on 127.0.0.1 (the server analyses for real)."""

from __future__ import annotations

import asyncio
import functools
import re

from client.analysis import chart, move_line, sparkline, squeezed
from client.connection import invoked_as
from client.width import columns
from protocol.messages import Create, Join, Joined, MoveAnalysis, MoveRequest, VariantSpec
from tests.client.recorder import until
from tests.client.test_replay import _answered, command
from tests.wsclient import Client

BLUNDER_GAME = "c2 d5 c3 d4 c4 b4h e4 d4h c4 d3 b4 d2 d1h c2 b3 c1".split()
"""5x5, two walls each: Alice's b3 (move 15) lets Bob walk in with c1, where b1h won."""


async def finished_game(
    url: str, moves: list[str], names: tuple[str, str] = ("Alice", "Bob")
) -> None:
    """Alice and Bob (or ``names``) play ``moves`` on 5x5 with two walls each."""
    alice, bob = await Client.connect(url, names[0]), await Client.connect(url, names[1])
    await alice.send(Create(variant=VariantSpec(size=5, walls=2)))
    room = (await alice.expect(Joined)).room
    await bob.send(Join(room=room))
    await bob.expect(Joined)
    players = (alice, bob)
    for ply, move in enumerate(moves):
        await players[ply % 2].send(MoveRequest(id=ply, move=move, ply=ply))
        await until(functools.partial(_answered, players[ply % 2], ply))
    await alice.close()
    await bob.close()


async def test_analyse_shows_the_graph_the_marks_and_the_better_move(url: str) -> None:
    await finished_game(url, BLUNDER_GAME)
    code, out, err = await command(url, "analyse", "1")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Game 1: Alice (seat 0) against Bob (seat 1)"
    chart_rows = [line for line in lines if line.startswith(("100% |", "  0% |"))]
    assert len(chart_rows) == 2
    assert all(len(row) <= len("100% |") + len(BLUNDER_GAME) for row in chart_rows)
    blunder = next(line for line in lines if line.startswith("8. "))
    assert blunder.split()[:3] == ["8.", "Alice", "b3??"]
    assert "better b1h (wins in 5, 100%) - blunder" in blunder
    # Under it, how it goes wrong: Bob walks in.
    assert lines[lines.index(blunder) + 1] == f"{'':18}after b3, best play goes: c1 (Bob)"
    assert lines[-2].startswith("Alice: 8 moves, average loss")
    assert " 0 blunders" not in lines[-2]
    blunders = re.search(r"(\d+) (blunders?)$", lines[-2])
    assert blunders is not None
    assert (blunders.group(2) == "blunder") == (blunders.group(1) == "1")  # not "1 blunders"
    # Asked again, the stored analysis comes back: the very same report.
    code, again, _ = await command(url, "analyse", "1")
    assert (code, again) == (0, out)


async def test_analyse_replay_shows_the_evaluation_beside_each_position(url: str) -> None:
    await finished_game(url, BLUNDER_GAME)
    code, out, err = await command(url, "analyse", "1", "--replay", "--brief")
    assert (code, err) == (0, "")
    evals = [line for line in out.splitlines() if line.startswith("Eval: ")]
    assert len(evals) == len(BLUNDER_GAME) + 1
    assert evals[15] == "Eval: Alice 0%; b3?? blunder, better b1h; after it: c1 (Bob)"


async def test_analyse_refusals_are_one_sentence(url: str) -> None:
    code, _, err = await command(url, "analyse", "7")
    assert code == 1
    assert err == (
        "quoridor: no game 7 in the server's history. To list its games:\n"
        f"  {invoked_as(url)} history\n"
    )


def test_the_graph_draws_probabilities_as_heights() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == " ▄█"
    assert sparkline([0.0, 0.5, 1.0], ascii=True) == " -#"
    rows = chart([1.0, 0.0, 0.55], [None, "blunder", "inaccuracy"], ascii=True)
    assert rows[0] == "100% |#  "
    assert rows[2] == " 50% |# ."
    assert rows[4] == "  0% |# #"
    assert rows[-1] == "       !'"


async def test_hint_and_takeback_against_the_computer(url: str) -> None:
    from protocol.messages import AiSpec, Create
    from tests.client.recorder import start

    alice, view, task = await start(url, "Alice", Create(ai=AiSpec(level=1, seconds=0.05)))
    await view.wait_for("Room ")
    alice.type("e2")
    await view.wait_for("Your move (move 2)", within=10)
    alice.type("hint")
    hint = await view.wait_for("Hint: the computer would play ", within=20)
    assert re.fullmatch(r"Hint: the computer would play [a-i][1-9][hv]?\.", hint), hint
    alice.type("takeback")
    await view.wait_for("2 moves taken back.", within=10)
    await view.wait_for("Your move (move 1)", within=10)
    alice.type("score")
    assert "spectators may" in await view.wait_for("evaluation", within=10)
    alice.type("quit")
    await task


async def test_a_script_s_hint_after_its_move_waits_for_its_turn(url: str) -> None:
    """Piped in right behind a move, ``hint`` went while the computer thought and came back
    refused ("only on your turn"): a script's hint waits for the turn, as its moves do."""
    from protocol.messages import AiSpec, Create
    from tests.client.recorder import start

    alice, view, task = await start(url, "Alice", Create(ai=AiSpec(level=1, seconds=0.3)))
    await view.wait_for("Room ")
    alice.type("e2")
    alice.type("hint")
    await view.wait_for("Hint: the computer would play ", within=20)
    assert not view.texts("error")
    alice.type("quit")
    await task


def test_the_new_words_parse() -> None:
    from client import commands

    assert commands.parse("hint") == commands.Hint()
    assert commands.parse("takeback") == commands.Takeback()
    assert commands.parse("score") == commands.Eval(True)
    assert commands.parse("score off") == commands.Eval(False)
    assert isinstance(commands.parse("score maybe"), commands.Invalid)


def test_the_move_table_keeps_its_columns_whatever_the_names() -> None:
    """A newcomer review: names longer than 10 shifted the columns by their excess."""
    names = ["Computer L2", "\u738b\u5c0f\u660e"]  # 11 columns; three wide characters: 6
    moves = [
        MoveAnalysis(
            ply=ply,
            seat=(ply - 1) % 2,
            move=move,
            best=move,
            pv=[move],
            score_before=0.0,
            win_before=0.5,
            win_in=None,
            score_after=0.0,
            win_after=0.5,
            loss=0.0,
            mark=None,
        )
        for ply, move in enumerate(["e2", "e8", "e3", "e7"], start=1)
    ]
    lines = [move_line(move, names) for move in moves]
    assert lines[0].startswith("1.    Computer L2 e2 ")  # the computer's name whole
    assert [columns(line.split(" e")[0]) for line in lines] == [17, 17, 17, 17]
    longer = move_line(moves[0], ["Computer L2 (2)", "Bob"])
    assert longer.startswith("1.    Computer L… e2 ")
    assert move_line(moves[0], ["Computer L2 (2)", "Bob"], ascii=True).startswith(
        "1.    Computer L~ e2 "
    )


LONG_NAMES = ("Alexandrina", "Bartholomew")


async def test_analyse_fits_80_columns_broken_between_words(url: str) -> None:
    """A newcomer at 80x24: the table's heading and a marked move's line of play ran past 80
    columns ("... f2 (An" / "a)"), and the terminal broke them mid-word."""
    await finished_game(url, BLUNDER_GAME, names=LONG_NAMES)
    code, out, err = await command(url, "analyse", "1")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert max(columns(line) for line in lines) <= 80
    head = lines.index(next(line for line in lines if line.startswith("move ")))
    assert lines[head].startswith("move  player      played   score  win ")
    plays = [line for line in lines if line.startswith(" " * 18)]
    continued = [line for line in plays if not line.lstrip().startswith("after ")]
    assert continued  # a line of play went on over two rows...
    played = r"[a-e][1-5][hv]? \((Alexandrina|Bartholomew)\)"
    for line in plays:  # ...broken between its moves, each with its player's name whole
        assert re.fullmatch(rf" {{18}}(after \w+, best play goes: )?{played}(, {played})*,?", line)


def test_a_long_game_is_drawn_in_80_columns() -> None:
    """100 plies drawn one column each made rows of 106 columns: two plies a column now, the
    worst mark of the two under it."""
    marks: list[str | None] = [None] * 100
    marks[41] = "inaccuracy"
    marks[40] = "blunder"
    values = [ply / 100 for ply in range(100)]
    shown, worst, per = squeezed(values, marks, 74)
    assert (len(shown), per) == (50, 2)
    assert shown[0] == values[1]  # after the column's last move
    assert shown[-1] == values[-1]
    assert worst[20] == "blunder"
    assert worst.count(None) == 49
    rows = chart(shown, worst)
    assert max(columns(row) for row in rows) <= 80
    assert squeezed(values[:74], marks[:74], 74) == (values[:74], marks[:74], 1)


async def test_a_script_ending_with_hint_hears_the_hint_before_it_leaves(url: str) -> None:
    """``printf 'e2\\nhint\\n' | quoridor play --vs-ai 1``: the input ended on the player's
    turn and the client left before the hint came back (a newcomer's review)."""
    from tests.client.test_leaving import run_client

    argv = ["--server", url, "--name", "Ann", "play", "--vs-ai", "1"]
    code, text = await asyncio.wait_for(run_client(argv, "e2\nhint\n"), 30)
    assert code == 0
    assert "Hint: the computer would play " in text
    assert text.index("Hint: the computer") < text.index("End of input: leaving.")
