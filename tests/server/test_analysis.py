"""Computer analysis of finished games: bounds in the core, the whole way over websockets."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec

from engine import Game
from engine.ai.evaluation import review_move
from protocol.codec import encode
from protocol.messages import (
    Analyse,
    AnalysisReply,
    Create,
    Error,
    History,
    HistoryList,
    Join,
    MoveAnalysis,
    MoveRequest,
    Resign,
    State,
    VariantSpec,
)
from server.analysis import Analyses, AnalyseStep
from server.app import GameServer
from server.config import Config
from server.core import Limits
from tests.server.driver import Driver
from tests.wsclient import Client

SMALL = VariantSpec(size=5, walls=2)
BLUNDER_GAME = "c2 d5 c3 d4 c4 b4h e4 d4h c4 d3 b4 d2 d1h c2 b3 c1".split()
"""5x5, two walls each; seat 0's b3 (ply 15) lets seat 1 win with c1 where b1h won."""


def finish_games(driver: Driver, count: int, moves: list[str] = BLUNDER_GAME) -> list[int]:
    """Play ``count`` games between two fresh players; their history ids."""
    for _ in range(count):
        a, _ = driver.greet("alice")
        b, _ = driver.greet("bob")
        driver.send(a, Create(variant=SMALL))
        driver.send(b, Join(room=driver.last_state(a).room))
        for ply, move in enumerate(moves):
            driver.send((a, b)[ply % 2], MoveRequest(move=move, ply=ply))
        driver.send(a, Resign())  # ends the game if the moves did not
        driver.drop(a)
        driver.drop(b)
    conn, _ = driver.greet("reader")
    (listing,) = driver.send(conn, History(limit=100))
    assert isinstance(listing, HistoryList)
    return sorted(game.game for game in listing.games)


def test_analysis_is_refused_beyond_its_bounds() -> None:
    driver = Driver(limits=Limits(analyses=2, analyses_per_session=1))
    games = finish_games(driver, 4)
    first, _ = driver.greet("first")
    second, _ = driver.greet("second")
    third, _ = driver.greet("third")
    steps = driver.core.receive(first, b'{"type": "analyse", "id": 1, "game": %d}' % games[0])
    assert [type(step) for step in steps] == [AnalyseStep]
    # The same session asking for a second game: its share is used up.
    (refused,) = driver.send(first, Analyse(id=2, game=games[1]))
    assert isinstance(refused, Error)
    assert (refused.code, refused.id) == ("server_busy", 2)
    assert "already" in refused.message
    # Another session fills the queue; a third finds it full.
    assert driver.core.receive(second, b'{"type": "analyse", "game": %d}' % games[1]) == []
    (full,) = driver.send(third, Analyse(id=3, game=games[2]))
    assert isinstance(full, Error)
    assert full.code == "server_busy"
    assert "analysing 2 games" in full.message
    # Asking for a game already queued costs nothing: it waits for the same answer.
    assert driver.send(third, Analyse(id=4, game=games[0])) == []


def test_one_address_gets_a_share_of_the_analysis_queue() -> None:
    """A few connections of one address, one analysis each, filled the whole queue for
    minutes: everyone else got ``server_busy``."""
    driver = Driver(limits=Limits(analyses=8, analyses_per_session=1, analyses_per_address=2))
    games = finish_games(driver, 4)
    greedy = [driver.greet(f"greedy{n}", address="203.0.113.9")[0] for n in range(3)]
    for conn, game in zip(greedy[:2], games, strict=False):
        driver.send(conn, Analyse(game=game))
    (refused,) = driver.send(greedy[2], Analyse(id=3, game=games[2]))
    assert isinstance(refused, Error)
    assert (refused.code, refused.id) == ("server_busy", 3)
    assert refused.message == "your address already has 2 analyses waiting: wait for them first"
    other, _ = driver.greet("other", address="198.51.100.7")
    assert driver.send(other, Analyse(id=4, game=games[3])) == []  # queued


