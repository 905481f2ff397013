"""Encoding and decoding: one reused typed decoder per direction.

Every frame a server receives goes through ``decode_request``, so the compiled build
(``deploy/compile.py``) compiles this module; the classes mypyc cannot build (a subclass of
``ValueError``, a msgspec Struct) are in ``protocol.badrequest``."""

from __future__ import annotations

import re

import msgspec

from protocol.badrequest import BadRequest as BadRequest
from protocol.badrequest import IdOnly
from protocol.messages import ErrorCode, Request, RequestId, ServerMessage

TOO_DEEP = "JSON nested too deeply"
_requests = msgspec.json.Decoder(Request)
_server_messages = msgspec.json.Decoder(ServerMessage)
_ids = msgspec.json.Decoder(IdOnly)
_encoder = msgspec.json.Encoder()


def encode(message: msgspec.Struct) -> bytes:
    """JSON bytes for one message; send them as a text frame."""
    return _encoder.encode(message)


def decode_request(data: bytes | str) -> Request:
    """Decode a client frame or raise BadRequest saying what is wrong."""
    data = _long_integers_cut(data)
    try:
        return _requests.decode(data)
    except msgspec.ValidationError as exc:
        text = _with_field_path(str(exc))
        unknown = text.endswith("`$.type`")
        code = ErrorCode.UNKNOWN_TYPE if unknown else ErrorCode.INVALID_FIELD
        # An id at fault is echoed as null: no need to read the frame again to know it.
        echoed = None if text.endswith("at `$.id`") else _id_of(data)
        raise BadRequest(code, text, echoed) from None
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


LONG_INTEGER = 311
"""Digits an integer in a request is cut to. msgspec reads an integer past 64 bits with
Python's int(), whose time grows with the square of the digits: 65 us for the 4050 digits
of one ``id`` that fills a frame, against 1 us for a whole ``ping`` (an outside review).
Every integer field is bounded within +-2^53 (16 digits) and no string field takes 311
characters, so an integer this long is refused (or ignored, in an unknown field) whatever
its digits after these: cut, it gets the same error at the same path, at once. 311 digits
are still past the largest float (1.8e308), so a field of another type says "Number out
of range" for it as before."""
_DIGITS = b"0123456789"
_DIGIT_MAP = bytes(57 if byte in _DIGITS else 46 for byte in range(256))
"""bytes.translate table: every digit to ``9``, every other byte to ``.``."""
_OTHER = ord(".")
_MINUS = ord("-")
_BEFORE_AN_INTEGER = b" \t\r\n:[,"
"""What may come just before an integer (or its sign): the start of a value."""


def _long_integers_cut(data: bytes | str) -> bytes | str:
    """The frame with every integer of more than LONG_INTEGER digits cut to its first
    LONG_INTEGER; the frame itself when it has none (nearly always, known in well under a
    microsecond: a regular expression took 30 for 4 KiB, and 600 for runs of 300 digits)."""
    raw = data.encode(errors="surrogatepass") if isinstance(data, str) else data
    # A run of LONG_INTEGER digits covers one of every LONG_INTEGER-th byte: only the runs
    # through those bytes are looked at, at most 13 in a 4 KiB frame.
    sample = raw[LONG_INTEGER - 1 :: LONG_INTEGER]
    if len(sample.translate(None, _DIGITS)) == len(sample):
        return data
    digits = raw.translate(_DIGIT_MAP)
    pieces: list[bytes] = []
    kept = 0
    for at in range(LONG_INTEGER - 1, len(raw), LONG_INTEGER):
        if at < kept or digits[at] == _OTHER:
            continue
        start = digits.rfind(b".", 0, at) + 1
        end = digits.find(b".", at)
        end = len(raw) if end < 0 else end
        if end - start > LONG_INTEGER and _is_integer(raw, start, end):
            # Spaces for the digits cut: every byte keeps its place, as the positions that
            # msgspec's messages for malformed JSON give ("(byte 4021)").
            pieces += raw[kept : start + LONG_INTEGER], b" " * (end - start - LONG_INTEGER)
            kept = end
    if not pieces:
        return data
    pieces.append(raw[kept:])
    return b"".join(pieces)


def _is_integer(raw: bytes, start: int, end: int) -> bool:
    """Whether the digits ``raw[start:end]`` are a whole integer, not a fraction's or an
    exponent's digits (cutting those would change the number). A run inside a string may
    pass for one: no string field takes LONG_INTEGER characters, so it is refused all the
    same, cut or not."""
    first = start - 1 if start > 0 and raw[start - 1] == _MINUS else start
    opens = first == 0 or raw[first - 1] in _BEFORE_AN_INTEGER
    return opens and (end == len(raw) or raw[end] not in b".eE")


_MISSING = re.compile(r"^Object missing required field `([^`]*)`(?: - at `([^`]*)`)?$")


def _with_field_path(message: str) -> str:
    """msgspec's message, naming the path of the field at fault in every case.

    msgspec names the path of a wrong value (``- at `$.variant.size```) but, for a
    missing field, only the path of the object that lacks it (nothing at the top
    level), and none for a frame that is not an object; PROTOCOL.md promises the
    field's own path (``$`` for the frame), so it is added here.
    """
    missing = _MISSING.match(message)
    if missing is None:
        # A frame that is not an object at all: its own path (an outside review read
        # "Expected `object`, got `array`" with none).
        return message if " - at `" in message else f"{message} - at `$`"
    name, parent = missing.group(1), missing.group(2) or "$"
    return f"Object missing required field `{name}` - at `{parent}.{name}`"


def request_id(data: bytes | str) -> RequestId:
    """The ``id`` of an otherwise invalid request, so the error can echo it."""
    return _id_of(_long_integers_cut(data))


def _id_of(data: bytes | str) -> RequestId:
    """``request_id`` of a frame whose long integers are cut already."""
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
