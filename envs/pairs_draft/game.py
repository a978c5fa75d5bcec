"""Pairs Draft rules engine (RULES.md section 2): draft, discard, rounds, scoring.

Action ``a`` (0..9) is the number ``a + 1`` in every phase: the number picked in the
draft, discarded face down, or played in a round. Texts are ``"pick 7"``, ``"discard 7"``
and ``"play 7"``; the verb must fit the current phase (after the game: ``play``).

Every set of cards (a pack, a hand, the cards in front of a seat) is a list of ten
counts, index ``number - 1``, so a move is two in-place increments and a copy is a few
list slices. Simultaneous steps (each draft pick, the discard) are taken one seat after
another from the start player going left; the packs pass left (seat i to seat i + 1)
only when all four have picked. A pick or discard changes the actor's cards at once;
the engine holds full information, and hiding a choice from the others until the step
is done is the observation's job.

Decisions beyond the source rules (RULES.md): two forced cards form a pair of 11s; after
the last round the start player still moves; ``from_position`` skips the draft, so
nothing is set aside and nothing discarded there.
"""

from __future__ import annotations

import random
from itertools import compress
from typing import NamedTuple

from ..engine import GameEngine, action_words, is_int, shown
from ..present import presentation

NUM_PLAYERS = 4
NUM_ACTIONS = 10  # action a is the number a + 1
DRAFT_PICKS = 11
NUM_ROUNDS = 10
FORCED_VALUE = 11  # what a forced card counts for taking cards (2.3)
DECK = tuple(n for n in range(1, 11) for _ in range(n))  # one 1, two 2s, ... ten 10s
DECK_COUNTS = tuple(DECK.count(n) for n in range(1, 11))  # copies of each number (index number - 1)
VERBS = {"draft": "pick", "discard": "discard", "play": "play", "over": "play"}

_ACTIONS = range(NUM_ACTIONS)
_FORCED_BIT = 1 << (FORCED_VALUE - 1)
_NUMBER_BITS = (1 << NUM_ACTIONS) - 1
_BIT_NUMBERS = tuple(tuple(a + 1 for a in _ACTIONS if bits >> a & 1) for bits in range(1 << NUM_ACTIONS))  # -> numbers
# Points by distinct numbers face up (index; 10 wins instead) and by copies of one
# number (index; 5 or more win instead).
_KIND_POINTS = (0, 0, 0, 0, 1, 3, 5, 9, 15, 30)
_COPY_POINTS = (0, 0, 2, 6, 20)


class Score(NamedTuple):
    """Points from the tables of 2.5; ``instant_win`` (10 kinds or 5+ copies) beats any points."""

    points: int
    instant_win: bool


class Play(NamedTuple):
    """A card played this round; ``forced`` cards count 11 for taking cards."""

    seat: int
    number: int
    forced: bool


class Taken(NamedTuple):
    """A card of a completed round and where it went (``taker``'s face-up or face-down cards)."""

    seat: int
    number: int
    forced: bool
    taker: int
    face_up: bool


def number_counts(numbers) -> list[int]:
    """Cards as numbers 1-10 -> copies of each number (index number - 1): the engine's unit."""
    counts = [0] * NUM_ACTIONS
    for n in numbers:
        counts[n - 1] += 1
    return counts


def _numbers(counts) -> list[int]:
    return [a + 1 for a in _ACTIONS for _ in range(counts[a])]


def score_counts(face_up_counts, face_down: int) -> Score:
    """Score of face-up cards given as counts per number (index ``number - 1``)."""
    kinds = points = 0
    instant_win = False
    for copies in face_up_counts:
        if copies:
            kinds += 1
            if copies >= len(_COPY_POINTS):
                instant_win = True
            else:
                points += _COPY_POINTS[copies]
    if kinds == NUM_ACTIONS:
        instant_win = True
    else:
        points += _KIND_POINTS[kinds]
    return Score(points - face_down, instant_win)


