"""What the core asks its adapter to do: the actions every role of the core returns.

``Send`` bytes to connections and ``Close`` a connection are the socket's part; the others
hand slow work to the adapter (the computer's moves, hints and evaluations, the database's
account requests), whose answers come back through ``Core``'s methods.
"""

from __future__ import annotations

from typing import NamedTuple

from protocol.messages import (
    Analyse,
    ChangePassword,
    FetchGame,
    Hello,
    Join,
    Leaderboard,
    Login,
    Logout,
    MyGames,
    ProfileRequest,
    Register,
    RequestId,
    VariantSpec,
    Watch,
)
from server.analysis import AnalyseStep
from server.records import AccountRecord

CLOSE_POLICY = 1008
"""Close code for a connection that broke the rules (rate limit, protocol version)."""
CLOSE_RESTART = 1012
"""Close code for "reconnect": the server restarts, or a room moved to another node."""
CLOSE_REPLACED = 4000
"""Close code for a connection whose session was resumed on a newer one."""
CLOSE_ON_PURPOSE = 1000
"""The close code by which a client says it left on purpose (the others may then claim its
game sooner). Not 1001 ("going away"): browsers send it by themselves when a tab is closed
or reloaded, by accident too, and a phone's browser when it drops a background tab (an
outside review: a closed tab let the opponent claim the game in 15 s)."""

AccountRequest = Register | Login | Logout | ChangePassword | Leaderboard | ProfileRequest | MyGames
"""Requests answered from the database (and the password hasher), off the core."""
AskedRequest = AccountRequest | FetchGame | Analyse | Hello
"""What the core hands over: those, a ``hello`` with a login token, and a ``fetch_game`` or
an ``analyse`` of a game older than the history kept in memory."""


class Send:
    """``payload`` (a text frame's JSON) for each of ``targets`` (connections).

    A plain class rather than a NamedTuple like the other actions: one is made for every
    push, and the compiled build (deploy/compile.py) builds a native class in a few
    nanoseconds, where a NamedTuple's constructor is Python code either way (it was 1 %
    of the compiled server's time at saturation, py-spy)."""

    __slots__ = ("payload", "targets")

    def __init__(self, targets: list[int], payload: bytes) -> None:
        self.targets = targets
        self.payload = payload

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Send):
            return NotImplemented
        return self.targets == other.targets and self.payload == other.payload

    def __repr__(self) -> str:
        return f"Send(targets={self.targets!r}, payload={self.payload!r})"


class Close(NamedTuple):
    target: int
    code: int
    reason: str


class Think(NamedTuple):
    """Ask the computer for its move at ``ply`` in ``room``; answer with ``Core.bot_move``."""

    room: str
    seat: int
    ply: int
    actions: list[str]
    variant: VariantSpec
    level: int
    seconds: float | None
    group: str = ""
    """Whose share of the workers the search uses (``Room.share``)."""
    flag: float | None = None
    """When the computer's time runs out, on the games' clock; None while its clock does not
    run (an untimed game, its free first move): it then thinks for ``seconds``."""
    increment: float = 0.0
    """What its clock gains after the move."""


class Suggest(NamedTuple):
    """Ask the computer for a hint for ``conn`` at ``ply``; answer with ``Core.hint_move``."""

    conn: int
    request: RequestId
    room: str
    ply: int
    actions: list[str]
    variant: VariantSpec
    group: str = ""
    """Whose share of the workers the search uses (``Room.share``)."""


class LiveEvalStep(NamedTuple):
    """Evaluate ``room`` at ``ply`` for its spectators; answer with ``Core.live_evaluated``."""

    room: str
    ply: int
    actions: list[str]
    variant: VariantSpec


class Ask(NamedTuple):
    """Account work for the adapter (``server.accounts``): the database and the password
    hasher answer it, away from the event loop. For a ``hello`` with a login token the
    answer comes back through ``Core.authenticated``; ``Core.asked`` ends every one."""

    conn: int
    request: AskedRequest
    account: AccountRecord | None
    """The account the asking session plays as, if any."""
    login: bytes | None
    """The digest of the login token that session said hello with, if any."""


class FindSession(NamedTuple):
    """A cluster node was greeted with a resume token it does not know: find the session
    in the shared database and where its room is hosted; answer with ``Core.searched``."""

    conn: int
    hello: Hello
    token_digest: bytes


class Locate(NamedTuple):
    """A cluster node was asked for a room it does not host: find where it is (taking it
    over if its node is dead). Hosted elsewhere, the adapter hands the connection over to
    that node with the request (``server.cluster.relay``); here now, or nowhere, the
    request comes back through ``Core.located``."""

    conn: int
    request: Join | Watch


Action = Send | Close | Think | AnalyseStep | Suggest | LiveEvalStep | Ask | FindSession | Locate
