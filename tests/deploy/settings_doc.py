"""The operator documentation of the settings, rendered from ``server.config.Config``.

deploy/README.md (between its ``settings`` markers) and deploy/quoridor.env.example are
committed text; test_deploy.py fails when they differ from what this renders. After changing
a setting in server/config.py, rewrite both with::

    .venv/bin/python -m tests.deploy.settings_doc --write
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import fields
from pathlib import Path
from typing import Any

from server.config import COMMAND_LINE_DEFAULTS, Config, env_name

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
README = DEPLOY / "README.md"
ENV_EXAMPLE = DEPLOY / "quoridor.env.example"
TABLE_BEGIN = "<!-- settings:begin (.venv/bin/python -m tests.deploy.settings_doc --write) -->"
TABLE_END = "<!-- settings:end -->"


def default(name: str) -> Any:
    """What the server uses when neither the flag nor the variable is given."""
    return COMMAND_LINE_DEFAULTS.get(name, getattr(Config(), name))


def env_text(value: Any) -> str:
    """A value as it is written in an environment variable (parse_config reads it back)."""
    return str(value)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def reference_table() -> str:
    """The Markdown table of every setting: variable, flag, default, meaning."""
    rows = [
        "| Variable | Flag | Default | Meaning |",
        "|----------|------|---------|---------|",
    ]
    for item in fields(Config):
        value = env_text(default(item.name))
        shown = f"`{value}`" if value else "*(empty)*"
        meaning = str(item.metadata["help"]).replace("|", "\\|")
        rows.append(f"| `{env_name(item.name)}` | `{flag(item.name)}` | {shown} | {meaning} |")
    return "\n".join(rows)


ENV_HEADER = """\
# /etc/quoridor/quoridor.env: settings for the Quoridor server under systemd
# (EnvironmentFile=-/etc/quoridor/quoridor.env in deploy/quoridor.service).
#
# Every variable the server reads, commented out, with the server's built-in default.
# Uncomment a line to change it; a value here overrides the unit's own Environment= lines,
# which already set QUORIDOR_DB=/var/lib/quoridor/quoridor.db,
# QUORIDOR_TRUSTED_PROXIES=127.0.0.1,::1 and QUORIDOR_LOG_FORMAT=plain.
# Syntax: NAME=value, no spaces around "=", no quotes needed. Meanings: deploy/README.md.
#
# Generated from server/config.py: .venv/bin/python -m tests.deploy.settings_doc --write
"""


def env_example() -> str:
    """deploy/quoridor.env.example: each variable, its meaning, and its default."""
    blocks = [ENV_HEADER]
    for item in fields(Config):
        meaning = textwrap.wrap(str(item.metadata["help"]), width=96)
        lines = [f"# {line}" for line in meaning]
        lines.append(f"#{env_name(item.name)}={env_text(default(item.name))}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def readme_with_table(readme: str) -> str:
    """``readme`` with the text between the settings markers replaced by the current table."""
    before, found, rest = readme.partition(TABLE_BEGIN)
    _, found_end, after = rest.partition(TABLE_END)
    if not (found and found_end):
        raise ValueError(f"{README} lacks the {TABLE_BEGIN!r} ... {TABLE_END!r} markers")
    return f"{before}{TABLE_BEGIN}\n{reference_table()}\n{TABLE_END}{after}"


def main(argv: list[str]) -> None:
    if argv == ["--write"]:
        README.write_text(readme_with_table(README.read_text()))
        ENV_EXAMPLE.write_text(env_example())
        print(f"wrote {README} and {ENV_EXAMPLE}")
    else:
        print(reference_table())
        print()
        print(env_example(), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
