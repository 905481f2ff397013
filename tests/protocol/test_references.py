"""References from the READMEs into PROTOCOL.md point at the section they mean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = re.compile(r"PROTOCOL\.md,? sections? (\d+[a-z]?)")
TOPICS = {
    "resum": "Resuming after a lost connection",
    "conformance kit": "Conformance transcripts",
    "stops reading": "Transport",
}
"""Words near a reference, and the heading of the section such a reference must name."""


def headings() -> dict[str, str]:
    text = (ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^## (\d+[a-z]?)\. (.+)$", text, re.M))


@pytest.mark.parametrize("document", ["README.md", "deploy/README.md"])
def test_section_references_name_the_right_section(document: str) -> None:
    sections = headings()
    text = (ROOT / document).read_text(encoding="utf-8")
    found = 0
    for match in REFERENCE.finditer(text):
        number = match.group(1)
        assert number in sections, f"{document}: section {number} does not exist"
        line = text[: match.start()].rsplit("\n", 1)[-1].lower()  # the line up to it
        for words, heading in TOPICS.items():
            if words in line:
                assert sections[number].startswith(heading), (document, number, words)
        found += 1
    assert found
