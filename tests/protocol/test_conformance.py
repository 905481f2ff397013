"""The stand-in server of protocol.conformance, driven by clients that follow a transcript
exactly and by one that does not."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol import conformance
from tests.protocol import kit

Json = dict[str, Any]
PLAYERS = {
    "two_player_game": ["alice", "bob"],
    "errors": ["eve", "mallory"],
    "resume_with_replay": ["alice", "bob"],
    "four_player_flag": ["ann", "dan"],
    "match": ["carol", "dave"],
}


async def follow(url: str, runs: list[list[Json]], wrong_move: bool = False) -> None:
    """A client under test that does exactly what the recorded client did, with ids of its
    own, and checks every frame it receives (``wrong_move``: its first move differs)."""
    for number, run in enumerate(runs):
        ws: ClientConnection = await connect(url, compression=None)
        sent: tuple[Any, Any] | None = None
        for step, line in enumerate(run):
            if line["dir"] == "send" and "raw" in line:
                await ws.send(line["raw"])
            elif line["dir"] == "send":
                frame = dict(line["frame"])
                if "id" in frame:
                    frame["id"] = f"mine-{number}-{step}"
                if wrong_move and frame["type"] == "move":
                    frame["move"], wrong_move = "a1", False
                sent = (line["frame"].get("id"), frame.get("id"))
                await ws.send(json.dumps(frame))
            elif line["dir"] == "recv":
                try:
                    received = json.loads(await asyncio.wait_for(ws.recv(), 5))
                except ConnectionClosed:
                    return  # the stand-in stopped us
                expected = dict(line["frame"])
                if line["reply"] and sent is not None and expected.get("id") == sent[0]:
                    expected["id"] = sent[1]
                assert received == expected
            elif line["dir"] == "close" and line["code"] == 1000:
                await ws.close()
            else:
                await asyncio.wait_for(ws.wait_closed(), 5)
        await ws.close()


@pytest.mark.parametrize(
    ("name", "player"),
    [(name, player) for name, players in PLAYERS.items() for player in players],
)
async def test_a_client_that_follows_the_transcript_passes(name: str, player: str) -> None:
    path = kit.HERE / f"{name}.jsonl"
    async with conformance.serving(path, player) as (stand_in, port):
        runs = conformance.connections(conformance.load(path), player)
        await follow(f"ws://127.0.0.1:{port}", runs)
        await asyncio.wait_for(stand_in.done.wait(), 5)
    assert stand_in.failure is None


async def test_a_client_that_plays_another_move_fails() -> None:
    path = kit.HERE / "two_player_game.jsonl"
    async with conformance.serving(path, "alice") as (stand_in, port):
        runs = conformance.connections(conformance.load(path), "alice")
        await follow(f"ws://127.0.0.1:{port}", runs, wrong_move=True)
        await asyncio.wait_for(stand_in.done.wait(), 5)
    assert stand_in.failure == "move.move: expected 'c2', got 'a1'"


def test_a_left_out_default_is_a_note_not_a_failure() -> None:
    notes = conformance.compare(
        {"type": "create", "id": 1, "variant": {"size": 5}, "private": False},
        {"type": "create", "variant": {"size": 5}},
    )
    assert notes == ["create: left out 'private' (recorded False)"]
    with pytest.raises(conformance.Mismatch):
        conformance.compare({"type": "create"}, {"type": "join"})
