"""Junk games cannot push played games out of the history. Over real sockets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

from protocol.messages import (
    VERSION,
    Abort,
    Analyse,
    AnalysisReply,
    Create,
    ErrorCode,
    FetchGame,
    GameRecordReply,
    Hello,
    History,
    HistoryList,
    Join,
    Joined,
    Leave,
    Left,
    LoggedIn,
    MoveRequest,
    Register,
    Rematch,
    Resign,
    State,
    VariantSpec,
    Welcome,
)
from server import historydesk
from server.app import GameServer
from server.config import Config
from server.history import GameHistory, summary
from server.records import GameRecord
from server.retention import DAY, SHORT_KEPT
from tests.http import get as http_get
from tests.wsclient import Client


async def until_over(client: Client) -> State:
    while (state := await client.state()).status != "finished":
        pass
    return state


async def one_game(
    a: Client, b: Client, moves: list[str], end: Abort | Resign, create: Create | None = None
) -> State:
    """Play ``moves`` in a new room, end the game with ``end`` and leave: the last state."""
    await a.send(create or Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    for ply, move in enumerate(moves):
        mover = (a, b)[ply % 2]
        await mover.send(MoveRequest(move=move, ply=ply))
        while (await mover.state()).ply != ply + 1:
            pass
    await a.send(end)
    over = await until_over(a)
    await until_over(b)
    for client in (a, b):
        await client.send(Leave())
        while not isinstance(await client.recv(), Left):
            pass
    return over


def test_a_summary_counts_the_moves_without_the_seats_that_left() -> None:
    """``history`` reads each listed game's count of moves: counted move by move, 100 games
    at the move limit made a reply 17 times the cost of one of short games."""
    four = GameRecord(
        room="r",
        number=1,
        variant=VariantSpec(players=4, size=9, walls=5),
        players=["a", "b", "c", "d"],
        winner=2,
        reason="last_standing",
        moves=["e2", "e8", "a5", "i5", "retire 1", "e3", "retire 3", "retire 0"],
        finished=0.0,
    )
    assert summary(four).plies == 5
    two = msgspec.structs.replace(
        four, variant=VariantSpec(players=2, size=9, walls=10), moves=["e2", "e8"] * 500
    )
    assert summary(two).plies == 1000


async def test_a_flood_of_aborted_games_keeps_the_played_one() -> None:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as server:
        server.core.history = GameHistory(5)  # a small history, to flood it quickly
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
        await one_game(a, b, ["e2", "e8", "e3", "e7"], Resign())
        (played,) = server.core.history.games
        for _ in range(12):
            last = await one_game(a, b, [], Abort())
        await a.send(FetchGame(game=played.id))
        assert (await a.expect(GameRecordReply)).summary.game == played.id
        await a.send(History())
        assert [game.game for game in (await a.expect(HistoryList)).games] == [played.id]
        aborted = server.core.history.short[-1].id
        assert last.result is not None
        assert last.result.game_id == aborted  # numbered too
        await a.send(FetchGame(game=aborted))  # kept for a while, fetchable, never listed
        assert (await a.expect(GameRecordReply)).summary.reason == "aborted"
        assert len(server.core.history.short) == 12 <= SHORT_KEPT
        await a.send(FetchGame(game=10_000))
        await a.error(ErrorCode.GAME_NOT_FOUND)
        await a.close()
        await b.close()


async def pushed_out_of_memory(server: GameServer) -> tuple[Client, Client, GameRecord]:
    """Two players, and their first game, which two more games pushed out of a memory of
    two played games (it is in the database only)."""
    server.core.history = GameHistory(2)
    server.core.persistent = True  # the new history's games are saved too
    url = f"ws://127.0.0.1:{server.port}"
    a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
    await one_game(a, b, ["e2", "e8", "e3", "e7"], Resign())
    (first,) = server.core.history.games
    for _ in range(2):
        await one_game(a, b, ["e2", "e8", "d2", "d8"], Resign())
    assert first.id not in [game.id for game in server.core.history.games]
    return a, b, first


async def test_a_game_gone_from_memory_is_read_from_the_database(tmp_path: Path) -> None:
    """A profile lists a player's games however old: ``fetch_game`` opens them all."""
    config = Config(port=0, rate=1000, burst=1000, db=str(tmp_path / "games.db"))
    async with GameServer(config).running() as server:
        a, _b, first = await pushed_out_of_memory(server)
        await a.send(FetchGame(id=1, game=first.id))
        reply = await a.expect(GameRecordReply)
        assert (reply.id, reply.summary.game) == (1, first.id)
        assert reply.moves == ["e2", "e8", "e3", "e7"]
        assert reply.record == "e2 e8 e3 e7"
        await a.send(FetchGame(id=2, game=10_000))
        assert (await a.error(ErrorCode.GAME_NOT_FOUND)).id == 2


