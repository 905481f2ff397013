"""The game's sounds (web/sound.js) in a real Chromium: which sound each change makes, and the
header's switch that turns them off for good. (That a page plays nothing before its first
gesture is not tested: Playwright's every evaluation counts as one.)"""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from protocol.messages import Create, Joined, MoveRequest, TimeControl
from server.app import GameServer
from tests.web.pages import Player, close_all, create_room, open_player
from tests.wsclient import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")

LISTEN = """
window.__notes = [];
const make = AudioContext.prototype.createOscillator;
AudioContext.prototype.createOscillator = function () {
  const oscillator = make.call(this);
  const start = oscillator.start;
  oscillator.start = function (...when) {
    window.__notes.push(this.frequency.value);
    return start.apply(this, when);
  };
  return oscillator;
};
"""
"""Every note the page starts, by its pitch: the Web Audio API's own oscillators, counted."""

START, MOVE, WALL, WIN, END = [523, 784], [620], [196, 98], [523, 659, 784, 1047], [392, 294]
LOW = [988, 988]


async def heard(player: Player, since: int) -> list[float]:
    """The notes started after the first ``since``, once the page has played them."""
    await player.page.wait_for_timeout(150)
    notes: list[float] = await player.page.evaluate("() => window.__notes")
    return notes[since:]


async def count(player: Player) -> int:
    return int(await player.page.evaluate("() => window.__notes.length"))


async def test_moves_walls_and_the_end_sound_and_the_switch_silences_them(
    browser: Browser, site: GameServer
) -> None:
    alice = await open_player(browser, site, "Alice", script=LISTEN)
    code = await create_room(alice)
    bob = await open_player(browser, site, "Bob", script=LISTEN)
    await bob.page.fill("form.join input[name=code]", code)  # the lobby's Join box
    await bob.page.click("form.join button[type=submit]")
    for player in (alice, bob):
        await player.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await heard(alice, 0) == START
    assert await heard(bob, 0) == START  # his joining started it
    await alice.click_square("c2")
    await bob.wait_ply(1)
    assert await heard(alice, 2) == MOVE  # her own move, as the server took it
    assert await heard(bob, 2) == MOVE  # the opponent's
    await bob.click_square("c4")
    await alice.wait_ply(2)
    assert await heard(bob, 3) == MOVE
    assert await heard(alice, 3) == MOVE
    await alice.place_wall("d3h")
    await bob.wait_ply(3)
    assert await heard(alice, 4) == WALL
    assert await heard(bob, 4) == WALL
    # Alice turns sounds off: her page stays silent, and the setting outlives the page.
    toggle = alice.page.locator("header .sound-toggle")
    assert await toggle.get_attribute("aria-pressed") == "true"
    await toggle.click()
    assert await toggle.get_attribute("aria-pressed") == "false"
    assert await toggle.get_attribute("title") == "Sounds off: press to turn them on"
    silent = await count(alice)
    for ply, (player, square) in enumerate([(bob, "c3"), (alice, "c4"), (bob, "c2")], start=3):
        await player.click_square(square)
        await alice.wait_ply(ply + 1)
    assert await heard(alice, silent) == []
    again = await alice.context.new_page()
    await again.goto(f"http://127.0.0.1:{site.port}/")
    assert await again.locator("header .sound-toggle").get_attribute("aria-pressed") == "false"
    await again.close()
    await toggle.click()  # on again
    before = await count(bob), await count(alice)
    await alice.click_square("c5")  # the winning move
    await bob.wait_ply(7)
    assert await heard(alice, before[1]) == WIN
    assert await heard(bob, before[0]) == END
    await close_all(alice, bob)


async def test_ones_own_clock_running_low_beeps_once(browser: Browser, site: GameServer) -> None:
    """A 4-second clock: low under a second (a quarter of the base), so Bob's page beeps once
    while his time runs out, then sounds the end; Alice's ticking clock is not his."""
    alice = await Client.connect(f"ws://127.0.0.1:{site.port}", "Alice")
    await alice.send(Create(clock=TimeControl(base=4)))
    code = (await alice.expect(Joined)).room
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}", script=LISTEN)
    await bob.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await alice.send(MoveRequest(move="e2", ply=0))
    await bob.wait_ply(1)
    await bob.click_square("e8")
    await bob.wait_ply(2)
    await alice.send(MoveRequest(move="e3", ply=2))  # the clocks run from here: Bob's now
    await bob.wait_ply(3)
    await bob.page.wait_for_function("() => document.body.dataset.status === 'finished'")
    notes = await heard(bob, 0)
    # (The start too, if Playwright's first look at the page, which counts as a gesture that
    # lets sound play, came before the game's first state.)
    assert notes[-7:] == MOVE * 3 + LOW + END, notes
    assert notes[:-7] in ([], START), notes
    await alice.close()
    await close_all(bob)
