"""Whole games in a real Chromium: two browsers by clicks, rematch, replay."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, game_between

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_two_browsers_play_a_game_with_a_wall_and_a_jump(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), code = await game_between(browser, site)
    assert "Your move" in await alice.banner()
    assert "Alice to move" in await bob.banner()
    # c2 c4 d3h c3 c4 (jumping Bob) c2 c5: Alice wins on a 5x5 board.
    plan = ["c2", "c4", "d3h", "c3", "c4", "c2", "c5"]
    latencies = []
    for ply, move in enumerate(plan):
        mover, other = (alice, bob) if ply % 2 == 0 else (bob, alice)
        if move.endswith("h"):
            await mover.place_wall(move)
        else:
            await mover.click_square(move)
        await other.wait_ply(ply + 1)
        await mover.wait_ply(ply + 1)
        latencies.append(
            await other.page.evaluate("window.quoridorTimes.render")
            - await mover.page.evaluate("window.quoridorTimes.input")
        )
    assert await alice.page.locator('rect.wall[data-wall="d3h"]').count() == 1
    assert "Alice wins" in await alice.banner()
    assert "Alice wins" in await bob.banner()
    print(f"click to the opponent's board: {sorted(latencies)} ms")
    # Both ask for a rematch: a new game with the seats turned, so Bob opens.
    await alice.page.click("text=Rematch")
    await bob.page.click("text=Accept rematch (1/2)")
    await bob.page.wait_for_function("() => document.body.dataset.ply === '0'")
    await bob.page.wait_for_selector(".banner.turn")
    assert "Your move" in await bob.banner()
    await close_all(alice, bob)
    assert code
