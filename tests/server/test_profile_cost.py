"""What a ``profile`` costs the database, whose one process every acknowledged move waits for.

An outside-limits review: ``profile`` counted the account's ``game_players`` rows, so its cost
grew with the games the account played. A computer level plays every rated game against it:
with 100,000 of them a profile took the database 85 ms, and one address's 20 connections,
each with its one account request in flight, held everyone's moves (waiting for their
commits behind the profiles) for a second and more. The totals are kept by the database now.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

from protocol.messages import Create, Join, Joined, MoveRequest, Profile, ProfileRequest
from server.app import GameServer
from server.database import migrate
from tests.server.test_accounts import config, url
from tests.wsclient import Client

GAMES = 300_000
"""Rated games of the computer's level 3: counting them took the database 150 ms or more."""
ASKERS = 15


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
        alice = await Client.connect(url(server), "alice")
        bob = await Client.connect(url(server), "bob")
        await alice.send(Create(id=1, private=True))
        room = (await alice.expect(Joined)).room
        await alice.state()
        await bob.send(Join(id=1, room=room))
        await bob.expect(Joined)
        askers = [await Client.connect(url(server), f"asker{n}") for n in range(ASKERS)]
        for asker in askers:
            await asker.send(ProfileRequest(id=2, name="Computer L3"))
        profiles = [await askers[0].expect(Profile, within=60)]
        # The others are in the database's queue now, before the move's commit.
        start = time.monotonic()
        await alice.send(MoveRequest(id=3, move="e2", ply=0))
        while (state := await alice.state()).id != 3:
            assert state.ply == 0
        took = time.monotonic() - start
        profiles += [await asker.expect(Profile, within=60) for asker in askers[1:]]
        for profile in profiles:
            assert (profile.played, profile.won, profile.lost, profile.drawn) == (
                GAMES,
                GAMES // 3,
                GAMES // 3,
                GAMES // 3,
            )
        # Counting the rows, the move waited for 14 profiles: 2 s of the database and more.
        assert took < 0.6, f"a move took {took:.2f} s behind {ASKERS - 1} profiles"
        for client in [alice, bob, *askers]:
            await client.close()


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
