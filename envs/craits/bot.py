"""A rule-based Craits player that sees only its own observation (``envs.craits.env``).

It plays the way a club player would: shed the cards that cost most points, keep the wild
8s and 9s for when nothing else fits (or to go out), name the suit it holds most of, and
hit the next opponent with a crank, a skip, a 7 or a 5 when that player is about to go out.
"""
from __future__ import annotations

import numpy as np

from ..bot import HeuristicBot
from .env import DIRECTION, HAND, MAX_OTHERS, ONE_CARD, OTHERS, PARTNER, PHASE, PRESENT, SLOT_SIZE
from .game import (BLIND_SUIT, CARD_POINTS, CRANK, EIGHT, FIVE, FOUR, NINE, SEVEN, SIX, SUIT_ACTION, TWO,
                   UNANNOUNCED)
from .rules import Rules


class CraitsHeuristic(HeuristicBot):
    def __init__(self, rules: Rules = Rules()):
        self.rules = rules  # the seven's target decides whom a 7 hits

    def choose(self, observation: np.ndarray, legal: np.ndarray) -> int:
        hand = np.flatnonzero(observation[HAND:HAND + 52])
        if legal[0] >= SUIT_ACTION:
            return self._name_suit(legal, hand, observation[PHASE + BLIND_SUIT] > 0)
        plays = [int(a) for a in legal if a < UNANNOUNCED]  # always announce
        if observation[PHASE + CRANK] > 0:
            return max(plays, key=lambda c: (c >> 2 == TWO, c))  # a 2 raises the count most
        return max(plays, key=self._play_values(hand, observation))

    @staticmethod
    def _name_suit(legal, hand, blind: bool) -> int:
        if blind:
            return int(legal[0])
        counts = np.zeros(4)
        for card in hand:
            if card >> 2 not in (EIGHT, NINE):
                counts[card & 3] += 1 + CARD_POINTS[card >> 2] / 100  # ties: the suit with more points to shed
        return int(max(legal, key=lambda a: counts[a - SUIT_ACTION]))

    def _play_values(self, hand, observation):
        """A card's value to play now (higher first, ties to the lower card): what the position
        says about the next player and the hand, worked out once for every card."""
        others = int(observation[OTHERS + PRESENT:OTHERS + MAX_OTHERS * SLOT_SIZE:SLOT_SIZE].sum())
        next_slot = 0 if observation[DIRECTION] > 0 else others - 1
        base = OTHERS + next_slot * SLOT_SIZE
        next_is_partner = observation[base + PARTNER] > 0
        next_about_out = observation[base + ONE_CARD] > 0 and not next_is_partner
        hits_next = {TWO: 100, FOUR: 80, FIVE: 50}
        if self.rules.seven_target == "next" or others == 1:
            hits_next[SEVEN] = 60
        suits = [0, 0, 0, 0]
        for c in hand.tolist():
            suits[c & 3] += 1
        keep_wilds = len(hand) > 2

        def value(card: int):
            rank = card >> 2
            value = float(CARD_POINTS[rank])
            if rank in (EIGHT, NINE) and keep_wilds:
                value -= 80  # a wild card is worth more kept than shed
            same_suit = suits[card & 3] - 1  # the card itself is in the hand
            value += 2 * same_suit  # keep a suit to follow with next turn
            if rank == SIX:
                value += 5 * same_suit  # the extra turn sheds another card
            if next_about_out:
                value += hits_next.get(rank, 0)
            elif rank == TWO:
                value += -40 if next_is_partner else 10
            return value, -card
        return value
