"""Hints, takebacks and the spectators' evaluation in a real Chromium."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from protocol.messages import Create, Join, MoveRequest, State
from server.app import GameServer
from tests.web.pages import Player, close_all, create_room, open_player, play_the_computer
from tests.wsclient import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def watched_game(
    browser: Browser, site: GameServer, bob_allows: bool
) -> tuple[Client, Client, Player]:
    """Alice and Bob (protocol clients) in a game, Fan watching it in a browser: Alice lets
    spectators follow the evaluation, Bob as ``bob_allows`` says."""
    url = f"ws://127.0.0.1:{site.port}"
    alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
    await alice.send(Create(spectator_eval=True))
    while not isinstance(state := await alice.recv(), State):
        pass
    await bob.send(Join(room=state.room, spectator_eval=bob_allows))
    fan = await open_player(browser, site, "Fan", f"/#/watch/{state.room}")
    return alice, bob, fan


async def test_a_spectator_follows_the_evaluation(browser: Browser, site: GameServer) -> None:
    alice, bob, fan = await watched_game(browser, site, bob_allows=True)
    await fan.page.click("text=Follow evaluation")
    await fan.page.wait_for_selector(".eval-bar:not([hidden])")
    await alice.send(MoveRequest(move="e2", ply=0))
    await fan.page.wait_for_function("() => document.body.dataset.evaluated === '1'", timeout=30000)
    text = await fan.page.locator(".eval-bar").text_content()
    assert text is not None
    # In words (outside review ui22, finding 11: "Alice 0%" and "(+0.5)" were not explained).
    assert text.startswith("Alice's chances ")
    assert " steps ahead · " in text or " level in the race · " in text
    assert "best " in text
    assert await fan.page.locator(".eval-bar").get_attribute("aria-label") == "Alice's chances"
    assert not [m for m in alice.seen + bob.seen if type(m).__name__ == "Evaluation"]
    assert fan.errors == []
    await alice.close()
    await bob.close()
    await close_all(fan)


async def test_spectators_are_not_offered_an_evaluation_the_players_did_not_allow(
    browser: Browser, site: GameServer
) -> None:
    """The button only ever said "No evaluation here" when pressed: it is not there."""
    alice, bob, fan = await watched_game(browser, site, bob_allows=False)
    await fan.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await fan.page.wait_for_selector(".actions button.leave")
    assert await fan.page.locator(".actions button:has-text('evaluation')").count() == 0
    assert fan.errors == []
    await alice.close()
    await bob.close()
    await close_all(fan)


async def test_players_in_browsers_let_spectators_follow_the_evaluation(
    browser: Browser, site: GameServer
) -> None:
    """The lobby's box, ticked by both players (remembered by each browser, sent with the
    create and with the join by link), is what lets a spectator follow the evaluation."""
    alice, bob = [await open_player(browser, site, name) for name in ("Alice", "Bob")]
    for player in (alice, bob):
        await player.page.check("input[name=spectator_eval]")
    code = await create_room(alice)
    await bob.page.goto(f"http://127.0.0.1:{site.port}/#/room/{code}")
    await bob.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await bob.page.reload()  # the choice is kept by the browser
    assert await bob.page.locator("input[name=spectator_eval]").count() == 0  # in the game
    fan = await open_player(browser, site, "Fan", f"/#/watch/{code}")
    await fan.page.click("text=Follow evaluation")
    await fan.page.wait_for_selector(".eval-bar:not([hidden])")
    await fan.page.wait_for_function("() => document.body.dataset.evaluated", timeout=30000)
    await close_all(alice, bob, fan)


async def test_a_player_who_allowed_the_evaluation_alone_is_told_spectators_cannot_follow(
    browser: Browser, site: GameServer
) -> None:
    """Only every player's consent lets spectators follow the evaluation: a player who ticked
    the box, facing one who did not, is told so at the game's start (an outside review ticked
    it, and its spectators got nothing, with no word why)."""
    alice, bob = [await open_player(browser, site, name) for name in ("Alice", "Bob")]
    await alice.page.check("input[name=spectator_eval]")
    code = await create_room(alice)
    await bob.page.goto(f"http://127.0.0.1:{site.port}/#/room/{code}")
    await alice.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    note = "Spectators cannot follow the evaluation of this game"
    await alice.page.wait_for_selector(f".room-note:has-text('{note}')")
    await bob.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await bob.page.locator(f".room-note:has-text('{note}')").count() == 0  # not his choice
    await close_all(alice, bob)


async def test_hint_and_take_back_against_the_computer(browser: Browser, site: GameServer) -> None:
    player = await play_the_computer(browser, site)
    page = player.page
    # The computer never agrees to a draw: no button to offer one (it stood unanswered).
    await page.wait_for_selector("button:has-text('Resign')")
    assert await page.locator("button:has-text('Offer draw')").count() == 0
    await page.click("text=Hint")
    await page.wait_for_selector("text=Hint: the computer would play")
    await player.click_square("c2")
    await page.wait_for_function("() => document.body.dataset.ply === '2'", timeout=20000)
    await page.click("text=Take back")
    await page.wait_for_function("() => document.body.dataset.ply === '0'")
    # Leaving says what happens: the computer never claims, the game is lost after the grace.
    await page.click(".actions button.leave")
    note = await page.locator(".leave-note").inner_text()
    assert "the game is lost" in note, note
    assert "claim" not in note, note
    assert await page.locator(".actions button:has-text('Hint')").count() == 0  # asked alone
    await page.click(".actions button.stay")
    assert player.errors == []
    await close_all(player)
