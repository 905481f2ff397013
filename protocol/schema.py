"""Machine-readable descriptions of the protocol, generated from ``protocol.messages``.

Two documents live next to this module and are generated from the message
Structs, so they cannot drift from the code unless someone forgets to rerun
the generator (a test catches that):

- ``schema.json``: a JSON Schema (draft 2020-12). ``$defs/ClientMessage`` is
  any frame a client may send, ``$defs/ServerMessage`` any frame the server
  sends; the document itself accepts either.
- ``asyncapi.json``: an AsyncAPI 3.0.0 document describing the one websocket
  channel, written from the server's point of view: the server *receives* the
  client messages and *sends* the server messages.

Usage::

    python -m protocol.schema            # write both files
    python -m protocol.schema --check    # exit 1 if either is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

import msgspec

from protocol.messages import VERSION, Request, ServerMessage

HERE = Path(__file__).resolve().parent
SCHEMA_PATH = HERE / "schema.json"
ASYNCAPI_PATH = HERE / "asyncapi.json"

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
ASYNCAPI_VERSION = "3.0.0"
TITLE = "Quoridor game server protocol"
HOST = "127.0.0.1:8765"
CHANNEL = "root"
"""The id of the one channel; its address is ``/``."""

CLIENT_UNION = "ClientMessage"
SERVER_UNION = "ServerMessage"

Document = dict[str, Any]


def message_types(union: Any) -> list[type[msgspec.Struct]]:
    """The Struct classes of a tagged union, in declaration order."""
    members: list[type[msgspec.Struct]] = list(get_args(union))
    return members


def tag_of(kind: type[msgspec.Struct]) -> str:
    """The ``type`` tag a message carries on the wire."""
    info = msgspec.inspect.type_info(kind)
    assert isinstance(info, msgspec.inspect.StructType)
    assert info.tag_field == "type", f"{kind.__name__} is not tagged on `type`"
    assert isinstance(info.tag, str), f"{kind.__name__} has no string tag"
    return info.tag


def client_messages() -> list[type[msgspec.Struct]]:
    return message_types(Request)


def server_messages() -> list[type[msgspec.Struct]]:
    return message_types(ServerMessage)


def always_written(kind: type[msgspec.Struct]) -> list[str]:
    """The fields of ``kind`` that every encoded message carries, by their wire names.

    msgspec writes every field of a Struct, defaults included, unless the Struct
    is declared with ``omit_defaults=True``; then only fields without a default
    are sure to be there. This is the one place that rule lives: the schema of
    every message the server sends requires exactly these fields, so a field
    added later is required (or not) without anyone having to remember it.
    """
    info = msgspec.inspect.type_info(kind)
    assert isinstance(info, msgspec.inspect.StructType)
    omits = kind.__struct_config__.omit_defaults
    tag = [info.tag_field] if info.tag_field is not None else []
    return tag + [f.encode_name for f in info.fields if f.required or not omits]


def structs_of(union: Any) -> dict[str, type[msgspec.Struct]]:
    """Every Struct class reachable from ``union``, by the name its schema component gets."""
    found: dict[str, type[msgspec.Struct]] = {}

    def walk(node: msgspec.inspect.Type) -> None:
        if isinstance(node, msgspec.inspect.StructType):
            if found.get(node.cls.__name__) is node.cls:
                return
            assert node.cls.__name__ not in found, f"two Structs named {node.cls.__name__}"
            found[node.cls.__name__] = node.cls
            for f in node.fields:
                walk(f.type)
            return
        for attribute in ("types", "item_type", "key_type", "value_type"):
            child = getattr(node, attribute, None)
            if isinstance(child, tuple):
                for item in child:
                    walk(item)
            elif isinstance(child, msgspec.inspect.Type):
                walk(child)

    walk(msgspec.inspect.type_info(union))
    return found


SENT_SUFFIX = "Out"
"""Names the server's version of an object that both directions use but the server always
writes whole (``VariantSpecOut``: every field present; ``VariantSpec``: as a client may
send it, defaults left out)."""


FILLED_IN = {"VariantSpec": ("walls",)}
"""Fields a client may send as null (the server works the value out) that the server always
writes as a value: its version of the object (``SENT_SUFFIX``) does not allow null there."""


def _without_null(component: Document, fields: tuple[str, ...]) -> None:
    for field in fields:
        options = component["properties"][field]["anyOf"]
        (value,) = [option for option in options if option.get("type") != "null"]
        component["properties"][field] = value


def _plain_union(union: Document, title: str, description: str) -> Document:
    """A tagged union as plain JSON Schema: exactly one member, told apart by its
    ``type`` constant (no OpenAPI ``discriminator``, which plain validators ignore)."""
    return {"title": title, "description": description, "oneOf": union["anyOf"]}


def _constant_tags(components: dict[str, Document]) -> None:
    for component in components.values():
        tag = component.get("properties", {}).get("type")
        if isinstance(tag, dict) and list(tag) == ["enum"] and len(tag["enum"]) == 1:
            component["properties"]["type"] = {"const": tag["enum"][0]}


def _strict(components: dict[str, Document], kinds: dict[str, type[msgspec.Struct]]) -> None:
    """Require every field the server always writes (and drop defaults: none applies)."""
    for name, component in components.items():
        if name not in kinds or "properties" not in component:
            continue
        component["required"] = always_written(kinds[name])
        for prop in component["properties"].values():
            prop.pop("default", None)


def _renamed(node: Any, names: dict[str, str]) -> Any:
    """``node`` with every ``$ref`` to a renamed component pointing at its new name."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            prefix, _, name = ref.rpartition("/")
            if name in names:
                return {**node, "$ref": f"{prefix}/{names[name]}"}
        return {key: _renamed(value, names) for key, value in node.items()}
    if isinstance(node, list):
        return [_renamed(value, names) for value in node]
    return node


