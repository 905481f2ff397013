"""The classes of ``protocol.codec`` that mypyc cannot compile, kept apart so that the
codec itself, on the path of every frame, can be (``deploy/compile.py``)."""

from __future__ import annotations

import msgspec

from protocol.messages import ErrorCode, RequestId


class BadRequest(ValueError):
    """A frame that is not a valid request, with the error to answer it."""

    def __init__(self, code: ErrorCode, message: str, request_id: RequestId) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


class IdOnly(msgspec.Struct):
    """A request read for its ``id`` alone (to echo it in the error of an invalid one)."""

    id: RequestId = None
