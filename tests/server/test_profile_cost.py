"""What ``profile`` and ``my_games`` cost the database, whose one process every acknowledged
move waits for.

An outside-limits review: ``profile`` counted the account's ``game_players`` rows, so its cost
grew with the games the account played. A computer level plays every rated game against it:
with 100,000 of them a profile took the database 85 ms, and one address's 20 connections,
each with its one account request in flight, held everyone's moves (waiting for their
commits behind the profiles) for a second and more. The totals are kept by the database now.
And every game these requests list is a whole record, decoded by the database and again by
the server: one address's 20 connections asking for a page of 100 long games each, in turn,
took 1.2 cores and held everyone's moves for 225 ms (p50). An address may read 100 games a
second from the database now, 200 at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import time
from pathlib import Path
from typing import TypeVar

import msgspec

from protocol.messages import (
    VERSION,
    Create,
    Error,
    FetchGame,
    GameList,
    GameRecordReply,
    Hello,
    Join,
    Joined,
    Leaderboard,
    LeaderboardList,
    MoveRequest,
    MyGames,
    Profile,
    ProfileRequest,
    ServerMessage,
    VariantSpec,
    Welcome,
)
from server import names
from server.accountdb import CreateAccount, IssueToken
from server.app import GameServer
from server.database import Batch, migrate
from server.records import GameRecord
from server.store import Store
from tests.server.test_accounts import config, url
from tests.wsclient import Client

GAMES = 300_000
"""Rated games of the computer's level 3: counting them took the database 150 ms or more."""
ASKERS = 15
R = TypeVar("R")


async def move_behind(
    server: GameServer, request: msgspec.Struct, reply: type[R]
) -> tuple[float, list[R]]:
    """A game's first move, sent once the first of ``ASKERS`` connections got its ``reply``
    to ``request``, the others' still in flight (in the database's queue, if each is read
    there): how long the move took (from its send to its state), and every asker's reply."""
    alice = await Client.connect(url(server), "alice")
    bob = await Client.connect(url(server), "bob")
    await alice.send(Create(id=1, private=True))
    room = (await alice.expect(Joined)).room
    await alice.state()
    await bob.send(Join(id=1, room=room))
    await bob.expect(Joined)
    askers = [await Client.connect(url(server), f"asker{n}") for n in range(ASKERS)]
    for asker in askers:
        await asker.send(request)
    replies = [await askers[0].expect(reply, within=60)]
    start = time.monotonic()
    await alice.send(MoveRequest(id=3, move="e2", ply=0))
    while (state := await alice.state()).id != 3:
        assert state.ply == 0
    took = time.monotonic() - start
    replies += [await asker.expect(reply, within=60) for asker in askers[1:]]
    for client in [alice, bob, *askers]:
        await client.close()
    return took, replies


async def test_profiles_of_an_account_with_many_games_do_not_hold_up_moves(
    tmp_path: Path,
) -> None:
    path = tmp_path / "profiles.db"
    async with GameServer(config(path)).running():
        pass  # the database made, with the computer's accounts
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        (level3,) = db.execute("SELECT id FROM accounts WHERE computer = 3").fetchone()
        outcomes = ("win", "loss", "draw")
        db.executemany(
            "INSERT INTO game_players (game, seat, account, outcome) VALUES (?, 1, ?, ?)",
            ((-n, level3, outcomes[n % 3]) for n in range(1, GAMES + 1)),
        )
    async with GameServer(config(path)).running() as server:
        request = ProfileRequest(id=2, name="Computer L3")
        took, profiles = await move_behind(server, request, Profile)
        for profile in profiles:
            assert (profile.played, profile.won, profile.lost, profile.drawn) == (
                GAMES,
                GAMES // 3,
                GAMES // 3,
                GAMES // 3,
            )
        # Counting the rows, the move waited for 14 profiles: 2 s of the database and more.
        assert took < 0.6, f"a move took {took:.2f} s behind {ASKERS - 1} profiles"


