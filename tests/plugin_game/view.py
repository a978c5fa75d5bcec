"""A seat's view of a Little Tricks game and worlds sampled from it (the search bot's hooks,
``envs.spec.SearchGame``): the seat knows its hand, the cards played and the tricks won."""

from __future__ import annotations

from dataclasses import dataclass

from envs.aec import versus_others

from .bot import choose
from .game import NUM_CARDS, LittleTricksGame, bits_cards, card_bits


@dataclass(frozen=True)
class LittleView:
    seat: int
    hand: int
    played: int
    trick: tuple
    leader: int
    current_player: int
    tricks: tuple
    tricks_left: int


def new_memory():
    return None  # the table shows everything the seat saw


def view(game: LittleTricksGame, seat: int, memory=None) -> LittleView:
    return LittleView(
        seat,
        game.hands[seat],
        game.played,
        tuple(game.trick),
        game.leader,
        game.current_player,
        tuple(game.tricks),
        game.tricks_left,
    )


def determinize(v: LittleView, rng, policy=None) -> LittleTricksGame:
    n = len(v.tricks)
    seen = v.hand | v.played | card_bits(c for _, c in v.trick)
    unseen = [c for c in range(1, NUM_CARDS + 1) if not seen >> (c - 1) & 1]
    rng.shuffle(unseen)
    played_now = {s for s, _ in v.trick}
    hands = []
    for s in range(n):
        if s == v.seat:
            hands.append(bits_cards(v.hand))
            continue
        size = v.tricks_left - (s in played_now)
        hands.append(unseen[:size])
        del unseen[:size]
    game = LittleTricksGame.__new__(LittleTricksGame)
    game.num_players = n
    game.hands = [card_bits(h) for h in hands]
    game.tricks, game.trick, game.played = list(v.tricks), list(v.trick), v.played
    game.leader, game.current_player, game.tricks_left = v.leader, v.current_player, v.tricks_left
    game._legal = None
    return game


def is_terminal(state: LittleTricksGame) -> bool:
    return state.is_over


def visible(state: LittleTricksGame, searcher: int) -> bool:
    return True  # every card played is seen


def private(state: LittleTricksGame, searcher: int) -> int:
    return state.hands[searcher]


def returns(state: LittleTricksGame) -> list[float]:
    return versus_others(state.tricks)


def heuristic_action(state: LittleTricksGame, rng=None) -> int:
    return choose(state.hand(state.current_player), [c for _, c in state.trick]) - 1
