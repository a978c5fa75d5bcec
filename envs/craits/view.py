"""A seat's view of a Craits game, worlds sampled from it, and a fast rollout rule: the
Craits side of the IS-MCTS search (``envs.search``).

``view(game, seat)`` copies out of the engine only what the seat may know (the env's
observation, ``envs.craits.env``): the public table and the seat's own hand. The own hand
is left out while the dealer names a suit for an upcard 8 or 9 without seeing it. The
discard pile's order is public (every card was seen played); it matters only for the
top card. The engine's random generator, its seed and its repetition record hold hidden
cards or future deals and are not copied.

``determinize(view, rng)`` deals the unseen cards (not in the own hand, not in the
discard pile) at random: every other hand at its known size, the rest is the stock in
random order (a position set up with ``from_position`` may hold fewer cards than the deck:
the cards left over are then out of play). A later reshuffle and the next deal draw on the
search's own generator. What play revealed is used: a player who drew held none of the
cards it could have played (a crank's A and 2, or the top's suit and rank and the 8s and
9s), so at least (hand size − cards drawn since) of its cards are dealt from outside that
set (the engine keeps it: ``voids``, ``fresh``; the latest such draw per player).

``heuristic_action(state, rng)`` is the heuristic bot's rule (``envs.craits.bot``) read
directly off the engine of a sampled world, so rollouts play as the heuristic players do:
in a crank play a 2 before an A; otherwise shed the card worth most points, keeping 8s and
9s while more than two cards are left and cards of a suit to follow, and hit a next player
about to go out with a 2, 4, 5 or 7; name the suit held most; always announce.

``encoder(view)`` gives any player's env observation in a sampled world, for a search
guided by a network.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..aec import versus_others
from ..cards import FULL_DECK, SUIT_BITS, bits_to_cards
from .bot import crank_choice, next_player_kind, play_choice, suit_choice
from .env import OBS_SIZE, encode
from .game import BLIND_SUIT, CRANK, NAME_SUIT, CraitsGame, _points
from .rules import Rules

REWARD_SCALE = 100.0  # the env's deal reward: points / 100


@dataclass(frozen=True)
class CraitsView:
    """What ``seat`` knows of a Craits game: public information and its own hand.
    ``own_hand`` is a bit set of cards, or None when the seat must not see it (the dealer
    naming a suit for an upcard 8 or 9)."""

    seat: int
    rules: Rules
    num_players: int
    deal_index: int
    dealer: int
    totals: tuple
    pressures: tuple
    current_player: int
    phase_id: int
    direction: int
    suit_id: int
    suit_choices: int
    crank: int
    announced: tuple
    lose_turn: tuple
    deal_pressure: tuple
    stalled_draws: int
    deal_actions: int
    someone_out: bool
    reshuffled: bool  # the deal's stock was re-formed from the discard pile (repetitions count from then)
    discard: tuple  # the discard pile, bottom first (public: every card was seen played)
    hand_sizes: tuple
    stock_size: int
    own_hand: int | None
    voids: tuple  # per seat, the cards it showed it did not hold at its last draw (bit sets)
    fresh: tuple  # per seat, the cards it drew since

    @property
    def unseen(self) -> int:
        """Bit set of the cards this seat has not seen: in other hands or the stock."""
        seen = sum(1 << c for c in self.discard)
        if self.own_hand is not None:
            seen |= self.own_hand
        return FULL_DECK & ~seen


def new_memory():
    return None  # Craits views need no memory: the discard pile and hand sizes are on the table


def view(game: CraitsGame, seat: int, memory=None) -> CraitsView:
    """The seat's view: public fields of the engine and the seat's own hand, nothing else."""
    if not isinstance(game, CraitsGame):
        raise ValueError(f"a Craits view needs a CraitsGame, not {type(game).__name__}")
    if game.game_over:
        raise ValueError("the game is over: there is nothing to search")
    if type(seat) is not int or not 0 <= seat < game.num_players:
        raise ValueError(f"seat {seat!r} is not a seat of this {game.num_players}-player game")
    blind = game.phase_id == BLIND_SUIT and game.current_player == seat
    return CraitsView(
        seat=seat,
        rules=game.rules,
        num_players=game.num_players,
        deal_index=game.deal_index,
        dealer=game.dealer,
        totals=tuple(game.totals),
        pressures=tuple(game.pressures),
        current_player=game.current_player,
        phase_id=game.phase_id,
        direction=game.direction,
        suit_id=game.suit_id,
        suit_choices=game.suit_choices,
        crank=game.crank,
        announced=tuple(game.announced),
        lose_turn=tuple(game.lose_turn),
        deal_pressure=tuple(game.deal_pressure),
        stalled_draws=game.stalled_draws,
        deal_actions=game.deal_actions,
        someone_out=game.someone_out,
        reshuffled=game.positions is not None,
        discard=tuple(game.discard),
        hand_sizes=tuple(game.hand_size(s) for s in range(game.num_players)),
        stock_size=len(game.stock),
        own_hand=None if blind else game.hand_bits[seat],
        voids=tuple(game.voids),
        fresh=tuple(game.fresh),
    )


def determinize(v: CraitsView, rng, policy=None) -> CraitsGame:
    """A whole engine consistent with ``v``: the unseen cards dealt at random to the other
    hands (at their sizes) and the stock, each hand holding at least (size − fresh) cards
    outside its revealed voids; the seat's own hand as it is."""
    unseen = bits_to_cards(v.unseen)
    rng.shuffle(unseen)
    hands = []
    held = [0] * v.num_players  # the cards dealt first to hands that revealed a void
    for seat, size in enumerate(v.hand_sizes):
        need = size - v.fresh[seat]
        if not v.voids[seat] or need <= 0 or (seat == v.seat and v.own_hand is not None):
            continue
        void, picked = v.voids[seat], []
        for i, card in enumerate(unseen):
            if not void >> card & 1:
                picked.append(i)
                if len(picked) == need:
                    break
        if len(picked) < need:  # not enough cards outside the void (a position set up by hand)
            continue
        for i in reversed(picked):
            held[seat] |= 1 << unseen.pop(i)
    at = 0
    for seat, size in enumerate(v.hand_sizes):
        if seat == v.seat and v.own_hand is not None:
            hands.append(v.own_hand)
            continue
        bits = held[seat]
        rest = size - bits.bit_count()
        for card in unseen[at : at + rest]:
            bits |= 1 << card
        hands.append(bits)
        at += rest
    stock = unseen[at : at + v.stock_size]  # a position set up by hand (from_position) may leave cards out
    if len(stock) != v.stock_size:
        raise AssertionError(f"inconsistent view: {len(stock)} cards left for a stock of {v.stock_size}")
    rules = v.rules
    g = object.__new__(CraitsGame)
    g.rules = rules
    g.num_players = v.num_players
    g._seed_base = rng.getrandbits(64)  # later deals: unknown, so made up
    g.rng = rng  # a reshuffle's order: unknown, drawn from the search's generator
    g._announce_action = rules.announce == "action"
    g._value_crank = rules.crank_count == "value"
    g._pressure = rules.empty_stock == "pressure"
    g.deal_over = g.game_over = g.deal_truncated = False
    g.last_deal_points = None
    g.finished_deal = None
    g.last_move = None
    g.events = []
    g.totals = list(v.totals)
    g.pressures = list(v.pressures)
    g.deal_index = v.deal_index
    g.dealer = v.dealer
    g.hand_bits = hands
    g.stock = stock
    g.discard = list(v.discard)
    g.discard_bits = sum(1 << c for c in v.discard)
    g.direction = v.direction
    g.phase_id = v.phase_id
    g.crank = v.crank
    g.suit_choices = v.suit_choices
    g.suit_id = v.suit_id
    g.announced = list(v.announced)
    g.lose_turn = list(v.lose_turn)
    g.deal_pressure = list(v.deal_pressure)
    g.stalled_draws = v.stalled_draws
    g.deal_actions = v.deal_actions
    g.someone_out = v.someone_out
    g.voids = list(v.voids)
    g.fresh = list(v.fresh)
    g.positions = {} if v.reshuffled else None  # earlier positions held hidden cards: not known
    g.current_player = v.current_player
    g._legal = None
    return g