def test_a_database_from_before_gets_its_totals_counted_once() -> None:
    """Schema 8 counts the rows already there; from then on the triggers keep the totals,
    through the retention's deletions too."""
    with contextlib.closing(sqlite3.connect(":memory:", isolation_level=None)) as db:
        migrate(db, target=7)
        db.execute("INSERT INTO accounts VALUES (7, 'Ann', 'ann', 'ann', NULL, NULL, 0)")
        rows = [(1, 0, 7, "win"), (2, 0, 7, "win"), (3, 1, 7, "loss")]
        db.executemany("INSERT INTO game_players VALUES (?, ?, ?, ?)", rows)
        migrate(db)
        totals = "SELECT outcome, games FROM player_totals WHERE account = 7 ORDER BY outcome"
        assert db.execute(totals).fetchall() == [("loss", 1), ("win", 2)]
        db.execute("INSERT INTO game_players VALUES (4, 0, 7, 'draw')")
        db.execute("DELETE FROM game_players WHERE game = 1")
        assert db.execute(totals).fetchall() == [("draw", 1), ("loss", 1), ("win", 1)]


TOKEN = "a-login-token-of-the-player-of-long-games"
LONG = (["e2", "e8", "e1", "e9"] * 250)[:999]
"""The longest game there is (the 1000th ply draws it)."""


async def long_games_player(path: Path, games: int) -> None:
    """An account (logged in with ``TOKEN``) that played ``games`` games of 999 plies."""
    store = Store(path)
    await store.open()
    key, look = names.name_key("Long"), names.name_look("Long")
    account = CreateAccount(name="Long", key=key, look=look, password="x", now=1)
    me = await store.ask(account, int)
    digest = hashlib.sha256(TOKEN.encode()).digest()
    await store.ask(IssueToken(digest=digest, account=me, now=1.0, expires=4e9), object)
    variant = VariantSpec(players=2, size=9, walls=10)
    records = [
        GameRecord(
            id=n,
            room=f"r{n}",
            number=1,
            variant=variant,
            players=["Long", "guest"],
            winner=None,
            reason="ply_cap",
            moves=LONG,
            finished=1e9 + n,
            accounts=[me, None],
            ranks=[1, 1],
        )
        for n in range(1, games + 1)
    ]
    await store.write(Batch(games=records))
    await store.close()


async def test_an_address_reads_at_most_200_games_at_once_from_the_database(
    tmp_path: Path,
) -> None:
    path = tmp_path / "long.db"
    await long_games_player(path, 100)
    async with GameServer(config(path, trusted_proxies="127.0.0.1")).running() as server:

        async def logged_in(address: str) -> Client:
            client = await Client.connect(url(server), hello=False, address=address)
            await client.send(Hello(version=VERSION, name="long", token=TOKEN))
            await client.expect(Welcome)
            return client

        here = [await logged_in("198.51.100.7") for _ in range(4)]
        for client in here[:2]:  # two pages of 100: the address's 200 at once
            await client.send(MyGames(id=1, limit=100))
            assert len((await client.expect(GameList)).games) == 100
        await here[2].send(MyGames(id=2, limit=100))
        refused = await here[2].expect(Error)
        assert refused.code == "rate_limited"
        assert "reads too many games" in refused.message
        await here[3].send(ProfileRequest(id=3, name="Long"))  # its 10 recent games too
        assert (await here[3].expect(Error)).code == "rate_limited"
        elsewhere = await logged_in("203.0.113.9")  # another address has its own
        await elsewhere.send(MyGames(id=4, limit=100))
        assert len((await elsewhere.expect(GameList)).games) == 100
        await elsewhere.send(ProfileRequest(id=5, name="Long"))
        assert (await elsewhere.expect(Profile)).played == 100
        for client in [*here, elsewhere]:
            await client.close()


