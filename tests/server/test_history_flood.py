"""Junk games cannot push played games out of the history. Over real sockets."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from pathlib import Path

import pytest

from protocol.messages import (
    Abort,
    Create,
    ErrorCode,
    FetchGame,
    GameRecordReply,
    History,
    HistoryList,
    Join,
    Joined,
    Leave,
    Left,
    MoveRequest,
    Resign,
    State,
)
from server import historydesk
from server.app import GameServer
from server.config import Config
from server.history import GameHistory
from server.retention import DAY, SHORT_KEPT
from tests.http import get as http_get
from tests.wsclient import Client


async def until_over(client: Client) -> State:
    while (state := await client.state()).status != "finished":
        pass
    return state


async def one_game(a: Client, b: Client, moves: list[str], end: Abort | Resign) -> None:
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    for ply, move in enumerate(moves):
        mover = (a, b)[ply % 2]
        await mover.send(MoveRequest(move=move, ply=ply))
        while (await mover.state()).ply != ply + 1:
            pass
    await a.send(end)
    await until_over(a)
    await until_over(b)
    for client in (a, b):
        await client.send(Leave())
        while not isinstance(await client.recv(), Left):
            pass


async def test_a_flood_of_aborted_games_keeps_the_played_one() -> None:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as server:
        server.core.history = GameHistory(5)  # a small history, to flood it quickly
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
        await one_game(a, b, ["e2", "e8", "e3", "e7"], Resign())
        (played,) = server.core.history.games
        for _ in range(12):
            await one_game(a, b, [], Abort())
        await a.send(FetchGame(game=played.id))
        assert (await a.expect(GameRecordReply)).summary.game == played.id
        await a.send(History())
        assert [game.game for game in (await a.expect(HistoryList)).games] == [played.id]
        aborted = server.core.history.short[-1].id
        await a.send(FetchGame(game=aborted))  # kept for a while, fetchable, never listed
        assert (await a.expect(GameRecordReply)).summary.reason == "aborted"
        assert len(server.core.history.short) == 12 <= SHORT_KEPT
        await a.send(FetchGame(game=10_000))
        await a.error(ErrorCode.GAME_NOT_FOUND)
        await a.close()
        await b.close()


async def test_a_game_gone_from_memory_is_read_from_the_database(tmp_path: Path) -> None:
    """A profile lists a player's games however old: ``fetch_game`` opens them all."""
    config = Config(port=0, rate=1000, burst=1000, db=str(tmp_path / "games.db"))
    async with GameServer(config).running() as server:
        server.core.history = GameHistory(2)  # a small memory, so the first game leaves it
        server.core.persistent = True  # the new history's games are saved too
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
        await one_game(a, b, ["e2", "e8", "e3", "e7"], Resign())
        (first,) = server.core.history.games
        for _ in range(2):
            await one_game(a, b, ["e2", "e8", "d2", "d8"], Resign())
        assert first.id not in [game.id for game in server.core.history.games]
        await a.send(FetchGame(id=1, game=first.id))
        reply = await a.expect(GameRecordReply)
        assert (reply.id, reply.summary.game) == (1, first.id)
        assert reply.moves == ["e2", "e8", "e3", "e7"]
        assert reply.record == "e2 e8 e3 e7"
        await a.send(FetchGame(id=2, game=10_000))
        assert (await a.error(ErrorCode.GAME_NOT_FOUND)).id == 2


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
    assert "history: 1 finished games deleted by the retention rule" in caplog.text
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