def _components(ref_template: str) -> tuple[Document, Document, dict[str, Document]]:
    """The two union schemas and every named component, with refs built by ``ref_template``.

    Client frames may leave out fields with defaults; server frames carry every field
    the server always writes (``always_written``), so the server's side is generated on
    its own and, where an object is shared but differs, under a name of its own.
    """
    (client,), client_defs = msgspec.json.schema_components([Request], ref_template=ref_template)
    (server,), server_defs = msgspec.json.schema_components(
        [ServerMessage], ref_template=ref_template
    )
    _strict(server_defs, structs_of(ServerMessage))
    for defs in (client_defs, server_defs):
        _constant_tags(defs)
    shared = client_defs.keys() & server_defs.keys()
    renames = {
        name: name + SENT_SUFFIX for name in shared if client_defs[name] != server_defs[name]
    }
    server = _renamed(server, renames)
    server_defs = {
        renames.get(name, name): _renamed(doc, renames) for name, doc in server_defs.items()
    }
    for name, renamed in renames.items():
        component = server_defs[renamed]
        _without_null(component, FILLED_IN.get(name, ()))
        component["title"] = renamed
        filled = "".join(f", `{field}` never null" for field in FILLED_IN.get(name, ()))
        component["description"] = (
            f"{component.get('description', name)} As the server writes it: every field"
            f" present{filled} (`{name}` is the same object as a client may send it)."
        )
    components = {**client_defs, **server_defs}
    clash = {CLIENT_UNION, SERVER_UNION} & components.keys()
    assert not clash, f"a message type is named like a union: {clash}"
    assert not renames.values() & client_defs.keys(), "a renamed component clashes"
    return client, server, components


def _first_line(kind: type[msgspec.Struct]) -> str | None:
    doc = kind.__doc__
    return doc.strip().splitlines()[0] if doc else None


def json_schema() -> Document:
    """The JSON Schema document for every frame in either direction."""
    client, server, components = _components("#/$defs/{name}")
    client = _plain_union(
        client, CLIENT_UNION, "Any frame a client may send; its `type` constant says which."
    )
    server = _plain_union(
        server,
        SERVER_UNION,
        "Any frame this server sends; its `type` constant says which. Every field the"
        " server writes is required. Clients must still ignore frames whose `type` they"
        " do not know (a later server may send new ones).",
    )
    defs = {**components, CLIENT_UNION: client, SERVER_UNION: server}
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": f"{TITLE} {VERSION}",
        "description": (
            "One JSON object per websocket text frame. Validate client frames against"
            f" #/$defs/{CLIENT_UNION} and server frames against #/$defs/{SERVER_UNION};"
            " the document as a whole accepts either. It is plain JSON Schema: each"
            " union is a `oneOf` whose members differ by a `const` on `type`. Client"
            " frames may leave out fields that have a default; server frames carry every"
            " field (`required` lists them all), so a validator catches a missing one."
            f" Objects used in both directions but written whole by the server appear"
            f" twice: `X` as a client may send it and `X{SENT_SUFFIX}` as the server"
            " writes it. Unknown fields are allowed and ignored. See PROTOCOL.md for the"
            " meaning of every field."
        ),
        "oneOf": [
            {"$ref": f"#/$defs/{CLIENT_UNION}"},
            {"$ref": f"#/$defs/{SERVER_UNION}"},
        ],
        "$defs": defs,
    }


