"""Following a room through ``moved`` events: the state they lead to, or a gap.

A client that said ``hello`` with ``compact: true`` gets, after each move, a ``moved``
event instead of the whole ``state`` (PROTOCOL.md, section 7a). ``apply_moved`` is the
whole of what such a client does with one: copy its fields into the state it holds. A
``chat_line`` is a room event too, so the state held takes its number (``apply_chat``) for
the next ``moved`` to follow. It knows no rules; a gap (a ``moved`` that does not follow
the state held) is for the client to repair with ``sync``.
"""

from __future__ import annotations

import msgspec

from protocol.messages import ChatMessage, LastMove, Moved, ServerMessage, State


def follows(state: State, moved: Moved) -> bool:
    """Whether ``moved`` is the event right after ``state`` in the same room and game."""
    return (
        moved.room == state.room
        and moved.event == state.event + 1
        and moved.ply == state.ply + 1
        and state.status == "playing"
    )


def apply_moved(state: State, moved: Moved) -> State | None:
    """The state of event ``moved.event``, or None when ``moved`` does not follow ``state``
    (the client then asks for the whole state with ``sync``)."""
    if not follows(state, moved):
        return None
    return msgspec.structs.replace(
        state,
        id=moved.id,
        event=moved.event,
        ply=moved.ply,
        turn=moved.turn,
        pawns=moved.pawns,
        walls=state.walls if moved.walls is None else moved.walls,
        walls_left=moved.walls_left,
        last_move=LastMove(seat=moved.seat, move=moved.move, ply=moved.ply - 1),
        legal_pawn_moves=moved.legal_pawn_moves,
        legal_walls=moved.legal_walls,
        distances=moved.distances,
        spectators=moved.spectators,
        clock=moved.clock,
        draw_offers=moved.draw_offers,
        moves=[*state.moves, moved.move],
        first_move_in_ms=moved.first_move_in_ms,
        move_claim_in_ms=moved.move_claim_in_ms,
    )


def apply_chat(state: State, chat: ChatMessage) -> State | None:
    """The state held after ``chat``, the room's next event: the same state with the chat
    line's number (a chat changes nothing else). None when it does not follow ``state``."""
    if chat.room != state.room or chat.event != state.event + 1:
        return None
    return msgspec.structs.replace(state, event=chat.event)


class Follower:
    """A client's side of compact events: the latest state, each ``moved`` turned into the
    state it leads to, and when to ask for a ``sync``.

    ``take`` every server message in order; act on what it returns. A ``moved`` that does
    not follow the state held returns None and sets ``gap``: send ``sync`` once (``ask``),
    and the ``state`` that answers it repairs the gap.
    """

    def __init__(self) -> None:
        self.state: State | None = None
        self.gap = False
        """A ``moved`` did not follow: the next whole state repairs it."""
        self._asked = False
        self._rebase = False

    def rebase(self) -> None:
        """A new connection: the next whole state is held whatever its number (a server
        restored from an older backup numbers the room's events from there)."""
        self._rebase = True

    def take(self, message: ServerMessage) -> ServerMessage | None:
        if isinstance(message, State):
            held = self.state
            if (
                self._rebase
                or held is None
                or held.room != message.room
                or message.event >= held.event
            ):
                self.state = message
                self.gap = self._asked = self._rebase = False
            return message
        if isinstance(message, Moved):
            state = apply_moved(self.state, message) if self.state is not None else None
            if state is None:
                self.gap = True
                return None
            self.state = state
            return state
        if isinstance(message, ChatMessage) and self.state is not None:
            # A chat line out of turn is a gap too, which the next ``moved`` finds.
            self.state = apply_chat(self.state, message) or self.state
        return message

    def ask(self) -> bool:
        """Whether to send ``sync`` now: once per gap, until a state repairs it."""
        if not self.gap or self._asked:
            return False
        self._asked = True
        return True
