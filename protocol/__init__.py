"""The Quoridor wire protocol: messages, codec and specification (PROTOCOL.md)."""

from protocol.codec import BadRequest, decode_request, decode_server_message, encode
from protocol.messages import VERSION, ErrorCode, Request, ServerMessage

__all__ = [
    "VERSION",
    "BadRequest",
    "ErrorCode",
    "Request",
    "ServerMessage",
    "decode_request",
    "decode_server_message",
    "encode",
]
