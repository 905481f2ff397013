"""The plain line mode: one line per event, for screen readers and scripts.

Nothing is redrawn and nothing is coloured: each event is one line of words
on standard output, errors included, in order. Lines typed on standard input
run in order; a move waits for the player's turn, so a whole game can be
piped in. ``board`` prints the drawing on demand.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TextIO

from client.controller import Controller, Kind
from client.printed import INDENT, Command, ProseAndCommand, command_rows, terminal_width
from client.render import board_text
from client.status import status_lines
from client.width import columns, wrap


class PlainView:
    """Prints notices as lines on ``out``."""

    live_board = False
    """Nothing stays on screen: every move and the situation are told in words."""

    def __init__(self, out: TextIO, *, ascii: bool = False, absolute: bool = False) -> None:
        self.out = out
        self.ascii = ascii
        self.absolute = absolute
        """Draw ``board`` with row 1 at the bottom whatever the seat (``--absolute``)."""
        self.controller: Controller | None = None

    def notice(self, kind: Kind, text: str) -> None:
        shown = "Error: " + text if kind == "error" else text  # a Command stays one
        self.out.write("\n".join(self.rows(shown)) + "\n")
        self.out.flush()

    def rows(self, text: str) -> list[str]:
        """``text``'s lines; on a terminal, each wider than it broken between words, its
        rows after the first indented (the terminal broke them mid-word, "Compu" / "ter
        L1"). A line that starts indented (the board) stays whole; a command to copy wider
        than the terminal goes on over rows ending in a shell's line continuation
        (``command_rows``); a file or a pipe gets every line whole, one event a line."""
        width = terminal_width(self.out)
        if width is None:
            return text.split("\n")
        if isinstance(text, ProseAndCommand):
            # The command whole on rows of its own: after the prose it was broken between
            # the rows like any words, no continuation (a newcomer's review).
            return self.rows(text.prose) + self.rows(Command(INDENT + text.command))
        if isinstance(text, Command) and columns(text) > width:
            return command_rows(text.strip(), width)  # over rows, as a shell reads them
        rows: list[str] = []
        for line in text.split("\n"):
            whole = line.startswith(INDENT) or columns(line) <= width
            rows += [line] if whole else wrap(line, width, INDENT, cut=False)
        return rows

    def changed(self) -> None:
        pass  # every change was already told in a notice

    def show_board(self) -> None:
        controller = self.controller
        if controller is None or controller.state is None:
            self.notice("info", "No board yet.")
            return
        state, seat = controller.state, controller.seat
        # From the player's side, as the full screen draws it (a newcomer review: seat 1
        # saw its board the other way up in plain mode only).
        turns = 0 if self.absolute else controller.board_turns()
        lines = [board_text(state, ascii=self.ascii, seat=seat, turns=turns)]
        lines += [
            "".join(text for _, text in line)
            for line in status_lines(state, seat, ascii=self.ascii, elapsed=controller.elapsed())
        ]
        self.notice("info", "\n".join(lines))


def read_lines(stream: TextIO, controller: Controller) -> threading.Thread:
    """Feed ``stream``'s lines to the controller from a thread, then tell it the input ended.

    A thread, not the event loop, reads: standard input may be a terminal, a
    pipe or a file, and a blocking read works on all three.
    """
    loop = asyncio.get_running_loop()

    def read() -> None:
        try:
            for line in stream:
                loop.call_soon_threadsafe(controller.type, line)
            loop.call_soon_threadsafe(controller.input_ended)
        except (RuntimeError, ValueError, OSError):
            pass  # the loop is gone (we are exiting) or the stream was closed

    thread = threading.Thread(target=read, name="stdin", daemon=True)
    thread.start()
    return thread


async def read_once_answered(stream: TextIO, controller: Controller) -> None:
    """``read_lines``, from the moment the server answered the room request: what the lines
    do is said after the seat they are played from (and a refused request leaves the
    input unread, for the next question of ``quoridor``)."""
    await controller.ready.wait()
    if controller.exit_code is None:
        read_lines(stream, controller)