async def test_a_game_gone_from_memory_is_analysed_from_the_database(tmp_path: Path) -> None:
    """A profile's older game could be replayed (``fetch_game`` reads the database) but not
    analysed: ``analyse`` knew only the games in memory, and the analyses stored for older
    games were never read again. Now the game and its stored analysis are read from the
    database: analysed once, then answered from what was stored."""
    config = Config(port=0, rate=1000, burst=1000, db=str(tmp_path / "games.db"))
    async with GameServer(config).running() as server:
        a, b, first = await pushed_out_of_memory(server)
        await a.send(Analyse(id="old", game=first.id))
        reply = await a.expect(AnalysisReply, within=60)
        assert (reply.id, reply.game, [m.move for m in reply.moves]) == (
            "old",
            first.id,
            ["e2", "e8", "e3", "e7"],
        )
        # Stored: asked again (here by another player), answered from the database at once.
        await b.send(Analyse(id="again", game=first.id))
        again = await b.expect(AnalysisReply, within=5)
        assert (again.id, again.moves) == ("again", reply.moves)
        assert server.core.counters["analysis:queued"] == 1
        await a.send(Analyse(id="none", game=10_000))
        missing = await a.error(ErrorCode.GAME_NOT_FOUND)
        assert (missing.id, missing.message) == ("none", "no finished game 10000 in the history")
        await a.close()
        await b.close()


async def test_real_games_survive_pruning_after_a_flood(tmp_path: Path) -> None:
    """Junk games fill the database no longer: pruning (server.retention) deletes the old
    short games beyond the newest SHORT_KEPT, and the played game stays, also after a
    restart. The pruning runs in the server's own store, a day and a half later by its
    clock; a pruned game answers game_not_found."""
    config = Config(port=0, rate=1000, burst=1000, db=str(tmp_path / "games.db"))
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
        await one_game(a, b, ["e2", "e8", "e3", "e7"], Resign())
        (played,) = server.core.history.games
        for _ in range(SHORT_KEPT + 5):
            await one_game(a, b, [], Abort())
        oldest_junk = played.id + 1
        await a.send(FetchGame(game=oldest_junk))  # gone from memory, still in the database
        assert (await a.expect(GameRecordReply)).summary.reason == "aborted"
        assert server.store is not None
        assert await server.store.prune(time.time() + 1.5 * DAY) == 5
        await a.send(FetchGame(game=oldest_junk))
        await a.error(ErrorCode.GAME_NOT_FOUND)
        await a.send(FetchGame(game=played.id))
        assert (await a.expect(GameRecordReply)).summary.game == played.id
        await a.close()
        await b.close()
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a = await Client.connect(url, "ann")
        await a.send(History())
        assert [game.game for game in (await a.expect(HistoryList)).games] == [played.id]
        await a.send(FetchGame(game=played.id))
        assert (await a.expect(GameRecordReply)).moves == ["e2", "e8", "e3", "e7"]
        assert len(server.core.history.short) == SHORT_KEPT
        await a.close()


async def analysed(client: Client, game: int) -> AnalysisReply:
    await client.send(Analyse(game=game))
    return await client.expect(AnalysisReply, within=60)


