"""A move chosen during the opponent's turn (a premove) in a real Chromium: queued, drawn
translucent, taken back, sent when the turn comes, and refused by the server if illegal then."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, create_room, game_between, open_player

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_premove_is_queued_shown_cancelled_and_sent_on_the_turn(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    queued = bob.page.locator(".overlay [data-premove]")
    toast = bob.page.locator("#toast")
    # Alice's turn: Bob's click queues a move, drawn apart (no piece of the board).
    await bob.click_square("d5")
    await queued.wait_for()
    assert await queued.get_attribute("data-premove") == "d5"
    assert "premove" in (await queued.get_attribute("class") or "")
    assert await bob.page.locator("svg.board [data-pawn]").count() == 2
    # Another replaces it; clicking it again takes it back; so does Escape.
    await bob.click_square("c4")
    await bob.page.wait_for_selector('.overlay [data-premove="c4"]')
    assert await queued.count() == 1
    await bob.click_square("c4")
    await toast.filter(has_text="Premove c4 cancelled.").wait_for()
    assert await queued.count() == 0
    await bob.click_square("c4")
    await queued.wait_for()
    await bob.page.keyboard.press("Escape")
    await queued.wait_for(state="detached")
    await bob.click_square("c4")
    await queued.wait_for()
    # Alice moves: Bob's turn, and his move goes at once, with nothing more to do.
    await alice.click_square("c2")
    await alice.wait_ply(2)
    assert await alice.page.locator('svg.board [data-pawn="1"]').get_attribute("aria-label") == (
        "blue pawn on c4"
    )
    assert await queued.count() == 0
    await alice.click_square("c3")
    await alice.wait_ply(3)
    # A wall queued the same way, placed when the turn comes.
    await alice.place_wall("a1h")
    await alice.page.wait_for_selector('.overlay [data-premove="a1h"]')
    assert await alice.page.locator('rect.wall[data-wall="a1h"]').count() == 0
    await bob.click_square("b4")
    await alice.wait_ply(5)
    await alice.page.wait_for_selector('rect.wall[data-wall="a1h"]')
    await close_all(alice, bob)


async def test_a_premove_the_server_refuses_is_told_and_nothing_else_happens(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    await alice.click_square("c2")
    await bob.wait_ply(1)
    await alice.click_square("c5")  # Bob's turn: queued; two squares away when it comes
    await alice.page.wait_for_selector('.overlay [data-premove="c5"]')
    await bob.click_square("b5")
    refused = alice.page.locator("#toast").filter(has_text="Premove c5 not played.")
    await refused.wait_for()
    assert "c5 is not one step or jump away from c2" in await refused.inner_text()
    # Still her turn, at the same ply, with nothing queued: she plays as usual.
    assert await alice.page.evaluate("document.body.dataset.ply") == "2"
    assert "Your move" in await alice.banner()
    assert await alice.page.locator(".overlay [data-premove]").count() == 0
    await alice.click_square("c3")
    await bob.wait_ply(3)
    await close_all(alice, bob)


async def test_a_phone_is_told_to_tap_a_premove_again_not_to_click(
    browser: Browser, site: GameServer
) -> None:
    alice = await open_player(browser, site, "Alice")
    code = await create_room(alice)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}", (360, 740), touch=True)
    await bob.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await bob.page.touchscreen.tap(*await bob.square_center("c4"))  # Alice's turn: queued
    await bob.page.wait_for_selector('.overlay [data-premove="c4"]')
    told = await bob.page.locator("#toast").inner_text()
    assert "c4 is played when yours comes (tap it again to cancel)" in told, told
    assert "click" not in told.lower()
    await close_all(alice, bob)
