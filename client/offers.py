"""Whether this player may offer a draw, or answer one, now, from what the server sent.

The server refuses a second offer before the offerer's next move, an offer that already
stands, and an answer (accept or decline) with no offer from another seat on the table
(PROTOCOL.md section 14). ``draw``, ``accept`` and ``decline`` say so at once rather than
sending a request bound to be refused, as the browser greys or hides its buttons. No rule of
the game here: only the offers seen in the states, and the server's own ``cannot_draw``.
"""

from __future__ import annotations

from typing import Literal

from protocol.messages import State

Action = Literal["offer", "accept", "decline"]

DECLINED = "Your draw offer was declined: you may offer again after your next move."
STANDING = "Your draw offer already stands: it lapses when you move."
NO_OFFER_TO_ACCEPT = "There is no draw offer to accept."
NO_OFFER_TO_DECLINE = "There is no draw offer to decline."
NOTHING_TO: dict[Action, str] = {"accept": NO_OFFER_TO_ACCEPT, "decline": NO_OFFER_TO_DECLINE}


class DrawOffers:
    """The player's declined offer, remembered until their next move."""

    def __init__(self) -> None:
        self.declined_in: tuple[str, int] | None = None
        """The room and game in which the offer was declined, until the player moves."""

    def saw(self, before: State | None, state: State, seat: int | None, mine: bool) -> None:
        """A new state; ``mine``: caused by this player's own request (a decline of theirs
        is not a decline of their offer)."""
        if self.declined_in is not None and _moved(before, state, seat):
            self.declined_in = None
        if state.status != "playing" or self.declined_in != (state.room, state.game):
            self.declined_in = None
        if _declined(before, state, seat) and not mine:
            self.declined_in = (state.room, state.game)

    def refused(self, state: State | None) -> None:
        """The server answered an offer with ``cannot_draw``: declined before this client
        saw it (it came back to the room since), so wait for the next move too."""
        if state is None or state.status != "playing":
            return
        # Against the computer the offer is refused for ever, and the server says so.
        if not any(p.bot is not None for p in state.players if p.active):
            self.declined_in = (state.room, state.game)

    def refusal(
        self, state: State | None, seat: int | None, action: Action = "offer"
    ) -> str | None:
        """Why ``action`` (an offer, or an answer: accept or decline) cannot work now, if the
        states say so; None: send it (the server judges the rest: an offer is an acceptance
        while another seat's stands)."""
        if state is None or seat is None or state.status != "playing":
            return None
        if any(other != seat for other in state.draw_offers):
            return None
        if action != "offer":
            # Nothing to answer: nobody offered, or only this seat. A seat out of the game
            # is the server's to refuse (game_over comes before no_offer).
            active = seat < len(state.players) and state.players[seat].active
            return NOTHING_TO[action] if active else None
        if seat in state.draw_offers:
            return STANDING
        if self.declined_in == (state.room, state.game):
            return DECLINED
        return None


def _moved(before: State | None, state: State, seat: int | None) -> bool:
    """Whether ``seat`` may have moved between the two states: its move is the last, or
    several plies passed at once (a reconnection) and it cannot be told."""
    if before is None or before.room != state.room or before.game != state.game:
        return True
    if before.ply == state.ply:
        return False
    last = state.last_move
    return state.ply != before.ply + 1 or (last is not None and last.seat == seat)


def _declined(before: State | None, state: State, seat: int | None) -> bool:
    """Whether ``seat``'s offer vanished with no move: every offer is withdrawn by a decline
    (an offer lapses otherwise only by its own seat's move, which changes the ply)."""
    return (
        before is not None
        and seat is not None
        and before.room == state.room
        and before.game == state.game
        and before.ply == state.ply
        and state.status == "playing"
        and seat in before.draw_offers
        and not state.draw_offers
    )