async def test_an_analysis_keeps_no_short_game(tmp_path: Path) -> None:
    """Anyone may ask for the analysis of any game the server holds, and an analysed game
    was never deleted: an outside review made short throwaway games permanent by asking
    for their analyses (bounded only by the analysis queue's pace). A short game now goes
    with its analysis, from the database and from the server's memory; a played game's
    analysis stays, and is still served after a restart."""
    path = tmp_path / "games.db"
    config = Config(port=0, rate=1000, burst=1000, db=str(path))
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
        await one_game(a, b, FOUR_MOVES, Resign())
        await one_game(a, b, ["e2"], Resign())  # one move: short
        (played,), (short,) = server.core.history.games, server.core.history.short
        stranger = await Client.connect(url, "eve")  # played neither
        for game in (played, short):
            assert (await analysed(stranger, game.id)).game == game.id
        for _ in range(SHORT_KEPT):  # the short game leaves the server's memory
            await one_game(a, b, [], Abort())
        await one_game(a, b, ["e2"], Resign())
        assert short.id not in [game.id for game in server.core.history.short]
        last = server.core.history.short[-1].id
        await analysed(stranger, last)  # the next analysis done forgets the others'
        assert set(server.core.desk.analyses.done) == {played.id, last}
        assert server.store is not None
        # A day and a half later: the short game and the oldest aborted one are due.
        assert await server.store.prune(time.time() + 1.5 * DAY) == 2
        await stranger.send(FetchGame(game=short.id))
        await stranger.error(ErrorCode.GAME_NOT_FOUND)
        for client in (a, b, stranger):
            await client.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT game FROM analyses ORDER BY game").fetchall()
    assert rows == [(played.id,), (last,)]  # the short game's analysis went with it
    async with GameServer(config).running() as server:
        reader = await Client.connect(f"ws://127.0.0.1:{server.port}", "reader")
        assert (await analysed(reader, played.id)).game == played.id
        assert server.core.counters["analysis:queued"] == 0  # from the store
        await reader.close()


async def test_the_log_and_the_metrics_tell_of_games_pruned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An operator who shortens --history-days is told what the server deleted (an outside
    operator review: games were gone from the history without a word). The database
    process prunes as it opens and then by itself: it tells with its next reply."""
    config = Config(port=0, db=str(tmp_path / "games.db"))
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
        await one_game(a, b, ["e2", "e8", "e3", "e7"], Resign())
        await asyncio.gather(a.close(), b.close())
    await asyncio.sleep(0.2)
    shorter = replace(config, history_days=1e-6)  # 86 ms
    with caplog.at_level(logging.INFO, "quoridor"):
        async with GameServer(shorter).running() as server:
            assert not server.core.history.games
            _, metrics = await http_get(server.port, "/metrics")
    assert "history: 1 finished game deleted by the retention rule" in caplog.text
    assert "quoridor_history_pruned_total 1.0" in metrics


async def test_a_flood_of_played_games_from_one_address_is_kept_as_short_games(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An outside review finished 450 four-move games in 20 s from one address (resign,
    rematch, again): the history's 1000 played games were all theirs within a minute, and
    the database kept every one for ever. Past its address's rate of games, such a game is
    kept as a short one; a game with someone from another address still counts as played."""
    monkeypatch.setattr(historydesk, "GAMES_BURST", 3, raising=False)  # 60 on a real server
    config = Config(port=0, rate=1000, burst=1000, trusted_proxies="127.0.0.1")
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a = await Client.connect(url, "ann", address="10.0.3.1")
        b = await Client.connect(url, "bob", address="10.0.3.1")
        c = await Client.connect(url, "cat", address="10.0.3.2")
        history = server.core.history
        for _ in range(4):
            await one_game(a, b, ["e2", "e8", "e3", "e7"], Resign())
        assert (len(history.games), len(history.short)) == (3, 1)
        assert history.short[-1].flood
        await one_game(a, c, ["e2", "e8", "e3", "e7"], Resign())  # cat's address is not over
        assert (len(history.games), len(history.short)) == (4, 1)
        await a.send(History())
        assert len((await a.expect(HistoryList)).games) == 5  # short games are listed too
        for client in (a, b, c):
            await client.close()


FAST_HASHING = {"argon2_time_cost": 1, "argon2_memory_kib": 64, "argon2_parallelism": 1}