def _message(kind: type[msgspec.Struct], direction: str) -> Document:
    """An AsyncAPI Message Object for one message type."""
    message: Document = {
        "name": tag_of(kind),
        "title": kind.__name__,
        "contentType": "application/json",
        "payload": {"$ref": f"#/components/schemas/{kind.__name__}"},
        "correlationId": {"$ref": "#/components/correlationIds/requestId"},
        "tags": [{"name": direction}],
    }
    summary = _first_line(kind)
    if summary is not None:
        message["summary"] = summary
    return message


def asyncapi() -> Document:
    """The AsyncAPI 3.0.0 document, from the server's point of view."""
    # The unions are not needed here: every message is listed on its own.
    _client, _server, schemas = _components("#/components/schemas/{name}")
    clients, servers = client_messages(), server_messages()
    names = [kind.__name__ for kind in (*clients, *servers)]
    assert len(set(names)) == len(names), f"message names collide: {names}"
    messages = {kind.__name__: _message(kind, "client-to-server") for kind in clients}
    messages |= {kind.__name__: _message(kind, "server-to-client") for kind in servers}

    def refs(kinds: list[type[msgspec.Struct]]) -> list[Document]:
        return [{"$ref": f"#/channels/{CHANNEL}/messages/{kind.__name__}"} for kind in kinds]

    return {
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": (
                "An authoritative Quoridor server over one websocket. Every frame is one"
                " UTF-8 JSON object in a text frame, tagged by its `type` field. Requests"
                " may carry an `id` that the reply echoes. PROTOCOL.md is the full"
                " specification: state machine, error codes, close codes, resuming."
            ),
            "license": {"name": "MIT"},
        },
        "defaultContentType": "application/json",
        "servers": {
            "local": {
                "host": HOST,
                "protocol": "ws",
                "description": "The default address of a server started with `quoridor-server`.",
            }
        },
        "channels": {
            CHANNEL: {
                "address": "/",
                "title": "Game socket",
                "description": "The one websocket endpoint; every message flows over it.",
                "messages": {name: {"$ref": f"#/components/messages/{name}"} for name in messages},
            }
        },
        "operations": {
            "receiveClientMessage": {
                "action": "receive",
                "channel": {"$ref": f"#/channels/{CHANNEL}"},
                "title": "Client requests",
                "summary": "Requests a client sends; the first must be `hello`.",
                "messages": refs(clients),
            },
            "sendServerMessage": {
                "action": "send",
                "channel": {"$ref": f"#/channels/{CHANNEL}"},
                "title": "Server messages",
                "summary": (
                    "Replies (echoing the request `id`) and pushed `state` events;"
                    " clients must ignore message types they do not know."
                ),
                "messages": refs(servers),
            },
        },
        "components": {
            "schemas": schemas,
            "messages": messages,
            "correlationIds": {
                "requestId": {
                    "description": (
                        "A client-chosen request id (integer, string of up to 64"
                        " characters, or null), echoed by the reply. A `state` caused by"
                        " a move carries the mover's id to everyone in the room."
                    ),
                    "location": "$message.payload#/id",
                }
            },
        },
    }


def render(document: Document) -> str:
    """Deterministic text: sorted keys, two-space indent, trailing newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def generated() -> dict[Path, str]:
    """Every generated file and the text it should hold."""
    return {SCHEMA_PATH: render(json_schema()), ASYNCAPI_PATH: render(asyncapi())}


def stale(files: dict[Path, str]) -> list[Path]:
    """The files whose text on disk differs from ``files`` (or that are missing)."""
    return [
        path
        for path, text in files.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m protocol.schema",
        description="Generate protocol/schema.json and protocol/asyncapi.json from the messages.",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a generated file is missing or out of date",
    )
    args = parser.parse_args(argv)
    files = generated()
    if args.check:
        outdated = stale(files)
        for path in outdated:
            print(
                f"{path.name} is missing or out of date with protocol/messages.py;"
                " run `python -m protocol.schema` to regenerate it",
                file=sys.stderr,
            )
        return 1 if outdated else 0
    for path, text in files.items():
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
