"""The session registry: the server's connections and the sessions greeted on them.

It says hello (a new session, a resumed one, or one opened with a login token, which the
database checks through an ``Ask``), paces each connection's requests, hands account
requests to the database, and forgets a session once it holds nothing worth resuming.
What a session does in the lobby or in a room is for ``server.lobby`` and the room host.

Sessions live where their connection is: in a cluster each node keeps a registry of its
own; a resume token made on another node is found through the shared database (see
docs/cluster.md).
"""

from __future__ import annotations

import logging

from protocol.codec import encode, request_id
from protocol.messages import (
    VERSION,
    Analyse,
    ChangePassword,
    ErrorCode,
    FetchGame,
    Hello,
    Logout,
    MyGames,
    ProfileRequest,
    RequestId,
    Welcome,
)
from server import names, text
from server.accountdb import RECENT_GAMES
from server.actions import (
    CLOSE_POLICY,
    CLOSE_REPLACED,
    Action,
    Ask,
    AskedRequest,
    Close,
    FindSession,
    Send,
)
from server.addresses import address_key
from server.context import Context
from server.ratelimit import KeyedBuckets, TokenBucket
from server.records import AccountRecord
from server.rooms import Member
from server.sessions import Connection, Session, token_hash

log = logging.getLogger("quoridor.core")

SERVER_NAME = "quoridor-server/0.1"
REPLAY_BYTES_PER_HELLO = 64 * 1024
"""A resume costs one more hello of its address's allowance per this many bytes replayed."""


