"""The Little Tricks engine (rules in the package docstring). Action ``a`` plays card ``a + 1``."""

from __future__ import annotations

import random

from envs.engine import GameEngine, action_words

NUM_CARDS = 12
HAND_SIZE = 3
PLAYERS = (2, 3)


def card_bits(cards) -> int:
    bits = 0
    for card in cards:
        bits |= 1 << (card - 1)
    return bits


def bits_cards(bits: int) -> list[int]:
    return [a + 1 for a in range(NUM_CARDS) if bits >> a & 1]


class LittleTricksGame(GameEngine):
    def __init__(self, num_players: int = 2, seed=None):
        if num_players not in PLAYERS:
            raise ValueError(f"num_players must be 2 or 3, got {num_players!r}")
        deck = list(range(1, NUM_CARDS + 1))
        random.Random(seed).shuffle(deck)
        hands = [deck[s * HAND_SIZE : (s + 1) * HAND_SIZE] for s in range(num_players)]
        self._setup(hands, leader=0)

    @classmethod
    def from_position(cls, hands, leader: int = 0) -> LittleTricksGame:
        """The first trick about to start with these hands (lists of cards 1-12)."""
        cards = [c for hand in hands for c in hand]
        if (
            len(hands) not in PLAYERS
            or len(set(map(len, hands))) != 1
            or len(set(cards)) != len(cards)
            or not all(type(c) is int and 1 <= c <= NUM_CARDS for c in cards)
        ):
            raise ValueError(f"need 2 or 3 hands of equal size, distinct cards 1-{NUM_CARDS}: got {hands!r}")
        game = cls.__new__(cls)
        game._setup(hands, leader)
        return game

    def _setup(self, hands, leader: int) -> None:
        self.num_players = len(hands)
        self.hands = [card_bits(hand) for hand in hands]
        self.tricks = [0] * self.num_players
        self.trick: list[tuple[int, int]] = []  # (seat, card) in play order
        self.played = 0  # cards of the completed tricks
        self.leader = self.current_player = leader
        self.tricks_left = len(hands[0])

    def copy(self) -> LittleTricksGame:
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new.hands, new.tricks, new.trick = self.hands[:], self.tricks[:], self.trick[:]
        return new

    @property
    def is_over(self) -> bool:
        return self.tricks_left == 0

    def hand(self, seat: int) -> list[int]:
        return bits_cards(self.hands[seat])

    def _legal_actions(self) -> list[int]:
        return [] if self.is_over else [c - 1 for c in self.hand(self.current_player)]

    def _apply(self, action: int) -> None:
        seat, card = self.current_player, action + 1
        self.hands[seat] &= ~(1 << action)
        self.trick.append((seat, card))
        if len(self.trick) < self.num_players:
            self.current_player = (seat + 1) % self.num_players
            return
        winner = max(self.trick, key=lambda play: play[1])[0]
        self.tricks[winner] += 1
        self.played |= card_bits(c for _, c in self.trick)
        self.trick = []
        self.tricks_left -= 1
        self.leader = self.current_player = winner

    def scores(self) -> list[int]:
        return self.tricks[:]

    def winners(self) -> list[int]:
        best = max(self.tricks)
        return [s for s, t in enumerate(self.tricks) if t == best]

    def action_to_text(self, action: int) -> str:
        return f"play {action + 1}"

    def text_to_action(self, text: str) -> int:
        words = action_words(text)
        number = words[-1] if words and words[0] in ("play", words[-1]) and len(words) <= 2 else ""
        if not number.isdigit() or not 1 <= int(number) <= NUM_CARDS:
            raise ValueError(f"not a Little Tricks move: {text!r} (write 'play 7' or '7')")
        return int(number) - 1

    def render(self) -> str:
        lines = [f"seat {s}: hand {self.hand(s)} tricks {self.tricks[s]}" for s in range(self.num_players)]
        lines.append("trick: " + (" ".join(f"{s}:{c}" for s, c in self.trick) or "-"))
        return "\n".join(lines)
