"""Declining a rematch (PROTOCOL.md section 15), over real sockets: every request is
withdrawn, everyone in the room reads who declined, and the one who asked may ask again."""

from __future__ import annotations

from protocol.messages import (
    AiSpec,
    Create,
    Draw,
    Join,
    Joined,
    Rematch,
    Resign,
    State,
    Watch,
)
from tests.server.conftest import Connect
from tests.server.driver import Driver
from tests.wsclient import Client


async def finished_game(connect: Connect) -> tuple[Client, Client, Client]:
    """Alice (seat 0) and Bob (seat 1) after Bob resigned, and Eve watching; each has read
    every state up to the finished game's."""
    a, b, eve = await connect("alice"), await connect("bob"), await connect("eve")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    await eve.send(Watch(room=room))
    await eve.expect(Joined)
    await b.send(Resign(id="gg"))
    for client in (a, b, eve):
        while (await client.state()).id != "gg":
            pass
    return a, b, eve


async def test_a_decline_withdraws_the_request_and_tells_the_whole_room(
    connect: Connect,
) -> None:
    a, b, eve = await finished_game(connect)
    await a.send(Rematch(id="again"))
    for client in (a, b, eve):
        asked = await client.state()
        assert (asked.rematch, asked.rematch_declined) == ([0], None)
    await b.send(Rematch(id="no", action="decline"))
    for client in (a, b, eve):
        declined = await client.state()
        assert (declined.id, declined.status, declined.game) == ("no", "finished", 1)
        assert (declined.rematch, declined.rematch_declined) == ([], 1)


async def test_the_one_declined_may_ask_again_and_the_decline_clears(connect: Connect) -> None:
    a, b, eve = await finished_game(connect)
    await a.send(Rematch())
    await b.send(Rematch(action="decline"))
    for client in (a, b, eve):
        while (await client.state()).rematch_declined != 1:
            pass
    await a.send(Rematch(id="please"))
    for client in (a, b, eve):
        again = await client.state()
        assert (again.id, again.rematch, again.rematch_declined) == ("please", [0], None)
    await b.send(Rematch(id="ok"))  # an old client's request, no action: agreed
    assert (await b.expect(Joined)).seat == 0  # the seats turned
    new_game = await b.state()
    assert (new_game.id, new_game.status, new_game.game) == ("ok", "playing", 2)
    assert (new_game.rematch, new_game.rematch_declined) == ([], None)


async def test_a_decline_with_nothing_to_decline_is_refused(connect: Connect) -> None:
    a, b, eve = await finished_game(connect)
    await b.send(Rematch(id="nothing", action="decline"))
    refused = await b.error("no_offer")
    assert refused.id == "nothing"
    assert isinstance(refused.state, State)
    assert refused.state.rematch_declined is None
    await a.send(Rematch())
    for client in (a, b, eve):
        assert (await client.state()).rematch == [0]
    await a.send(Rematch(id="mine", action="decline"))  # only your own request stands
    assert (await a.error("no_offer")).id == "mine"
    await eve.send(Rematch(action="decline"))
    await eve.error("not_a_player")
    await b.quiet()  # nothing changed for anyone


async def test_a_decline_during_the_game_is_refused(connect: Connect) -> None:
    a, b = await connect("alice"), await connect("bob")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    while (await b.state()).status != "playing":
        pass
    await a.send(Draw(action="offer"))
    await b.state()
    await b.send(Rematch(id="early", action="decline"))
    assert (await b.error("game_not_over")).id == "early"


def test_there_is_no_rematch_to_decline_against_the_computer() -> None:
    """The computer asks only with its person, whose request starts the game at once
    (section 17a): nothing of its own stands to be declined."""
    driver = Driver()
    conn, _ = driver.greet("human")
    driver.send(conn, Create(ai=AiSpec(level=1)))
    driver.send(conn, Resign())
    (refused,) = driver.send(conn, Rematch(action="decline"))
    assert getattr(refused, "code", None) == "no_offer"
    driver.send(conn, Rematch())
    assert (driver.last_state(conn).game, driver.last_state(conn).status) == (2, "playing")
