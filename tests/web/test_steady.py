"""The phone's game page keeps its board where it is while the status lines come and go (an
outside review: the board shrank and moved by up to 44 px as "You have 59 s…" or "away, claim
in 13 s" appeared, so a tap as the opponent's move arrived could land on another square)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import Player, close_all, create_room, open_player

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def board_box(player: Player) -> tuple[float, float, float, float]:
    box = await player.page.locator("svg.board").bounding_box()
    assert box is not None
    return box["x"], box["y"], box["width"], box["height"]


@pytest.mark.parametrize("clock", ["", "300+3"])
async def test_the_phone_board_stays_put_while_status_lines_change(
    browser: Browser, site: GameServer, clock: str
) -> None:
    alice = await open_player(browser, site, "Alice", viewport=(360, 740), touch=True)
    code = await create_room(alice, size=9, clock=clock)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    page = alice.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await page.evaluate("() => document.body.dataset.seat") == "0"
    await page.locator(".countdown").filter(has_text="You have").wait_for()
    boxes = {"your first-move countdown": await board_box(alice)}
    await page.touchscreen.tap(*await alice.square_center("e2"))
    await bob.wait_ply(1)
    await page.locator(".countdown").filter(has_text="Bob has").wait_for()
    boxes["Bob's first-move countdown"] = await board_box(alice)
    await bob.click_square("e8")
    await alice.wait_ply(2)
    await page.locator(".countdown").wait_for(state="hidden")
    boxes["no countdown"] = await board_box(alice)
    await bob.page.click(".actions button.leave")
    await bob.page.click(".actions button.leave-confirm")
    await page.locator(".away").filter(has_text="claim in").wait_for()
    boxes["Bob away"] = await board_box(alice)
    first = boxes["your first-move countdown"]
    for moment, box in boxes.items():
        assert box == first, (moment, box, first)
    await close_all(alice, bob)


async def test_the_board_spans_a_phone_and_a_sideways_phone_keeps_it_beside_the_column(
    browser: Browser, site: GameServer
) -> None:
    """An outside review: a 360x740 phone got a 282-pixel board over empty space under the
    move list, and held sideways (740x360) a 160-pixel one over the side column."""
    alice = await open_player(browser, site, "Alice", viewport=(360, 740), touch=True)
    code = await create_room(alice, size=9)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    page = alice.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    x, _, width, _ = await board_box(alice)
    assert (x, width) == (8, 344)  # the screen's width but the page's margins
    banner = await page.locator(".banner").bounding_box()
    actions = await page.locator(".side button:has-text('Resign')").bounding_box()
    assert banner is not None
    assert actions is not None
    assert actions["y"] + actions["height"] <= 740  # the buttons show without scrolling
    await page.set_viewport_size({"width": 740, "height": 360})
    x, y, width, height = await board_box(alice)
    side = await page.locator(".side").bounding_box()
    assert side is not None
    assert width >= 280
    assert y + height <= 360
    assert side["x"] >= x + width  # beside the board, not under it
    await close_all(alice, bob)
