"""Driving the browser client the way a person does: clicks on squares and grooves, keys; and
the set-ups the browser tests share (a game between browsers, against the computer, one
finished over the protocol for the lists)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from playwright.async_api import Browser, BrowserContext, Dialog, Page, WebSocket

from protocol.messages import Create, Join, Joined, Resign, State
from tests.wsclient import Client


class Site(Protocol):
    """Where the pages come from: a server in the test's loop (``server.app.GameServer``), a
    server process (``tests.process.ServerProcess``) or a proxy in front of one."""

    @property
    def port(self) -> int: ...


FRAMES_KEPT = 40
FRAME_SHOWN = 400
OPENED: list[Player] = []
"""The players the running test opened (reset before each test by tests/web/conftest.py)."""


@dataclass
class Player:
    """One browser (its own context: storage, cookies) with its page."""

    context: BrowserContext
    page: Page
    errors: list[str] = field(default_factory=list)
    # The page's last frames, each way, with the time the test saw them: printed when a
    # browser test fails (tests/web/conftest.py), where a flaky click or claim otherwise
    # leaves no trace of what the page was told.
    frames: deque[str] = field(default_factory=lambda: deque(maxlen=FRAMES_KEPT))

    def sent(self, kind: str) -> list[str]:
        """The kept frames this page sent of message type ``kind``."""
        return [f for f in self.frames if f' > {{"type":"{kind}"' in f]

    def __post_init__(self) -> None:
        OPENED.append(self)
        self.page.on("websocket", self._record)

    def _record(self, socket: WebSocket) -> None:
        def noted(way: str) -> Callable[[str | bytes], None]:
            return lambda payload: self.frames.append(
                f"{time.monotonic():.3f} {way} {str(payload)[:FRAME_SHOWN]}"
            )

        socket.on("framesent", noted(">"))
        socket.on("framereceived", noted("<"))
        socket.on("close", lambda _: self.frames.append(f"{time.monotonic():.3f} closed"))

    async def centers(self, *squares: str) -> list[tuple[float, float]]:
        """Where squares are drawn on the screen, in one trip to the page."""
        found = await self.page.evaluate(
            """(names) => names.map((name) => {
                const box = document.querySelector(`rect[data-square="${name}"]`)
                    .getBoundingClientRect();
                return [box.x + box.width / 2, box.y + box.height / 2];
            })""",
            list(squares),
        )
        return [(float(x), float(y)) for x, y in found]

    async def square_center(self, square: str) -> tuple[float, float]:
        return (await self.centers(square))[0]

    async def click_square(self, square: str) -> None:
        x, y = await self.square_center(square)
        await self.page.mouse.click(x, y)

    async def wall_point(self, wall: str) -> tuple[float, float]:
        """A point in the wall's groove, a little off its midpoint along the wall."""
        col, row, orientation = ord(wall[0]) - 97, int(wall[1:-1]), wall[-1]

        def name(c: int, r: int) -> str:
            return f"{chr(97 + c)}{r}"

        along = name(col + 1, row) if orientation == "h" else name(col, row + 1)
        (ax, ay), (bx, by), (cx, cy) = await self.centers(
            name(col, row), name(col + 1, row + 1), along
        )
        mx, my = (ax + bx) / 2, (ay + by) / 2
        return mx + (cx - ax) * 0.25, my + (cy - ay) * 0.25

    async def hover_wall(self, wall: str) -> str | None:
        """Point at a wall's groove; the ghost wall shown, if any (not one drawn red, where
        that wall may not go)."""
        x, y = await self.wall_point(wall)
        await self.page.mouse.move(x, y)
        ghost = self.page.locator(".overlay .ghost:not(.refused)")
        if await ghost.count() == 0:
            return None
        return await ghost.get_attribute("data-wall")

    async def place_wall(self, wall: str) -> None:
        assert await self.hover_wall(wall) == wall
        x, y = await self.wall_point(wall)
        await self.page.mouse.click(x, y)

    async def wait_ply(self, ply: int) -> None:
        await self.page.wait_for_function(
            f"() => document.body.dataset.ply === '{ply}'", timeout=10_000, polling=50
        )

    async def banner(self) -> str:
        return (await self.page.locator(".banner").inner_text()).strip()

    async def resign(self) -> None:
        """Resign the game, answering the question that asks first."""
        await self.page.click(".actions button:has-text('Resign')")
        await self.page.click("text=Really resign?")


