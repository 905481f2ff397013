"""The seams of the core (docs/cluster.md, "The seams in the server"): the roles are separate
modules with no import cycle, and the interfaces a cluster will implement again behave as
the lobby relies on. The ``MatchQueue`` and ``RoomDirectory`` tests take the implementation
as a parameter, so the clustered ones can join the lists (a clustered queue's pairings
awaited rather than returned at once)."""

from __future__ import annotations

import ast
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

import msgspec
import pytest

from protocol.messages import TimeControl, VariantSpec
from server import ratings
from server.cluster.directory import ClusterDirectory
from server.directory import ListedRooms, LocalDirectory, RoomDirectory
from server.quickmatch import LocalQueue, MatchQueue, Pool
from server.ratelimit import TokenBucket
from server.records import AccountRecord, RatingRecord
from server.rooms import Room
from server.sessions import Session

SERVER = Path(__file__).resolve().parents[2] / "server"
ROLES = [
    "server.registry",
    "server.lobby",
    "server.directory",
    "server.quickmatch",
    "server.roomhost",
    "server.seating",
    "server.play",
    "server.computer",
    "server.historydesk",
]


def imports() -> dict[str, set[str]]:
    """Every module of server/ and the modules of server/ it imports (for type checking too)."""
    modules = {
        ".".join(path.relative_to(SERVER.parent).with_suffix("").parts): path
        for path in SERVER.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = found & modules.keys()
    return graph


def cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A chain of imports from ``start`` back to itself, if there is one."""
    stack, seen = [(start, [start])], set()
    while stack:
        module, path = stack.pop()
        for imported in graph[module]:
            if imported == start:
                return [*path, start]
            if imported not in seen:
                seen.add(imported)
                stack.append((imported, [*path, imported]))
    return None


def test_no_module_of_the_server_imports_one_that_imports_it_back() -> None:
    graph = imports()
    cycles = [cycle for module in graph if (cycle := cycle_through(graph, module))]
    assert cycles == []


def test_a_room_knows_its_players_only_as_members() -> None:
    # A session knows which room it is in; a room sees whoever sits or watches in it
    # through ``rooms.Member``, so that a clustered host can seat remote players too.
    assert "server.sessions" not in imports()["server.rooms"]


def test_no_role_imports_the_core_or_the_adapter() -> None:
    graph = imports()
    for role in ROLES:
        assert not graph[role] & {"server.core", "server.app", "server.lobby"} - {role}, role


# -- the quick-match queue -------------------------------------------------------------

QUEUES: list[Callable[[], MatchQueue]] = [LocalQueue]
CASUAL = Pool.of(VariantSpec(players=2, size=9, walls=10), None, None)
FOUR = Pool.of(VariantSpec(players=4, size=9, walls=5), None, None)
RATED = Pool.of(VariantSpec(players=2, size=9, walls=10), TimeControl(base=180, increment=2), "p")


def player(name: str, rating: int | None = None) -> Session:
    account = None
    if rating is not None:
        mu = ratings.START_MU + (rating - ratings.SHOWN_BASE) / ratings.SHOWN_SCALE
        record = RatingRecord(pool="p", mu=mu, sigma=ratings.START_SIGMA)
        account = AccountRecord(id=zlib.crc32(name.encode()), name=name, ratings={"p": record})
    session, _ = Session.new(name, TokenBucket(1, 1, 0), account)
    return session


@pytest.fixture(params=QUEUES, ids=lambda make: make.__name__)
def queue(request: pytest.FixtureRequest) -> MatchQueue:
    make: Callable[[], MatchQueue] = request.param
    return make()


def test_casual_players_are_paired_in_the_order_they_came(queue: MatchQueue) -> None:
    a, b, c, d = (player(name) for name in "abcd")
    assert queue.enter(a, CASUAL, 0.0) == []
    assert queue.enter(b, CASUAL, 1.0) == [[a, b]]
    assert queue.enter(c, CASUAL, 2.0) == []
    assert queue.enter(d, FOUR, 3.0) == []  # another pool: nobody to play yet
    assert queue.due() is None  # casual queues never need a second look


def test_four_players_make_a_group(queue: MatchQueue) -> None:
    players = [player(name) for name in "abcd"]
    groups = [queue.enter(p, FOUR, float(n)) for n, p in enumerate(players)]
    assert groups == [[], [], [], [players]]


def test_a_player_who_left_is_never_paired(queue: MatchQueue) -> None:
    a, b, c = (player(name) for name in "abc")
    queue.enter(a, CASUAL, 0.0)
    queue.leave(a)
    queue.leave(c)  # never queued: nothing happens
    assert queue.enter(b, CASUAL, 1.0) == []
    assert queue.enter(c, CASUAL, 2.0) == [[b, c]]


def test_rated_players_far_apart_wait_until_the_window_widens(queue: MatchQueue) -> None:
    low, high = player("low", 1400), player("high", 1650)  # 250 apart: window 100 at first
    assert queue.enter(low, RATED, 0.0) == []
    assert queue.enter(high, RATED, 0.0) == []
    due = queue.due()
    assert due == ratings.RECHECK_SECONDS
    assert queue.recheck(due) == []  # 10 points a second: not yet
    wait = (250 - ratings.MATCH_WINDOW) / ratings.MATCH_WINDOW_GROWTH
    assert queue.recheck(wait) == [(RATED, [low, high])]
    assert queue.recheck(wait + 10) == []


def test_rated_players_close_in_rating_are_paired_at_once_the_closest_first(
    queue: MatchQueue,
) -> None:
    a, b, c = player("a", 1500), player("b", 1800), player("c", 1530)
    queue.enter(a, RATED, 0.0)
    queue.enter(b, RATED, 0.0)
    assert queue.enter(c, RATED, 0.0) == [[a, c]]


# -- the room directory ----------------------------------------------------------------

DIRECTORIES: list[Callable[[dict[str, Room], ListedRooms], RoomDirectory]] = [
    LocalDirectory,
    ClusterDirectory,
]
"""A cluster node's directory finds and lists its own rooms as one server does (its list of
the other nodes' rooms: tests/server/cluster/test_directory.py)."""


def waiting_room(code: str, created: float, public: bool = True) -> Room:
    """A room whose creator waits in it (connected) for an opponent."""
    room = Room(code, VariantSpec(players=2, size=9, walls=10), public, created)
    creator = player(f"creator of {code}")
    creator.conn, creator.room, creator.seat = 1, room, 0
    room.seat(creator, 0, creator.name)
    return room


@pytest.mark.parametrize("make", DIRECTORIES, ids=lambda make: make.__name__)
def test_the_directory_finds_rooms_and_lists_the_open_ones_newest_first(
    make: Callable[[dict[str, Room], ListedRooms], RoomDirectory],
) -> None:
    rooms: dict[str, Room] = {}
    listed = ListedRooms()

    def host(room: Room) -> None:
        """What the room host does with a room it opens (``RoomHost.note``)."""
        rooms[room.code] = room
        listed.note(room, room.listable())

    for created, code in enumerate("abcd"):
        host(waiting_room(code, created))
    host(waiting_room("p", 10.0, public=False))
    directory = make(rooms, listed)
    assert [info.room for info in directory.listing(3)] == ["d", "c", "b"]
    assert directory.find("p") is rooms["p"]  # unlisted, yet found by its code
    assert directory.find("z") is None
    host(waiting_room("e", 5.0))  # opened since: the directory sees it
    assert [info.room for info in directory.listing(2)] == ["e", "d"]
    rooms["e"].seats[0] = None  # its creator left: the host notes it
    listed.note(rooms["e"], rooms["e"].listable())
    del rooms["d"]  # closed: never listed again, noted or not
    assert [info.room for info in directory.listing(2)] == ["c", "b"]
    assert directory.listing_json(2) == msgspec.json.encode(directory.listing(2))


class LeftBehind:
    """A room the public list must not look at (a game whose players all went away): any
    look at it fails. Not a ``Room``, which the compiled build makes native: a test cannot
    change its methods there."""

    def __init__(self, code: str) -> None:
        self.__dict__["code"] = code

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the list looked at room {self.code}, which it may not list")


def test_the_list_of_rooms_reads_only_the_rooms_it_may_list() -> None:
    """An outside review: with 1392 rooms left behind by players who went away (none listed),
    ``list_rooms`` took 16 times an empty server's time, for an empty reply: it looked at every
    room. The directory reads the index of listable rooms the room host keeps, newest first,
    and stops once its reply is full."""
    rooms: dict[str, Room] = {f"gone{n}": cast(Room, LeftBehind(f"gone{n}")) for n in range(50)}
    listed = ListedRooms()
    for n in range(10):
        room = waiting_room(f"open{n}", 1000.0 + n)
        room.owners = (f"address:10.0.0.{n}",)
        rooms[room.code] = room
        listed.note(room, room.listable())
    directory = LocalDirectory(rooms, listed)
    assert [info.room for info in directory.listing(3)] == ["open9", "open8", "open7"]
    assert len(directory.listed()) == 10
