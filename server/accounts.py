"""Accounts over the protocol: register, log in and out, change password, profiles.

The core hands these requests over as ``Ask`` actions (it holds no passwords
and reads no database). Answering them takes the database process and Argon2id,
which is slow on purpose: hashes are made and checked in a small thread pool
(argon2-cffi releases the interpreter lock while it works), so a login never
stalls a game. The addresses with passwords waiting take turns (``HashTurns``), at
most ``HASHES_PER_ADDRESS`` each, those that sent a wrong password lately after the others:
a flood of guesses from many addresses makes theirs wait, not everyone's.

Abuse: registrations and logins are limited per address and logins also per
account name (token buckets; the ``rate_limited`` error); an unknown name and a
wrong password get the same answer after the same work (a hash is checked
either way); tokens are 256 random bits, kept only as SHA-256 digests.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from protocol.codec import encode
from protocol.messages import (
    Analyse,
    ChangePassword,
    Error,
    ErrorCode,
    FetchGame,
    GameList,
    Hello,
    Leaderboard,
    LeaderboardList,
    LeaderEntry,
    LoggedIn,
    LoggedOut,
    Login,
    Logout,
    MyGames,
    PoolRating,
    Profile,
    ProfileRequest,
    RatingPoint,
    Register,
    RequestId,
)
from server import accountdb, names, ratings, text
from server.accountdb import (
    RECENT_GAMES,
    CreateAccount,
    Credentials,
    FindAccount,
    GameById,
    GamesOf,
    GameToAnalyse,
    IssueToken,
    ProfileOf,
    RevokeToken,
    SetPassword,
    StoredGame,
    TokenAccount,
    TopRatings,
)
from server.core import Action, Ask, Core, Send
from server.history import record_reply, summary
from server.ratelimit import KeyedBuckets
from server.records import AccountRecord, GameRecord
from server.storage import Storage
from server.store import StoreError

log = logging.getLogger("quoridor.accounts")
T = TypeVar("T")

ACCOUNT_NAMES_FOR = 60.0
"""Seconds a guest's name is known as an account's or not without asking the database again
(an account registered on another node of a cluster marks its name's guests after that)."""
ACCOUNT_NAMES_KEPT = 4096
"""Names kept known that way, the oldest forgotten first."""

HASH_THREADS = 2
"""Threads making and checking hashes (Argon2id's default takes 64 MiB each)."""
HASHES_PER_ADDRESS = 2
"""Password hashes one IP address (IPv6: its /64) may have waiting or being worked out at
once; more are refused at once (rate_limited). The whole server took 16 at most, first come
first served: an outside review kept it full from about 50 addresses sending bursts of
logins, each within its login limit, and honest logins were refused or waited seconds."""
SERVED_KEPT = 10_000
"""Addresses whose last turn ``HashTurns`` remembers (the longest ago are forgotten)."""
FAILED_KEPT = 900.0
"""Seconds after a wrong password from an address during which its hashes go after those of
addresses with none (``HashTurns``)."""
COMPUTER_NAME = re.compile(r"computer\s*l?([1-5])(?:\s*\(\d+\))?", re.IGNORECASE)
"""A computer level's profile name, also as a room's second or third computer seat shows it
("Computer L3 (2)", ``accountdb.computer_seat_name``): one account a level."""


LEADERS_KEPT = 100
"""Leaders read from the database for each pool's leaderboard: the most a ``leaderboard``
lists (its ``limit``'s bound); a smaller ``limit`` gets the first of them."""
LEADERBOARD_FRESH = 60.0
"""Seconds a pool's leaderboard, once read, is served from memory at most: a rated game
finished on this server makes it read again at the next request, one finished on another
node of a cluster shows within this many seconds. Each read holds every commit behind it
(330 ms for the pool below): one a minute a pool."""
LEADERBOARD_SHARE = 0.1
"""The share of the database's time leaderboards may take: after a read that took t
seconds, the next one waits until 9 t have passed (meanwhile the leaderboards read last are
served). Its query walks every rating of the pool above the last established one shown: a
pool of 100,000 players of whom 100 had an established rating took the database 330 ms a
read, and one address's 20 connections asking for it, in turn and within every documented
limit, held an innocent player's moves for 2.4 s (p50; 9.2 s p99; an outside-limits
review)."""
ACCOUNT_SPREAD = 10
"""An account's failed logins from all addresses together may be this many times one
address's (``AuthLimits.login_burst``, ``logins_per_minute``)."""


@dataclass(frozen=True)
class AuthLimits:
    """How often one address or one account name may try (averages; bursts allowed)."""

    logins_per_minute: float = 6.0
    login_burst: float = 10.0
    registrations_per_hour: float = 10.0
    registration_burst: float = 5.0
    token_days: float = 30.0
    """How long a login token works."""


class AccountService:
    """Answers the core's ``Ask`` actions."""

    def __init__(
        self,
        core: Core,
        store: Storage,
        hasher: PasswordHasher,
        limits: AuthLimits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.core, self.store, self.hasher, self.limits = core, store, hasher, limits
        self.clock = clock
        self.threads = ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="argon2")
        self.turns = HashTurns(HASH_THREADS, HASHES_PER_ADDRESS, clock)
        self._dummy: str | None = None
        """A hash of nothing anyone knows, checked for unknown names (same work, same time)."""
        per_minute = limits.logins_per_minute / 60
        self.logins_by_address = KeyedBuckets(per_minute, limits.login_burst)
        self.failures_from = KeyedBuckets(per_minute, limits.login_burst)
        """Failed attempts on one account from one address: a stranger guessing from one
        address is stopped there, and the owner, elsewhere, still logs in (an outside review
        locked an account out from another address with 11 wrong passwords)."""
        self.failures = KeyedBuckets(
            per_minute * ACCOUNT_SPREAD, limits.login_burst * ACCOUNT_SPREAD
        )
        """Failed attempts on one account from everywhere: guessing spread over many
        addresses stops here."""
        self.registrations = KeyedBuckets(
            limits.registrations_per_hour / 3600, limits.registration_burst
        )
        self._account_names: dict[str, tuple[float, bool]] = {}
        """Guests' names by key: when the database was asked, and whether an account has it."""
        self._leaders: dict[str, tuple[float, int, list[accountdb.Leader]]] = {}
        """Each pool's leaders as read last: when, after how many of this server's rated
        games in the pool (``Core.rated_in``), and who."""
        self._reading: dict[str, asyncio.Task[list[accountdb.Leader]]] = {}
        """The pools whose leaders are being read: every request for one waits for that."""
        self._next_read = 0.0
        """No leaderboard is read before then (``LEADERBOARD_SHARE``)."""

    def close(self) -> None:
        self.threads.shutdown(wait=False, cancel_futures=True)

    async def answer(self, ask: Ask, address: str) -> list[Action]:
        """The replies to one account request (the core's ``asked`` is called after)."""
        try:
            return await self._answer(ask, address)
        except _Refused as refused:
            return [self._error(ask, refused.code, refused.message)]
        except StoreError as error:
            log.error("account request failed: %s", error)
            return []
        finally:
            self.core.asked(ask.conn)

    async def _answer(self, ask: Ask, address: str) -> list[Action]:
        match ask.request:
            case Hello():
                return await self._hello(ask, ask.request)
            case Register():
                return [await self._register(ask, ask.request, address)]
            case Login():
                return [await self._login(ask, ask.request, address)]
            case Logout():
                return [await self._logout(ask, ask.request)]
            case ChangePassword():
                return [await self._change_password(ask, ask.request, address)]
            case Leaderboard():
                return [await self._leaderboard(ask, ask.request)]
            case ProfileRequest():
                return [await self._profile(ask, ask.request)]
            case MyGames():
                return [await self._my_games(ask, ask.request)]
            case FetchGame():
                return [await self._fetch_game(ask, ask.request)]
            case Analyse():
                return await self._analyse(ask, ask.request)
        raise AssertionError(f"unhandled account request {ask.request!r}")  # pragma: no cover

    # -- identity --------------------------------------------------------------------

    async def _hello(self, ask: Ask, hello: Hello) -> list[Action]:
        if hello.token is None:
            return self.core.guest(ask.conn, hello, await self._account_named(hello.name))
        digest = _digest(hello.token)
        query = TokenAccount(digest, time.time())
        account: AccountRecord | None = await self._ask(query, AccountRecord | None)
        if account is None:
            message = "unknown, expired or revoked login token: log in again"
            raise _Refused(ErrorCode.BAD_TOKEN, message)
        return self.core.authenticated(ask.conn, hello, account, digest)

    async def _account_named(self, name: str) -> bool:
        """Whether an account has this guest's name (or one that folds to the same), asked
        of the database once a minute at most for a name; False when it cannot answer (the
        guest is greeted all the same)."""
        key = names.name_key(text.clean(name))
        now = self.clock()
        known = self._account_names.get(key)
        if known is not None and now - known[0] < ACCOUNT_NAMES_FOR:
            return known[1]
        try:
            taken = await self._ask(FindAccount(key), Credentials | None) is not None
        except StoreError as error:
            log.warning("could not look a guest's name up: %s", error)
            return False
        self._remember_name(key, taken)
        return taken

    def _remember_name(self, key: str, taken: bool) -> None:
        names_known = self._account_names
        names_known.pop(key, None)
        names_known[key] = (self.clock(), taken)
        if len(names_known) > ACCOUNT_NAMES_KEPT:
            del names_known[next(iter(names_known))]  # the oldest

    async def _register(self, ask: Ask, request: Register, address: str) -> Send:
        try:
            name = names.check(request.name)
        except names.NameRefused as refused:
            raise _Refused(ErrorCode.NAME_UNAVAILABLE, f"{refused} - at `$.name`") from None
        if names.name_key(request.password) == names.name_key(name):
            raise _Refused(ErrorCode.INVALID_FIELD, "the password is the name - at `$.password`")
        # Only now: a name or password refused on sight costs nothing, and must not use up
        # the address's registrations (five typos locked a newcomer out for the hour).
        if not self.registrations.take(address, self.clock()):
            raise _Refused(ErrorCode.RATE_LIMITED, "too many new accounts from your address")
        password = await self._hash(request.password, address)
        create = CreateAccount(
            name=name,
            key=names.name_key(name),
            look=names.name_look(name),
            password=password,
            now=time.time(),
        )
        account: int | None = await self._ask(create, int | None)
        if account is None:
            message = f"{name!r} (or a name that looks like it) is taken - at `$.name`"
            raise _Refused(ErrorCode.NAME_UNAVAILABLE, message)
        self._remember_name(create.key, True)
        self.core.counters["registrations"] += 1
        log.info("account registered", extra={"conn": ask.conn})
        return await self._logged_in(ask, account, name)

    async def _login(self, ask: Ask, request: Login, address: str) -> Send:
        key = names.name_key(request.name)
        credentials = await self._check(ask, address, key, request.password)
        if self.hasher.check_needs_rehash(credentials.password):
            # The hash was made with weaker settings than today's: make it again.
            rehashed = await self._hash(request.password, address)
            rehash = SetPassword(credentials.id, rehashed, revoke=False)
            await self._ask(rehash, type(None))
        return await self._logged_in(ask, credentials.id, credentials.name)

    async def _change_password(self, ask: Ask, request: ChangePassword, address: str) -> Send:
        assert ask.account is not None
        key = names.name_key(ask.account.name)
        credentials = await self._check(ask, address, key, request.password)
        if names.name_key(request.new_password) == key:
            raise _Refused(
                ErrorCode.INVALID_FIELD, "the password is the name - at `$.new_password`"
            )
        password = await self._hash(request.new_password, address)
        await self._ask(SetPassword(credentials.id, password, revoke=True), type(None))
        log.info("password changed; every login token revoked", extra={"conn": ask.conn})
        return await self._logged_in(ask, credentials.id, credentials.name)

    async def _check(self, ask: Ask, address: str, key: str, password: str) -> Credentials:
        """The account's credentials when ``password`` opens it; else the one answer for an
        unknown name and a wrong password alike."""
        now = self.clock()
        pair = f"{key}\n{address}"
        if not (
            self.logins_by_address.take(address, now)
            and self.failures_from.take(pair, now)
            and self.failures.take(key, now)
        ):
            raise _Refused(ErrorCode.RATE_LIMITED, "too many login attempts; wait a minute")
        credentials: Credentials | None = await self._ask(FindAccount(key), Credentials | None)
        try:
            if credentials is None:
                stored = await self._dummy_hash(address)
            else:
                stored = credentials.password
            opens = await self._verify(stored, password, address)
        except _Refused:  # nothing was tried (the address's hashes): no failure
            self.failures_from.give_back(pair)
            self.failures.give_back(key)
            raise
        if not opens or credentials is None:
            self.turns.failed(address)
            self.core.counters["logins:failure"] += 1
            raise _Refused(ErrorCode.BAD_CREDENTIALS, "unknown name or wrong password")
        self.failures_from.give_back(pair)  # only failures count against the account
        self.failures.give_back(key)
        self.core.counters["logins:success"] += 1
        return credentials

    async def _logged_in(self, ask: Ask, account: int, name: str) -> Send:
        token = secrets.token_urlsafe(32)  # 256 bits
        now = time.time()
        expires = now + self.limits.token_days * 86_400
        await self._ask(IssueToken(_digest(token), account, now, expires), type(None))
        reply = LoggedIn(id=ask.request.id, name=name, token=token, expires=expires)
        return Send([ask.conn], encode(reply))

    async def _logout(self, ask: Ask, request: Logout) -> Send:
        digest = _digest(request.token) if request.token is not None else ask.login
        assert digest is not None
        await self._ask(RevokeToken(digest), bool)
        return Send([ask.conn], encode(LoggedOut(id=request.id)))

    # -- ratings and games -----------------------------------------------------------

    async def _leaderboard(self, ask: Ask, request: Leaderboard) -> Send:
        leaders = (await self._leaders_of(request.pool))[: request.limit]
        entries = [
            LeaderEntry(
                rank=rank,
                name=leader.name,
                rating=ratings.shown(leader.rating.mu),
                games=leader.rating.games,
                wins=leader.rating.wins,
                losses=leader.rating.losses,
                draws=leader.rating.draws,
                bot=leader.computer,
            )
            for rank, leader in enumerate(leaders, 1)
        ]
        reply = LeaderboardList(id=request.id, pool=request.pool, players=entries)
        return Send([ask.conn], encode(reply))

    async def _leaders_of(self, pool: str) -> list[accountdb.Leader]:
        """The pool's leaders: as read last, unless a rated game of the pool finished here
        since or they are ``LEADERBOARD_FRESH`` old (and the database may be asked again,
        ``LEADERBOARD_SHARE``). However many ask, the database reads a pool once at a time."""
        kept, rated, now = self._leaders.get(pool), self.core.rated_in[pool], self.clock()
        if kept is not None:
            read, rated_then, leaders = kept
            if now < self._next_read or (rated_then == rated and now - read < LEADERBOARD_FRESH):
                return leaders
        reading = self._reading.get(pool)
        if reading is None:
            reading = asyncio.ensure_future(self._read_leaders(pool, rated))
            self._reading[pool] = reading
            reading.add_done_callback(lambda done: self._read(pool, done))
        return await asyncio.shield(reading)

    async def _read_leaders(self, pool: str, rated: int) -> list[accountdb.Leader]:
        if (wait := self._next_read - self.clock()) > 0:
            await asyncio.sleep(wait)
        start = self.clock()
        query = TopRatings(pool, LEADERS_KEPT, self.core.limits.provisional_games)
        leaders: list[accountdb.Leader] = await self._ask(query, list[accountdb.Leader])
        end = self.clock()
        self._next_read = max(self._next_read, end + (end - start) * (1 / LEADERBOARD_SHARE - 1))
        self._leaders[pool] = (end, rated, leaders)
        return leaders

    def _read(self, pool: str, done: asyncio.Task[list[accountdb.Leader]]) -> None:
        if self._reading.get(pool) is done:
            del self._reading[pool]
        if not done.cancelled():
            done.exception()  # retrieved: every request waiting for it got it

    async def _profile(self, ask: Ask, request: ProfileRequest) -> Send:
        computer = COMPUTER_NAME.fullmatch(request.name.strip())
        key = f"#computer{computer.group(1)}" if computer else names.name_key(request.name)
        query = ProfileOf(key, RECENT_GAMES)
        found: accountdb.Profile | None = await self._ask(query, accountdb.Profile | None)
        if found is None:
            message = f"no registered player {request.name!r}"
            raise _Refused(ErrorCode.PLAYER_NOT_FOUND, message)
        account = found.account
        established = self.core.limits.provisional_games
        pools = [
            PoolRating(
                pool=pool,
                rating=ratings.shown(rating.mu),
                provisional=rating.games < established,
                games=rating.games,
                wins=rating.wins,
                losses=rating.losses,
                draws=rating.draws,
                history=[
                    RatingPoint(game=p.game, rating=ratings.shown(p.mu), at=p.at)
                    for p in found.history.get(pool, [])
                ],
            )
            for pool in ratings.POOLS
            if (rating := account.ratings.get(pool)) is not None
        ]
        totals = found.totals
        reply = Profile(
            id=request.id,
            name=account.name,
            bot=account.computer,
            created=found.created,
            ratings=pools,
            played=sum(totals.values()),
            won=totals["win"],
            lost=totals["loss"],
            drawn=totals["draw"],
            recent=[summary(game) for game in found.recent],
        )
        return Send([ask.conn], encode(reply))

    async def _my_games(self, ask: Ask, request: MyGames) -> Send:
        assert ask.account is not None
        query = GamesOf(ask.account.id, request.limit, request.before)
        games: list[GameRecord] = await self._ask(query, list[GameRecord])
        reply = GameList(id=request.id, games=[summary(game) for game in games])
        return Send([ask.conn], encode(reply))

    async def _fetch_game(self, ask: Ask, request: FetchGame) -> Send:
        query = GameById(request.game)
        game: GameRecord | None = await self._ask(query, GameRecord | None)
        if game is None:
            message = f"no finished game {request.game} in the history"
            raise _Refused(ErrorCode.GAME_NOT_FOUND, message)
        return Send([ask.conn], encode(record_reply(game, request.id)))

    async def _analyse(self, ask: Ask, request: Analyse) -> list[Action]:
        """``analyse`` of a game older than the history kept in memory: its record and its
        stored analysis from the database, then the core answers or queues it."""
        stored: StoredGame | None = await self._ask(GameToAnalyse(request.game), StoredGame | None)
        if stored is None:
            message = f"no finished game {request.game} in the history"
            raise _Refused(ErrorCode.GAME_NOT_FOUND, message)
        return self.core.analyse_stored(ask.conn, request, stored)

    # -- helpers ---------------------------------------------------------------------

    async def _ask(self, query: accountdb.AccountQuery, reply: Any) -> Any:
        return await self.store.ask(query, reply)

    async def _hash(self, password: str, address: str) -> str:
        return await self._in_thread(address, self.hasher.hash, password)

    async def _verify(self, stored: str, password: str, address: str) -> bool:
        def verify() -> bool:
            try:
                return self.hasher.verify(stored, password)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                return False

        return await self._in_thread(address, verify)

    async def _dummy_hash(self, address: str) -> str:
        if self._dummy is None:
            self._dummy = await self._hash(secrets.token_urlsafe(16), address)
        return self._dummy

    async def _in_thread(self, address: str, work: Callable[..., T], *args: object) -> T:
        """``work`` in a hashing thread, at ``address``'s turn (``HashTurns``)."""
        try:
            async with self.turns.turn(address):
                return await asyncio.get_running_loop().run_in_executor(self.threads, work, *args)
        except TooMany as many:
            message = (
                f"your address already has {many.held} passwords being checked; "
                "try again in a moment"
            )
            raise _Refused(ErrorCode.RATE_LIMITED, message) from None

    def _error(self, ask: Ask, code: ErrorCode, message: str) -> Send:
        self.core.counters[f"error:{code}"] += 1
        error = Error(id=_request_id(ask), code=code, message=message)
        return Send([ask.conn], encode(error))


class TooMany(Exception):
    """The address already has as many hashes waiting or running as it may."""

    def __init__(self, held: int) -> None:
        super().__init__(f"{held} hashes waiting or running")
        self.held = held


class HashTurns:
    """Who works out a password hash next, ``threads`` at a time.

    The IP addresses with hashes waiting take turns, a hash each: the one served least
    recently goes next (one never served, or not for ``SERVED_KEPT`` addresses, first), so
    a newcomer waits for the hashes running and at most one of each address that waits,
    not for everyone's bursts. Addresses that sent a wrong password in the last
    ``FAILED_KEPT`` seconds (``failed``) go after all the others: an outside review's 100
    addresses guessing passwords made an honest player's every login after the first wait
    for a hash of each of them (8 s), as the player had been served since. An address has
    at most ``per_address`` hashes waiting or running (``TooMany`` beyond): what waits is
    bounded by the connections, a few hundred bytes each, and only the running hashes take
    Argon2id's memory. The thread pool is handed at most ``threads`` at once, so its own
    queue never decides the order.
    """

    def __init__(
        self, threads: int, per_address: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threads, self.per_address = threads, per_address
        self.clock = clock
        self.running = 0
        self.held: dict[str, int] = {}
        """Address -> its hashes waiting or running."""
        self.waiting: dict[str, deque[asyncio.Future[None]]] = {}
        """Address -> its hashes waiting, in order (only addresses with some)."""
        self.served: OrderedDict[str, int] = OrderedDict()
        """Address -> the number of its last turn, the most recent last."""
        self.turns = 0
        self.failures: OrderedDict[str, float] = OrderedDict()
        """Address -> when it last sent a wrong password, the most recent last."""

    def failed(self, address: str) -> None:
        """``address`` sent a wrong password (or an unknown name): it goes after the others
        for ``FAILED_KEPT`` seconds."""
        failures, now = self.failures, self.clock()
        failures[address] = now
        failures.move_to_end(address)
        while failures and (
            len(failures) > SERVED_KEPT or now - next(iter(failures.values())) >= FAILED_KEPT
        ):
            failures.popitem(last=False)

    @contextlib.asynccontextmanager
    async def turn(self, address: str) -> AsyncIterator[None]:
        """Wait for ``address``'s turn at a thread and hold it for the block; raises
        ``TooMany`` at once when the address may have no more waiting."""
        held = self.held.get(address, 0)
        if held >= self.per_address:
            raise TooMany(held)
        self.held[address] = held + 1
        try:
            await self._wait(address)
            try:
                yield
            finally:
                self.running -= 1
                self._start()
        finally:
            self.held[address] -= 1
            if not self.held[address]:
                del self.held[address]

    async def _wait(self, address: str) -> None:
        if self.running < self.threads and not self.waiting:
            self._serve(address)
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(address, deque()).append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # its turn had come: the next one's
                self.running -= 1
                self._start()
            elif (queue := self.waiting.get(address)) is not None and waiter in queue:
                queue.remove(waiter)
                if not queue:
                    del self.waiting[address]
            raise

    def _start(self) -> None:
        """Give the free threads to the addresses whose turn it is."""
        served, failures = self.served, self.failures
        since = self.clock() - FAILED_KEPT
        while self.running < self.threads and self.waiting:
            # Waiting addresses are at most the connections: a scan a hash is cheap.
            address = min(
                self.waiting, key=lambda key: (failures.get(key, since) > since, served.get(key, 0))
            )
            queue = self.waiting[address]
            waiter = queue.popleft()
            if not queue:
                del self.waiting[address]
            if waiter.done():  # cancelled: its coroutine takes itself out
                continue
            self._serve(address)
            waiter.set_result(None)

    def _serve(self, address: str) -> None:
        self.running += 1
        self.turns += 1
        self.served[address] = self.turns
        self.served.move_to_end(address)
        if len(self.served) > SERVED_KEPT:
            self.served.popitem(last=False)  # the longest ago: as if never served, no change


class _Refused(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _request_id(ask: Ask) -> RequestId:
    return ask.request.id


def hasher_from(time_cost: int, memory_kib: int, parallelism: int) -> PasswordHasher:
    """Argon2id with the library's defaults, or with the costs given (0: the default)."""
    defaults = PasswordHasher()
    return PasswordHasher(
        time_cost=time_cost or defaults.time_cost,
        memory_cost=memory_kib or defaults.memory_cost,
        parallelism=parallelism or defaults.parallelism,
    )
