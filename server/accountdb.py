"""Accounts, login tokens and ratings in SQLite: the database process's side.

Every function takes the open connection and runs in the database process
(``server.database``), each request in a transaction of its own, except
``record_games``, which runs inside the transaction that saves the finished
games: a rated game's result and its rating changes are committed together or
not at all.

Login tokens are kept only as their SHA-256 digests; passwords only as the
Argon2id hashes the server made (this module never sees a password).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import msgspec

from server import ratings
from server.records import AccountRecord, GameRecord, RatingRecord

COMPUTER_LEVELS = range(1, 6)
HISTORY_POINTS = 50
"""Rating history points a profile shows per pool (the newest)."""


# -- what the server asks for ------------------------------------------------------


class FindAccount(msgspec.Struct, tag="find_account"):
    key: str
    """The name's key (``server.names.name_key``)."""


class CreateAccount(msgspec.Struct, tag="create_account"):
    name: str
    key: str
    look: str
    """The name's look (``server.names.name_look``), unique too."""
    password: str
    """The Argon2id hash."""
    now: float


class SetPassword(msgspec.Struct, tag="set_password"):
    """Replace an account's password hash; with ``revoke``, every login token dies."""

    account: int
    password: str
    revoke: bool


class IssueToken(msgspec.Struct, tag="issue_token"):
    digest: bytes
    account: int
    now: float
    expires: float


class TokenAccount(msgspec.Struct, tag="token_account"):
    """The account a live login token opens (None for an unknown or expired one)."""

    digest: bytes
    now: float


class RevokeToken(msgspec.Struct, tag="revoke_token"):
    digest: bytes


class LoadAccounts(msgspec.Struct, tag="load_accounts"):
    ids: list[int]


class TopRatings(msgspec.Struct, tag="top_ratings"):
    pool: str
    limit: int
    min_games: int


class ProfileOf(msgspec.Struct, tag="profile_of"):
    key: str
    recent: int


class GamesOf(msgspec.Struct, tag="games_of"):
    account: int
    limit: int
    before: int | None
    """Only games with a smaller id (paging), or None for the newest."""


class GameById(msgspec.Struct, tag="game_by_id"):
    """A finished game no longer in the server's memory (a profile's older games)."""

    game: int


class GameToAnalyse(msgspec.Struct, tag="game_to_analyse"):
    """A finished game no longer in the server's memory, with its stored analysis if it
    has one (``analyse`` of a profile's older game)."""

    game: int


class StoredGame(msgspec.Struct):
    """``GameToAnalyse``'s answer."""

    record: GameRecord
    analysis: bytes | None
    """The ``analysis`` frame stored for it, as ``Batch.analyses`` wrote it."""


AccountQuery = (
    FindAccount
    | CreateAccount
    | SetPassword
    | IssueToken
    | TokenAccount
    | RevokeToken
    | LoadAccounts
    | TopRatings
    | ProfileOf
    | GamesOf
    | GameById
    | GameToAnalyse
)


# -- what it gets back -------------------------------------------------------------


class Credentials(msgspec.Struct, kw_only=True):
    id: int
    name: str
    password: str


class Leader(msgspec.Struct, kw_only=True):
    name: str
    computer: int | None
    rating: RatingRecord


class HistoryPoint(msgspec.Struct, kw_only=True):
    game: int
    mu: float
    at: float


class Profile(msgspec.Struct, kw_only=True):
    account: AccountRecord
    created: float
    history: dict[str, list[HistoryPoint]]
    totals: dict[str, int]
    """``win``, ``loss``, ``draw``: every finished game, rated or casual."""
    recent: list[GameRecord]


class SeatChange(msgspec.Struct, kw_only=True):
    """One seat's rating before and after a rated game."""

    seat: int
    account: int
    before: RatingRecord
    after: RatingRecord


class RatedGame(msgspec.Struct, kw_only=True):
    """A rated game as committed: where it was played, and every seat's change."""

    game: int
    room: str
    number: int
    changes: list[SeatChange]


RECENT_GAMES = 10
"""Games a profile lists."""


# -- the schema's own rows ---------------------------------------------------------


