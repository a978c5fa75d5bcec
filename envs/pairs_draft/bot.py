"""A rule-based Pairs Draft player that sees only its own observation (``envs.pairs_draft.env``).

It plays the way a careful player would. In the draft it takes numbers it does not hold
yet (distinct numbers score, and the more numbers it holds the more of the others' cards
it can pair), then copies towards sets, low numbers first: a low card that does not pair
is lost at worst, a high one takes the others' cards face down. It discards the card that
adds least. In the rounds it pairs a number already on the table whenever it can; playing
last it knows the outcome of each card; otherwise it weighs the chance that its card pairs
or stays the lowest against the chance that it ends the highest unpaired card, and keeps
cards that can still pair for later rounds.

The rule itself (``draft_choice``, ``play_choice``) works on plain counts, so the search's
rollout rule (``envs.pairs_draft.view.heuristic_action``) runs the very same code on the
engine. A decision is a few dozen float operations on ten numbers: plain Python over
lists, since numpy's per-call cost would dominate arrays this small.
"""

from __future__ import annotations

import math
from itertools import accumulate, compress
from typing import NamedTuple

import numpy as np

from ..bot import HeuristicBot
from .env import (
    COUNT_SCALE,
    FACE_DOWN,
    HAND,
    HAND_SIZE,
    INSTANT_WIN_BONUS,
    PAIRED,
    PHASE,
    SEAT_SIZE,
    SEATS,
    START,
    TRICK,
    TRICK_SLOT,
    UNSEEN,
)
from .game import _COPY_POINTS, _KIND_POINTS, FORCED_VALUE, NUM_ACTIONS, NUM_PLAYERS

