"""What the terminal knows of its draw offer from the states alone (client.offers)."""

from __future__ import annotations

from client.offers import DECLINED, NO_OFFER_TO_ACCEPT, NO_OFFER_TO_DECLINE, STANDING, DrawOffers
from protocol.messages import PlayerInfo
from tests.client.states import make_state

FOUR = ("e1", "e9", "a5", "i5")
NAMES = ("Ann", "Bo", "Cy", "Di")


def declined_at_ply_2() -> DrawOffers:
    offers = DrawOffers()
    offered = make_state(ply=2, event=5, draw_offers=[0])
    offers.saw(None, offered, 0, mine=False)
    assert offers.refusal(offered, 0) == STANDING
    offers.saw(offered, make_state(ply=2, event=6), 0, mine=False)
    return offers


def test_a_declined_offer_waits_for_the_players_own_move() -> None:
    offers = declined_at_ply_2()
    after = make_state(ply=2, event=6)
    assert offers.refusal(after, 0) == DECLINED
    # Another seat's offer may always be agreed to.
    assert offers.refusal(make_state(ply=2, event=7, draw_offers=[1]), 0) is None
    theirs = make_state(ply=3, event=7, last="e8", last_seat=1)
    offers.saw(after, theirs, 0, mine=False)
    assert offers.refusal(theirs, 0) == DECLINED
    mine = make_state(ply=4, event=8, last="e2", last_seat=0)
    offers.saw(theirs, mine, 0, mine=False)
    assert offers.refusal(mine, 0) is None


def test_a_jump_of_plies_or_a_new_game_forgets_it() -> None:
    offers = declined_at_ply_2()
    jumped = make_state(ply=4, event=9, last="e8", last_seat=1)  # a reconnection
    offers.saw(make_state(ply=2, event=6), jumped, 0, mine=False)
    assert offers.refusal(jumped, 0) is None
    offers = declined_at_ply_2()
    next_game = make_state(ply=2, event=9, game=2)
    offers.saw(make_state(ply=2, event=6), next_game, 0, mine=False)
    assert offers.refusal(next_game, 0) is None


def test_the_players_own_decline_is_not_theirs_declined() -> None:
    offers = DrawOffers()
    both = make_state(ply=2, event=5, draw_offers=[0, 1], pawns=FOUR, names=NAMES)
    after = make_state(ply=2, event=6, pawns=FOUR, names=NAMES)
    offers.saw(both, after, 0, mine=True)
    assert offers.refusal(after, 0) is None


def test_the_servers_refusal_is_remembered_but_not_the_computers() -> None:
    offers = DrawOffers()
    state = make_state(ply=2)
    offers.refused(state)
    assert offers.refusal(state, 0) == DECLINED
    offers = DrawOffers()
    computer = make_state(ply=2)
    computer.players[1] = PlayerInfo(seat=1, name="Computer L3", connected=True, bot=3)
    offers.refused(computer)
    assert offers.refusal(computer, 0) is None


def test_an_answer_needs_another_seats_offer() -> None:
    offers = DrawOffers()
    for draw_offers in ([], [0]):  # none, or only one's own
        state = make_state(ply=2, draw_offers=draw_offers)
        assert offers.refusal(state, 0, "accept") == NO_OFFER_TO_ACCEPT
        assert offers.refusal(state, 0, "decline") == NO_OFFER_TO_DECLINE
    theirs = make_state(ply=2, draw_offers=[0, 2], pawns=FOUR, names=NAMES)
    for seat in (0, 1):
        assert offers.refusal(theirs, seat, "accept") is None
        assert offers.refusal(theirs, seat, "decline") is None
    # Out of the game, or not playing: the server's to refuse, with its own reason.
    gone = make_state(ply=2, pawns=FOUR, names=NAMES)
    gone.players[1] = PlayerInfo(seat=1, name="Bo", connected=True, active=False)
    assert offers.refusal(gone, 1, "accept") is None
    assert offers.refusal(gone, 0, "accept") == NO_OFFER_TO_ACCEPT
    assert offers.refusal(make_state(ply=2, status="finished"), 0, "decline") is None
