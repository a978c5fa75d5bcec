"""The heuristic: win the trick with the lowest card that can, else throw the lowest card."""

from __future__ import annotations

import numpy as np

from envs.bot import HeuristicBot

from .game import NUM_CARDS


def choose(hand: list[int], trick_cards: list[int]) -> int:
    """The card to play (1-12) from ``hand`` given the cards already in the trick."""
    best = max(trick_cards, default=0)
    winning = [c for c in hand if c > best]
    return min(winning) if winning else min(hand)


class LittleTricksHeuristic(HeuristicBot):
    def choose(self, observation: np.ndarray, legal: np.ndarray) -> int:
        trick = [a + 1 for a in range(NUM_CARDS) if observation[2 * NUM_CARDS + a]]
        return choose([int(a) + 1 for a in legal], trick) - 1
