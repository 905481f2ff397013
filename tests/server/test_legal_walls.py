"""``state.legal_walls`` over real websockets: what a browser offers as ghost walls."""

from __future__ import annotations

from protocol.messages import Joined, Watch
from tests.engine.test_legal_wall_mask import decode
from tests.server.test_games import Connect, play, seat_players


def walls(hex_mask: str, size: int) -> set[str]:
    return set(decode(int(hex_mask, 16), size))


async def test_legal_walls_follow_the_game(connect: Connect) -> None:
    (a, b), room = await seat_players(connect, size=5)
    after = await play([a, b], ["c2", "c4", "c3h"])
    assert len(after.legal_walls) == 8  # 2 * 4 * 4 slots, one hex digit per four
    offered = walls(after.legal_walls, 5)
    # The wall itself, the two it overlaps and the one it crosses are gone.
    assert offered.isdisjoint({"c3h", "b3h", "d3h", "c3v"})
    assert len(offered) == 28
    spectator = await connect("s")
    await spectator.send(Watch(room=room))
    await spectator.expect(Joined)
    seen = await spectator.state()
    assert seen.legal_walls == after.legal_walls
    await spectator.close()
    for client in (a, b):
        await client.close()


async def test_no_walls_offered_before_the_game_or_after_it(connect: Connect) -> None:
    (a, b), _ = await seat_players(connect, size=5)
    final = await play([a, b], "c2 c4 d3h c3 c4 c2 c5".split())
    assert final.status == "finished"
    assert final.legal_walls == "0" * 8
    for client in (a, b):
        await client.close()
