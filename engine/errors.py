"""The engine's two kinds of bad input, kept apart like python-chess does.

Both are ``ValueError`` subclasses, so a caller that does not care which one
it got can catch ``ValueError``.
"""


class NotationError(ValueError):
    """Text that is not a move, square, wall or record on this board."""


class IllegalMove(ValueError):
    """A well-formed move that the rules forbid in the current position.

    The message is a human-readable reason such as ``"wall e3h crosses e3v"``.
    """