DRAFT_PHASE, DISCARD_PHASE = PHASE, PHASE + 1
_ACTIONS = range(NUM_ACTIONS)
# Draft: value of a card by the copies of its number already held (0, 1, 2, ...), less
# LOW_PREFERENCE per point of the number. Tuned against uniform random play, where low
# cards are worth most.
_SET_BONUS = (4.0, 2.0, 2.0, 2.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
LOW_PREFERENCE = 0.5
# _DRAFT_VALUE[held][a]: one more card of number a + 1 with ``held`` copies already held.
_DRAFT_VALUE = tuple(tuple(bonus - LOW_PREFERENCE * (a + 1) for a in _ACTIONS) for bonus in _SET_BONUS)
_MAX_HELD = len(_SET_BONUS) - 1  # more copies held count as this many
# Rounds: a face-up card is worth its points gain plus FACE_UP_BASE, plus SET_GROWTH per
# further copy in hand (up to 2); pairing now adds PAIR_NOW; a card that can still pair is
# worth up to KEEP more kept for later.
FACE_UP_BASE, SET_GROWTH, PAIR_NOW, KEEP = 1.0, 0.5, 4.0, 0.8
_KEEP = tuple(KEEP * unseen / 3 for unseen in range(4))  # by unseen copies, at most 3
_COPIES_WIN = len(_COPY_POINTS)  # this many copies of a number face up win at once

# The legal actions of every 0/1 action mask (int8 or bool), by its bytes: a dict lookup
# instead of np.flatnonzero (the lists are shared: read only).
_LEGAL = {
    bytes(bits): list(compress(_ACTIONS, bits))
    for bits in ([m >> a & 1 for a in _ACTIONS] for m in range(1, 1 << NUM_ACTIONS))
}
# The count fields the play rule reads: own hand, unseen copies, own face-up and face-down
# cards, every slot's hand size.
_COUNT_FIELDS = np.r_[
    HAND : HAND + NUM_ACTIONS,
    UNSEEN : UNSEEN + NUM_ACTIONS,
    SEATS : SEATS + FACE_DOWN + 1,
    SEATS + HAND_SIZE : SEATS + NUM_PLAYERS * SEAT_SIZE : SEAT_SIZE,
]
# The start player's slot and the trick fields, by their bytes -> ``_read_table``: games
# show about a thousand distinct ones, so each is read once and looked up after.
_TABLES: dict[bytes, tuple[tuple, int, Round]] = {}
_MAX_TABLES = 100_000


def observed_counts(field: np.ndarray) -> np.ndarray:
    """The counts in observation values (``COUNT_SCALE`` undone)."""
    return np.rint(field * COUNT_SCALE).astype(np.int64)


def draft_choice(own, legal, discard: bool = False) -> int:
    """The pick (or with ``discard``, the discard) from ``own`` cards (counts): the number a
    further copy adds most to (a new number, then copies towards a set; low numbers first,
    as they are safe when they do not pair); the discard is the card that adds least.
    Ties go to the lower number."""
    best, best_value = legal[0], None
    for a in legal:
        held = own[a] - discard
        value = _DRAFT_VALUE[held if 0 <= held <= _MAX_HELD else (0 if held < 0 else _MAX_HELD)][a]
        if discard:
            value = -value
        if best_value is None or value > best_value:
            best, best_value = a, value
    return best


class Round(NamedTuple):
    """This round's plays as the play rule reads them (``read_round``)."""

    values: tuple  # the plays' values in order: forced cards count 11
    top: int  # the highest unpaired value; 0 if none (every number beats it)
    bottom: int  # the lowest unpaired value; 99 if none (every number is under it)
    has_pair: bool
    pairable: int  # bits (a: number a + 1) of the numbers on the table not paired yet: playing one pairs it


def read_round(trick, paired: int) -> Round:
    """``Round`` of the ``trick`` so far (``(number, forced)`` pairs in play order) and the
    ``paired`` numbers (bit a: number a + 1)."""
    values = []
    forced_on_table = on_table = 0
    for n, f in trick:
        if f:
            forced_on_table += 1
            values.append(FORCED_VALUE)
        else:
            on_table |= 1 << (n - 1)
            values.append(n)
    top, bottom = 0, 99
    for (n, f), value in zip(trick, values):
        if forced_on_table == 1 if f else not paired >> (n - 1) & 1:
            top, bottom = max(top, value), min(bottom, value)
    return Round(tuple(values), top, bottom, bool(paired) or forced_on_table > 1, on_table & ~paired)


def play_choice(
    legal, forced: bool, hand, unseen, face_up, face_down: int, can_keep: bool, later_sizes, round_: Round
) -> int:
    """The play in the rounds, from what the seat sees: ``legal`` actions (all free, or all
    ``forced``), its ``hand``, the ``unseen`` copies (not negative), its ``face_up`` counts
    and ``face_down`` count, whether it keeps cards after this one (``can_keep``), the hand
    sizes of the seats still to play after it (``later_sizes``) and the round so far.

    Each card's face-up gain is weighed by the chance it pairs or stays the lowest, against
    the chance it ends the highest unpaired card, less what it is worth kept for later;
    the first best card wins. Parts shared by several cards (the gain of a card with so
    many copies face up, the chance to pair with so many copies unseen) are worked out once."""
    below = list(accumulate(unseen, initial=0))  # below[a]: unseen cards with numbers under a + 1
    pool = below[NUM_ACTIONS] or 1
    kinds = copy_points = fives = 0
    for copies in face_up:
        if copies:
            kinds += 1
            if copies >= _COPIES_WIN:
                fives += 1
            else:
                copy_points += _COPY_POINTS[copies]
    now = _result_of(kinds, copy_points, fives, face_down)
    later = len(later_sizes)
    values, top, bottom, has_pair, pairable = round_
    if forced:
        pairable = 0
    down_cost = 2.0 if has_pair else 2.7  # what the highest takes: 2 beside a pair, 3 without
    face_up_gains: dict[int, float] = {}  # copies face up -> points one more adds, plus FACE_UP_BASE
    pair_chances: dict[int, float] = {}  # copies unseen -> chance a later seat pairs the card
    p_pair: float | None  # the card's chance to be paired (from pair_chances)
    best, best_value = legal[0], -math.inf
    for a in legal:
        copies = face_up[a]
        gain = face_up_gains.get(copies)
        if gain is None:
            if copies == 0:
                after = _result_of(kinds + 1, copy_points, fives, face_down)
            elif copies + 1 >= _COPIES_WIN:
                after = _result_of(
                    kinds,
                    copy_points - _COPY_POINTS[copies] if copies < _COPIES_WIN else copy_points,
                    fives + (copies < _COPIES_WIN),
                    face_down,
                )
            else:
                after = _result_of(
                    kinds, copy_points - _COPY_POINTS[copies] + _COPY_POINTS[copies + 1], fives, face_down
                )
            gain = face_up_gains[copies] = after - now + FACE_UP_BASE
        held = hand[a]  # SET_GROWTH per further copy in hand, up to 2
        if held >= 2:
            gain += SET_GROWTH if held == 2 else 2 * SET_GROWTH
        u = unseen[a]
        keep = (_KEEP[u] if u < 3 else _KEEP[3]) if can_keep else 0.0
        number = FORCED_VALUE if forced else a + 1
        if not later:  # last to play: the outcome of each card is known
            up, down = _last_outcome(values, number)
            value = up * gain - down - keep
        elif pairable >> a & 1:
            value = gain + PAIR_NOW - keep  # pairs now: face up for sure
        else:
            if forced:
                p_pair = p_higher = 0.0
            else:
                p_pair = pair_chances.get(u)
                if p_pair is None:
                    miss = 1 - u / pool
                    no_pair = 1
                    for k in later_sizes:
                        no_pair *= miss**k
                    p_pair = pair_chances[u] = 1.0 - no_pair
                p_higher = (below[NUM_ACTIONS] - below[number]) / pool  # one later card beats it
            p_highest = (1 - p_higher) ** later if number > top else 0.0
            p_lowest = (1 - below[a] / pool) ** later if not has_pair and number < bottom else 0.0
            value = p_pair * gain + (1 - p_pair) * (p_lowest * gain - p_highest * down_cost) - keep
        if value > best_value:
            best, best_value = a, value
    return best


def _result_of(kinds: int, copy_points: int, fives: int, face_down: int) -> int:
    """``score_counts`` from its parts (distinct numbers, copy points, numbers with 5+
    copies), plus the instant-win bonus: the env's ``result``."""
    if kinds == NUM_ACTIONS:
        return copy_points - face_down + INSTANT_WIN_BONUS
    return copy_points + _KIND_POINTS[kinds] - face_down + INSTANT_WIN_BONUS * (fives > 0)


def _last_outcome(values, own: int) -> tuple[int, int]:
    """(face-up, face-down) cards the last player gets by adding a card of value ``own``
    to a round of ``values`` (forced cards as 11), by the rule of ``game.take_round``: a
    paired card stays face up; with no pair at all the lowest card stays face up; the
    highest unpaired card takes every unpaired card (but that lowest) face down."""
    if own in values:
        return 1, 0
    unpaired = [v for v in values if values.count(v) == 1]
    if len(unpaired) == len(values):  # no pair at all
        if not values or own < min(values):
            return 1, 0
        return (0, len(values)) if own > max(values) else (0, 0)
    return (0, len(unpaired) + 1) if not unpaired or own > max(unpaired) else (0, 0)


class PairsDraftHeuristic(HeuristicBot):
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """``HeuristicBot.act``, the legal actions of a 0/1 mask looked up."""
        legal = _LEGAL.get(action_mask.tobytes()) if isinstance(action_mask, np.ndarray) else None
        if legal is None:  # not a 0/1 mask of ten bytes
            legal = np.flatnonzero(action_mask).tolist()
        if len(legal) == 1:  # a forced move needs no thought
            return legal[0]
        return self.choose(observation, legal)

    def choose(self, observation: np.ndarray, legal) -> int:
        if type(legal) is not list:
            legal = np.asarray(legal).tolist()
        if observation[DRAFT_PHASE] > 0:
            return draft_choice(observed_counts(observation[HAND : HAND + NUM_ACTIONS]).tolist(), legal)
        if observation[DISCARD_PHASE] > 0:
            return draft_choice(observed_counts(observation[HAND : HAND + NUM_ACTIONS]).tolist(), legal, discard=True)
        return self._play(observation, legal)

    @staticmethod
    def _play(observation, legal) -> int:
        """``play_choice`` on the fields of the observation (slot 0 is this seat)."""
        counts = observed_counts(observation[_COUNT_FIELDS]).tolist()  # the fields in _COUNT_FIELDS order:
        hand, unseen, face_up = counts[0:10], counts[10:20], counts[20:30]
        face_down, sizes = counts[30], counts[31:]  # sizes by slot
        unseen = [u if u > 0 else 0 for u in unseen]  # may be in the others' hands
        key = observation[START : START + NUM_PLAYERS].tobytes() + observation[TRICK : PAIRED + NUM_ACTIONS].tobytes()
        table = _TABLES.get(key)
        if table is None:
            table = _read_table(observation)
            if len(_TABLES) < _MAX_TABLES:
                _TABLES[key] = table
        later_slots, paired, round_ = table
        forced = bool(paired) and all(paired >> a & 1 for a in legal)  # a legal paired number is a forced card
        later_sizes = [sizes[slot] for slot in later_slots]
        return play_choice(legal, forced, hand, unseen, face_up, face_down, sizes[0] > 1, later_sizes, round_)


def _read_table(observation) -> tuple[tuple, int, Round]:
    """(the slots still to play after this seat, paired numbers as bits, ``read_round``)."""
    starts = observation[START : START + NUM_PLAYERS].tolist()
    table = observation[TRICK : PAIRED + NUM_ACTIONS].tolist()  # the trick's slots, then the paired numbers
    trick = []
    for base in range(0, NUM_PLAYERS * TRICK_SLOT, TRICK_SLOT):
        slot = table[base : base + NUM_ACTIONS]
        if any(slot):
            trick.append((slot.index(max(slot)) + 1, table[base + NUM_ACTIONS] > 0))
    paired = 0
    for a, v in enumerate(table[PAIRED - TRICK :]):
        if v > 0:
            paired |= 1 << a
    start = starts.index(max(starts))
    later_slots = tuple((start + i) % NUM_PLAYERS for i in range(len(trick) + 1, NUM_PLAYERS))
    return later_slots, paired, read_round(trick, paired)
