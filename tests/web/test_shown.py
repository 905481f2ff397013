"""Shown on the screen, not only to a pointer's hover or a screen reader (outside review
ui24): the wall bar through a dropped link (finding 5), the analysis's legend and its marks'
reasons (finding 6), hints and better moves on the board (finding 7), the keys (finding 8)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, create_room, game_between, open_player, play_the_computer
from tests.web.test_analysis import finished_game

pytestmark = pytest.mark.asyncio(loop_scope="session")

OFFLINE = "ERR_INTERNET_DISCONNECTED"  # Chromium logs each attempt made offline: expected


async def test_on_a_phone_the_wall_bar_waits_for_the_link(
    browser: Browser, site: GameServer
) -> None:
    """The bar stays, Place greyed with the reason, and places the wall once the link is back
    (it closed without a word)."""
    alice = await open_player(browser, site, "Alice", viewport=(360, 740), touch=True)
    code = await create_room(alice, size=9)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    page = alice.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await page.touchscreen.tap(*await alice.wall_point("e5h"))
    bar = page.locator(".wallbar")
    await bar.filter(has_text="Wall e5h?").wait_for()
    await alice.context.set_offline(True)
    why = "Not connected: you can place it once the connection is back."
    await bar.locator(".wallbar-why").filter(has_text=why).wait_for(timeout=5000)
    assert await bar.is_visible()
    assert await bar.locator("button.primary").is_disabled()
    assert await page.locator(".overlay .ghost.pending:not(.refused)").count() == 1
    await alice.context.set_offline(False)
    await page.wait_for_function("() => document.body.dataset.link === 'online'")
    await bar.locator("button.primary:enabled:text-is('Place wall')").click()
    await bob.wait_ply(1)
    assert await bob.page.locator('.pieces .wall[data-wall="e5h"]').count() == 1
    alice.errors[:] = [error for error in alice.errors if OFFLINE not in error]
    await close_all(alice, bob)


async def test_the_analysis_has_a_legend_and_its_marks_say_why_on_a_tap(
    browser: Browser, site: GameServer
) -> None:
    await finished_game(site)
    viewer = await open_player(browser, site, "Viewer", "/#/replay/1")
    page = viewer.page
    await page.wait_for_function("() => document.body.dataset.replay === '16'")
    await page.click("text=Analyse")
    await page.wait_for_function("() => document.body.dataset.analysed === '1'", timeout=60000)
    legend = await page.locator(".graph-legend").inner_text()
    assert "Alice's chances after each move" in legend, legend
    assert "?! inaccuracy · ? mistake · ?? blunder" in legend, legend
    # The blunder, picked from the graph (its tick) as from the list: why, in words, how it
    # goes wrong (the line after it, with the players' names), and on the board the better
    # move and the reply, in Bob's colour.
    box = await page.locator(".eval-graph svg").bounding_box()
    assert box is not None
    assert await page.locator('.eval-graph .tick.blunder[data-ply="15"]').count() == 1
    await page.mouse.click(box["x"] + box["width"] * 15 / 16, box["y"] + box["height"] / 2)
    await page.wait_for_function("() => document.body.dataset.replay === '15'")
    why = page.locator(".mark-why")
    assert await why.inner_text() == (
        "b3?? was a blunder: Alice's chances 100% before it, 0% after."
        " Better: b1h, marked on the board."
        " After b3, best play goes: c1 (Bob, drawn in Bob's colour)."
    )
    assert await page.locator('svg.board .overlay [data-hint="b1h"]').count() == 1
    assert await page.locator('svg.board .overlay [data-reply="c1"].seat1').count() == 1
    # Another move: the mark and the drawing go.
    await page.click('.movelist button[data-ply="16"]')
    await page.wait_for_function("() => document.body.dataset.replay === '16'")
    assert await why.is_hidden()
    assert await page.locator("svg.board [data-hint], svg.board [data-reply]").count() == 0
    await close_all(viewer)


async def test_on_a_phone_a_marked_move_tapped_in_the_list_shows_why(
    browser: Browser, site: GameServer
) -> None:
    """The reason sits at the top of the side column, which scrolls on a phone: a move tapped
    far down the list had it out of sight (an outside review); the column scrolls to it."""
    await finished_game(site)
    viewer = await open_player(browser, site, "Viewer", "/#/replay/1", viewport=(360, 740))
    page = viewer.page
    await page.wait_for_function("() => document.body.dataset.replay === '16'")
    await page.click("text=Analyse")
    await page.wait_for_function("() => document.body.dataset.analysed === '1'", timeout=60000)
    await page.locator(".side").evaluate("(side) => { side.scrollTop = side.scrollHeight; }")
    await page.click('.movelist button[data-ply="15"]')
    await page.wait_for_function("() => document.body.dataset.replay === '15'")
    why = await page.locator(".mark-why").bounding_box()
    side = await page.locator(".side").bounding_box()
    assert why is not None
    assert side is not None
    assert side["y"] - 1 <= why["y"]
    assert why["y"] + why["height"] <= side["y"] + side["height"] + 1
    await close_all(viewer)


async def test_a_hint_is_drawn_on_the_board_until_the_next_move(
    browser: Browser, site: GameServer
) -> None:
    player = await play_the_computer(browser, site)
    page = player.page
    await page.click("text=Hint")
    toast = page.locator("#toast").filter(has_text="Hint: the computer would play")
    await toast.wait_for()
    hint = page.locator("svg.board .overlay [data-hint]")
    await hint.wait_for()
    move = await hint.get_attribute("data-hint")
    assert move is not None
    assert f"would play {move} (marked on the board)" in await toast.inner_text()
    await player.click_square("c2")
    await page.wait_for_function("() => document.body.dataset.ply === '2'", timeout=20000)
    assert await hint.count() == 0
    await close_all(player)


async def test_the_keys_are_shown_to_a_keyboard_not_on_a_phone(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    keys = alice.page.locator(".side details.keys")
    await keys.locator("summary:text-is('Keys')").click()
    listed = await keys.locator("li").all_inner_texts()
    assert "W walls: the cursor walks the groove crossings" in listed, listed
    assert "/ the move box: type e2 or e3h" in listed, listed
    phone = await open_player(browser, site, "Pat", viewport=(360, 740), touch=True)
    await create_room(phone, size=5)
    assert await phone.page.locator(".side details.keys").count() == 1
    assert await phone.page.locator(".side details.keys").is_hidden()
    await close_all(alice, bob, phone)