def score_cards(face_up: list[int], face_down: int) -> Score:
    """Score of a seat with these numbers face up and ``face_down`` cards face down (2.5)."""
    for n in face_up:
        if not 1 <= n <= NUM_ACTIONS:
            raise ValueError(f"face-up card {n!r} is not a number 1-10")
    return score_counts(number_counts(face_up), face_down)


def take_round(plays: list[Play]) -> list[tuple[int, bool]]:
    """Who takes each card of a complete round, and face up or not (2.4): ``(taker,
    face_up)`` per play, in play order. Forced cards count 11, so two of them pair."""
    values = [FORCED_VALUE if play.forced else play.number for play in plays]
    unpaired = [value for value in values if values.count(value) == 1]  # each value once, so it names its card
    if not unpaired:  # A (no unpaired card): everyone keeps their own
        return [(play.seat, True) for play in plays]
    high = plays[values.index(max(unpaired))].seat
    # C (no pair): the lowest keeps its card, the highest takes the rest face down.
    # B (one pair): the paired cards stay, the higher of the two others takes both.
    low = min(unpaired) if len(unpaired) == len(plays) else None
    return [
        (high, False) if value in unpaired and value != low else (play.seat, True) for play, value in zip(plays, values)
    ]


class PairsDraftGame(GameEngine):
    """One game of Pairs Draft; ``PairsDraftGame(seed)`` deals and starts the draft."""

    num_players = NUM_PLAYERS
    _trick: list[Play]  # this round's plays, in order

    def __init__(self, seed=None):
        rng = random.Random(seed)
        start_player = rng.randrange(NUM_PLAYERS)
        deck = list(DECK)
        rng.shuffle(deck)
        packs = [number_counts(deck[seat * DRAFT_PICKS : (seat + 1) * DRAFT_PICKS]) for seat in range(NUM_PLAYERS)]
        self._setup(
            "draft",
            start_player,
            [[0] * NUM_ACTIONS for _ in range(NUM_PLAYERS)],
            packs,
            number_counts(deck[NUM_PLAYERS * DRAFT_PICKS :]),
            NUM_ROUNDS,
        )

    @classmethod
    def from_position(cls, hands, start_player: int = 0) -> PairsDraftGame:
        """The start of the rounds with these hands (lists of numbers 1-10), for tests and search."""
        if len(hands) != NUM_PLAYERS:
            raise ValueError(f"need {NUM_PLAYERS} hands, got {len(hands)}")
        sizes = [len(hand) for hand in hands]
        if len(set(sizes)) != 1:
            raise ValueError(f"hands must have equal length, got lengths {sizes}")
        if not 1 <= sizes[0] <= NUM_ACTIONS:
            raise ValueError(f"hand size must be 1-{NUM_ACTIONS}, got {sizes[0]}")
        for seat, hand in enumerate(hands):
            for n in hand:
                if not is_int(n) or not 1 <= n <= NUM_ACTIONS:
                    raise ValueError(f"seat {seat}: card {n!r} is not a number 1-{NUM_ACTIONS}")
        counts = [number_counts(hand) for hand in hands]
        for a in _ACTIONS:
            total = sum(c[a] for c in counts)
            if total > a + 1:
                raise ValueError(f"number {a + 1} appears {total} times in the hands; the deck holds {a + 1}")
        if not is_int(start_player) or start_player not in range(NUM_PLAYERS):
            raise ValueError(f"start player must be a seat 0-{NUM_PLAYERS - 1}, got {start_player!r}")
        game = cls.__new__(cls)
        game._setup(
            "play", start_player, counts, [[0] * NUM_ACTIONS for _ in range(NUM_PLAYERS)], [0] * NUM_ACTIONS, sizes[0]
        )
        return game

    def _setup(self, phase, start_player, hands, packs, set_aside, rounds):
        self._phase = phase
        self._start_player = start_player
        self._current = start_player
        self._hands = hands  # own cards: picks so far in the draft, then the hand
        self._packs = packs  # by the seat dealt the pack; seat s holds pack (s - pick) % 4
        self._set_aside = set_aside
        self._rounds = rounds
        self._pick_index = 0 if phase == "draft" else DRAFT_PICKS
        self._round_index = 0
        self._discards = [None] * NUM_PLAYERS
        self._face_up = [[0] * NUM_ACTIONS for _ in range(NUM_PLAYERS)]
        self._face_down = [[0] * NUM_ACTIONS for _ in range(NUM_PLAYERS)]
        self._trick = []
        # Bit v - 1 set: value v (1-10, or 11 for forced cards) played / paired this round.
        self._played = 0
        self._paired = 0
        self._previous_trick = []

    # -- state ---------------------------------------------------------------------

    @property
    def phase(self) -> str:
        """``"draft"``, ``"discard"``, ``"play"`` or ``"over"``."""
        return self._phase

    @property
    def current_player(self) -> int | None:
        """The seat to act; ``None`` once the game is over."""
        return self._current

    @property
    def start_player(self) -> int:
        """The dealer during draft and discard, then the seat that leads the current round."""
        return self._start_player

    @property
    def pick_index(self) -> int:
        """0-based pick of the draft; 11 once the draft is over (or skipped by ``from_position``)."""
        return self._pick_index

    @property
    def round_index(self) -> int:
        """0-based round being played; the number of rounds once the game is over."""
        return self._round_index

    def pack(self, seat: int) -> list[int]:
        """The cards ``seat`` is drafting from (empty outside the draft)."""
        return _numbers(self._packs[(seat - self._pick_index) % NUM_PLAYERS])

    def hand(self, seat: int) -> list[int]:
        """The seat's own cards: its picks, then its 11 cards until it discards, then its hand."""
        return _numbers(self._hands[seat])

    def face_up(self, seat: int) -> list[int]:
        return _numbers(self._face_up[seat])

    def face_down(self, seat: int) -> list[int]:
        """Cards the seat took face down (each costs 1 point); their numbers were seen in play."""
        return _numbers(self._face_down[seat])

    def discarded(self, seat: int) -> int | None:
        """The number the seat discarded face down after the draft, or ``None``."""
        return self._discards[seat]

    def set_aside(self) -> list[int]:
        """The 11 cards set aside unseen at the deal (empty for ``from_position``)."""
        return _numbers(self._set_aside)

    def current_trick(self) -> list[Play]:
        """This round's cards in play order."""
        return list(self._trick)

    def paired_numbers(self) -> list[int]:
        """Numbers paired so far this round: unplayable unless forced."""
        return list(_BIT_NUMBERS[self._paired & _NUMBER_BITS])

    def previous_trick(self) -> list[Taken]:
        """The last completed round in play order, with who took each card and how."""
        return list(self._previous_trick)

    def scores(self) -> list[int]:
        """Points of every seat from the cards taken so far (final once the game is over)."""
        return [self.score(seat).points for seat in range(NUM_PLAYERS)]

    @property
    def is_over(self) -> bool:
        return self._phase == "over"

    def winners(self) -> list[int]:
        """Seats with an instant win, or else with the highest total (2.5); shared on ties."""
        if self._phase != "over":
            raise ValueError(f"no winners yet: the game is in the {self._phase} phase")
        results = [self.score(seat) for seat in range(NUM_PLAYERS)]
        instant = [seat for seat, result in enumerate(results) if result.instant_win]
        if instant:
            return instant
        best = max(result.points for result in results)
        return [seat for seat, result in enumerate(results) if result.points == best]

    def score(self, seat: int) -> Score:
        """The seat's score from what it has taken so far (final once the game is over)."""
        return score_counts(self._face_up[seat], sum(self._face_down[seat]))

    # -- counts for observation encoders: the engine's own lists (index number - 1), not
    # copies, so reading them costs nothing; never mutate them.

    def hand_counts(self, seat: int) -> list[int]:
        return self._hands[seat]

    def pack_counts(self, seat: int) -> list[int]:
        return self._packs[(seat - self._pick_index) % NUM_PLAYERS]

    def face_up_counts(self, seat: int) -> list[int]:
        return self._face_up[seat]

    def face_down_counts(self, seat: int) -> list[int]:
        return self._face_down[seat]

    def copy(self) -> PairsDraftGame:
        """An independent copy; lists never mutated in place (set-aside, previous trick) are shared."""
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new._hands = [counts[:] for counts in self._hands]
        new._packs = [counts[:] for counts in self._packs]
        new._face_up = [counts[:] for counts in self._face_up]
        new._face_down = [counts[:] for counts in self._face_down]
        new._discards = self._discards[:]
        new._trick = self._trick[:]
        return new

    # -- actions -------------------------------------------------------------------

    def _legal_actions(self) -> list[int]:
        phase = self._phase
        if phase == "play":
            held = list(compress(_ACTIONS, self._hands[self._current]))  # the numbers with a nonzero count
            paired = self._paired
            if paired:
                return [a for a in held if not paired >> a & 1] or held
            return held
        if phase == "draft":
            cards = self._packs[(self._current - self._pick_index) % NUM_PLAYERS]
        elif phase == "discard":
            cards = self._hands[self._current]
        else:
            return []
        return list(compress(_ACTIONS, cards))

    def _apply(self, action: int) -> None:
        seat = self._current
        if self._phase == "play":
            self._play(seat, action)
            return
        if self._phase == "draft":
            self._packs[(seat - self._pick_index) % NUM_PLAYERS][action] -= 1
            self._hands[seat][action] += 1
        else:
            self._hands[seat][action] -= 1
            self._discards[seat] = action + 1
        seat = (seat + 1) % NUM_PLAYERS
        self._current = seat
        if seat == self._start_player:  # all four have acted: the step is done
            if self._phase == "discard":
                self._phase = "play"
            else:
                self._pick_index += 1
                if self._pick_index == DRAFT_PICKS:
                    self._phase = "discard"

    def _play(self, seat: int, action: int) -> None:
        self._hands[seat][action] -= 1
        forced = bool(self._paired >> action & 1)
        bit = _FORCED_BIT if forced else 1 << action
        if self._played & bit:
            self._paired |= bit
        else:
            self._played |= bit
        self._trick.append(Play(seat, action + 1, forced))
        seat = (seat + 1) % NUM_PLAYERS
        if seat == self._start_player:
            self._take_cards()
        else:
            self._current = seat

    def _take_cards(self) -> None:
        """Hand out the round's cards (2.4), then move the start player left."""
        trick = self._trick
        record = []
        for play, (taker, up) in zip(trick, take_round(trick)):
            (self._face_up if up else self._face_down)[taker][play.number - 1] += 1
            record.append(Taken(*play, taker, up))
        self._previous_trick = record
        self._trick = []
        self._played = self._paired = 0
        self._round_index += 1
        self._start_player = (self._start_player + 1) % NUM_PLAYERS
        if self._round_index == self._rounds:
            self._phase = "over"
            self._current = None
        else:
            self._current = self._start_player

    # -- text ----------------------------------------------------------------------

    def action_to_text(self, action: int) -> str:
        if action not in _ACTIONS:
            raise ValueError(f"unknown action {action!r}: actions are 0-9 (the numbers 1-10)")
        return f"{VERBS[self._phase]} {action + 1}"

    def text_to_action(self, text: str) -> int:
        parts = action_words(text)
        if len(parts) != 2 or not parts[1].isdecimal() or len(parts[1]) > 3:
            raise ValueError(f"unknown action {shown(text)}: expected a verb and a number, e.g. 'play 7'")
        verb, number = parts[0], int(parts[1])
        expected = VERBS[self._phase]
        if verb not in VERBS.values():
            raise ValueError(f"unknown verb {shown(verb)} in {shown(text)}: use '{expected} <number>'")
        if verb != expected:
            raise ValueError(f"{shown(text)} does not fit the {self._phase} phase: use '{expected} <number>'")
        if not 1 <= number <= NUM_ACTIONS:
            raise ValueError(f"{shown(text)}: the number must be 1-{NUM_ACTIONS}")
        return number - 1

    def render(self) -> str:
        """The table as text, every hand shown, as the game's ``present`` module writes it."""
        return presentation(self).render(self)
