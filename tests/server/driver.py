"""Drive the socket-free core directly: no network, a fake clock, decoded replies."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import msgspec

from protocol.codec import decode_server_message, encode
from protocol.messages import VERSION, Hello, Joined, ServerMessage, State, Welcome
from server.core import Action, Ask, Close, Core, Limits, Send


@dataclass
class FakeClock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Driver:
    """A core plus the frames each connection was sent and the closes it got."""

    clock: FakeClock = field(default_factory=FakeClock)
    limits: Limits = field(default_factory=Limits)
    core: Core = field(init=False)
    inbox: dict[int, list[ServerMessage]] = field(default_factory=dict)
    closed: dict[int, tuple[int, str]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.core = Core(self.limits, clock=self.clock)

    def run(self, actions: list[Action]) -> None:
        indexes_agree(self.core)
        for action in actions:
            if isinstance(action, Send):
                for target in action.targets:
                    message = decode_server_message(action.payload)
                    assert message is not None
                    self.inbox.setdefault(target, []).append(message)
            elif isinstance(action, Close):
                self.closed[action.target] = (action.code, action.reason)
            elif isinstance(action, Ask) and isinstance(action.request, Hello):
                # A persistent core asks the database whether a guest's name is an account's:
                # there is none here (the adapter with accounts is tested over real sockets).
                assert action.request.token is None
                self.core.asked(action.conn)
                self.run(self.core.guest(action.conn, action.request, taken=False))

    def open(self, address: str = "") -> int:
        conn = next(self._ids)
        self.core.open(conn, address)
        self.inbox[conn] = []
        return conn

    def send(self, conn: int, message: msgspec.Struct | bytes | str) -> list[ServerMessage]:
        """Deliver one frame; return what ``conn`` itself got back."""
        data = message if isinstance(message, bytes | str) else encode(message)
        before = len(self.inbox[conn])
        self.run(self.core.receive(conn, data))
        return self.inbox[conn][before:]

    def drop(self, conn: int) -> None:
        self.run(self.core.close(conn))

    def greet(self, name: str = "player", address: str = "") -> tuple[int, Welcome]:
        conn = self.open(address)
        (welcome,) = self.send(conn, Hello(version=VERSION, name=name))
        assert isinstance(welcome, Welcome)
        return conn, welcome

    def last_state(self, conn: int) -> State:
        return next(m for m in reversed(self.inbox[conn]) if isinstance(m, State))

    def joined(self, conn: int) -> Joined:
        return next(m for m in reversed(self.inbox[conn]) if isinstance(m, Joined))


def indexes_agree(core: Core) -> None:
    """The room host's indexes say what its rooms are now, after every call of the core:
    ``listed`` holds the rooms the public list may show, each with its entry as it is now,
    ``unattended`` those nobody is connected to, and neither holds a room the host forgot
    (``RoomHost.note``)."""
    host = core.host
    if core.closing_all:
        return  # the server stops: nobody is told of what its connections closing changes
    rooms = list(host.rooms.values())
    assert {r.code for r in rooms if r in host.listed} == {r.code for r in rooms if r.listable()}
    assert len(host.listed) == sum(1 for room in rooms if room in host.listed)
    for room in rooms:
        if room in host.listed:  # its entry in the list as it is now
            assert host.listed.entry(room) == msgspec.json.encode(room.info()), room.code
    unattended = {room.code for room in rooms if not room.anyone_connected()}
    assert {room.code for room in host.unattended} == unattended
