"""The terminal client: a thin front end that draws what the server says.

It holds no rules and never imports ``engine``: legality is the server's
business. The pieces, each in its own module:

- ``notation``: the alphabet of squares and walls, for drawing and parsing;
- ``render``: the board as styled lines (a pure function of a ``state``);
- ``status`` and ``describe``: the status panel and one-line event texts;
- ``commands``: what the player types, parsed; help and completion;
- ``connection``: the websocket, the handshake, reconnecting and resuming;
- ``controller``: glue between the connection, the commands and a view;
- ``plain`` and ``tui``: the line-per-event view and the full-screen one;
- ``replay``: record files read, replayed positions kept and told in words;
- ``archive``: ``history`` and ``replay``, which ask the server and need no room;
- ``viewer``: the full-screen replay viewer;
- ``__main__``: the ``quoridor`` command line.

The exception is ``bot``: the headless computer player (``quoridor bot``),
the reference example for bots, which thinks with ``engine.ai``. It speaks
only the public protocol, and ``__main__`` loads it only for ``bot``.
"""
