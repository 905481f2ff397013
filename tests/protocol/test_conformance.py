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


def test_a_default_written_out_is_the_same_request() -> None:
    """Section 24 writes ``"players": 2`` in its ``create``; the recording left it out (an
    outside client was failed for sending section 24's frame)."""
    recorded = {"type": "create", "id": 2, "variant": {"size": 5, "walls": 3}}
    written_out = {"type": "create", "id": 7, "variant": {"players": 2, "size": 5, "walls": 3}}
    assert conformance.compare(recorded, written_out) == []
    assert conformance.compare(recorded, {**written_out, "private": False}) == []


def test_a_field_that_changes_the_request_fails_even_if_the_recording_left_it_out() -> None:
    recorded = {"type": "create", "id": 2, "variant": {"size": 5, "walls": 3}}
    with pytest.raises(conformance.Mismatch, match=r"create\.variant: expected"):
        conformance.compare(recorded, {"type": "create", "variant": {"players": 4, "size": 5}})
    with pytest.raises(conformance.Mismatch, match=r"create\.private: expected False, got True"):
        conformance.compare(recorded, {**recorded, "private": True})


def test_frames_that_are_not_requests_are_compared_as_written() -> None:
    """The error transcripts send invalid frames on purpose: no defaults to fill in."""
    recorded = {"type": "create", "variant": {"size": 6}}
    assert conformance.compare(recorded, {"type": "create", "variant": {"size": 6}}) == []
    with pytest.raises(conformance.Mismatch):
        conformance.compare(recorded, {"type": "create", "variant": {"size": 8}})


async def test_a_client_that_sends_nothing_is_told_what_the_transcript_waits_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(conformance, "WAIT", 0.2)
    path = kit.HERE / "two_player_game.jsonl"
    async with (
        conformance.serving(path, "alice") as (stand_in, port),
        connect(f"ws://127.0.0.1:{port}", compression=None),
    ):
        await asyncio.wait_for(stand_in.done.wait(), 5)
    assert stand_in.failure is not None
    assert stand_in.failure.startswith("nothing from the client in 0 s; the transcript's next")
    assert '{"type":"hello"' in stand_in.failure
