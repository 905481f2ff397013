"""One suite for every store (``server.storage.Storage``): SQLite in its process, PostgreSQL.

Each test runs against both, on the real thing (a SQLite file; a database on the
session's PostgreSQL, tests/services.py): what the server may rely on, whichever
``--db`` it was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from openskill.models import PlackettLuce

from protocol.messages import VariantSpec
from server.accountdb import (
    CreateAccount,
    Credentials,
    FindAccount,
    GameById,
    GamesOf,
    GameToAnalyse,
    IssueToken,
    Leader,
    LoadAccounts,
    Profile,
    ProfileOf,
    RatedGame,
    RevokeToken,
    SetPassword,
    StoredGame,
    TokenAccount,
    TopRatings,
)
from server.database import Batch, MoveDelta
from server.records import AccountRecord, GameRecord, RoomRecord, SeatRecord, SessionRecord
from server.retention import DAY, SHORT_KEPT, Retention
from server.storage import Storage, open_storage
from server.store import StoreError

VARIANT = VariantSpec(players=2, size=9, walls=10)
POOL = "9x9-untimed"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "contract.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Storage]:
    opened = open_storage(db_url, "normal")
    assert opened is not None
    await opened.open()
    yield opened
    await opened.close()


def room(code: str, actions: list[str], session: str = "s1") -> RoomRecord:
    return RoomRecord(
        code=code,
        variant=VARIANT,
        public=True,
        created=1.0,
        time_control=None,
        match=False,
        event=len(actions),
        number=1,
        match_game=0,
        started=True,
        actions=actions,
        movers=[ply % 2 for ply in range(len(actions))],
        result=None,
        draw_offers=[],
        rematch=[],
        seats=[SeatRecord(session=session, name="alice", digest="00"), None],
        clock=None,
    )


def session(id_: str, room_code: str | None, account: int | None = None) -> SessionRecord:
    return SessionRecord(
        id=id_, name=id_, token_digest="ab", room=room_code, seat=0, account=account
    )


def game(
    id_: int,
    accounts: list[int | None] | None = None,
    ranks: list[int] | None = None,
    pool: str | None = None,
    *,
    moves: tuple[str, ...] = ("e2", "e8"),
    reason: str = "goal",
    finished: float | None = None,
) -> GameRecord:
    return GameRecord(
        id=id_,
        room=f"r{id_}",
        number=1,
        variant=VARIANT,
        players=["a", "b"],
        winner=0,
        reason=reason,
        moves=list(moves),
        finished=float(id_) if finished is None else finished,
        pool=pool,
        accounts=accounts or [],
        ranks=ranks or [],
    )


def delta(code: str, actions: list[str], event: int) -> MoveDelta:
    return MoveDelta(
        code=code,
        status="playing",
        event=event,
        actions=actions,
        movers=[0] * len(actions),
        draw_offers=[],
        clock=None,
    )


async def reopened(store: Storage, db_url: str) -> Storage:
    await store.close()
    again = open_storage(db_url, "normal")
    assert again is not None
    await again.open()
    return again


async def test_opening_twice_migrates_once(db_url: str) -> None:
    first = open_storage(db_url, "normal")
    assert first is not None
    before, after = await first.open()
    assert before == 0
    assert after > 0
    await first.close()
    second = open_storage(db_url, "normal")
    assert second is not None
    assert await second.open() == (after, after)
    loaded = await second.load()
    assert (loaded.rooms, loaded.sessions, loaded.games) == ([], [], [])
    assert sorted(a.computer or 0 for a in loaded.accounts) == [1, 2, 3, 4, 5]
    await second.close()


async def test_rooms_sessions_and_games_come_back_after_a_reopen(
    store: Storage, db_url: str
) -> None:
    await store.write(
        Batch(
            rooms=[(room("aaaa", ["e2"]), "playing"), (room("bbbb", []), "waiting")],
            sessions=[session("s1", "aaaa"), session("s2", "bbbb")],
            games=[game(1), game(2)],
            analyses=[(2, b'{"moves":[]}')],
        )
    )
    await store.write(
        Batch(
            moved=[delta("aaaa", ["e8", "e3"], 3)],
            dropped_rooms=["bbbb"],
            dropped_sessions=["s2"],
        )
    )
    again = await reopened(store, db_url)
    loaded = await again.load()
    (only,) = loaded.rooms
    assert (only.code, only.actions, only.event) == ("aaaa", ["e2", "e8", "e3"], 3)
    assert [s.id for s in loaded.sessions] == ["s1"]
    assert [g.id for g in loaded.games] == [1, 2]  # oldest first
    assert loaded.games[1].moves == ["e2", "e8"]
    assert loaded.analyses == {2: b'{"moves":[]}'}
    await again.close()


async def test_submitted_batches_commit_in_order_each_before_its_done(
    store: Storage, db_url: str
) -> None:
    await store.write(Batch(rooms=[(room("cccc", []), "playing")]))
    order: list[int] = []
    finished = asyncio.Event()
    moves = [f"e{n}" for n in range(2, 9)]

    def done(index: int) -> object:
        def called(error: BaseException | None) -> None:
            assert error is None
            order.append(index)
            if len(order) == len(moves):
                finished.set()

        return called

    for index, move in enumerate(moves):
        store.submit(Batch(moved=[delta("cccc", [move], index + 1)]), done(index))  # type: ignore[arg-type]
    await asyncio.wait_for(finished.wait(), 20)
    assert order == list(range(len(moves)))
    again = await reopened(store, db_url)
    (loaded,) = (await again.load()).rooms
    assert loaded.actions == moves
    await again.close()


async def test_a_quarantined_room_is_kept_but_not_loaded(store: Storage, db_url: str) -> None:
    await store.write(Batch(rooms=[(room("dddd", []), "playing"), (room("eeee", []), "playing")]))
    await store.write(Batch(quarantined=["dddd"]))
    again = await reopened(store, db_url)
    assert [r.code for r in (await again.load()).rooms] == ["eeee"]
    await again.close()


async def test_accounts_tokens_and_a_rated_game_committed_with_its_ratings(
    store: Storage,
) -> None:
    create = CreateAccount(name="Alice", key="alice", look="a1ice", password="h1", now=1)
    alice = await store.ask(create, int)
    bob = await store.ask(
        CreateAccount(name="Bob", key="bob", look="bob", password="h2", now=1), int
    )
    taken = CreateAccount(name="ALICE", key="alice", look="a11ce", password="x", now=1)
    assert await store.ask(taken, int | None) is None  # type: ignore[arg-type]
    look_alike = CreateAccount(name="AIice", key="aiice", look="a1ice", password="x", now=1)
    assert await store.ask(look_alike, int | None) is None  # type: ignore[arg-type]
    found = await store.ask(FindAccount(key="alice"), Credentials)
    assert (found.id, found.name, found.password) == (alice, "Alice", "h1")

    rated: list[RatedGame] = []
    store.rated = rated.extend
    await store.write(Batch(games=[game(1, [alice, bob], [1, 2], POOL)]))
    await store.write(Batch(games=[game(2, [alice, bob], [2, 1], POOL)]))
    model = PlackettLuce()
    a, b = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])
    a2, b2 = model.rate([a, b], ranks=[2, 1])
    assert [c.after.mu for c in rated[0].changes] == [a[0].mu, b[0].mu]
    assert [c.after.mu for c in rated[1].changes] == [a2[0].mu, b2[0].mu]

    board = await store.ask(TopRatings(pool=POOL, limit=10, min_games=2), list[Leader])
    assert sorted(leader.rating.games for leader in board) == [2, 2]
    profile = await store.ask(ProfileOf(key="alice", recent=10), Profile)
    assert profile.totals == {"win": 1, "loss": 1, "draw": 0}
    assert [p.game for p in profile.history[POOL]] == [1, 2]
    assert [g.id for g in profile.recent] == [2, 1]
    page = await store.ask(GamesOf(account=alice, limit=10, before=2), list[GameRecord])
    assert [g.id for g in page] == [1]
    assert (await store.ask(GameById(game=2), GameRecord)).ranks == [2, 1]
    assert await store.ask(GameById(game=3), GameRecord | None) is None  # type: ignore[arg-type]
    # ``analyse`` of a game older than the memory's: its record, with its analysis if stored.
    plain = await store.ask(GameToAnalyse(game=1), StoredGame)
    assert (plain.record.id, plain.analysis) == (1, None)
    await store.write(Batch(analyses=[(2, b'{"type":"analysis"}')]))
    analysed = await store.ask(GameToAnalyse(game=2), StoredGame)
    assert (analysed.record.id, analysed.analysis) == (2, b'{"type":"analysis"}')
    missing = await store.ask(GameToAnalyse(game=3), StoredGame | None)  # type: ignore[arg-type]
    assert missing is None
    (loaded,) = await store.ask(LoadAccounts(ids=[bob]), list[AccountRecord])
    assert loaded.ratings[POOL].games == 2

    for digest, expires in ((b"a" * 32, 100.0), (b"b" * 32, 100.0), (b"c" * 32, 5.0)):
        await store.ask(IssueToken(digest=digest, account=alice, now=1.0, expires=expires), object)
    opened = await store.ask(TokenAccount(digest=b"a" * 32, now=2.0), AccountRecord)
    assert opened.name == "Alice"
    assert await store.ask(TokenAccount(digest=b"c" * 32, now=6.0), object) is None
    assert await store.ask(RevokeToken(digest=b"a" * 32), bool) is True
    assert await store.ask(TokenAccount(digest=b"a" * 32, now=2.0), object) is None
    await store.ask(SetPassword(account=alice, password="new", revoke=True), object)
    assert await store.ask(TokenAccount(digest=b"b" * 32, now=2.0), object) is None
    assert (await store.ask(FindAccount(key="alice"), Credentials)).password == "new"


async def test_a_failing_batch_writes_nothing_and_reports_the_error(store: Storage) -> None:
    await store.write(Batch(games=[game(7)]))
    with pytest.raises(StoreError):
        # The same game id twice: the whole batch fails, its room with it.
        await store.write(Batch(rooms=[(room("ffff", []), "playing")], games=[game(7)]))
    loaded = await store.load()
    assert loaded.rooms == []
    await store.write(Batch(rooms=[(room("gggg", []), "playing")]))  # and it carries on
    assert [r.code for r in (await store.load()).rooms] == ["gggg"]


async def test_a_closed_store_refuses_requests(db_url: str) -> None:
    store = open_storage(db_url, "normal")
    assert store is not None
    await store.open()
    await store.close()
    with pytest.raises(StoreError):
        await store.write(Batch(games=[game(1)]))


PLAYED = ("e2", "e8", "e3", "e7")
"""Two moves by each seat: a played game. Fewer (or an abort) makes a short one."""


async def kept_ids(store: Storage) -> list[int]:
    return sorted(g.id for g in (await store.load()).games)


async def test_pruning_lets_old_short_games_go_and_keeps_the_rest(db_url: str) -> None:
    """The retention rule (server.retention) on the real database: old short games go beyond
    the newest SHORT_KEPT, unless something points at them; played games stay (until
    history_days is set); a game a player's record or a rating needs stays, and a played
    game with an analysis; a short game goes with its analysis (anyone may ask for one)."""
    now = 30 * DAY
    old = now - 2 * DAY  # older than the short-game retention (1 day), younger than 3 days
    store = open_storage(db_url, "normal", retention=Retention(short_days=1, history_days=3))
    assert store is not None
    await store.open()
    alice = await store.ask(
        CreateAccount(name="Alice", key="alice", look="a1ice", password="h", now=1), int
    )
    ancient = now - 10 * DAY
    games = [
        game(1, moves=PLAYED, finished=old),  # played, younger than history_days
        game(2, moves=PLAYED, finished=ancient),  # played, older than history_days
        # A registered player's short game goes like anyone's; a played one stays.
        game(3, [alice, None], [1, 2], moves=("e2",), reason="resign", finished=ancient),
        game(7, [alice, None], [1, 2], moves=PLAYED, reason="resign", finished=ancient),
        game(4, moves=("e2",), finished=ancient),  # short, analysed below: goes all the same
        game(8, moves=PLAYED, finished=ancient),  # played, older than history_days, analysed
        game(5, moves=(), reason="aborted", finished=now - 3600),  # short but recent
        game(6, moves=PLAYED, reason="aborted", finished=ancient),  # aborted: short
    ]
    flood = [
        game(id_, moves=(), reason="aborted", finished=old)
        for id_ in range(10, 10 + SHORT_KEPT + 50)
    ]
    await store.write(Batch(games=games + flood, analyses=[(4, b"{}"), (8, b"{}")]))
    assert await store.prune(now) == 4 + 50  # games 2, 3, 4, 6 and the flood's oldest 50 short
    kept = await kept_ids(store)
    assert kept == [1, 5, 7, 8] + [g.id for g in flood[50:]]
    assert raw_sql(db_url, "SELECT game FROM analyses ORDER BY game") == [(8,)]
    profile = await store.ask(ProfileOf(key="alice", recent=10), Profile)
    assert profile.totals == {"win": 1, "loss": 0, "draw": 0}  # game 7: game 3 went with it
    assert await store.ask(GameById(game=2), GameRecord | None) is None  # type: ignore[arg-type]
    assert await store.prune(now) == 0  # nothing more is due
    await store.close()

    forever = open_storage(db_url, "normal")  # the defaults: played games kept for ever
    assert forever is not None
    await forever.open()
    await forever.write(Batch(games=[game(9000, moves=PLAYED, finished=1.0)]))
    assert await forever.prune(now + 1000 * DAY) == 0  # the rest are needed or the newest
    assert 9000 in await kept_ids(forever)
    await forever.close()


async def test_opening_prunes(db_url: str) -> None:
    """A server that starts prunes at once (and then about hourly as it writes)."""
    first = open_storage(db_url, "normal")
    assert first is not None
    await first.open()
    flood = [game(id_, moves=(), reason="aborted", finished=1.0) for id_ in range(1, 211)]
    await first.write(Batch(games=flood))  # finished in 1970: long due
    await first.close()
    again = open_storage(db_url, "normal")
    assert again is not None
    await again.open()
    for _ in range(100):  # PostgreSQL prunes after open returns, in the request order
        if len(await kept_ids(again)) == SHORT_KEPT:
            break
        await asyncio.sleep(0.05)
    assert await kept_ids(again) == list(range(11, 211))
    await again.close()


def raw_sql(db_url: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Run ``sql`` on the database behind the store's back (damage, inspection)."""
    if not db_url.startswith("postgresql"):
        with contextlib.closing(sqlite3.connect(db_url)) as db, db:
            return db.execute(sql.replace("%s", "?"), params).fetchall()
    with psycopg.connect(db_url, autocommit=True) as conn:
        cursor = conn.execute(sql.encode(), params)
        return cursor.fetchall() if cursor.description else []


