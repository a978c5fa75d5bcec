"""A rule-based Pairs Draft player that sees only its own observation (``envs.pairs_draft.env``).

It plays the way a careful player would. In the draft it takes numbers it does not hold
yet (distinct numbers score, and the more numbers it holds the more of the others' cards
it can pair), then copies towards sets, low numbers first: a low card that does not pair
is lost at worst, a high one takes the others' cards face down. It discards the card that
adds least. In the rounds it pairs a number already on the table whenever it can; playing
last it knows the outcome of each card; otherwise it weighs the chance that its card pairs
or stays the lowest against the chance that it ends the highest unpaired card, and keeps
cards that can still pair for later rounds.
"""
from __future__ import annotations

import math

import numpy as np

from ..bot import HeuristicBot
from .env import (COUNT_SCALE, FACE_DOWN, HAND, HAND_SIZE, PAIRED, PHASE, SEAT_SIZE, SEATS, START, TRICK, TRICK_SLOT,
                  UNSEEN, result)
from .game import FORCED_VALUE, NUM_ACTIONS, NUM_PLAYERS, Play, score_counts, take_round

DRAFT_PHASE, DISCARD_PHASE = PHASE, PHASE + 1
_NUMBERS = np.arange(1, NUM_ACTIONS + 1)
# Draft: value of a card by the copies of its number already held (0, 1, 2, ...), less
# LOW_PREFERENCE per point of the number. Tuned against uniform random play, where low
# cards are worth most.
_SET_BONUS = np.array([4.0, 2.0, 2.0, 2.0, 0.5] + [0.0] * 6)
LOW_PREFERENCE = 0.5
# Rounds: a face-up card is worth its points gain plus FACE_UP_BASE, plus SET_GROWTH per
# further copy in hand (up to 2); pairing now adds PAIR_NOW; a card that can still pair is
# worth up to KEEP more kept for later.
FACE_UP_BASE, SET_GROWTH, PAIR_NOW, KEEP = 1.0, 0.5, 4.0, 0.8


def _counts(observation, start: int) -> np.ndarray:
    return np.rint(observation[start:start + NUM_ACTIONS] * COUNT_SCALE).astype(np.int64)


class PairsDraftHeuristic(HeuristicBot):
    def choose(self, observation: np.ndarray, legal: np.ndarray) -> int:
        if observation[DRAFT_PHASE] > 0:
            values = self._draft_values(_counts(observation, HAND))
        elif observation[DISCARD_PHASE] > 0:
            values = -self._draft_values(_counts(observation, HAND) - 1)  # the card that adds least goes
        else:
            values = self._play_values(observation, legal)
        return int(legal[np.argmax(values[legal])])

    # -- draft and discard ------------------------------------------------------------

    @staticmethod
    def _draft_values(own) -> np.ndarray:
        """How much one more card of each number adds to ``own`` cards: a new number most
        (distinct numbers score, and can pair whatever is played), then copies towards a
        set; low numbers first, as they are safe when they do not pair."""
        return _SET_BONUS[np.clip(own, 0, NUM_ACTIONS)] - LOW_PREFERENCE * _NUMBERS

    # -- rounds -----------------------------------------------------------------------

    def _play_values(self, observation, legal) -> np.ndarray:
        # Plain Python over a few numbers: numpy's per-call cost dominated on 10-element arrays.
        hand = _counts(observation, HAND).tolist()
        unseen = [max(u, 0) for u in _counts(observation, UNSEEN).tolist()]  # may be in the others' hands
        seats = np.rint(observation[SEATS:].reshape(NUM_PLAYERS, SEAT_SIZE) * COUNT_SCALE).astype(np.int64)
        face_up, face_down, hand_sizes = seats[0, :NUM_ACTIONS].tolist(), int(seats[0, FACE_DOWN]), seats[:, HAND_SIZE]
        start = int(np.argmax(observation[START:START + NUM_PLAYERS]))
        slots = observation[TRICK:TRICK + NUM_PLAYERS * TRICK_SLOT].reshape(NUM_PLAYERS, TRICK_SLOT)
        played = slots[:, :NUM_ACTIONS].any(axis=1).tolist()
        trick = [(n + 1, f > 0) for n, f, p in zip(slots[:, :NUM_ACTIONS].argmax(axis=1).tolist(),
                                                   slots[:, NUM_ACTIONS].tolist(), played) if p]  # (number, forced)
        paired = (observation[PAIRED:PAIRED + NUM_ACTIONS] > 0).tolist()
        later = [(start + i) % NUM_PLAYERS for i in range(len(trick) + 1, NUM_PLAYERS)]  # slots after this seat
        later_sizes = [int(hand_sizes[s]) for s in later]

        now = result(score_counts(face_up, face_down))
        pool = max(sum(unseen), 1)
        can_keep = hand_sizes[0] > 1
        values = np.full(NUM_ACTIONS, -np.inf)
        forced = all(paired[a] for a in legal)  # a legal paired number is a forced card
        forced_on_table = sum(was_forced for _, was_forced in trick)
        unpaired = [FORCED_VALUE if was_forced else n for n, was_forced in trick
                    if (forced_on_table == 1 if was_forced else not paired[n - 1])]
        has_pair = any(paired) or forced_on_table > 1
        on_table = {n for n, was_forced in trick if not was_forced}
        for a in legal.tolist():
            n = a + 1
            face_up[a] += 1
            gain = (result(score_counts(face_up, face_down)) - now + FACE_UP_BASE
                    + SET_GROWTH * min(max(hand[a] - 1, 0), 2))
            face_up[a] -= 1
            keep = KEEP * min(unseen[a], 3) / 3 * can_keep
            if not later:  # last to play: the outcome of each card is known
                up, down = self._outcome(trick, start, n, forced)
                values[a] = up * gain - down - keep
            elif not forced and n in on_table and not paired[a]:
                values[a] = gain + PAIR_NOW - keep  # pairs now: face up for sure
            else:
                value = FORCED_VALUE if forced else n
                p_pair = 0.0 if forced else 1.0 - math.prod((1 - unseen[a] / pool) ** k for k in later_sizes)
                p_higher = 0.0 if forced else sum(unseen[n:]) / pool  # one later card beats it
                p_highest = (not unpaired or value > max(unpaired)) * (1 - p_higher) ** len(later)
                lowest_now = not has_pair and (not unpaired or value < min(unpaired))
                p_lowest = lowest_now * (1 - sum(unseen[:a]) / pool) ** len(later)
                down = 2.0 if has_pair else 2.7  # what the highest takes: 2 beside a pair, 3 without
                values[a] = (p_pair * gain + (1 - p_pair) * (p_lowest * gain - p_highest * down)) - keep
        return values

    @staticmethod
    def _outcome(trick, start: int, number: int, forced: bool) -> tuple[int, int]:
        """(face-up cards, face-down cards) this seat (slot 0) gets by playing ``number`` last,
        by the engine's own rule (2.4)."""
        plays = [Play((start + i) % NUM_PLAYERS, n, f) for i, (n, f) in enumerate(trick)]
        up = down = 0
        for taker, face_up in take_round(plays + [Play(0, number, forced)]):
            if taker == 0:
                up += face_up
                down += not face_up
        return up, down
