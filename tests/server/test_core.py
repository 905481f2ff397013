"""The socket-free core, driven directly: lifecycle rules and fuzzing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import BadRequest, decode_request
from protocol.messages import (
    VERSION,
    Create,
    Error,
    ErrorCode,
    FetchGame,
    Hello,
    History,
    HistoryList,
    Join,
    Joined,
    Leave,
    Left,
    MoveRequest,
    Queued,
    QuickMatch,
    State,
    VariantSpec,
    Watch,
    Welcome,
)
from server.core import CLOSE_REPLACED, Limits
from server.rooms import Absence
from tests.server.driver import Driver


def start_game(driver: Driver) -> tuple[int, int, str]:
    a, _ = driver.greet("alice")
    b, _ = driver.greet("bob")
    driver.send(a, Create())
    room = driver.joined(a).room
    driver.send(b, Join(room=room))
    return a, b, room


def test_resume_restores_the_seat_and_rotates_the_token() -> None:
    driver = Driver()
    a, b, room = start_game(driver)
    welcome = next(m for m in driver.inbox[a] if isinstance(m, Welcome))
    driver.send(a, MoveRequest(move="e2", ply=0))
    driver.drop(a)
    assert not driver.last_state(b).players[0].connected
    again = driver.open()
    replies = driver.send(again, Hello(version=VERSION, name="alice", resume=welcome.resume_token))
    resumed, state = replies
    assert isinstance(resumed, Welcome)
    assert isinstance(state, State)
    assert (resumed.session, resumed.room, resumed.seat) == (welcome.session, room, 0)
    assert resumed.resume_token != welcome.resume_token
    assert state.players[0].connected
    assert driver.last_state(b) == state
    # The old token takes nothing from the connection that holds the session now.
    other = driver.open()
    (error,) = driver.send(other, Hello(version=VERSION, name="x", resume=welcome.resume_token))
    assert isinstance(error, Error)
    assert error.code == ErrorCode.BAD_TOKEN


def test_a_resume_whose_welcome_was_lost_is_made_again_with_the_same_token() -> None:
    """The welcome carries the new token; if its connection dies first, the client only
    has the one it resumed with, which keeps working until the new one is used."""
    driver = Driver()
    a, _b, room = start_game(driver)
    first = next(m for m in driver.inbox[a] if isinstance(m, Welcome))
    driver.drop(a)

    def resume(token: str) -> Welcome | Error:
        conn = driver.open()
        reply = driver.send(conn, Hello(version=VERSION, name="alice", resume=token))[0]
        assert isinstance(reply, Welcome | Error)
        if isinstance(reply, Welcome):
            driver.drop(conn)  # ... and this welcome is lost with its connection
        return reply

    lost = resume(first.resume_token)
    again = resume(first.resume_token)
    assert isinstance(lost, Welcome)
    assert isinstance(again, Welcome)
    assert (again.session, again.room, again.seat) == (first.session, room, 0)
    # The token of the lost welcome was never seen; the latest one works, once more.
    assert isinstance(error := resume(lost.resume_token), Error)
    assert error.code == ErrorCode.BAD_TOKEN
    latest = resume(again.resume_token)
    assert isinstance(latest, Welcome)
    # Using the newer token spends the older one.
    assert isinstance(error := resume(first.resume_token), Error)
    assert error.code == ErrorCode.BAD_TOKEN
    assert isinstance(resume(again.resume_token), Welcome)
    assert len(driver.core.sessions) == 2  # one entry per session, whatever its tokens


def test_a_spectator_resumed_on_another_connection_is_no_event() -> None:
    driver = Driver()
    a, b, room = start_game(driver)
    watcher, welcome = driver.greet("carol")
    driver.send(watcher, Watch(room=room))
    event = driver.last_state(a).event
    seen = {conn: len(driver.inbox[conn]) for conn in (a, b)}
    newer = driver.open()
    resumed = driver.send(newer, Hello(version=VERSION, name="carol", resume=welcome.resume_token))
    assert isinstance(resumed[0], Welcome)
    assert (resumed[0].room, resumed[0].seat) == (room, None)
    assert isinstance(resumed[-1], State)
    assert (resumed[-1].event, resumed[-1].spectators) == (event, 1)
    assert driver.closed[watcher] == (CLOSE_REPLACED, "session resumed on another connection")
    assert {conn: len(driver.inbox[conn]) for conn in (a, b)} == seen  # nothing to the players


def test_the_newer_connection_wins() -> None:
    driver = Driver()
    a, _b, _room = start_game(driver)
    welcome = next(m for m in driver.inbox[a] if isinstance(m, Welcome))
    newer = driver.open()
    driver.send(newer, Hello(version=VERSION, name="alice", resume=welcome.resume_token))
    assert driver.closed[a] == (CLOSE_REPLACED, "session resumed on another connection")
    driver.drop(a)  # the adapter reports the old socket gone: nothing changes
    (state,) = driver.send(newer, MoveRequest(move="e2", ply=0))
    assert isinstance(state, State)
    assert state.players[0].connected


def test_rooms_nobody_can_return_to_are_forgotten() -> None:
    driver = Driver()
    a, _ = driver.greet()
    driver.send(a, Create())
    assert len(driver.core.rooms) == 1
    driver.send(a, Leave())
    assert driver.core.rooms == {}
    driver.send(a, Create())
    driver.drop(a)
    # A dropped creator keeps the seat (and the code stays good) for the grace period.
    assert len(driver.core.rooms) == 1
    driver.clock.advance(driver.core.limits.absence.grace)
    driver.run(driver.core.tick())
    assert driver.core.rooms == {}
    assert driver.core.sessions == {}


def test_a_creator_who_drops_while_waiting_comes_back_to_the_same_room() -> None:
    driver = Driver()
    a, welcome = driver.greet("alice")
    driver.send(a, Create())
    room = driver.joined(a).room
    driver.drop(a)
    driver.clock.advance(30)
    again = driver.open()
    (back, state) = driver.send(
        again, Hello(version=VERSION, name="alice", resume=welcome.resume_token)
    )
    assert isinstance(back, Welcome)
    assert (back.room, back.seat) == (room, 0)
    assert isinstance(state, State)
    assert state.players[0].connected
    b, _ = driver.greet("bob")
    driver.send(b, Join(room=room))
    assert driver.last_state(b).status == "playing"
    assert driver.last_state(b).players[0].claim_in_ms is None


def test_a_game_in_progress_outlives_its_players() -> None:
    driver = Driver()
    a, b, room = start_game(driver)
    driver.drop(a)
    driver.drop(b)
    assert room in driver.core.rooms
    assert len(driver.core.sessions) == 2


def test_quick_match_for_four_and_leaving_the_queue() -> None:
    driver = Driver()
    conns = [driver.greet(f"p{i}")[0] for i in range(5)]
    four = QuickMatch(variant=VariantSpec(players=4))
    (queued,) = driver.send(conns[0], four)
    assert isinstance(queued, Queued)
    assert queued.variant.walls == 5
    driver.send(conns[0], Leave())
    assert isinstance(driver.inbox[conns[0]][-1], Left)
    for conn in conns[1:]:
        driver.send(conn, four)
    seats = [driver.joined(conn).seat for conn in conns[1:]]
    assert seats == [0, 1, 2, 3]
    assert driver.last_state(conns[1]).status == "playing"
    assert not any(isinstance(m, Joined) for m in driver.inbox[conns[0]])


def test_two_player_and_four_player_queues_are_apart() -> None:
    driver = Driver()
    a, _ = driver.greet()
    b, _ = driver.greet()
    driver.send(a, QuickMatch())
    driver.send(b, QuickMatch(variant=VariantSpec(players=4)))
    assert driver.core.rooms == {}


# -- fuzzing -------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
TYPES = ["hello", "create", "join", "watch", "quick_match", "list_rooms", "leave", "move", "ping"]
shaped = st.builds(
    lambda kind, fields: {"type": kind, **fields},
    st.sampled_from([*TYPES, "nope", ""]),
    st.dictionaries(
        st.sampled_from(
            ["id", "move", "ply", "room", "seat", "secret", "variant", "version", "name"]
        ),
        json_values,
        max_size=4,
    ),
)


def fingerprint(driver: Driver) -> object:
    core = driver.core
    rooms = sorted((code, r.event, tuple(r.game.moves)) for code, r in core.rooms.items())
    queues = sorted((key, len(queue)) for key, queue in core.queues.items())
    return rooms, queues, len(core.sessions)


@pytest.fixture(scope="module")
def fuzz_table() -> tuple[Driver, int, int]:
    # The clock moves a second per example: no first-move limit, or the game would end.
    driver = Driver(limits=Limits(absence=Absence(first_move=0)))
    a, b, _room = start_game(driver)
    driver.send(a, MoveRequest(move="e2", ply=0))
    return driver, a, b


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(frame=st.binary(max_size=64) | json_values.map(json.dumps) | shaped.map(json.dumps))
def test_bad_frames_get_one_error_and_change_nothing(
    fuzz_table: tuple[Driver, int, int], frame: bytes | str
) -> None:
    driver, _a, b = fuzz_table
    try:
        decode_request(frame)
    except BadRequest:
        pass
    else:
        return  # a valid request is not bad input; the other tests cover those
    driver.clock.advance(1)  # stay under the rate limit
    before = fingerprint(driver)
    replies = driver.send(b, frame)
    assert len(replies) == 1
    assert isinstance(replies[0], Error)
    assert fingerprint(driver) == before
    assert b not in driver.closed


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(move=st.text(alphabet="abcdefghijkz0123456789hv", max_size=4), ply=st.integers(0, 3))
def test_random_moves_are_applied_or_refused_whole(
    fuzz_table: tuple[Driver, int, int], move: str, ply: int
) -> None:
    driver, a, b = fuzz_table
    driver.clock.advance(1)
    game = driver.core.rooms[driver.joined(a).room].game
    mover = a if game.turn == 0 else b
    before, moves = fingerprint(driver), game.moves
    replies = driver.send(mover, f'{{"type": "move", "move": {json.dumps(move)}, "ply": {ply}}}')
    assert len(replies) == 1
    if isinstance(replies[0], Error):
        assert fingerprint(driver) == before
    else:
        assert isinstance(replies[0], State)
        assert game.moves in (moves, [*moves, move])


def test_replay_sends_every_position_and_stops_at_an_illegal_move() -> None:
    from protocol.messages import ReplayFrames, ReplayRequest

    driver = Driver()
    conn, _ = driver.greet()
    (reply,) = driver.send(conn, ReplayRequest(id=5, moves=["e2", "e8", "e3h", "e3v", "e3"]))
    assert isinstance(reply, ReplayFrames)
    assert reply.id == 5
    assert [frame.ply for frame in reply.frames] == [0, 1, 2, 3]
    assert reply.frames[0].pawns == ["e1", "e9"]
    assert reply.frames[3].walls == ["e3h"]
    assert reply.frames[3].last_move == "e3h"
    assert reply.error == "move 4 (e3v): wall e3v crosses e3h"
    assert driver.core.rooms == {}


def test_replay_plays_a_four_player_retirement() -> None:
    from protocol.messages import ReplayFrames, ReplayRequest

    driver = Driver()
    conn, _ = driver.greet()
    four = VariantSpec(players=4)
    (reply,) = driver.send(conn, ReplayRequest(variant=four, moves=["e2", "retire 1", "e8"]))
    assert isinstance(reply, ReplayFrames)
    assert reply.error is None
    assert [(f.ply, f.turn, f.last_move) for f in reply.frames] == [
        (0, 0, None),
        (1, 1, "e2"),
        (1, 2, "retire 1"),
        (2, 3, "e8"),
    ]


def test_the_core_counts_an_ipv6_address_by_its_64_whoever_opens_the_connection() -> None:
    """The server's adapter handed the core an address's /64, but a cluster's relay handed
    it the raw address of a client it served again: one /64 had an allowance a host."""
    driver = Driver(limits=Limits(hellos_per_second=0.001, hello_burst=2))
    driver.greet("a", "2001:db8::1")
    driver.greet("b", "2001:db8::2")
    late = driver.open("2001:db8::3")
    (refused,) = driver.send(late, Hello(version=VERSION, name="c"))
    assert isinstance(refused, Error)
    assert refused.code == "rate_limited"
    driver.greet("d", "2001:db8:0:1::1")  # the next /64 is another client


def test_the_games_everyone_reads_have_a_budget_of_their_own() -> None:
    """Each address reads at most 100 games a second, and every address together 500 (an
    outside review: 49 addresses each within its own fetched 4,270 long records a second,
    and the honest players' moves took 30 times longer). Past the server's, ``server_busy``,
    and nothing is spent from the address's."""
    driver = Driver(limits=Limits(games_read_server=2.0))  # 4 at once, then 2 a second
    readers = [driver.greet(f"r{n}", address=f"198.51.100.{n}")[0] for n in range(6)]
    answers = [driver.send(conn, FetchGame(id=n, game=99))[0] for n, conn in enumerate(readers)]
    codes = [answer.code for answer in answers if isinstance(answer, Error)]
    assert codes == ["game_not_found"] * 4 + ["server_busy"] * 2  # 99: no such game
    busy = answers[-1]
    assert isinstance(busy, Error)
    assert busy.message.startswith("the server is reading too many finished games")
    driver.clock.advance(1.0)
    (again,) = driver.send(readers[-1], FetchGame(id="again", game=99))
    assert isinstance(again, Error)
    assert again.code == "game_not_found"


def test_history_listings_count_as_games_read() -> None:
    """A listing counts one game read per 20 games it may list (an outside review: 49
    addresses listing 100 games 4,000 times a second, counted nowhere, took the honest
    players' moves to 472 ms, p99). The address's allowance answers ``rate_limited``,
    everyone's ``server_busy``; a refused listing spends nothing."""
    driver = Driver(limits=Limits(games_read=10.0, games_read_burst=10.0))
    conn, _ = driver.greet("lister", address="198.51.100.7")
    kinds = [type(driver.send(conn, History(limit=100))[0]).__name__ for _ in range(3)]
    assert kinds == ["HistoryList", "HistoryList", "Error"]  # 5 reads each, 10 at once
    driver.clock.advance(0.3)  # 3 reads back: a listing of 20 counts one
    (small,) = driver.send(conn, History(limit=20))
    assert isinstance(small, HistoryList)
    (refused,) = driver.send(conn, History(limit=100))
    assert isinstance(refused, Error)
    assert refused.code == "rate_limited"
    busy = Driver(limits=Limits(games_read_server=2.0))  # 4 at once
    readers = [busy.greet(f"r{n}", address=f"198.51.100.{n}")[0] for n in range(2)]
    (first,) = busy.send(readers[0], History(limit=80))
    (second,) = busy.send(readers[1], History(limit=1))
    assert isinstance(first, HistoryList)
    assert isinstance(second, Error)
    assert second.code == "server_busy"
