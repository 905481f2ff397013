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
- ``__main__``: the ``quoridor`` command line.
"""
