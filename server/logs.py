"""Logging: one line per event, readable or JSON, with connection and room ids.

Secrets never reach a log line: resume tokens and seat secrets are not passed
to the logger anywhere, and request frames are not logged.
"""

from __future__ import annotations

import json
import logging
import sys
import time

CONTEXT = ("conn", "ip", "session", "player", "room", "seat", "code", "status", "path")
"""Extra fields log calls may pass (``extra={"conn": 3}``); they are printed too."""


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update({key: getattr(record, key) for key in CONTEXT if hasattr(record, key)})
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line)


class PlainFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        context = " ".join(
            f"{key}={getattr(record, key)}" for key in CONTEXT if hasattr(record, key)
        )
        text = super().format(record)
        return f"{text} {context}" if context else text


def configure(level: str, style: str) -> None:
    """Send the server's logs to stderr in ``style`` (plain or json)."""
    if style not in ("plain", "json"):
        raise ValueError(f"log format must be plain or json, not {style!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if style == "json" else PlainFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # websockets logs every handshake, health probes included: keep its warnings only.
    logging.getLogger("websockets").setLevel(max(logging.WARNING, root.level))
