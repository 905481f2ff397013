"""The computer analysis in the browser's replay viewer, in a real Chromium."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from protocol.messages import Create, Join, MoveRequest, State, VariantSpec
from server.app import GameServer
from tests.web.pages import close_all, open_player
from tests.wsclient import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")

BLUNDER_GAME = "c2 d5 c3 d4 c4 b4h e4 d4h c4 d3 b4 d2 d1h c2 b3 c1".split()
"""5x5, two walls each: Alice's b3 (move 15) lets Bob in, where the wall b1h won."""


async def finished_game(site: GameServer) -> None:
    url = f"ws://127.0.0.1:{site.port}"
    alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
    await alice.send(Create(variant=VariantSpec(size=5, walls=2)))
    while not isinstance(state := await alice.recv(), State):
        pass
    await bob.send(Join(room=state.room))
    for ply, move in enumerate(BLUNDER_GAME):
        await (alice, bob)[ply % 2].send(MoveRequest(move=move, ply=ply))
        while state.ply <= ply:
            message = await alice.recv()
            state = message if isinstance(message, State) else state
    await alice.close()
    await bob.close()


async def test_the_replay_shows_the_analysis_graph_bar_and_marks(
    browser: Browser, site: GameServer
) -> None:
    await finished_game(site)
    viewer = await open_player(browser, site, "Viewer", "/#/replay/1")
    await viewer.page.wait_for_function("() => document.body.dataset.replay === '16'")
    # The replay's board is not played on: its name says how to step, not "Enter plays".
    label = await viewer.page.locator("svg.board").get_attribute("aria-label")
    assert label is not None
    assert label.startswith("Replay board.")
    assert "Enter" not in label
    await viewer.page.click("text=Analyse")
    analysed = "() => document.body.dataset.analysed === '1'"
    await viewer.page.wait_for_function(analysed, timeout=60000)
    # The meter is named after the player, as the page names seats everywhere.
    assert await viewer.page.locator(".eval-bar").get_attribute("aria-label") == "Alice's chances"
    assert await viewer.page.locator(".eval-graph polyline").count() == 1
    blunder = viewer.page.locator('.movelist button[data-ply="15"]')
    assert await blunder.text_content() == "b3??"
    assert await blunder.get_attribute("title") == "blunder: better b1h"
    await blunder.click()
    await viewer.page.wait_for_function("() => document.body.dataset.replay === '15'")
    bar = await viewer.page.locator(".eval-bar").text_content()
    assert bar == "Alice's chances 0% · b3 blunder, better b1h"
    # Shown, the blunder reads as the shown move does, not red on the accent (outside review
    # ui22, finding 11).
    shown, ink = await viewer.page.evaluate(
        """() => {
            const probe = document.createElement('span');
            probe.style.color = 'var(--accent-ink)';
            document.body.append(probe);
            const ink = getComputedStyle(probe).color;
            probe.remove();
            const shown = document.querySelector('.movelist button.shown.blunder');
            return [getComputedStyle(shown).color, ink];
        }"""
    )
    assert shown == ink
    assert viewer.errors == []
    await close_all(viewer)