MIGRATION = """
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    key TEXT NOT NULL UNIQUE,
    look TEXT NOT NULL UNIQUE,
    password TEXT,
    computer INTEGER UNIQUE,
    created REAL NOT NULL
);
CREATE TABLE tokens (
    digest BLOB PRIMARY KEY,
    account INTEGER NOT NULL REFERENCES accounts (id),
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX tokens_by_account ON tokens (account);
CREATE TABLE ratings (
    account INTEGER NOT NULL REFERENCES accounts (id),
    pool TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    PRIMARY KEY (account, pool)
);
CREATE INDEX ratings_by_pool ON ratings (pool, mu DESC);
CREATE TABLE rating_history (
    id INTEGER PRIMARY KEY,
    account INTEGER NOT NULL REFERENCES accounts (id),
    pool TEXT NOT NULL,
    game INTEGER NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX rating_history_by_account ON rating_history (account, pool, id);
CREATE TABLE game_players (
    game INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    account INTEGER NOT NULL REFERENCES accounts (id),
    outcome TEXT NOT NULL,
    PRIMARY KEY (game, seat)
);
CREATE INDEX game_players_by_account ON game_players (account, game DESC);
ALTER TABLE games ADD COLUMN pool TEXT;
"""
"""Schema version 3: accounts, tokens, ratings. Games saved before keep their rows
untouched (they were casual; their records decode with the new fields' defaults)."""

RANKED = """
DROP INDEX ratings_by_pool;
CREATE INDEX ratings_by_pool ON ratings (pool, mu DESC, games);
"""
"""Schema version 9: the leaderboard's index holds each rating's games (``_top`` filters on
them), so its read never visits the rows of the provisional players it passes."""

TOTALS = """
CREATE TABLE player_totals (
    account INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    games INTEGER NOT NULL,
    PRIMARY KEY (account, outcome)
) WITHOUT ROWID;
CREATE TRIGGER game_players_counted AFTER INSERT ON game_players BEGIN
    INSERT INTO player_totals (account, outcome, games) VALUES (NEW.account, NEW.outcome, 1)
    ON CONFLICT (account, outcome) DO UPDATE SET games = games + 1;
END;
CREATE TRIGGER game_players_uncounted AFTER DELETE ON game_players BEGIN
    UPDATE player_totals SET games = games - 1
    WHERE account = OLD.account AND outcome = OLD.outcome;
END;
"""
"""Schema version 8 (filled in from ``game_players`` by the migration): each account's
games by outcome, which ``profile`` reads instead of counting ``game_players``, kept by
triggers through every way rows come and go (a game saved, the retention's deletions)."""


def computer_name(level: int) -> str:
    return f"Computer L{level}"


def computer_seat_name(level: int, nth: int) -> str:
    """The name of a room's ``nth`` computer seat (from 1): "Computer L3", then "Computer L3
    (2)"..., so that players tell them apart in the player list, the moves and "X resigned"
    of a four-player game. Each is still the level's one account (its ratings)."""
    return computer_name(level) if nth == 1 else f"{computer_name(level)} ({nth})"


def add_computers(db: sqlite3.Connection, now: float) -> None:
    """The computer's accounts, one a level (their keys cannot be a person's: see
    ``server.names``, which refuses any name with "computer" in it)."""
    db.executemany(
        "INSERT OR IGNORE INTO accounts (name, key, look, password, computer, created)"
        " VALUES (?, ?, ?, NULL, ?, ?)",
        [
            (computer_name(level), f"#computer{level}", f"#computer{level}", level, now)
            for level in COMPUTER_LEVELS
        ],
    )


# -- answering ---------------------------------------------------------------------


READS = (TopRatings, ProfileOf, GamesOf, GameById, GameToAnalyse)
"""The queries that only read (finished games, ratings, profiles): a reader's
(``server.database``, ``ReaderRequest``), whose long answers then keep no commit waiting."""


def answer(db: sqlite3.Connection, query: AccountQuery) -> object:
    """Run one query in a transaction of its own; its answer."""
    with db:
        # A read sees one snapshot, and takes no lock that a commit would wait for.
        db.execute("BEGIN" if isinstance(query, READS) else "BEGIN IMMEDIATE")
        return _HANDLERS[type(query)](db, query)


def _find(db: sqlite3.Connection, query: FindAccount) -> Credentials | None:
    row = db.execute(
        "SELECT id, name, password FROM accounts WHERE key = ? AND password IS NOT NULL",
        (query.key,),
    ).fetchone()
    return Credentials(id=row[0], name=row[1], password=row[2]) if row else None