def with_accounts(db: Path, **overrides: object) -> Config:
    """A server with a database, whose passwords take well under a millisecond."""
    settings: dict[str, object] = {"port": 0, "db": str(db), "rate": 1000, "burst": 1000}
    settings.update(FAST_HASHING)
    settings.update(overrides)
    return Config(**settings)  # type: ignore[arg-type]


CASUAL = Create(rated=False)
FOUR_MOVES = ["e2", "e8", "e3", "e7"]


async def registered(url: str, name: str) -> str:
    """A new account's login token."""
    client = await Client.connect(url, hello=False)
    await client.send(Register(name=name, password="correct horse battery"))
    token = (await client.expect(LoggedIn)).token
    await client.close()
    return token


async def logged_in(url: str, token: str, address: str | None = None) -> Client:
    client = await Client.connect(url, hello=False, address=address)
    await client.send(Hello(version=VERSION, name="ignored", token=token))
    client.welcome = await client.expect(Welcome)
    return client


async def until(client: Client, status: str) -> State:
    """The first ``state`` with this ``status`` (other messages, such as ``joined``, skipped)."""
    while True:
        message = await client.recv()
        if isinstance(message, State) and message.status == status:
            return message


async def test_a_registered_players_short_games_are_pruned_but_rated_ones_kept(
    tmp_path: Path,
) -> None:
    """An outside review wrote 55 games a second from one account and a guest at one address
    (resign at once, rematch): a registered player's games were never deleted, 4-5 GB a
    day. Its short games are pruned like anyone's, and who played them with them; a rated
    game is kept, however short."""
    path = tmp_path / "games.db"
    config = with_accounts(path)
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        ann = await logged_in(url, await registered(url, "ann"))
        cid = await logged_in(url, await registered(url, "cid"))
        await one_game(ann, cid, ["e2", "e8"], Resign())  # rated: every seat moved
        rated = server.core.history.short[-1]
        assert rated.pool == "9x9-untimed"
        bob = await Client.connect(url, "bob")  # a guest
        await ann.send(CASUAL)
        room = (await ann.expect(Joined)).room
        await bob.send(Join(room=room))
        for number in range(SHORT_KEPT + 5):
            await until(ann, "playing")
            await (bob if number % 2 else ann).send(Resign())
            for client in (ann, bob):
                await until(client, "finished")
            if number < SHORT_KEPT + 4:
                for client in (ann, bob):
                    await client.send(Rematch())
        oldest = rated.id + 1
        assert server.store is not None
        assert await server.store.prune(time.time() + 1.5 * DAY) == 5
        await ann.send(FetchGame(game=oldest))
        await ann.error(ErrorCode.GAME_NOT_FOUND)
        await ann.send(FetchGame(game=rated.id))
        assert (await ann.expect(GameRecordReply)).summary.pool == "9x9-untimed"
        for client in (ann, bob, cid):
            await client.close()
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT COUNT(*) FROM game_players WHERE game <= ?", (oldest + 4,))
        assert rows.fetchone() == (2,)  # the rated game's two players, and nobody's else


async def test_registered_players_games_count_against_their_address_and_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flood rule counts a registered player's games as a guest's, against their
    address (a logged-in session had none: two accounts at one address never made a flood),
    and against their account too: a fresh address for every game makes no difference."""
    monkeypatch.setattr(historydesk, "GAMES_BURST", 3, raising=False)  # 60 on a real server
    config = with_accounts(tmp_path / "games.db", trusted_proxies="127.0.0.1")
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        tokens = [await registered(url, "ann"), await registered(url, "cid")]
        history = server.core.history
        for _ in range(4):
            ann, cid = [await logged_in(url, token, "10.0.5.1") for token in tokens]
            await one_game(ann, cid, FOUR_MOVES, Resign(), CASUAL)
            await asyncio.gather(ann.close(), cid.close())
        assert (len(history.games), len(history.short)) == (3, 1)
        assert history.short[-1].flood
        ann, cid = [await logged_in(url, tokens[n], f"10.0.6.{n}") for n in range(2)]
        await one_game(ann, cid, FOUR_MOVES, Resign(), CASUAL)  # fresh addresses
        assert (len(history.games), len(history.short)) == (3, 2)
        assert history.short[-1].flood
        await asyncio.gather(ann.close(), cid.close())
