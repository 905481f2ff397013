"""A move chosen during the opponent's turn (a premove) in a real Chromium: queued, drawn
translucent, taken back, sent when the turn comes, and refused by the server if illegal then."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, create_room, game_between, open_player, play

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


async def test_a_tap_on_ones_own_pawn_queues_nothing(browser: Browser, site: GameServer) -> None:
    """An outside review: the second tap of a quick double tap on a target, after the move
    went, queued a premove onto the pawn's own square, refused on the next turn."""
    (alice, bob), _ = await game_between(browser, site)
    await alice.click_square("c2")
    await alice.wait_ply(1)
    await alice.click_square("c2")  # where her pawn now stands, Bob to move
    await alice.page.wait_for_timeout(300)
    assert await alice.page.locator(".overlay [data-premove]").count() == 0
    await close_all(alice, bob)


async def test_a_premove_the_server_refuses_is_told_and_nothing_else_happens(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    await play([alice, bob], ["c2"])
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


async def test_a_wall_tapped_during_the_opponents_turn_waits_for_place_wall(
    browser: Browser, site: GameServer
) -> None:
    """An outside review: a phone tap 1 px inside a square's edge queued a wall at once, with no
    Place wall bar, and it was played when the opponent moved."""
    alice = await open_player(browser, site, "Alice")
    code = await create_room(alice)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}", (360, 740), touch=True)
    page = bob.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    queued = page.locator(".overlay [data-premove]")
    bar = page.locator(".wallbar-text")
    confirm = page.locator(".wallbar button.primary")
    box = await page.locator('rect[data-square="c3"]').bounding_box()
    assert box is not None
    edge = (box["x"] + box["width"] / 2, box["y"] + 1)
    # Alice's turn: the tap offers the groove's wall, queues nothing.
    await page.touchscreen.tap(*edge)
    await bar.wait_for(timeout=5000)
    assert await confirm.inner_text() == "Premove"
    assert await queued.count() == 0
    wall = (await bar.inner_text()).removeprefix("Wall ").removesuffix("?")
    await page.click(".wallbar button:has-text('Cancel')")
    assert await queued.count() == 0
    # Confirmed, it is queued; tapped again, taken back; confirmed again, played on the turn.
    await page.touchscreen.tap(*edge)
    await confirm.click()
    await page.wait_for_selector(f'.overlay [data-premove="{wall}"]')
    assert await page.locator(".wallbar").is_hidden()
    await page.touchscreen.tap(*edge)
    await page.locator("#toast").filter(has_text=f"Premove {wall} cancelled.").wait_for()
    assert await queued.count() == 0
    await page.touchscreen.tap(*edge)
    await confirm.click()
    await queued.wait_for()
    await alice.click_square("c2")
    await alice.wait_ply(2)
    await alice.page.wait_for_selector(f'rect.wall[data-wall="{wall}"]')
    # A wall still waiting for Place wall when the turn comes is placed only once confirmed.
    await page.touchscreen.tap(*await bob.wall_point("d3h"))
    await bar.filter(has_text="Wall d3h?").wait_for()
    assert await confirm.inner_text() == "Premove"
    await alice.click_square("b2")
    await bob.wait_ply(3)
    await confirm.filter(has_text="Place wall").wait_for()
    assert await bar.inner_text() == "Wall d3h?"
    assert await page.locator('rect.wall[data-wall="d3h"]').count() == 0
    await confirm.click()
    await alice.wait_ply(4)
    await alice.page.wait_for_selector('rect.wall[data-wall="d3h"]')
    await close_all(alice, bob)