def _create(db: sqlite3.Connection, query: CreateAccount) -> int | None:
    try:
        cursor = db.execute(
            "INSERT INTO accounts (name, key, look, password, created) VALUES (?, ?, ?, ?, ?)",
            (query.name, query.key, query.look, query.password, query.now),
        )
    except sqlite3.IntegrityError:
        return None  # the key or the look is taken
    return cursor.lastrowid


def _set_password(db: sqlite3.Connection, query: SetPassword) -> None:
    db.execute("UPDATE accounts SET password = ? WHERE id = ?", (query.password, query.account))
    if query.revoke:
        db.execute("DELETE FROM tokens WHERE account = ?", (query.account,))


def _issue(db: sqlite3.Connection, query: IssueToken) -> None:
    db.execute(
        "INSERT INTO tokens (digest, account, created, expires) VALUES (?, ?, ?, ?)",
        (query.digest, query.account, query.now, query.expires),
    )
    # Expired tokens of this account go now: the table holds only live ones (and
    # at most what one account can make under the login limits).
    db.execute("DELETE FROM tokens WHERE account = ? AND expires <= ?", (query.account, query.now))


def _token_account(db: sqlite3.Connection, query: TokenAccount) -> AccountRecord | None:
    row = db.execute(
        "SELECT account, expires FROM tokens WHERE digest = ?", (query.digest,)
    ).fetchone()
    if row is None:
        return None
    if row[1] <= query.now:
        db.execute("DELETE FROM tokens WHERE digest = ?", (query.digest,))
        return None
    accounts = _accounts(db, [row[0]])
    return accounts[0] if accounts else None


def _revoke(db: sqlite3.Connection, query: RevokeToken) -> bool:
    return db.execute("DELETE FROM tokens WHERE digest = ?", (query.digest,)).rowcount > 0


def _load(db: sqlite3.Connection, query: LoadAccounts) -> list[AccountRecord]:
    return _accounts(db, query.ids)


def _accounts(db: sqlite3.Connection, ids: list[int]) -> list[AccountRecord]:
    found: dict[int, AccountRecord] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for id_, name, computer in db.execute(
            f"SELECT id, name, computer FROM accounts WHERE id IN ({marks})", chunk
        ):
            found[id_] = AccountRecord(id=id_, name=name, computer=computer)
        for row in db.execute(
            "SELECT account, pool, mu, sigma, games, wins, losses, draws FROM ratings"
            f" WHERE account IN ({marks})",
            chunk,
        ):
            found[row[0]].ratings[row[1]] = _rating(row[1:])
    return [found[id_] for id_ in ids if id_ in found]


def _rating(row: tuple[object, ...]) -> RatingRecord:
    pool, mu, sigma, games, wins, losses, draws = row
    return RatingRecord(
        pool=str(pool),
        mu=float(mu),  # type: ignore[arg-type]
        sigma=float(sigma),  # type: ignore[arg-type]
        games=int(games),  # type: ignore[call-overload]
        wins=int(wins),  # type: ignore[call-overload]
        losses=int(losses),  # type: ignore[call-overload]
        draws=int(draws),  # type: ignore[call-overload]
    )


def _top(db: sqlite3.Connection, query: TopRatings) -> list[Leader]:
    rows = db.execute(
        "SELECT a.name, a.computer, r.pool, r.mu, r.sigma, r.games, r.wins, r.losses, r.draws"
        " FROM ratings r JOIN accounts a ON a.id = r.account"
        " WHERE r.pool = ? AND r.games >= ? ORDER BY r.mu DESC, a.id LIMIT ?",
        (query.pool, query.min_games, query.limit),
    )
    return [Leader(name=row[0], computer=row[1], rating=_rating(row[2:])) for row in rows]


