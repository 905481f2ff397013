"""Joining from the lobby's "Join a room" box: a whole pasted link, and a wrong code refused
in the lobby itself (an outside review: the box cut a 39-character link to 32, and a wrong code
first opened the invitation's name page)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, create_room, open_player

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_pasted_link_of_any_length_joins_its_room(
    browser: Browser, site: GameServer
) -> None:
    alice = await open_player(browser, site, "Alice")
    code = await create_room(alice)
    bob = await open_player(browser, site, "Bob")
    # Longer than 32 characters, as any real server's link is (a long host name too).
    link = f"http://quoridor.example.org:{site.port}/#/room/{code}"
    assert len(link) > 40
    await bob.page.fill("form.join input[name=code]", link)
    assert await bob.page.input_value("form.join input[name=code]") == link
    await bob.page.click("form.join button[type=submit]")
    await bob.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert bob.page.url.endswith(f"#/room/{code}")
    await close_all(alice, bob)


async def test_a_wrong_code_is_refused_in_the_lobby(browser: Browser, site: GameServer) -> None:
    # A browser that never chose a name: the lobby shows the one made up for it.
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/")
    await page.wait_for_function("() => document.body.dataset.link === 'online'")
    await page.fill("form.join input[name=code]", "nosuchroom")
    await page.click("form.join button[type=submit]")
    await page.locator("#toast").filter(has_text="There is no room nosuchroom.").wait_for()
    assert await page.locator(".join-as").count() == 0
    assert await page.evaluate("() => document.body.dataset.view") == "lobby"
    await context.close()
