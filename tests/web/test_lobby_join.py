"""Joining from the lobby's "Join a room" box: a whole pasted link, and a wrong code refused
in the lobby itself (an outside review: the box cut a 39-character link to 32, and a wrong code
first opened the invitation's name page); an empty box said to be empty, and the games being
played listed to watch (outside review ui22, finding 4)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Locator

from server.app import GameServer
from tests.web.pages import close_all, create_room, game_between, open_player

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


async def test_games_in_progress_are_listed_to_watch(browser: Browser, site: GameServer) -> None:
    """An outside review: the lobby gave no way to find a game to watch, and Watch with an
    empty box did nothing and said nothing."""
    (alice, bob), code = await game_between(browser, site)
    dan = await open_player(browser, site, "Dan")
    waiting = await create_room(dan)
    carol = await open_player(browser, site, "Carol", viewport=(360, 740), touch=True)
    page = carol.page
    error = page.locator("form.join .form-error")
    await page.click("form.join button:has-text('Watch')")
    await error.filter(has_text="Type the code or link of the room to watch").wait_for()
    await page.click("form.join button[type=submit]")
    await error.filter(has_text="Type the code or link of the room to join").wait_for()
    assert await page.evaluate("() => document.body.dataset.view") == "lobby"
    await page.fill("form.join input[name=code]", "k")
    await error.wait_for(state="hidden")  # typing answers it
    await page.fill("form.join input[name=code]", "")

    def card(title: str) -> Locator:
        return page.locator("section.card").filter(has=page.locator(f"h2:text-is('{title}')"))

    # The game Alice and Bob play is listed to watch; Dan's room, waiting, to join.
    row = card("Games in progress").locator("tr").filter(has_text="Alice vs Bob")
    await row.wait_for()
    await card("Open rooms").locator("tr").filter(has_text="Dan vs").locator("text=Join").wait_for()
    assert await card("Open rooms").locator("tr").filter(has_text="Alice").count() == 0
    assert await card("Games in progress").locator("tr").filter(has_text="Dan").count() == 0
    await row.locator("button:has-text('Watch')").click()
    await page.wait_for_function("() => document.body.dataset.role === 'spectator'")
    assert page.url.endswith(f"#/watch/{code}")
    assert "Watching" in (await page.locator(".banner").inner_text())
    await close_all(alice, bob, dan, carol)
    assert waiting


async def test_the_new_game_form_offers_the_last_choices_again(
    browser: Browser, site: GameServer
) -> None:
    """An outside review: the board went back to 9x9 after every game. The form keeps the
    last game's choices (privacy excepted), in this tab and the next."""
    alice = await open_player(browser, site, "Alice")
    page = alice.page
    await page.wait_for_selector(".lobby form.create")
    await page.select_option("select[name=clock]", "300+3")
    await page.check("input[name=match]")
    await page.check("input[name=private]")
    await create_room(alice, size=7, walls="6")
    await page.click(".actions button.leave")  # nobody came: leaving asks nothing
    await page.wait_for_selector(".lobby form.create")
    again = await alice.context.new_page()
    await again.goto(f"http://127.0.0.1:{site.port}/")
    for shown in (page, again):
        form = shown.locator("form.create")
        await form.wait_for()
        assert await form.locator("select[name=size]").input_value() == "7"
        assert await form.locator("input[name=walls]").input_value() == "6"
        assert await form.locator("select[name=clock]").input_value() == "300+3"
        assert await form.locator("input[name=match]").is_checked()
        assert not await form.locator("input[name=private]").is_checked()
    await again.close()
    await close_all(alice)