def test_analysis_requests_that_cannot_be_served() -> None:
    driver = Driver()
    conn, _ = driver.greet("reader")
    (missing,) = driver.send(conn, Analyse(id=1, game=999))
    assert isinstance(missing, Error)
    assert missing.code == "game_not_found"
    assert missing.message == "no finished game 999 in the history"
    a, _ = driver.greet("a")
    for seat in range(1, 4):
        driver.greet(f"p{seat}")
    driver.send(a, Create(variant=VariantSpec(players=4, size=5)))
    room = driver.last_state(a).room
    for conn_id in (2, 3, 4):
        driver.send(conn_id + 1, Join(room=room))
    driver.send(a, MoveRequest(move="c2", ply=0))
    for conn_id in (a, 3, 4, 5):
        driver.send(conn_id, Resign())
    games = finish_games(driver, 0)
    assert games
    (four,) = driver.send(conn, Analyse(id=2, game=games[-1]))
    assert isinstance(four, Error)
    assert four.code == "cannot_analyse"


def test_steps_take_turns_and_answer_everyone_waiting() -> None:
    """Two games queued: their steps alternate, one at a time, and each waiter gets its id."""
    driver = Driver()
    games = finish_games(driver, 2, BLUNDER_GAME[:6])  # short: 6 plies, then a resignation
    one, _ = driver.greet("one")
    two, _ = driver.greet("two")
    (first,) = driver.core.receive(one, b'{"type": "analyse", "id": "x", "game": %d}' % games[0])
    assert driver.core.receive(two, b'{"type": "analyse", "id": "y", "game": %d}' % games[1]) == []
    order = []
    step = first if isinstance(first, AnalyseStep) else None
    while step is not None:
        order.append(step.game)
        review = review_move(step.moves, step.ply, size=5, walls=2, depth=2)
        actions = driver.core.analysis_step(step.game, step.ply, review)
        driver.run(actions)
        following = [a for a in actions if isinstance(a, AnalyseStep)]
        assert len(following) <= 1  # never more than one step in the workers
        step = following[0] if following else None
    assert order[:4] == [games[0], games[1], games[0], games[1]]
    assert len(order) == 12
    mine = [m for m in driver.inbox[one] if isinstance(m, AnalysisReply)]
    theirs = [m for m in driver.inbox[two] if isinstance(m, AnalysisReply)]
    assert [(m.id, m.game) for m in mine] == [("x", games[0])]
    assert [(m.id, m.game) for m in theirs] == [("y", games[1])]
    assert len(mine[0].moves) == 6
    # Stored: asked again, it is answered at once, with the new id.
    (again,) = driver.send(one, Analyse(id=9, game=games[0]))
    assert isinstance(again, AnalysisReply)
    assert again.id == 9
    assert again.moves == mine[0].moves


def test_addresses_take_turns_not_games() -> None:
    """Four addresses with two long games each held the queue for minutes while a fifth got
    ``server_busy``; then, queued, a newcomer's game waited behind every game of theirs. Now
    the addresses take turns a step each: the newcomer's game gets every other step here."""
    driver = Driver(limits=Limits(analyses=8, analyses_per_session=1, analyses_per_address=2))
    games = finish_games(driver, 3, BLUNDER_GAME[:6])
    greedy = [driver.greet(f"greedy{n}", address="203.0.113.9")[0] for n in range(2)]
    (step,) = driver.core.receive(greedy[0], encode(Analyse(game=games[0])))
    assert isinstance(step, AnalyseStep)
    assert driver.core.receive(greedy[1], encode(Analyse(game=games[1]))) == []
    newcomer, _ = driver.greet("newcomer", address="198.51.100.7")
    assert driver.core.receive(newcomer, encode(Analyse(game=games[2]))) == []
    order: list[int] = []
    while len(order) < 7:
        order.append(step.game)
        review = review_move(step.moves, step.ply, size=5, walls=2, depth=2)
        actions = driver.core.analysis_step(step.game, step.ply, review)
        driver.run(actions)
        (step,) = [a for a in actions if isinstance(a, AnalyseStep)]
    greedy_games, theirs = games[:2], games[2]
    assert order[1::2] == [theirs] * 3
    assert order[0::2] == [greedy_games[0], greedy_games[1]] * 2  # their own games alternate