class SessionRegistry:
    """The connections of one server and the sessions greeted on them.

    It says hello (new sessions, resumed ones, and ones opened with a login token, which the
    database checks: ``Ask``), paces each connection's requests, and forgets a session once
    it holds nothing worth resuming. Sessions live where their connection is: in a cluster
    each node keeps its own registry, and a resume token names its session on any node once
    the sessions' rows are shared (the clustered registry reads it from the database).
    """

    def __init__(self, context: Context) -> None:
        self.context = context
        self.connections: dict[int, Connection] = {}
        self.sessions: dict[bytes, Session] = {}
        """Sessions by the hash of their resume token."""
        self.replaced: dict[bytes, Session] = {}
        """Sessions by the hash of the token of their last resume (``previous_digest``)."""
        limits = context.limits
        self.hellos = KeyedBuckets(limits.hellos_per_second, limits.hello_burst)
        """Each address's allowance of hellos (a resume's replay paid by the byte)."""
        share = limits.address_share
        self.address_requests = KeyedBuckets(limits.rate * share, limits.burst * share)
        """What the connections of each address may send together (``Limits.address_share``)."""
        self.games_read = KeyedBuckets(limits.games_read, limits.games_read_burst)
        """Each address's allowance of finished games read from the database."""
        reads = limits.games_read_server
        self.server_reads = TokenBucket(reads, 2 * reads, context.clock())
        """Everyone's together (``Limits.games_read_server``)."""

    # -- connections ---------------------------------------------------------------

    def open(self, conn: int, address: str) -> None:
        limits = self.context.limits
        bucket = TokenBucket(limits.rate, limits.burst, self.context.clock())
        self.connections[conn] = Connection(conn, bucket, address, address_key(address))

    def throttled(
        self, connection: Connection, data: bytes | str, now: float
    ) -> list[Action] | None:
        """The refusal of a request over the connection's rate limit (and the close after
        too many in a row), or None when it may go ahead (``now``: the games' clock)."""
        limits = self.context.limits
        mine = connection.bucket.take(now)
        if mine and self.address_requests.take(connection.address_key, now):
            connection.strikes = 0
            return None
        connection.strikes += 1
        if connection.strikes > limits.strikes:
            return [Close(connection.id, CLOSE_POLICY, "rate limit exceeded")]
        message = f"more than {limits.rate:g} requests a second; slow down"
        if mine:
            together = limits.rate * limits.address_share
            message = f"your address sent more than {together:g} requests a second; slow down"
        code = ErrorCode.RATE_LIMITED
        return [self.context.error(connection.id, code, message, request_id(data))]

    def close(self, conn: int) -> Session | None:
        """The connection is gone; the session it was the live connection of, if any (that
        session is now away: what it held is for the lobby and the room host to settle)."""
        connection = self.connections.pop(conn)
        self.context.compact.discard(conn)
        session = connection.session
        if session is None or session.conn != conn:
            return None
        session.conn = None
        return session

    def depart(self, conn: int) -> Session | None:
        """The connection leaves this node with its session (the relay moves it to another
        node of a cluster): forget both here, quietly; the session, if it had one."""
        connection = self.connections.pop(conn)
        self.context.compact.discard(conn)
        session = connection.session
        if session is not None:
            self.release(session)
            session.conn = None
        return session

    def arrive(self, conn: int, session: Session) -> None:
        """The opened connection ``conn`` carries ``session``, greeted on another node: it
        is served here from now on, without a second welcome. A session this node already
        holds under the same token is the same one, and is kept."""
        session = self.sessions.get(session.token_digest) or self.hold(session)
        connection = self.connections[conn]
        connection.session = session
        session.conn = conn

    # -- hello -----------------------------------------------------------------------

    def hello(
        self, connection: Connection, hello: Hello, looked: bool = False
    ) -> tuple[list[Action], Session | None]:
        """Greet the connection; the replies, and the session if it was resumed (whose
        queue and room the caller brings the connection back into)."""
        conn, error = connection.id, self.context.error
        if connection.session is not None:
            return [
                error(conn, ErrorCode.ALREADY_GREETED, "hello was already said", hello.id)
            ], None
        if hello.version.split(".")[0] != VERSION.split(".")[0]:
            message = (
                f"protocol version {hello.version} is not supported; this server speaks {VERSION}"
            )
            refusal = error(conn, ErrorCode.UNSUPPORTED_VERSION, message, hello.id)
            return [refusal, Close(conn, CLOSE_POLICY, "unsupported protocol version")], None
        hellos = self.hellos.get(connection.address, self.context.clock())
        if not looked and not hellos.spend(1, self.context.clock()):
            return [self._too_many_hellos(conn, hello.id)], None
        if hello.compact:
            self.context.compact.add(conn)
        else:
            self.context.compact.discard(conn)
        name = text.clean(hello.name)
        if (problem := text.problem(name)) is not None:
            message = f"name {problem} - at `$.name`"
            return [error(conn, ErrorCode.INVALID_FIELD, message, hello.id)], None
        if hello.resume is not None:
            return self._resume(connection, hello, looked)
        if hello.token is not None:
            return self.ask(connection, hello), None
        if self.context.persistent and names.could_be_account(name):
            # Is it an account's name? The database says (``guest``, once it answered).
            return self.ask(connection, hello), None
        return self.guest(conn, hello, taken=False), None

    def guest(self, conn: int, hello: Hello, taken: bool) -> list[Action]:
        """A guest's session for ``hello``, its name marked if it would pass for the
        server's, the computer's or (``taken``) an account's."""
        connection = self._still_to_greet(conn, hello)
        if isinstance(connection, list):
            return connection
        name = text.clean(hello.name)
        shown = names.guest_of_account(name) if taken else names.guest_name(name)
        session, token = Session.new(shown, self.context.chat_bucket())
        session.address = connection.address
        self.hold(session)
        log.debug("hello", extra={"conn": conn, "session": session.id, "player": session.name})
        return [self._attach(connection, session, token, hello.id)]

    def _resume(
        self, connection: Connection, hello: Hello, looked: bool
    ) -> tuple[list[Action], Session | None]:
        """``looked``: the adapter looked for the session already (``Core.searched``)."""
        assert hello.resume is not None
        digest = token_hash(hello.resume)
        session = self.sessions.get(digest)
        if session is None and (replaced := self.replaced.get(digest)) is not None:
            # The token of its last resume: that welcome may never have arrived. Not while
            # a connection holds the session, though: that one has the newer token.
            session = replaced if replaced.conn is None else None
        if session is None and self.context.clustered and not looked:
            if connection.asking:  # its last hello is still being looked for
                message = "your hello is still being looked for: try again in a moment"
                error = self.context.error
                return [
                    error(connection.id, ErrorCode.SERVICE_UNAVAILABLE, message, hello.id)
                ], None
            # Perhaps a session of a room hosted elsewhere (or nowhere, its node dead):
            # the adapter looks for it in the shared database (``Core.searched``).
            connection.asking = True
            return [FindSession(connection.id, hello, digest)], None
        if session is None:
            message = "unknown or expired resume token; say hello without one for a new session"
            return [self.context.error(connection.id, ErrorCode.BAD_TOKEN, message, hello.id)], None
        room = session.room
        replay = room.replay_bytes(hello.last_event) if room is not None else 0
        if replay >= REPLAY_BYTES_PER_HELLO:
            hellos = self.hellos.get(connection.address, self.context.clock())
            if not hellos.spend(replay // REPLAY_BYTES_PER_HELLO, self.context.clock()):
                return [self._too_many_hellos(connection.id, hello.id)], None
        actions: list[Action] = []
        if session.conn is not None:
            # Two connections for one session: the newer one wins.
            old = self.connections[session.conn]
            old.session = None
            actions.append(Close(old.id, CLOSE_REPLACED, "session resumed on another connection"))
        if not session.address:
            # Taken back from the database (a restart, a takeover), where no address is
            # kept: the rooms it opens from now on count against the address it is back on.
            session.address = connection.address
        self.release(session)
        token = session.rotate_token(digest)
        self.hold(session)
        self.context.journal.session(session)
        self.context.counters["resumes"] += 1
        log.info("session resumed", extra={"conn": connection.id, "session": session.id})
        actions.append(self._attach(connection, session, token, hello.id))
        return actions, session

    def _too_many_hellos(self, conn: int, rid: RequestId) -> Send:
        limits = self.context.limits
        message = (
            f"your address said hello too often (more than {limits.hellos_per_second:g} "
            "a second); wait a moment and say it again"
        )
        return self.context.error(conn, ErrorCode.RATE_LIMITED, message, rid)

    def authenticated(
        self, conn: int, hello: Hello, account: AccountRecord, login: bytes
    ) -> list[Action]:
        """A ``hello`` whose login token opened ``account``: a session playing as it."""
        connection = self._still_to_greet(conn, hello)
        if isinstance(connection, list):
            return connection
        session, token = Session.new(account.name, self.context.chat_bucket(), account)
        session.login = login
        # Its rooms and games count against its address as a guest's do: without it, one
        # account and a guest wrote 55 games a second, none of them a flood (an outside
        # review), and a logged-in player's rooms escaped the caps per address.
        session.address = connection.address
        self.hold(session)
        log.debug(
            "hello with a login token",
            extra={"conn": conn, "session": session.id, "player": session.name},
        )
        return [self._attach(connection, session, token, hello.id)]

    def _still_to_greet(self, conn: int, hello: Hello) -> Connection | list[Action]:
        """The connection a hello answered away from the core greets now, or the answer
        instead: none once it is gone, ``already_greeted`` if another hello got there first."""
        connection = self.connections.get(conn)
        if connection is None:
            return []
        if connection.session is not None:
            message = "hello was already said"
            return [self.context.error(conn, ErrorCode.ALREADY_GREETED, message, hello.id)]
        return connection

    def _attach(self, connection: Connection, session: Session, token: str, rid: RequestId) -> Send:
        connection.session = session
        session.conn = connection.id
        room = session.room
        welcome = Welcome(
            id=rid,
            version=VERSION,
            server=SERVER_NAME,
            session=session.id,
            resume_token=token,
            name=session.name,
            room=room.code if room else None,
            seat=session.seat,
            registered=session.account is not None,
            compact=connection.id in self.context.compact,
        )
        return Send([connection.id], encode(welcome))

    # -- the database's requests -------------------------------------------------------

    def ask(
        self, connection: Connection, request: AskedRequest, charged: bool = False
    ) -> list[Action]:
        """Hand an account request to the adapter, after what can be checked here
        (``charged``: the games it reads were already spent from its address's allowance)."""
        conn, session = connection.id, connection.session
        refusal: tuple[ErrorCode, str] | None = None
        if not self.context.persistent:
            refusal = ErrorCode.ACCOUNTS_UNAVAILABLE, "this server keeps no accounts (no database)"
        elif isinstance(request, ChangePassword | MyGames) and session is None:
            refusal = ErrorCode.HELLO_REQUIRED, "say hello with your login token first"
        elif isinstance(request, ChangePassword | MyGames) and session and not session.account:
            refusal = ErrorCode.ACCOUNT_REQUIRED, "log in first (hello with a login token)"
        elif (
            isinstance(request, Logout)
            and request.token is None
            and not (session and session.login)
        ):
            refusal = ErrorCode.INVALID_FIELD, "no login token to revoke - at `$.token`"
        elif connection.asking:
            refusal = ErrorCode.RATE_LIMITED, "one database request at a time: wait for the answer"
        elif not charged and (games := games_read(request)):
            refusal = self.read_games(connection, games)
        if refusal is not None:
            return [self.context.error(conn, *refusal, request.id)]
        connection.asking = True
        account = session.account if session else None
        return [Ask(conn, request, account, session.login if session else None)]

    def read_games(self, connection: Connection, games: int) -> tuple[ErrorCode, str] | None:
        """Spend ``games`` from the allowance of games read by the connection's address and
        from the server's (``Limits.games_read_server``); why not, if either is short (then
        nothing was spent)."""
        now, limits = self.context.clock(), self.context.limits
        mine = self.games_read.get(connection.address, now)
        if not mine.holds(games, now):
            message = (
                f"your address reads too many games (more than {limits.games_read:g} a second)"
            )
            return ErrorCode.RATE_LIMITED, message + "; wait"
        if not self.server_reads.spend(games, now):
            message = "the server is reading too many finished games for everyone: try again soon"
            return ErrorCode.SERVER_BUSY, message
        mine.spend(games, now)
        return None

    def asked(self, conn: int) -> None:
        """The adapter answered this connection's account request."""
        connection = self.connections.get(conn)
        if connection is not None:
            connection.asking = False

    # -- keeping -------------------------------------------------------------------------

    def keep(self, session: Session) -> None:
        """Hold a session restored from the database (seated in a game), to be resumed."""
        self.hold(session)

    def hold(self, session: Session) -> Session:
        """Make the session's tokens take it back: its newest, and its last resume's."""
        self.sessions[session.token_digest] = session
        if session.previous_digest is not None:
            self.replaced[session.previous_digest] = session
        return session

    def release(self, member: Member) -> None:
        """Make no token of this session take it back here any more."""
        if self.sessions.get(member.token_digest) is member:
            del self.sessions[member.token_digest]
        previous = member.previous_digest
        if previous is not None and self.replaced.get(previous) is member:
            del self.replaced[previous]

    def forget(self, member: Member) -> None:
        """Drop a session that holds nothing worth resuming (gone, and in no room)."""
        if member.conn is None and member.room is None:
            self.release(member)
            self.context.journal.drop_session(member)


def games_read(request: AskedRequest) -> int:
    """The finished games ``request`` reads from the database at most (whole records)."""
    if isinstance(request, MyGames):
        return request.limit
    if isinstance(request, ProfileRequest):
        return RECENT_GAMES
    return 1 if isinstance(request, FetchGame | Analyse) else 0
