"""Accounts and ratings in the database: the migration from schema 2, rating in the commit."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
from openskill.models import PlackettLuce

from protocol.messages import VariantSpec
from server import accountdb
from server.accountdb import (
    CreateAccount,
    FindAccount,
    GamesOf,
    IssueToken,
    ProfileOf,
    RevokeToken,
    SetPassword,
    TokenAccount,
    TopRatings,
)
from server.database import SCHEMA_VERSION, Batch, Database, migrate
from server.records import AccountRecord, GameRecord

OLD_GAME = (
    '{"id":%d,"room":"r%d","number":1,"variant":{"players":2,"size":9,"walls":10},'
    '"players":["alice","bob"],"winner":0,"reason":"goal","moves":["e2","e8"],'
    '"finished":%d.5,"public":true}'
)
"""A finished game as schema 2's server wrote it (no account fields)."""
OLD_ROOM = (
    '{"code":"oldroom","variant":{"players":2,"size":9,"walls":10},"public":true,'
    '"created":1.0,"time_control":null,"match":false,"event":3,"number":1,"match_game":0,'
    '"started":true,"actions":["e2"],"movers":[0],"result":null,"draw_offers":[],'
    '"rematch":[],"seats":[{"session":"s1","name":"alice","digest":"00","points":0.0,'
    '"bot":null,"think":null},{"session":"s2","name":"bob","digest":"00","points":0.0,'
    '"bot":null,"think":null}],"clock":null}'
)
"""A room in play as schema 2's server wrote it."""


def test_migrating_a_schema_2_database_keeps_every_game_room_and_session(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    assert migrate(db, target=2) == (0, 2)
    for n in range(1, 301):
        db.execute(
            "INSERT INTO games (id, room, number, finished, record) VALUES (?, ?, 1, ?, ?)",
            (n, f"r{n}", n + 0.5, OLD_GAME % (n, n, n)),
        )
    db.execute("INSERT INTO rooms VALUES ('oldroom', 'playing', ?, 1.0)", (OLD_ROOM,))
    session = '{"id":"s1","name":"alice","token_digest":"00","room":"oldroom","seat":0}'
    db.execute("INSERT INTO sessions VALUES ('s1', 'oldroom', ?)", (session,))
    db.close()

    database = Database(path)
    assert database.versions == (2, SCHEMA_VERSION)
    loaded = database.load()
    assert [game.id for game in loaded.games] == list(range(1, 301))
    assert all(game.pool is None and game.accounts == [] for game in loaded.games)
    assert loaded.games[41] == msgspec.json.decode(OLD_GAME % (42, 42, 42), type=GameRecord)
    assert [r.code for r in loaded.rooms] == ["oldroom"]
    assert loaded.rooms[0].rated is False
    assert loaded.rooms[0].seats[0] is not None
    assert [s.id for s in loaded.sessions] == ["s1"]
    # The computer's five levels have accounts from the start.
    assert sorted(a.computer or 0 for a in loaded.accounts) == [1, 2, 3, 4, 5]
    # A leaderboard walks the pool's index alone past the provisional players.
    columns = database.db.execute("PRAGMA index_info(ratings_by_pool)").fetchall()
    assert [name for *_, name in columns] == ["pool", "mu", "games"]
    database.close()


def register(database: Database, name: str) -> int:
    created = accountdb.answer(
        database.db,
        CreateAccount(
            name=name, key=name.lower(), look=name.lower(), password="hash:" + name, now=1.0
        ),
    )
    assert isinstance(created, int)
    return created


def rated_game(game_id: int, accounts: list[int], ranks: list[int]) -> GameRecord:
    return GameRecord(
        id=game_id,
        room="room",
        number=game_id,
        variant=VariantSpec(players=2, size=9, walls=10),
        players=["a", "b"],
        winner=ranks.index(1) if ranks.count(1) == 1 else None,
        reason="goal",
        moves=["e2"],
        finished=float(game_id),
        pool="9x9-untimed",
        accounts=list[int | None](accounts),
        ranks=ranks,
    )


def test_a_rated_game_and_its_rating_changes_commit_together(tmp_path: Path) -> None:
    database = Database(tmp_path / "rated.db")
    alice, bob = register(database, "alice"), register(database, "bob")
    taken = CreateAccount(name="ALICE", key="alice", look="other", password="x", now=1)
    assert accountdb.answer(database.db, taken) is None

    reply = database.write(Batch(games=[rated_game(1, [alice, bob], [1, 2])]))
    model = PlackettLuce()
    a, b = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])
    (rated,) = reply.rated
    assert [c.after.mu for c in rated.changes] == [a[0].mu, b[0].mu]
    assert [c.after.sigma for c in rated.changes] == [a[0].sigma, b[0].sigma]
    assert [(c.after.wins, c.after.losses, c.after.games) for c in rated.changes] == [
        (1, 0, 1),
        (0, 1, 1),
    ]

    # The next game starts from the ratings as committed.
    reply = database.write(Batch(games=[rated_game(2, [alice, bob], [2, 1])]))
    a2, b2 = model.rate([a, b], ranks=[2, 1])
    assert [c.after.mu for c in reply.rated[0].changes] == [a2[0].mu, b2[0].mu]

    board = accountdb.answer(database.db, TopRatings(pool="9x9-untimed", limit=10, min_games=2))
    assert isinstance(board, list)
    assert [leader.name for leader in board] == sorted(
        ["alice", "bob"], key=lambda n: -(a2[0].mu if n == "alice" else b2[0].mu)
    )
    profile = accountdb.answer(database.db, ProfileOf(key="alice", recent=10))
    assert isinstance(profile, accountdb.Profile)
    assert profile.totals == {"win": 1, "loss": 1, "draw": 0}
    assert [p.game for p in profile.history["9x9-untimed"]] == [1, 2]
    assert [g.id for g in profile.recent] == [2, 1]
    page = accountdb.answer(database.db, GamesOf(account=alice, limit=10, before=2))
    assert isinstance(page, list)
    assert [g.id for g in page] == [1]
    database.close()


def test_tokens_expire_are_revoked_and_die_with_a_new_password(tmp_path: Path) -> None:
    database = Database(tmp_path / "tokens.db")
    db = database.db
    alice = register(database, "alice")
    for digest, expires in ((b"a" * 32, 100.0), (b"b" * 32, 100.0), (b"c" * 32, 5.0)):
        accountdb.answer(db, IssueToken(digest=digest, account=alice, now=1.0, expires=expires))
    opened = accountdb.answer(db, TokenAccount(digest=b"a" * 32, now=2.0))
    assert isinstance(opened, AccountRecord)
    assert opened.name == "alice"
    assert accountdb.answer(db, TokenAccount(digest=b"c" * 32, now=6.0)) is None  # expired
    assert accountdb.answer(db, RevokeToken(digest=b"a" * 32)) is True
    assert accountdb.answer(db, TokenAccount(digest=b"a" * 32, now=2.0)) is None
    accountdb.answer(db, SetPassword(account=alice, password="new", revoke=True))
    assert accountdb.answer(db, TokenAccount(digest=b"b" * 32, now=2.0)) is None
    found = accountdb.answer(db, FindAccount(key="alice"))
    assert isinstance(found, accountdb.Credentials)
    assert found.password == "new"
    database.close()
