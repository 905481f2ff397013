"""The wall a click or tap picks is the one under the pointer, in the orientation chosen: where
none may go, a click sends that wall to the server and shows its refusal, a tap shows it in the
wall bar, greyed with that refusal, to be turned; never a neighbour placed in its stead (an
outside review: a click on a turned wall's spot placed f5v, e4h, e4v)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, Locator

from server.app import GameServer
from tests.web.pages import Player, close_all, create_room, open_player

pytestmark = pytest.mark.asyncio(loop_scope="session")

REFUSED = re.compile(r"Wall e5[hv] (crosses e5[hv]|is already on the board)")


async def middle(player: Player, wall: str) -> tuple[float, float]:
    """The middle of a wall: the groove crossing between its two pairs of squares."""
    col, row = ord(wall[0]) - 97, int(wall[1:-1])
    (ax, ay), (bx, by) = await player.centers(wall[:-1], f"{chr(97 + col + 1)}{row + 1}")
    return (ax + bx) / 2, (ay + by) / 2


async def walls_on_board(player: Player) -> set[str]:
    found = await player.page.locator("g.pieces rect.wall").evaluate_all(
        "(walls) => walls.map((wall) => wall.dataset.wall)"
    )
    return set(found)


async def test_a_turned_click_on_a_wall_is_refused_not_moved_next_door(
    browser: Browser, site: GameServer
) -> None:
    alice = await open_player(browser, site, "Alice", viewport=(1440, 900))
    code = await create_room(alice, size=9)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}", viewport=(1440, 900))
    for player in (alice, bob):
        await player.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await alice.page.evaluate("() => document.body.dataset.seat") == "0"
    await alice.place_wall("e5h")
    await bob.wait_ply(1)
    await bob.click_square("e8")
    await alice.wait_ply(2)
    page = alice.page
    x, y = await middle(alice, "e5h")
    await page.mouse.move(x, y)
    await page.mouse.click(x, y, button="right")  # turned: the wall there may not go either way
    assert await page.locator(".overlay .ghost:not(.refused)").count() == 0
    red = page.locator(".overlay .ghost.refused")  # drawn red where it may not go
    assert await red.get_attribute("data-wall") == "e5v"
    await page.mouse.click(x, y)
    await page.locator("#toast").filter(has_text=REFUSED).wait_for()
    # R turns it back, and a small move on the same spot shows no neighbour's ghost either.
    await page.focus("svg.board")
    await page.keyboard.press("r")
    await page.mouse.move(x + 2, y + 1)
    await page.mouse.move(x - 1, y - 2)
    assert await page.locator(".overlay .ghost:not(.refused)").count() == 0
    assert await red.get_attribute("data-wall") in ("e5h", "e5v")  # this spot's, red
    await page.mouse.click(x, y)
    await page.locator("#toast").filter(has_text=REFUSED).wait_for()
    assert await page.evaluate("() => document.body.dataset.ply") == "2"
    assert await walls_on_board(alice) == {"e5h"}
    # A legal wall nearby is still shown and placed where pointed.
    assert await alice.hover_wall("g5h") == "g5h"
    await alice.place_wall("g5h")
    await bob.wait_ply(3)
    # Bob sees the board turned: the same click at the same wall is refused too.
    x, y = await middle(bob, "e5h")
    await bob.page.mouse.move(x, y)
    await bob.page.mouse.click(x, y, button="right")
    await bob.page.mouse.click(x, y)
    await bob.page.locator("#toast").filter(has_text=REFUSED).wait_for()
    assert await bob.page.evaluate("() => document.body.dataset.ply") == "3"
    assert await walls_on_board(bob) == {"e5h", "g5h"}
    await close_all(alice, bob)


async def within_the_bar(why: Locator) -> bool:
    """Whether the bar's reason is in the bar, under its buttons, and on the screen."""
    return bool(
        await why.evaluate(
            """(why) => {
                const w = why.getBoundingClientRect();
                const b = why.closest('.wallbar').getBoundingClientRect();
                const row = why.closest('.wallbar').querySelector('.wallbar-row');
                return w.left >= b.left && w.right <= b.right && w.bottom <= b.bottom
                    && w.top >= row.getBoundingClientRect().bottom
                    && w.left >= 0 && w.right <= innerWidth;
            }"""
        )
    )


async def test_a_tap_where_no_wall_may_go_shows_the_bar_to_turn_it(
    browser: Browser, site: GameServer
) -> None:
    """A tap on a groove where the wall may not go shows it in the wall bar, greyed with the
    server's reason, so that Rotate can try the other way (outside review ui22, finding 8: it
    was sent at once and refused, with no bar). Never a neighbour offered in its stead."""
    phone = await open_player(browser, site, "Alice", viewport=(360, 740), touch=True)
    code = await create_room(phone, size=9)
    desk = await open_player(browser, site, "Bob", f"/#/room/{code}")
    await phone.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    ply = 0
    if await phone.page.evaluate("() => document.body.dataset.seat") != "0":
        await desk.click_square("e8")
        ply = 1
        await phone.wait_ply(ply)
    page = phone.page
    bar = page.locator(".wallbar-text")
    why = page.locator(".wallbar-why")
    place = page.locator(".wallbar button:has-text('Place wall')")
    await page.touchscreen.tap(*await phone.wall_point("e3h"))
    await bar.filter(has_text="Wall e3h?").wait_for()
    assert await why.is_hidden()
    await place.click()
    await desk.wait_ply(ply + 1)
    square = await desk.page.locator("circle.target").first.get_attribute("data-target")
    assert square is not None
    await desk.click_square(square)
    await phone.wait_ply(ply + 2)
    # On the wall placed (its middle, and off it along the groove): e3h or e5v, refused.
    for point in (await middle(phone, "e3h"), await phone.wall_point("e3h")):
        await page.touchscreen.tap(*point)
        await bar.filter(has_text=re.compile(r"Wall e3[hv]\?")).wait_for()
        await why.filter(
            has_text=re.compile(r"Wall e3[hv] (crosses e3[hv]|is already on the board)")
        ).wait_for()
        assert await place.is_disabled()
        assert await within_the_bar(why)
        shown = await page.locator(".overlay .ghost.refused").get_attribute("data-wall")
        assert shown in ("e3h", "e3v")
        await page.click(".wallbar button:has-text('Cancel')")
        await page.locator(".wallbar").wait_for(state="hidden")
    # f3h overlaps e3h: shown refused, Rotate turns it to f3v, which may go, and places it.
    await page.touchscreen.tap(*await phone.wall_point("f3h"))
    await bar.filter(has_text="Wall f3h?").wait_for()
    await why.filter(has_text="Wall f3h overlaps e3h").wait_for()
    assert await place.is_disabled()
    assert await within_the_bar(why)
    await page.click("text=Rotate")
    await bar.filter(has_text="Wall f3v?").wait_for()
    assert await why.is_hidden()
    assert await place.is_enabled()
    await page.click("text=Rotate")  # and back: refused again, saying why
    await why.filter(has_text="Wall f3h overlaps e3h").wait_for()
    await page.click("text=Rotate")
    await bar.filter(has_text="Wall f3v?").wait_for()
    assert await page.evaluate("() => document.body.dataset.ply") == str(ply + 2)
    await place.click()
    await desk.wait_ply(ply + 3)
    assert await walls_on_board(desk) == {"e3h", "f3v"}
    await close_all(phone, desk)
