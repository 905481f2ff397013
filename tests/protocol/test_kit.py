"""The conformance kit: the transcripts under protocol/transcripts/ are real, current and valid.

Each file is regenerated from a real server run (``tests.protocol.kit``) and
must equal what is committed, so a change in the server's behaviour shows up
as drift here: rerun ``python -m tests.protocol.kit`` and review the diff.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from protocol import schema
from tests.protocol import kit

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]


def lines_of(name: str) -> list[Json]:
    text = (kit.HERE / f"{name}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def validator(union: str) -> Draft202012Validator:
    document = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    root = {key: value for key, value in document.items() if key != "oneOf"}
    return Draft202012Validator({**root, "$ref": f"#/$defs/{union}"})


async def test_the_transcripts_do_not_drift() -> None:
    files = await kit.generate()
    assert sorted(path.name for path in files) == sorted(p.name for p in kit.HERE.glob("*.jsonl"))
    for path, text in files.items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} drifted from the server: run `python -m tests.protocol.kit`"
        )


@pytest.mark.parametrize("name", list(kit.SCENARIOS))
def test_every_frame_validates_strictly(name: str) -> None:
    """Every server frame against the strict schema (every field it always writes
    required); every client frame too, except the deliberately broken ones."""
    servers, clients = validator(schema.SERVER_UNION), validator(schema.CLIENT_UNION)
    lines = lines_of(name)
    answers = [line for line in lines if line["dir"] == "recv"]
    assert answers
    for line in answers:
        servers.validate(line["frame"])
    if name != "errors":
        for line in lines:
            if line["dir"] == "send":
                clients.validate(line["frame"])
    for line in lines:
        assert set(line) <= {"conn", "dir", "frame", "raw", "code"}
        assert line["dir"] in {"open", "send", "recv", "close"}


def test_the_scenarios_show_what_they_are_named_for() -> None:
    flag = [
        line["frame"]
        for line in lines_of("four_player_flag")
        if line["dir"] == "recv" and line["frame"]["type"] == "state"
    ]
    pushed = [s for s in flag if s["id"] is None and s["moves"][-1:] == ["retire 0"]]
    assert len(pushed) == 4  # the flag, pushed to each of the four
    resume = lines_of("resume_with_replay")
    back = [ln["frame"]["type"] for ln in resume if ln["conn"] == "alice-2" and "frame" in ln]
    assert back[:5] == ["hello", "welcome", "state", "chat_line", "state"]
    match = [
        line["frame"]["match"]
        for line in lines_of("match")
        if line["dir"] == "recv" and line["frame"]["type"] == "state" and line["frame"]["match"]
    ]
    assert any(m["over"] for m in match)
    codes = {
        line["frame"]["code"]
        for line in lines_of("errors")
        if line["dir"] == "recv" and line["frame"]["type"] == "error"
    }
    assert len(codes) >= 12


def test_no_random_value_is_left() -> None:
    """Room codes, tokens, secrets and session ids are all placeholders."""
    for name in kit.SCENARIOS:
        for line in lines_of(name):
            if line["dir"] != "recv":
                continue
            frame = line["frame"]
            for key in ("room", "session", "resume_token", "secret"):
                value = frame.get(key)
                assert value is None or value.split("-")[0] in kit.PLACEHOLDERS.values(), value


def test_the_transcripts_ship_with_the_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    assert "protocol.transcripts" in setuptools["packages"]
    assert "*.jsonl" in setuptools["package-data"]["protocol.transcripts"]
