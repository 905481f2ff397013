"""Encoding and decoding: one reused typed decoder per direction."""

from __future__ import annotations

import re

import msgspec

from protocol.messages import ErrorCode, Request, RequestId, ServerMessage


class BadRequest(ValueError):
    """A frame that is not a valid request, with the error to answer it."""

    def __init__(self, code: ErrorCode, message: str, request_id: RequestId) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


class _IdOnly(msgspec.Struct):
    id: RequestId = None


TOO_DEEP = "JSON nested too deeply"
_requests = msgspec.json.Decoder(Request)
_server_messages = msgspec.json.Decoder(ServerMessage)
_ids = msgspec.json.Decoder(_IdOnly)
_encoder = msgspec.json.Encoder()


def encode(message: msgspec.Struct) -> bytes:
    """JSON bytes for one message; send them as a text frame."""
    return _encoder.encode(message)


def decode_request(data: bytes | str) -> Request:
    """Decode a client frame or raise BadRequest saying what is wrong."""
    try:
        return _requests.decode(data)
    except msgspec.ValidationError as exc:
        text = _with_field_path(str(exc))
        unknown = text.endswith("`$.type`")
        code = ErrorCode.UNKNOWN_TYPE if unknown else ErrorCode.INVALID_FIELD
        raise BadRequest(code, text, request_id(data)) from None
    except msgspec.DecodeError as exc:
        raise BadRequest(ErrorCode.MALFORMED_JSON, _malformed(exc, data), None) from None
    except RecursionError:
        # msgspec recurses once per level of nesting; no request nests more than a few deep.
        raise BadRequest(ErrorCode.MALFORMED_JSON, TOO_DEEP, None) from None


_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])")
"""A high surrogate escape with no low one after it (one at the end of a string)."""


def _malformed(error: msgspec.DecodeError, data: bytes | str) -> str:
    """msgspec's message, but for a lone surrogate escape at the end of a string (``"\\ud800"``),
    which msgspec calls "Input data was truncated" though the frame is whole."""
    text = str(error)
    frame = data if isinstance(data, str) else data.decode(errors="replace")
    if text == "Input data was truncated" and _LONE_SURROGATE.search(frame):
        return "JSON is malformed: invalid utf-16 surrogate pair"
    return text


_MISSING = re.compile(r"^Object missing required field `([^`]*)`(?: - at `([^`]*)`)?$")


def _with_field_path(message: str) -> str:
    """msgspec's message, naming the path of the field at fault in every case.

    msgspec names the path of a wrong value (``- at `$.variant.size```) but, for a
    missing field, only the path of the object that lacks it (nothing at the top
    level); PROTOCOL.md promises the field's own path, so it is added here.
    """
    missing = _MISSING.match(message)
    if missing is None:
        return message
    name, parent = missing.group(1), missing.group(2) or "$"
    return f"Object missing required field `{name}` - at `{parent}.{name}`"


def request_id(data: bytes | str) -> RequestId:
    """The ``id`` of an otherwise invalid request, so the error can echo it."""
    try:
        return _ids.decode(data).id
    except (msgspec.DecodeError, RecursionError):
        return None


def decode_server_message(data: bytes | str) -> ServerMessage | None:
    """Decode a server frame; None for a message type this client does not know.

    Clients ignore unknown message types so that servers can add new ones.
    Raises msgspec.DecodeError for frames that break the protocol otherwise.
    """
    try:
        return _server_messages.decode(data)
    except msgspec.ValidationError as exc:
        if str(exc).startswith("Invalid value") and str(exc).endswith("`$.type`"):
            return None
        raise
