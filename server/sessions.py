"""Sessions (who a player is) and connections (how they are reached right now).

A session outlives its connection: a player whose link drops comes back with
the resume token and finds their seat. Only a hash of the token is kept, so
the table never holds a usable secret.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from server.ratelimit import TokenBucket

if TYPE_CHECKING:
    from protocol.messages import Queued
    from server.records import AccountRecord
    from server.rooms import Room


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(eq=False)
class Session:
    """A greeted client: identity, name, and where it is."""

    id: str
    name: str
    token_digest: bytes
    chat: TokenBucket
    """Paces this player's chat lines."""
    conn: int | None = None
    """The connection attached to this session now, if any."""
    room: Room | None = None
    seat: int | None = None
    """Seat in ``room``; None for a spectator."""
    queued: Queued | None = None
    """While waiting in the quick-match queue: the ``queued`` reply it was given (the
    variant and time control waited for, and the request id the pairing answers)."""
    address: str = ""
    """The IP address the session was created from (for the per-address caps)."""
    queued_since: float = 0.0
    """When it joined the quick-match queue (a rated queue's window widens with waiting)."""
    account: AccountRecord | None = None
    """The account this session plays as; None for a guest."""
    login: bytes | None = None
    """The digest of the login token this session said hello with (for ``logout``)."""
    previous_digest: bytes | None = None
    """The hash of the token this session was last resumed with. Until the newer token is
    used, it takes the session back again while no connection holds it: the ``welcome``
    carrying the newer one may have been lost with its connection (PROTOCOL.md section 21)."""

    @classmethod
    def new(
        cls, name: str, chat: TokenBucket, account: AccountRecord | None = None
    ) -> tuple[Session, str]:
        """A fresh session and its resume token (returned once, never stored)."""
        token = secrets.token_urlsafe(24)
        session = cls(secrets.token_hex(8), name, token_hash(token), chat, account=account)
        return session, token

    def rotate_token(self, used: bytes) -> str:
        """A new resume token, for a resume made with the token hashing to ``used`` (which
        stays good, as ``previous_digest``, until the new one is used)."""
        token = secrets.token_urlsafe(24)
        self.token_digest = token_hash(token)
        self.previous_digest = used
        return token


@dataclass(eq=False)
class Connection:
    """One websocket, greeted or not."""

    id: int
    bucket: TokenBucket
    address: str = ""
    """The client's IP address."""
    address_key: str = ""
    """``server.addresses.address_key`` of it (the per-address request limit's key)."""
    session: Session | None = None
    strikes: int = 0
    """Requests refused in a row for exceeding the rate limit."""
    closing: bool = field(default=False)
    asking: bool = False
    """An account request of this connection is being answered (one at a time)."""