def _answer_dialogs(page: Page) -> None:
    """Leave when the page asks (its game in progress: ``beforeunload``), as a player who
    reloads or goes does; any other dialog is dismissed, as Playwright does by default."""

    async def answer(dialog: Dialog) -> None:
        await (dialog.accept() if dialog.type == "beforeunload" else dialog.dismiss())

    page.on("dialog", answer)


async def open_player(
    browser: Browser,
    site: Site,
    name: str,
    path: str = "/",
    viewport: tuple[int, int] = (1280, 800),
    touch: bool = False,
    script: str = "",
) -> Player:
    """A new browser context on the site, its name chosen before the first hello (``touch``:
    a phone's, which taps rather than points; ``script``: run in every page before its own)."""
    context = await browser.new_context(
        viewport={"width": viewport[0], "height": viewport[1]}, has_touch=touch, is_mobile=touch
    )
    key = "'quoridor.name'"
    await context.add_init_script(
        f"if (!localStorage.getItem({key})) localStorage.setItem({key}, {json.dumps(name)});"
    )
    if script:
        await context.add_init_script(script)
    context.on("page", _answer_dialogs)
    page = await context.new_page()
    player = Player(context, page)
    page.on("pageerror", lambda error: player.errors.append(str(error)))
    page.on(
        "console",
        lambda message: player.errors.append(message.text) if message.type == "error" else None,
    )
    await page.goto(f"http://127.0.0.1:{site.port}{path}")
    await page.wait_for_function("() => document.body.dataset.link === 'online'")
    return player


async def create_room(
    player: Player, size: int = 5, players: int = 2, walls: str = "", clock: str = ""
) -> str:
    """Create a room from the lobby form; the room code."""
    page = player.page
    await page.wait_for_selector(".lobby form.create")
    await page.select_option("select[name=players]", str(players))
    await page.select_option("select[name=size]", str(size))
    if walls:
        await page.fill("input[name=walls]", walls)
    if clock:
        await page.select_option("select[name=clock]", clock)
    await page.click("form.create button[type=submit]")
    await page.wait_for_function("() => document.body.dataset.view === 'game'")
    await page.wait_for_selector(".banner.waiting")
    return page.url.rsplit("/", 1)[1]


async def game_between(
    browser: Browser, site: Site, size: int = 5, names: tuple[str, ...] = ("Alice", "Bob")
) -> tuple[list[Player], str]:
    """Players in one new room, each joined through the room's link."""
    first = await open_player(browser, site, names[0])
    code = await create_room(first, size=size, players=len(names))
    others = await asyncio.gather(
        *(open_player(browser, site, name, f"/#/room/{code}") for name in names[1:])
    )
    everyone = [first, *others]
    seats = []
    for player in everyone:
        await player.page.wait_for_function("() => document.body.dataset.status === 'playing'")
        seats.append(int(await player.page.evaluate("() => document.body.dataset.seat")))
    # They joined at once, so in any order: return them by seat.
    return [player for _, player in sorted(zip(seats, everyone, strict=True))], code


async def play_the_computer(browser: Browser, site: Site, name: str = "Ann") -> Player:
    """A player in a 5x5 game against the computer (level 1), created from the lobby form."""
    player = await open_player(browser, site, name)
    page = player.page
    await page.wait_for_selector(".lobby form.create")
    await page.select_option("select[name=size]", "5")
    await page.select_option("select[name=ai]", "1")
    await page.click("form.create button[type=submit]")
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    return player


async def play(players: list[Player], moves: list[str], start: int = 0) -> None:
    """Moves played in turn from ply ``start``, each seen by every player before the next."""
    for offset, move in enumerate(moves):
        ply = start + offset
        await players[ply % len(players)].click_square(move)
        for player in players:
            await player.wait_ply(ply + 1)


async def resigned_game(winner: Client, loser: Client) -> None:
    """A finished game, for the lists of finished games: ``winner`` creates a room, ``loser``
    joins it and resigns. Both connections are closed after."""
    await winner.send(Create())
    room = (await winner.expect(Joined)).room
    await loser.send(Join(room=room))
    while not isinstance(message := await loser.recv(), State) or message.status != "playing":
        pass
    await loser.send(Resign())
    while not isinstance(message := await winner.recv(), State) or message.status != "finished":
        pass
    await winner.close()
    await loser.close()


async def close_all(*players: Player) -> None:
    for player in players:
        await player.context.close()
    errors = [error for player in players for error in player.errors]
    assert not errors, errors
