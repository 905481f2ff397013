"""The home page is the lobby: a session resumed at `/` leaves its room, a game still on
offered back (outside review ui24, finding 1: `/` opened after a finished game showed it)."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, game_between, play

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_opening_the_home_page_after_a_finished_game_shows_the_lobby(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    await alice.resign()
    await alice.page.wait_for_selector(".banner:has-text('Bob wins')")
    # The same tab, its session's resume token kept: `/` typed, or a tab restored there.
    await alice.page.goto(f"http://127.0.0.1:{site.port}/")
    await alice.page.wait_for_function("() => document.body.dataset.link === 'online'")
    await alice.page.locator(".lobby .list").first.wait_for()
    # The resumed session leaves the room (Bob sees her gone), and nothing offers it back.
    await bob.page.locator(".room-note").filter(has_text="Alice").wait_for()
    assert await alice.page.evaluate("() => document.body.dataset.view") == "lobby"
    assert await alice.page.evaluate("() => location.hash") == ""
    assert await alice.page.locator(".kept-seat").count() == 0
    await close_all(alice, bob)


async def test_the_home_page_offers_a_game_in_progress_back(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), code = await game_between(browser, site)
    await play([alice, bob], ["c2"])
    # Back later in the same tab (its session kept), at the lobby's own address.
    # A new page load, as when the address is typed again: another address first would do,
    # but /healthz (no HTML) makes Chromium ask for /favicon.ico, whose 404 shows as a
    # console error some of the time, and about:blank refuses the page's scripts its storage.
    await alice.page.goto(f"http://127.0.0.1:{site.port}/?again#/")
    await alice.page.wait_for_function("() => document.body.dataset.link === 'online'")
    assert await alice.page.evaluate("() => location.hash") == "#/"
    kept = alice.page.locator(".kept-seat")
    await kept.filter(has_text=code).wait_for()
    await bob.page.wait_for_selector('.player[data-seat="0"] .away')
    assert await alice.page.evaluate("() => document.body.dataset.view") == "lobby"
    await kept.locator("text=Back to your game").click()
    await alice.wait_ply(1)
    assert await alice.page.evaluate("() => document.body.dataset.seat") == "0"
    await bob.click_square("c4")
    await alice.wait_ply(2)
    assert "Your move" in await alice.banner()
    await close_all(alice, bob)


async def test_a_game_that_ended_while_its_tab_was_closed_is_not_offered_back(
    browser: Browser, short_grace_site: GameServer
) -> None:
    """An outside review: a game that ended while no tab of the player was open (the opponent
    claimed it) was offered back from the lobby, which remembers the room. It says how it
    ended instead."""
    site = short_grace_site
    (alice, bob), _ = await game_between(browser, site)
    await play([alice, bob], ["c2", "c4"])
    await alice.page.close()
    await bob.page.click(".actions button.claim")  # enabled once Alice's grace is over
    await bob.page.wait_for_selector(".banner:has-text('Bob wins')")
    # A new tab, a new session: only the browser's storage remembers the room.
    page = alice.page = await alice.context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/")
    ended = page.locator(".kept-ended")
    await ended.wait_for()
    said = "Your game against Bob ended: Bob won (the opponent abandoned)."
    assert await ended.inner_text() == said
    assert said in await page.locator("#announcer").inner_text()
    assert await page.locator(".kept-seat").count() == 0
    await close_all(alice, bob)


async def test_a_game_that_ends_while_the_lobby_is_shown_is_no_longer_offered(
    browser: Browser, short_grace_site: GameServer
) -> None:
    (alice, bob), code = await game_between(browser, short_grace_site)
    await play([alice, bob], ["c2", "c4"])
    await alice.page.click(".actions button.leave")
    await alice.page.click(".actions button.leave-confirm")
    await alice.page.locator(".kept-seat").filter(has_text=code).wait_for()
    await bob.page.click(".actions button.claim")
    # The lobby looks again at each of its refreshes (every 4 s).
    ended = alice.page.locator(".kept-ended")
    await ended.wait_for()
    assert "Bob won" in await ended.inner_text()
    assert await alice.page.locator(".kept-seat").count() == 0
    await close_all(alice, bob)


async def test_a_room_the_server_has_closed_is_not_offered_back(
    browser: Browser, short_grace_site: GameServer
) -> None:
    site = short_grace_site
    (alice, bob), code = await game_between(browser, site)
    await play([alice, bob], ["c2", "c4"])
    await alice.page.close()
    await close_all(bob)
    # Every player away past the grace period: the game is aborted and the room forgotten.
    while code in site.core.host.rooms:  # noqa: ASYNC110 (not signalled)
        await asyncio.sleep(0.05)
    page = alice.page = await alice.context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/")
    closed = page.locator(".kept-ended")
    await closed.wait_for()
    assert await closed.inner_text() == f"Room {code} is closed: there is no game to go back to."
    assert await page.locator(".kept-seat").count() == 0
    await close_all(alice)