def assert_lines_are_legal(analysis: AnalysisReply, moves: list[str]) -> None:
    """Each move's ``pv_after`` replays through the engine from the position after the
    move, and is empty only where the move ended the game."""
    for move in analysis.moves:
        game = Game.from_moves(moves[: move.ply], 2, SMALL.size, SMALL.walls)
        assert bool(move.pv_after) != game.is_over, move
        for reply in move.pv_after:
            assert game.is_legal(reply), (move, reply)
            game.play(reply)


def test_an_analysis_stored_before_the_lines_is_served_with_empty_ones() -> None:
    """The schema requires every field this server writes: an analysis from the database
    written before ``pv_after`` existed gets it, empty, rather than going out without it."""
    analyses = Analyses(capacity=1, per_session=1, per_address=1)
    move = MoveAnalysis(
        ply=1, seat=0, move="c2", best="c2", pv=["c2", "c4"], score_before=0.5,
        win_before=0.54, win_in=None, score_after=0.5, win_after=0.54, loss=0.0, mark=None,
    )  # fmt: skip
    old = msgspec.json.decode(encode(AnalysisReply(game=3, depth=4, moves=[move], seats=[])))
    del old["moves"][0]["pv_after"]
    analyses.load({3: msgspec.json.encode(old)})
    body = analyses.cached(3, None)
    assert body is not None
    assert msgspec.json.decode(body)["moves"][0]["pv_after"] == []


async def next_state(client: Client) -> State:
    while not isinstance(message := await client.recv(), State):
        pass
    return message


async def play(url: str) -> int:
    """Play the planted-blunder game over websockets; its id in the history."""
    alice = await Client.connect(url, "alice")
    bob = await Client.connect(url, "bob")
    await alice.send(Create(variant=SMALL))
    state = await next_state(alice)
    await bob.send(Join(room=state.room))
    for ply, move in enumerate(BLUNDER_GAME):
        await (alice, bob)[ply % 2].send(MoveRequest(move=move, ply=ply))
        while state.ply <= ply:
            state = await next_state(alice)
    assert state.result is not None
    assert state.result.winner == 1
    await alice.send(History(id=1))
    while not isinstance(listing := await alice.recv(), HistoryList):
        pass
    await alice.close()
    await bob.close()
    return listing.games[0].game


async def test_analysis_over_websockets_is_stored_and_served_after_a_restart(
    tmp_path: Path,
) -> None:
    config = Config(port=0, db=str(tmp_path / "quoridor.db"), rate=1000, burst=1000)
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        game = await play(url)
        reader = await Client.connect(url, "reader")
        await reader.send(Analyse(id=7, game=game))
        analysis = await reader.expect(AnalysisReply, within=60)
        assert (analysis.id, analysis.game) == (7, game)
        assert [m.move for m in analysis.moves] == BLUNDER_GAME
        blunder = analysis.moves[14]
        assert (blunder.ply, blunder.seat, blunder.move) == (15, 0, "b3")
        assert blunder.mark == "blunder"
        assert blunder.best == "b1h"
        assert blunder.win_in is not None
        assert blunder.win_in > 0
        assert analysis.seats[0].blunders >= 1
        # How it loses: Bob walks in. Every move's line is legal from the position after it.
        assert blunder.pv_after == ["c1"]
        assert_lines_are_legal(analysis, BLUNDER_GAME)
        assert server.core.counters["analysis:done"] == 1
        await reader.close()
    async with GameServer(config).running() as server:
        reader = await Client.connect(f"ws://127.0.0.1:{server.port}", "reader")
        started = time.perf_counter()
        await reader.send(Analyse(id=8, game=game))
        again = await reader.expect(AnalysisReply)
        assert time.perf_counter() - started < 1.0
        assert again.id == 8
        assert again.moves == analysis.moves
        assert server.core.counters["analysis:queued"] == 0  # from the store, not computed
        await reader.close()