async def test_a_game_fetched_from_memory_counts_as_a_game_read(tmp_path: Path) -> None:
    """An outside-limits review: a ``fetch_game`` of a game the server still held in memory
    was not counted, and its record was built again at every request: one address's 20
    connections fetching a 999-move game 370 times a second took a quarter of a core. Each
    fetch counts one game now, from memory as from the database, and the record is encoded
    once (only the request's id differs)."""
    path = tmp_path / "memory.db"
    await long_games_player(path, 1)
    async with GameServer(config(path, trusted_proxies="127.0.0.1")).running() as server:
        assert server.core.desk.history.find(1) is not None  # in memory, not only on disk
        # 10 connections of one address, 30 fetches each at once (a connection's 30 replies,
        # 600 KB, are within what may wait for it): the address may read 200 at once, and
        # 100 more a second.
        here = [await Client.connect(url(server), address="198.51.100.7") for _ in range(10)]
        for n in range(300):
            await here[n % 10].send(FetchGame(id=n, game=1))

        async def replies(client: Client) -> list[ServerMessage]:
            return [await client.recv() for _ in range(30)]

        answers = [reply for got in await asyncio.gather(*map(replies, here)) for reply in got]
        records = [reply for reply in answers if isinstance(reply, GameRecordReply)]
        refused = [reply for reply in answers if isinstance(reply, Error)]
        assert len(records) >= 200, len(records)
        assert len(records) + len(refused) == 300
        assert {(error.code, "reads too many games" in error.message) for error in refused} == {
            ("rate_limited", True)
        }
        first = records[0]
        assert (first.moves, first.record, first.summary.plies) == (LONG, " ".join(LONG), 999)
        assert first.numbered.startswith("1. e2 e8 2. e1 e9 ")
        assert len({record.id for record in records}) == len(records)
        for record in records[1:]:  # the same record each time, with its own id
            assert (record.moves, record.numbered, record.summary) == (
                first.moves, first.numbered, first.summary
            )  # fmt: skip
        elsewhere = await Client.connect(url(server), address="203.0.113.9")
        await elsewhere.send(FetchGame(id="x", game=1))
        assert (await elsewhere.expect(GameRecordReply)).moves == LONG
        for client in [*here, elsewhere]:
            await client.close()


PLAYERS = 100_000
"""Rated players of one pool, one in 1000 of them established: reading its leaderboard took
the database 100 to 330 ms (it walks the pool's ratings down to the last established one);
schema 9's index holds each rating's games, and the walk reads no row (7 ms, warm)."""


async def test_leaderboards_asked_at_once_are_read_once_and_do_not_hold_up_moves(
    tmp_path: Path,
) -> None:
    path = tmp_path / "leaders.db"
    async with GameServer(config(path)).running():
        pass  # the database made, with the computer's accounts
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.executemany(
            "INSERT INTO accounts (id, name, key, look, password, computer, created)"
            " VALUES (?, ?, ?, ?, NULL, NULL, 1)",
            ((n, f"P{n}", f"p{n}", f"p{n}") for n in range(1000, 1000 + PLAYERS)),
        )
        db.executemany(
            "INSERT INTO ratings (account, pool, mu, sigma, games, wins, losses, draws)"
            " VALUES (?, '9x9-untimed', ?, 2.0, ?, 0, 0, 0)",
            (
                (n, 25.0 + n % 997 / 100, 20 if n % 1000 == 0 else 3)
                for n in range(1000, 1000 + PLAYERS)
            ),
        )
    async with GameServer(config(path)).running() as server:
        request = Leaderboard(id=2, pool="9x9-untimed", limit=100)
        took, boards = await move_behind(server, request, LeaderboardList)
        established = sorted(range(1000, 1000 + PLAYERS, 1000), key=lambda n: (-(n % 997), n))
        for board in boards:
            assert [leader.name for leader in board.players] == [f"P{n}" for n in established]
        # Each was read from the database: the move waited for 14 of them, 1.4 s and more.
        assert took < 0.4, f"a move took {took:.2f} s behind {ASKERS - 1} leaderboards"
