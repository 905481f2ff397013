"""Frames with integers of thousands of digits: the same answer as a full read gives, at the
cost of a short one (an outside review: 150 us to refuse a 4050-digit ``id``).

msgspec reads an integer past 64 bits with Python's int(), whose time grows with the square
of its digits. ``sys.set_int_max_str_digits(640)`` makes any such read of more than 640
digits fail, so a test under it proves that none happened, without timing anything.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import get_args

import msgspec
import pytest

from protocol.codec import (
    LONG_INTEGER,
    BadRequest,
    _requests,
    _with_field_path,
    decode_request,
    request_id,
)
from protocol.messages import Request

LIMIT = 2**53
LONG = "9" * 4040


@pytest.fixture
def short_reads() -> Iterator[None]:
    """Python refuses to read an integer of more than 640 digits (its least setting)."""
    kept = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    yield
    sys.set_int_max_str_digits(kept)


def short_read(frame: str | bytes) -> tuple[str, str]:
    try:
        return "ok", repr(decode_request(frame))
    except BadRequest as bad:
        return "refused", f"{bad.message} (id {bad.request_id})"


def full_read(frame: str) -> tuple[str, str]:
    """What msgspec makes of the whole frame, reading every digit ("ok" or its message)."""
    try:
        return "ok", repr(_requests.decode(frame))
    except msgspec.ValidationError as error:
        echoed = 7 if '"id": 7' in frame else None  # the frames' one valid id
        return (
            "refused",
            f"{_with_field_path(str(error))} (id {echoed})",
        )  # path as the server says it
    except msgspec.DecodeError as error:  # leading zeros: no JSON number
        return "refused", f"{error} (id None)"


FRAMES = [
    '{"type": "ping", "id": #}',
    '{"type": "ping", "id": -#}',
    '{"id": #, "type": "ping"}',
    '{"type": "move", "move": "e2", "ply": #, "id": 7}',
    '{"type": "fetch_game", "game": -#}',
    '{"type": "analyse", "game":#}',
    '{"type": "my_games", "before": #}',
    '{"type": "history", "limit":\n#}',
    '{"type": "join", "room": "ab", "seat": #}',
    '{"type": "hello", "version": "1.0", "name": "a", "last_event": #}',
    # A field of another type: "Number out of range", as for any integer past a float.
    '{"type": "create", "variant": {"size": #}}',
    '{"type": "create", "clock": {"base": #}}',
    '{"type": "replay", "moves": ["e2", #]}',
    # Ignored in an unknown field, and the request goes through.
    '{"type": "ping", "id": 7, "later": [#, -#]}',
    # Digits after a point or an exponent mark are not an integer's: none are cut.
    '{"type": "create", "clock": {"base": 1.0#}}',
    '{"type": "create", "clock": {"base": 1e0#}}',
    '{"type": "create", "clock": {"base": 5e-0#}}',
    '{"type": "create", "clock": {"base": #.5}}',
    # Digits in a string, even after a colon: too long for any field, or ignored.
    '{"type": "chat", "text": "#"}',
    '{"type": "chat", "text": "score: #"}',
    '{"type": "ping", "id": 7, "note": "[#"}',
    '{"type": "#"}',
    # Malformed after a long integer: msgspec's message names the same byte.
    '{"type": "ping", "x": #, garbage}',
    '{"type": "ping", "x": [#,]}',
    '{"type": "ping", "x": #}}',
    '{"type": "ping", "x": -#-}',
    "#",
]


def test_long_integers_get_the_answer_of_a_full_read_without_one(short_reads: None) -> None:
    for template in FRAMES:
        for digits in (LONG, "0" * 4000 + "2", "1" + "0" * 4000):
            frame = template.replace("#", digits)
            sys.set_int_max_str_digits(0)
            expected = full_read(frame)
            sys.set_int_max_str_digits(640)
            assert short_read(frame) == expected, frame[:60]
            assert short_read(frame.encode()) == expected, frame[:60]  # websockets gives bytes


def test_the_documented_error_for_a_4050_digit_id(short_reads: None) -> None:
    with pytest.raises(BadRequest) as refused:
        decode_request('{"type": "ping", "id": #}'.replace("#", "9" * 4050))
    assert refused.value.code == "invalid_field"
    assert refused.value.message == f"Expected `int` <= {LIMIT} - at `$.id`"
    assert refused.value.request_id is None
    # What a rate-limited frame's error echoes: its id, found without reading the digits.
    assert request_id('{"type": "move", "ply": #, "id": 7}'.replace("#", LONG)) == 7


def request_fields() -> Iterator[tuple[str, msgspec.inspect.Type]]:
    """Every field of every request, nested ones included, by the types it may take."""
    seen: set[type] = set()
    todo = list(msgspec.inspect.multi_type_info(get_args(Request)))
    while todo:
        struct = todo.pop()
        assert isinstance(struct, msgspec.inspect.StructType)
        if struct.cls in seen:
            continue
        seen.add(struct.cls)
        for field in struct.fields:
            for part in _parts(field.type):
                if isinstance(part, msgspec.inspect.StructType):
                    todo.append(part)
                else:
                    yield f"{struct.cls.__name__}.{field.name}", part


def _parts(kind: msgspec.inspect.Type) -> Iterator[msgspec.inspect.Type]:
    """The types a field may take: its union's members, a list's items."""
    if isinstance(kind, msgspec.inspect.UnionType):
        for member in kind.types:
            yield from _parts(member)
    elif isinstance(kind, msgspec.inspect.ListType):
        yield from _parts(kind.item_type)
    else:
        yield kind


def test_the_cut_changes_no_answer() -> None:
    """What makes cutting long integers safe: every integer field of a request is bounded
    within +-2^53 (and so refuses any longer integer) and no string field takes
    LONG_INTEGER characters (so a digit run in a string is refused either way)."""
    kinds = set()
    for name, part in request_fields():
        kinds.add(type(part).__name__)
        if isinstance(part, msgspec.inspect.IntType):
            assert part.ge is not None, name
            assert part.ge >= -LIMIT, name
            assert part.le is not None, name
            assert part.le <= LIMIT, name
        if isinstance(part, msgspec.inspect.StrType):
            assert part.max_length is not None, name
            assert part.max_length < LONG_INTEGER, name
    # Any other kind of field (a dict, a tuple, Any) needs a thought before it is added.
    assert kinds <= {"IntType", "StrType", "FloatType", "BoolType", "NoneType", "LiteralType"}