def encoder(v: CraitsView) -> Callable[[CraitsGame, int], np.ndarray]:
    """``encode(state, player)``: ``player``'s env observation in a world sampled from ``v``
    (the engine alone makes it: a Craits observation needs no memory), for the network
    that guides a search (``envs.search``)."""

    def encode_world(state: CraitsGame, player: int) -> np.ndarray:
        obs = np.empty(OBS_SIZE, np.float32)
        encode(state, player, obs)
        return obs

    return encode_world


def is_terminal(state: CraitsGame) -> bool:
    """The search ends with the current deal."""
    return state.deal_over or state.game_over


def visible(state: CraitsGame, searcher: int) -> bool:
    return True  # every Craits action is public


def private(state: CraitsGame, searcher: int) -> int:
    """The searcher's private observation: its hand (which shows the cards it drew)."""
    return state.hand_bits[searcher]


def deal_points(state: CraitsGame) -> list[int]:
    """Every seat's points of the deal: as scored if it ended, else as it stands."""
    if state.deal_over or state.game_over:
        points = state.last_deal_points
        assert points is not None  # scored as the deal ended
        return points
    scoring = state.rules.three_scoring
    return [_points(h, scoring) + p for h, p in zip(state.hand_bits, state.deal_pressure)]


def returns(state: CraitsGame) -> list[float]:
    """The env's deal reward of every seat: per side, (mean of the other sides' deal points
    − its own) / 100."""
    points = deal_points(state)
    sides = state.sides()
    gains = versus_others([-sum(points[s] for s in side) for side in sides])
    rewards = [0.0] * state.num_players
    for side, gain in zip(sides, gains):
        for seat in side:
            rewards[seat] = gain / REWARD_SCALE
    return rewards


def heuristic_action(state: CraitsGame, rng=None) -> int:
    """The heuristic bot's rule (``envs.craits.bot``), read off the engine of a sampled
    world: the same move as ``CraitsHeuristic`` would make from the mover's observation."""
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    phase = state.phase_id
    seat = state.current_player
    hand = state.hand_bits[seat]
    if phase == BLIND_SUIT or phase == NAME_SUIT:
        return suit_choice(legal, bits_to_cards(hand), phase == BLIND_SUIT)
    if phase == CRANK:
        return crank_choice(legal)
    n = state.num_players
    nxt = (seat + state.direction) % n
    partner = state.rules.partnership and nxt == (seat + 2) % 4
    next_player = next_player_kind(
        partner, state.hand_bits[nxt].bit_count() == 1, state.rules.seven_target == "next" or n == 2
    )
    suits = [(hand & SUIT_BITS[suit]).bit_count() for suit in range(4)]
    return play_choice(legal, hand.bit_count(), suits, next_player)


def sides(state: CraitsGame) -> list[list[int]]:
    """Seats grouped by side (partners together): a network-valued search shares its leaf
    values out by side (``envs.search``)."""
    return state.sides()