def _profile(db: sqlite3.Connection, query: ProfileOf) -> Profile | None:
    row = db.execute("SELECT id, created FROM accounts WHERE key = ?", (query.key,)).fetchone()
    if row is None:
        return None
    account_id, created = row
    (account,) = _accounts(db, [account_id])
    history: dict[str, list[HistoryPoint]] = {}
    for pool in account.ratings:
        points = db.execute(
            "SELECT game, mu, at FROM rating_history WHERE account = ? AND pool = ?"
            " ORDER BY id DESC LIMIT ?",
            (account_id, pool, HISTORY_POINTS),
        ).fetchall()
        history[pool] = [HistoryPoint(game=g, mu=mu, at=at) for g, mu, at in reversed(points)]
    totals = dict.fromkeys(("win", "loss", "draw"), 0)
    for outcome, count in db.execute(
        "SELECT outcome, games FROM player_totals WHERE account = ?", (account_id,)
    ):
        totals[outcome] = count
    recent = _games_of(db, GamesOf(account=account_id, limit=query.recent, before=None))
    return Profile(account=account, created=created, history=history, totals=totals, recent=recent)


def _game_by_id(db: sqlite3.Connection, query: GameById) -> GameRecord | None:
    row = db.execute(
        "SELECT record FROM games WHERE id = ? AND quarantined = 0", (query.game,)
    ).fetchone()
    return None if row is None else msgspec.json.decode(row[0], type=GameRecord)


def _game_to_analyse(db: sqlite3.Connection, query: GameToAnalyse) -> StoredGame | None:
    record = _game_by_id(db, GameById(query.game))
    if record is None:
        return None
    row = db.execute("SELECT body FROM analyses WHERE game = ?", (query.game,)).fetchone()
    return StoredGame(record=record, analysis=None if row is None else bytes(row[0]))


def _games_of(db: sqlite3.Connection, query: GamesOf) -> list[GameRecord]:
    before = query.before if query.before is not None else 2**62
    rows = db.execute(
        "SELECT g.record FROM game_players p JOIN games g ON g.id = p.game"
        " WHERE p.account = ? AND p.game < ? AND g.quarantined = 0 ORDER BY p.game DESC LIMIT ?",
        (query.account, before, query.limit),
    )
    return [msgspec.json.decode(record, type=GameRecord) for (record,) in rows]


_HANDLERS: dict[type, Callable[[sqlite3.Connection, Any], object]] = {
    FindAccount: _find,
    CreateAccount: _create,
    SetPassword: _set_password,
    IssueToken: _issue,
    TokenAccount: _token_account,
    RevokeToken: _revoke,
    LoadAccounts: _load,
    TopRatings: _top,
    ProfileOf: _profile,
    GamesOf: _games_of,
    GameById: _game_by_id,
    GameToAnalyse: _game_to_analyse,
}


# -- finished games ------------------------------------------------------------------


def record_games(db: sqlite3.Connection, games: list[GameRecord], now: float) -> list[RatedGame]:
    """Inside the transaction saving ``games``: who played them, and the rated ones' rating
    changes (computed here, from the ratings as committed, so two games ending at once can
    never both start from the same old rating)."""
    rated: list[RatedGame] = []
    for game in games:
        if game.reason == "aborted" or not game.ranks:
            continue
        db.executemany(
            "INSERT INTO game_players (game, seat, account, outcome) VALUES (?, ?, ?, ?)",
            [
                (game.id, seat, account, ratings.outcome(game.ranks[seat], game.ranks))
                for seat, account in enumerate(game.accounts)
                if account is not None
            ],
        )
        if game.pool is not None and all(account is not None for account in game.accounts):
            rated.append(_rate(db, game, now))
    return rated


def _rate(db: sqlite3.Connection, game: GameRecord, now: float) -> RatedGame:
    pool = game.pool
    assert pool is not None
    ids = [account for account in game.accounts if account is not None]
    current = {account.id: account.ratings.get(pool) for account in _accounts(db, ids)}
    pairs = ratings.after_game(pool, [current.get(id_) for id_ in ids], game.ranks)
    changes = []
    for seat, (id_, (old, new)) in enumerate(zip(ids, pairs, strict=True)):
        mu, sigma = new.mu, new.sigma
        db.execute(
            "INSERT OR REPLACE INTO ratings"
            " (account, pool, mu, sigma, games, wins, losses, draws)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (id_, pool, mu, sigma, new.games, new.wins, new.losses, new.draws),
        )
        db.execute(
            "INSERT INTO rating_history (account, pool, game, mu, sigma, at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (id_, pool, game.id, mu, sigma, now),
        )
        changes.append(SeatChange(seat=seat, account=id_, before=old, after=new))
    db.execute("UPDATE games SET pool = ? WHERE id = ?", (pool, game.id))
    return RatedGame(game=game.id, room=game.room, number=game.number, changes=changes)
