"""A rule-based Craits player that sees only its own observation (``envs.craits.env``).

It plays the way a club player would: shed the cards that cost most points, keep the wild
8s and 9s for when nothing else fits (or to go out), name the suit it holds most of, and
hit the next opponent with a crank, a skip, a 7 or a 5 when that player is about to go out.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ..bot import HeuristicBot
from .env import DIRECTION, HAND, MAX_OTHERS, ONE_CARD, OTHERS, PARTNER, PHASE, PRESENT, SLOT_SIZE
from .game import BLIND_SUIT, CARD_POINTS, CRANK, EIGHT, FIVE, FOUR, NINE, SEVEN, SIX, SUIT_ACTION, TWO, UNANNOUNCED
from .rules import Rules

# A play's value (higher first, ties to the lower card) is one table entry plus the suit term,
# worked out once per rule, not per card and decision:
#   _RANK_VALUES[keep_wilds][next player][rank] + _SUIT_WEIGHT[rank] * (other cards of its suit)
# - its points, less 80 for an 8 or 9 while more than two cards are left (keep_wilds): a wild
#   card is worth more kept than shed;
# - the next player: about to go out, hit them with a 2, 4, 5 (or a 7 when it reaches them);
#   otherwise a 2 costs a partner and pushes an opponent;
# - 2 per other card of its suit, to keep a suit to follow with next turn; 5 more for a 6,
#   whose extra turn sheds another.
_OUT_SOON_SEVEN_HITS, _OUT_SOON, _PARTNER_NEXT, _OPPONENT_NEXT = range(4)  # the next player
_HITS = {TWO: 100, FOUR: 80, FIVE: 50}
_NEXT_BONUS = (_HITS | {SEVEN: 60}, _HITS, {TWO: -40}, {TWO: 10})  # by next player, then rank
_RANK_VALUES = tuple(
    tuple(
        tuple(
            CARD_POINTS[rank] - (80 if keep_wilds and rank in (EIGHT, NINE) else 0) + bonus.get(rank, 0)
            for rank in range(13)
        )
        for bonus in _NEXT_BONUS
    )
    for keep_wilds in (False, True)
)
_SUIT_WEIGHT = tuple(7 if rank == SIX else 2 for rank in range(13))


def next_player_kind(partner: bool, one_card: bool, seven_hits: bool) -> int:
    """Who plays next, as the rule weighs it (an index of ``_NEXT_BONUS``)."""
    if partner:
        return _PARTNER_NEXT
    if one_card:
        return _OUT_SOON_SEVEN_HITS if seven_hits else _OUT_SOON
    return _OPPONENT_NEXT


def play_choice(legal, hand_size: int, suits, next_player: int) -> int:
    """The card to play (``legal`` sorted: the plays, then the same unannounced: always
    announce), given the hand's size, its cards per suit and ``next_player_kind``."""
    values = _RANK_VALUES[hand_size > 2][next_player]
    best = best_value = None
    for card in legal:
        if card >= UNANNOUNCED:
            break
        rank = card >> 2
        value = values[rank] + _SUIT_WEIGHT[rank] * (suits[card & 3] - 1)  # the card itself is in the hand
        if best is None or value > best_value:
            best, best_value = card, value
    return int(cast(int, best))  # a card: legal holds a play (a lone draw is a forced move, never asked)


def crank_choice(legal) -> int:
    """In a crank: a 2 raises the count most, then the highest card."""
    return max((int(a) for a in legal if a < UNANNOUNCED), key=lambda c: (c >> 2 == TWO, c))


def suit_choice(legal, hand, blind: bool) -> int:
    """The suit to name: the one held most (ties: more points to shed), 8s and 9s aside."""
    if blind:
        return int(legal[0])
    counts = [0.0] * 4
    for card in hand:
        if card >> 2 not in (EIGHT, NINE):
            counts[card & 3] += 1 + CARD_POINTS[card >> 2] / 100
    return int(max(legal, key=lambda a: counts[a - SUIT_ACTION]))


class CraitsHeuristic(HeuristicBot):
    """The rule, read off the seat's observation (``envs.craits.view.heuristic_action``
    reads the same rule off an engine, for the search's rollouts)."""

    def __init__(self, rules: Rules = Rules()):
        self.rules = rules  # the seven's target decides whom a 7 hits

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.asarray(action_mask).ravel().nonzero()[0].tolist()  # np.flatnonzero's, without its overhead
        if len(legal) == 1:  # a forced move needs no thought
            return legal[0]
        return self.choose(observation, legal)

    def choose(self, observation: np.ndarray, legal) -> int:
        hand = observation[HAND : HAND + 52].nonzero()[0].tolist()
        item = observation.item  # plain floats: numpy scalars are slow to compare
        if legal[0] >= SUIT_ACTION:
            return suit_choice(legal, hand, item(PHASE + BLIND_SUIT) > 0)
        if item(PHASE + CRANK) > 0:
            return crank_choice(legal)
        others = int(sum(observation[OTHERS + PRESENT : OTHERS + MAX_OTHERS * SLOT_SIZE : SLOT_SIZE].tolist()))
        base = OTHERS + (0 if item(DIRECTION) > 0 else others - 1) * SLOT_SIZE  # the next player's slot
        next_player = next_player_kind(
            item(base + PARTNER) > 0, item(base + ONE_CARD) > 0, self.rules.seven_target == "next" or others == 1
        )
        suits = [0, 0, 0, 0]
        for card in hand:
            suits[card & 3] += 1
        return play_choice(legal, len(hand), suits, next_player)
