"""The wall a click or tap picks is the one under the pointer, in the orientation chosen: where
none may go, that wall goes to the server and its refusal is shown, never a neighbour placed in
its stead (an outside review: a click on a turned wall's spot placed f5v, e4h, e4v)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser

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
    assert await page.locator(".overlay .ghost").count() == 0
    await page.mouse.click(x, y)
    await page.locator("#toast").filter(has_text=REFUSED).wait_for()
    # R turns it back, and a small move on the same spot shows no neighbour's ghost either.
    await page.focus("svg.board")
    await page.keyboard.press("r")
    await page.mouse.move(x + 2, y + 1)
    await page.mouse.move(x - 1, y - 2)
    assert await page.locator(".overlay .ghost").count() == 0
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


async def test_a_tap_on_a_placed_wall_offers_no_other_wall(
    browser: Browser, site: GameServer
) -> None:
    phone = await open_player(browser, site, "Alice", viewport=(360, 740), touch=True)
    code = await create_room(phone, size=9)
    desk = await open_player(browser, site, "Bob", f"/#/room/{code}")
    await phone.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    ply = 0
    if await phone.page.evaluate("() => document.body.dataset.seat") != "0":
        await desk.click_square("e8")
        ply = 1
        await phone.wait_ply(ply)
    bar = phone.page.locator(".wallbar-text")
    await phone.page.touchscreen.tap(*await phone.wall_point("e5h"))
    await bar.filter(has_text="Wall e5h?").wait_for()
    await phone.page.click("text=Place wall")
    await desk.wait_ply(ply + 1)
    square = await desk.page.locator("circle.target").first.get_attribute("data-target")
    assert square is not None
    await desk.click_square(square)
    await phone.wait_ply(ply + 2)
    for point in (await middle(phone, "e5h"), await phone.wall_point("e5h")):
        await phone.page.touchscreen.tap(*point)
        await phone.page.locator("#toast").filter(has_text=REFUSED).wait_for()
        assert await phone.page.locator(".wallbar").is_hidden()
        await phone.page.evaluate("() => { document.getElementById('toast').hidden = true; }")
    # A wall that may go is offered; Rotate, where the turned wall may not stand, keeps it and
    # says why.
    await phone.page.touchscreen.tap(*await phone.wall_point("d5v"))
    await bar.filter(has_text="Wall d5v?").wait_for()
    await phone.page.click("text=Rotate")
    await phone.page.locator("#toast").filter(has_text="Wall d5h overlaps e5h").wait_for()
    assert await bar.inner_text() == "Wall d5v?"
    await phone.page.click("text=Place wall")
    await desk.wait_ply(ply + 3)
    assert await walls_on_board(desk) == {"e5h", "d5v"}
    await close_all(phone, desk)
