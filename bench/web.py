"""The browser client's figures, measured in Debian's Chromium on loopback.

Run from the repository root (needs the dev extras and ``chromium``)::

    python bench/web.py             # 3 first loads, 40 moves between two browsers
    python bench/web.py --moves 200

It starts a server in-process on a free port and prints, next to the goals of
issue 15:

- the first load of the client: bytes transferred (every file gzipped as the
  browser asks, headers included; the websocket not counted) and the time from
  navigation to an interactive lobby (its room list drawn from the server's
  answer: the client's ``quoridor:rooms`` mark),
  in a new browser context (renderer start included) and in an open tab with
  its cache disabled;
- the time from a click on a square in one browser to the other browser's board
  drawing the move (both read the same clock: ``performance.timeOrigin + now()``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.async_api import Browser, async_playwright

from server.app import GameServer
from server.config import Config
from tests.web.conftest import LAUNCH_ARGS, chromium_path
from tests.web.pages import close_all, game_between

FIRST_LOAD = """() => {
  const entries = [performance.getEntriesByType("navigation")[0],
                   ...performance.getEntriesByType("resource")];
  return entries.reduce((sum, entry) => sum + entry.transferSize, 0);
}"""


MARKS = """() => Object.fromEntries(
  [["files", performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd],
   ...performance.getEntriesByType("mark").map((mark) => [mark.name, mark.startTime])])"""
"""When the page's files were in (DOMContentLoaded), the socket opened, the welcome came
and the room list was drawn: the client's own marks (``performance.mark``)."""

STEPS: dict[str, list[float]] = {}


async def first_load(browser: Browser, port: int, warm: bool) -> tuple[int, float]:
    """Bytes transferred and milliseconds to an interactive lobby, with a cold cache.

    ``warm``: in a tab that is already open (its renderer process started) with the
    cache disabled, so only the page's own work and transfers are timed; otherwise
    in a brand-new browser context, which includes starting its renderer.
    """
    context = await browser.new_context()
    page = await context.new_page()
    if warm:
        await page.goto("about:blank")
        session = await context.new_cdp_session(page)
        await session.send("Network.enable")
        await session.send("Network.setCacheDisabled", {"cacheDisabled": True})
    await page.goto(f"http://127.0.0.1:{port}/")
    await page.wait_for_selector(".lobby tbody td", timeout=10_000)
    transferred = await page.evaluate(FIRST_LOAD)
    marks = await page.evaluate(MARKS)
    if warm:
        for name, at in marks.items():
            STEPS.setdefault(name, []).append(float(at))
    await context.close()
    return int(transferred), float(marks["quoridor:rooms"])


async def latencies(browser: Browser, server: GameServer, moves: int) -> list[float]:
    """Click to the opponent's redrawn board, over pawn moves back and forth on 9x9."""
    (alice, bob), _ = await game_between(browser, server, size=9)
    shuffles = (["d1", "d9", "e1", "e9"] * moves)[:moves]
    times = []
    for ply, square in enumerate(shuffles):
        mover, other = (alice, bob) if ply % 2 == 0 else (bob, alice)
        await mover.click_square(square)
        await other.wait_ply(ply + 1)
        await mover.wait_ply(ply + 1)
        rendered = await other.page.evaluate("() => window.quoridorTimes.render")
        clicked = await mover.page.evaluate("() => window.quoridorTimes.input")
        times.append(rendered - clicked)
    await close_all(alice, bob)
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--moves", type=int, default=40)
    args = parser.parse_args()
    path = chromium_path()
    if path is None:
        raise SystemExit("needs Chromium: apt-get install chromium")
    async with (
        GameServer(Config(port=0, rate=1000, burst=1000)).running() as server,
        async_playwright() as playwright,
    ):
        browser = await playwright.chromium.launch(executable_path=path, args=LAUNCH_ARGS)
        loads = [await first_load(browser, server.port, False) for _ in range(args.loads)]
        warm = [await first_load(browser, server.port, True) for _ in range(args.loads)]
        clicks = sorted(await latencies(browser, server, args.moves))
        await browser.close()
    sizes = [size for size, _ in loads]
    times = sorted(time for _, time in loads)
    print(f"{'figure':44} {'ours':>12} {'goal':>10}")
    print(f"{'first load, bytes transferred (gzip)':44} {max(sizes):>12,} {'< 100,000':>10}")
    lobby = statistics.median(times)
    print(f"{'first load to interactive lobby, ms (median)':44} {lobby:>12.0f} {'< 500':>10}")
    tab = statistics.median(time for _, time in warm)
    print(f"{'  the same in an open tab, cache disabled':44} {tab:>12.0f} {'< 500':>10}")
    for name, at in STEPS.items():
        label = f"    {name.removeprefix('quoridor:')} at, ms (median)"
        print(f"{label:44} {statistics.median(at):>12.0f}")
    print(f"{'click to opponent board, ms p50':44} {statistics.median(clicks):>12.1f} {'< 50':>10}")
    print(
        f"{'click to opponent board, ms p90':44} {clicks[int(len(clicks) * 0.9)]:>12.1f} {'':>10}"
    )
    print(f"{'click to opponent board, ms max':44} {clicks[-1]:>12.1f} {'':>10}")


if __name__ == "__main__":
    asyncio.run(main())