async def test_unreadable_session_and_game_rows_are_set_aside_and_kept(
    store: Storage, db_url: str
) -> None:
    await store.write(
        Batch(sessions=[session("s1", None), session("s2", None)], games=[game(1), game(2)])
    )
    raw_sql(db_url, "UPDATE sessions SET record = %s WHERE id = %s", (b"\x00junk", "s2"))
    raw_sql(db_url, "UPDATE games SET record = %s WHERE id = %s", (b"\x00junk", 2))
    loaded = await store.load()
    assert sorted((bad.table, bad.key) for bad in loaded.unreadable) == [
        ("games", "2"),
        ("sessions", "s2"),
    ]
    assert loaded.last_game == 2  # never given to another game
    assert await store.ask(GameById(game=2), GameRecord | None) is None  # type: ignore[arg-type]
    # Writes of the same session neither overwrite nor delete the row set aside.
    await store.write(Batch(sessions=[session("s2", None)]))
    await store.write(Batch(dropped_sessions=["s2"]))
    # Nor does pruning: with SHORT_KEPT newer short games, old short game 1 goes, 2 stays.
    await store.write(Batch(games=[game(id_) for id_ in range(10, 10 + SHORT_KEPT)]))
    assert await store.prune(1e12) == 1
    again = await reopened(store, db_url)
    loaded = await again.load()
    assert loaded.unreadable == []  # set aside for good
    assert [s.id for s in loaded.sessions] == ["s1"]
    assert 2 not in [g.id for g in loaded.games]
    await again.close()
    for table, key in (("sessions", "s2"), ("games", 2)):
        row = raw_sql(db_url, f"SELECT quarantined, record FROM {table} WHERE id = %s", (key,))
        assert [(quarantined, bytes(record)) for quarantined, record in row] == [(1, b"\x00junk")]  # type: ignore[call-overload]
