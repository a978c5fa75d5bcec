"""The Craits engine (RULES.md section 1): plain Python, no numpy, no PettingZoo.

Cards are integers (``envs.cards``), hands are bit sets, the stock and discard pile are
lists whose *last* element is the top. One action encoding, used by the env, the bots and
exports alike:

=============  =========================================================
action         meaning
=============  =========================================================
0 … 51         ``play <card>`` (with the announcement when it leaves one card)
52 … 103       ``play <card> unannounced`` (only with ``announce="action"``)
104            ``draw`` (one card, or the crank's count)
105 … 108      ``suit C`` / ``suit D`` / ``suit H`` / ``suit S``
=============  =========================================================
"""

from __future__ import annotations

import random

from ..cards import RANK_BITS, SUIT_BITS, SUITS, bits_to_cards, card_to_text, cards_to_bits, parse_card, parse_suit
from ..engine import GameEngine, action_words, shown
from ..present import presentation
from .rules import Rules

UNANNOUNCED = 52
DRAW = 104
SUIT_ACTION = 105
NUM_ACTIONS = 109

# Phases: who must decide what.
PLAY, NAME_SUIT, BLIND_SUIT, EXTRA_TURN, CRANK, OVER = range(6)
PHASE_NAMES = ("play", "suit", "blind_suit", "extra_turn", "crank", "over")

ACE, TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN = range(10)
WILD_BITS = RANK_BITS[EIGHT] | RANK_BITS[NINE]
CRANK_BITS = RANK_BITS[ACE] | RANK_BITS[TWO]
CARD_POINTS = (1, 20, 0, 15, 30, 30, 20, 50, 30, 25, 10, 10, 10)
SAME_COLOUR = (0b1001, 0b0110, 0b0110, 0b1001)  # C<->S, D<->H: the suits a 9 may name
ALL_SUITS = 0b1111
MAX_DEAL_ACTIONS = 10_000


def _points(bits: int, three_scoring: str) -> int:
    """Points of the cards in a hand bit set (RULES.md 1.7)."""
    if not bits:
        return 0
    threes = (bits & RANK_BITS[THREE]).bit_count()
    others = bits & ~RANK_BITS[THREE]
    if not others:
        return -50 * threes
    if three_scoring == "craits":
        values = sorted((CARD_POINTS[c >> 2] for c in bits_to_cards(others)), reverse=True)
        return sum(values[threes:])
    eights = (others & RANK_BITS[EIGHT]).bit_count()
    values = sorted((CARD_POINTS[c >> 2] for c in bits_to_cards(others & ~RANK_BITS[EIGHT])), reverse=True)
    cancelled = min(threes, len(values))
    unused = threes - cancelled
    return 3 * (threes - unused // 2) + sum(values[cancelled:]) + 50 * eights


def hand_points(cards: list[str], rules: Rules = Rules()) -> int:
    """What a hand left at the end of a deal scores, e.g. ``hand_points(["3C", "2D", "8S"]) == 20``."""
    bits = 0
    for text in cards:
        card = parse_card(text)
        if bits >> card & 1:
            raise ValueError(f"card {text!r} listed twice")
        bits |= 1 << card
    return _points(bits, rules.three_scoring)


class CraitsGame(GameEngine):
    """A whole game of Craits: a series of deals with cumulative scores and pressure tallies."""

    current_player: int  # the seat to act

    def __init__(self, rules: Rules = Rules(), num_players: int = 4, seed=None):
        self._setup(rules, num_players, seed)
        self.totals = [0] * num_players
        self.pressures = [0] * num_players
        self.deal_index = 0
        self._start_deal()

    def _setup(self, rules: Rules, num_players: int, seed) -> None:
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
        rules.check_players(num_players)
        self.rules = rules
        self.num_players = num_players
        # Each deal draws its cards from its own generator, seeded by the game seed and the
        # deal number, so a deal is the same whatever happened in earlier deals (duplicate
        # evaluation replays whole games with the seats rotated).
        self._seed_base = random.Random(seed).getrandbits(64)
        self.rng = random.Random(self._seed_base)
        self._announce_action = rules.announce == "action"
        self._value_crank = rules.crank_count == "value"
        self._pressure = rules.empty_stock == "pressure"
        self.deal_over = False
        self.game_over = False
        self.deal_truncated = False
        self.last_deal_points: list[int] | None = None
        self.finished_deal: dict | None = None  # the last deal as it ended, for its rendering
        # (seat, action or upcard card, crank count before, is upcard)
        self.last_move: tuple[int, int, int, bool] | None = None
        self.events: list[tuple] = []  # draws, pressures and lost turns of the last move

    # ------------------------------------------------------------------ deals
    def _start_deal(self) -> None:
        n = self.num_players
        size = self.rules.deals[self.deal_index]
        self.dealer = self.deal_index % n
        self.rng = random.Random(self._seed_base * 64 + self.deal_index)
        deck = list(range(52))
        self.rng.shuffle(deck)
        self.hand_bits = [cards_to_bits(deck[s * size : (s + 1) * size]) for s in range(n)]
        upcard = deck[n * size]
        self.stock = deck[n * size + 1 :]
        self._reset_deal_state()
        self.current_player = self.dealer
        self.last_move = (self.dealer, upcard, 0, True)
        self.events = []
        self._play_card(self.dealer, upcard, upcard=True)

    def _reset_deal_state(self) -> None:
        n = self.num_players
        self.discard: list[int] = []
        self.discard_bits = 0
        self.direction = 1
        self.phase_id = PLAY
        self.crank = 0
        self.suit_choices = 0
        self.announced = [False] * n
        self.lose_turn = [False] * n
        self.deal_pressure = [0] * n
        self.stalled_draws = 0
        self.deal_actions = 0
        self.someone_out = False  # once set, the deal ends as soon as no crank runs (1.7)
        # What play revealed, public: a player who drew held none of the cards it could have
        # played (1.4), and has drawn ``fresh`` cards since; so at least (hand size − fresh) of
        # the cards it holds are none of ``voids`` (its last such draw only). For the search.
        self.voids = [0] * n
        self.fresh = [0] * n
        # position -> times seen; counted only once the deal reshuffled
        self.positions: dict[tuple, int] | None = None

    def _end_deal(self, reason: str) -> None:
        scoring = self.rules.three_scoring
        points = [_points(h, scoring) + p for h, p in zip(self.hand_bits, self.deal_pressure)]
        for seat, p in enumerate(points):
            self.totals[seat] += p
        self.last_deal_points = points
        truncated = reason == "cut"
        self.finished_deal = {
            "deal_index": self.deal_index,
            "hands": list(self.hand_bits),
            "points": points,
            "reason": reason,
            "last_move": self.last_move,
            "events": self.events,
        }
        self.deal_over = True
        self.deal_truncated = truncated
        self._next_deal()

    def abandon_deal(self) -> None:
        """Leave the deal under way unscored and deal the next one (after the last deal the
        game is over): for an env episode cut short by an illegal action."""
        self._legal = None
        self.deal_over = self.deal_truncated = False
        self._next_deal()

    def _next_deal(self) -> None:
        if self.deal_index + 1 < len(self.rules.deals):
            self.deal_index += 1
            self._start_deal()
        else:
            self.game_over = True
            self.phase_id = OVER

    # ------------------------------------------------------------- mechanics
    def _draw(self, seat: int, count: int) -> int:
        """Draw ``count`` cards for ``seat``; returns how many it obtained (RULES.md 1.7)."""
        got = 0
        stock = self.stock
        for _ in range(count):
            if not stock:
                if self._pressure:
                    self.pressures[seat] += 1
                    self.deal_pressure[seat] += 5 << (self.pressures[seat] - 1)
                    self.events.append(("pressure", seat, 5 << (self.pressures[seat] - 1)))
                    continue
                if len(self.discard) < 2:
                    continue
                if self.positions is None:
                    self.positions = {}  # only a reshuffle lets a position come back
                top = self.discard.pop()
                stock.extend(self.discard)
                self.rng.shuffle(stock)
                self.discard = [top]
                self.discard_bits = 1 << top
            self.hand_bits[seat] |= 1 << stock.pop()
            got += 1
        if got:
            self.announced[seat] = False
            self.fresh[seat] += got
        self.events.append(("draw", seat, got))
        return got

    def _pass_turn(self, steps: int = 1) -> None:
        n = self.num_players
        nxt = (self.current_player + steps * self.direction) % n
        while self.lose_turn[nxt]:  # a missed announcement costs the next turn, once
            self.lose_turn[nxt] = False
            self.events.append(("lost_turn", nxt))
            nxt = (nxt + self.direction) % n
        self.current_player = nxt

    def _play_card(self, seat: int, card: int, upcard: bool = False, announced: bool = True) -> None:
        """Put ``card`` on the discard pile as ``seat``'s play and resolve its power."""
        self.discard.append(card)
        self.discard_bits |= 1 << card
        self.suit_id = card & 3
        in_crank = self.phase_id == CRANK
        self.phase_id = PLAY
        rank = card >> 2
        out = False
        if not upcard:
            self.hand_bits[seat] &= ~(1 << card)
            left = self.hand_bits[seat].bit_count()
            out = left == 0
            if out:
                self.announced[seat] = False
                self.someone_out = True
            elif left == 1:
                if announced:
                    self.announced[seat] = True
                else:  # always caught: draw 2 at once, then the power applies
                    self._draw(seat, 2)
                    if self.rules.missed_announce_penalty == "draw_2_lose_turn":
                        self.lose_turn[seat] = True
        if in_crank:
            self.crank += 2 if rank == TWO and self._value_crank else 1
            self.phase_id = CRANK
            self._pass_turn()
        elif rank == TWO:
            self.crank = 2 if self._value_crank else 1
            self.phase_id = CRANK
            self._pass_turn()
        elif rank == FOUR:
            self._pass_turn(2)
        elif rank == FIVE:
            n = self.num_players
            for step in range(1, n):
                self._draw((seat + step * self.direction) % n, 1)
            self._pass_turn()
        elif rank == SIX and not out:
            self.phase_id = EXTRA_TURN
        elif rank == SEVEN:
            n = self.num_players
            reach = 2 if self.rules.seven_target == "next_but_one" and n > 2 else 1
            self._draw((seat + reach * self.direction) % n, 1)
            self._pass_turn()
        elif rank == EIGHT and not out:
            self.suit_choices = ALL_SUITS
            self.phase_id = BLIND_SUIT if upcard else NAME_SUIT
        elif rank == NINE and not out and self.rules.nine == "same_colour":
            self.suit_choices = SAME_COLOUR[card & 3]
            self.phase_id = BLIND_SUIT if upcard else NAME_SUIT
        else:
            if rank == TEN and self.num_players > 2:
                self.direction = -self.direction
            self._pass_turn()

    # ------------------------------------------------------------ public API
    def _playable(self) -> int:
        """The cards that could be played now, as a bit set: in a crank its A and 2, else the
        current suit, the top card's rank and the 8s and 9s (1.4)."""
        if self.phase_id == CRANK:
            return CRANK_BITS
        return SUIT_BITS[self.suit_id] | RANK_BITS[self.discard[-1] >> 2] | WILD_BITS

    def _legal_actions(self) -> list[int]:
        phase = self.phase_id
        if phase == OVER:
            return []
        if phase == NAME_SUIT or phase == BLIND_SUIT:
            return [SUIT_ACTION + s for s in range(4) if self.suit_choices >> s & 1]
        hand = self.hand_bits[self.current_player]
        plays = hand & self._playable()
        if not plays:
            return [DRAW]
        cards = bits_to_cards(plays)
        if self._announce_action and hand.bit_count() == 2:
            return cards + [UNANNOUNCED + c for c in cards]
        return cards

    def _apply(self, action: int) -> None:
        self.deal_over = False
        self.deal_truncated = False
        self.deal_actions += 1
        seat = self.current_player
        self.last_move = (seat, action, self.crank, False)
        self.events = []
        if action >= SUIT_ACTION:
            self.suit_id = action - SUIT_ACTION
            self.phase_id = PLAY
            self._pass_turn()
        elif action == DRAW:
            self.voids[seat] = self._playable()  # drawing is legal only when none of them is held
            self.fresh[seat] = 0
            got = self._draw(seat, self.crank if self.phase_id == CRANK else 1)
            self.crank = 0
            self.phase_id = PLAY
            self.stalled_draws = 0 if got else self.stalled_draws + 1
            self._pass_turn()
            if self.stalled_draws >= self.num_players:  # stalemate (decision): score as it stands
                self._end_deal("stalemate")
                return
        else:
            self.stalled_draws = 0
            self._play_card(seat, action % UNANNOUNCED, announced=action < UNANNOUNCED)
        if self.crank == 0 and self.someone_out:
            self._end_deal("out")
        elif self.positions is not None and self._repeated():
            self._end_deal("repetition")
        elif self.deal_actions >= MAX_DEAL_ACTIONS:
            self._end_deal("cut")

    def _repeated(self) -> bool:
        """Count the position just reached; True on its third occurrence (RULES.md 1.7).
        The discard pile counts as its cards and its top: their order only changes how a
        reshuffle may fall, not what may happen next."""
        key = (
            tuple(self.hand_bits),
            tuple(self.stock),
            self.discard_bits,
            self.discard[-1],
            self.suit_id,
            self.current_player,
            self.phase_id,
            self.suit_choices if self.phase_id in (NAME_SUIT, BLIND_SUIT) else 0,
            self.crank,
            self.direction,
            tuple(self.announced),
            tuple(self.lose_turn),
        )
        positions = self.positions
        assert positions is not None  # _apply counts positions only once a reshuffle made them
        seen = positions.get(key, 0) + 1
        positions[key] = seen
        return seen >= 3

    def action_to_text(self, action: int) -> str:
        action = int(action)
        if 0 <= action < UNANNOUNCED:
            return "play " + card_to_text(action)
        if UNANNOUNCED <= action < DRAW:
            return f"play {card_to_text(action - UNANNOUNCED)} unannounced"
        if action == DRAW:
            return "draw"
        if SUIT_ACTION <= action < NUM_ACTIONS:
            return "suit " + SUITS[action - SUIT_ACTION]
        raise ValueError(f"unknown Craits action {action}: actions are 0 to {NUM_ACTIONS - 1}")

    @staticmethod
    def text_to_action(text: str) -> int:
        words = action_words(text)
        if words == ["draw"]:
            return DRAW
        if len(words) == 2 and words[0] == "suit":
            return SUIT_ACTION + parse_suit(words[1])
        if words and words[0] == "play" and (len(words) == 2 or words[2:] == ["unannounced"]):
            return parse_card(words[1]) + (UNANNOUNCED if len(words) == 3 else 0)
        raise ValueError(
            f"unknown Craits action text {shown(text)}: use 'play 7H', 'play 7H unannounced', 'draw' or 'suit S'"
        )

    @property
    def top(self) -> str:
        return card_to_text(self.discard[-1])

    @property
    def suit(self) -> str:
        return SUITS[self.suit_id]

    @property
    def phase(self) -> str:
        return PHASE_NAMES[self.phase_id]

    @property
    def is_over(self) -> bool:
        return self.game_over

    def hand(self, seat: int) -> list[str]:
        """The seat's cards as card text, sorted (``["2C", "7H"]``); Pairs Draft's ``hand``
        gives numbers, its cards' only text."""
        return [card_to_text(c) for c in bits_to_cards(self.hand_bits[seat])]

    def hand_size(self, seat: int) -> int:
        return self.hand_bits[seat].bit_count()

    def scores(self) -> list[int]:
        return list(self.totals)

    def sides(self) -> list[list[int]]:
        """Seats grouped by side: partners together, otherwise one seat each."""
        if self.rules.partnership:
            return [[0, 2], [1, 3]]
        return [[s] for s in range(self.num_players)]

    def partner(self, seat: int) -> int | None:
        return (seat + 2) % 4 if self.rules.partnership else None

    def winners(self) -> list[int]:
        if not self.game_over:
            raise ValueError("winners() is only known once the game is over")
        totals = [sum(self.totals[s] for s in side) for side in self.sides()]
        best = min(totals)
        return sorted(s for side, t in zip(self.sides(), totals) if t == best for s in side)

    def copy(self) -> CraitsGame:
        new = object.__new__(CraitsGame)
        new.__dict__.update(self.__dict__)
        for name in (
            "hand_bits",
            "stock",
            "discard",
            "totals",
            "pressures",
            "announced",
            "lose_turn",
            "deal_pressure",
            "events",
            "voids",
            "fresh",
        ):
            setattr(new, name, list(getattr(self, name)))
        if self.positions is not None:
            new.positions = dict(self.positions)
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        return new

    def render(self) -> str:
        """The table as text, every hand shown, as the game's ``present`` module writes it."""
        return presentation(self).render(self)

    # ------------------------------------------------------------- positions
    @classmethod
    def from_position(
        cls,
        rules: Rules,
        hands,
        top,
        stock,
        to_play=0,
        direction=1,
        suit=None,
        dealer=0,
        deal_index=0,
        scores=None,
        pressures=None,
        crank=None,
        seed=None,
    ) -> CraitsGame:
        """A mid-deal position from card text, the start of a turn of ``to_play``.

        - ``hands``: one list of cards per seat (``[["7H", "2C"], ["9S"]]``); their number is
          the number of players. ``top``: the top of the discard pile, the only discard.
        - ``stock``: the stock, top card first (drawn first).
        - ``to_play``: the seat to act; ``direction``: 1 (to the left) or -1.
        - ``suit``: the current suit, when it differs from the top card's (a named 8 or 9).
        - ``crank``: a crank count in progress (needs an A or 2 on top): ``to_play`` must
          answer it.
        - ``dealer``, ``deal_index``: whose deal and which deal of ``rules.deals`` this is.
        - ``scores``, ``pressures``: game totals and pressure tallies so far, one per seat.
        - ``seed``: seeds reshuffles and the later deals.

        Every card may appear once; a bad argument raises ``ValueError`` naming it."""
        n = len(hands)
        game = object.__new__(cls)
        game._setup(rules, n, seed)
        seen = set()

        def take(text):
            card = parse_card(text)
            if card in seen:
                raise ValueError(f"card {text!r} is listed twice in the position")
            seen.add(card)
            return card

        game.hand_bits = [cards_to_bits(take(t) for t in hand) for hand in hands]
        top_card = take(top)
        game.stock = [take(t) for t in stock][::-1]  # given top first; our top is the end
        if not 0 <= deal_index < len(rules.deals):
            raise ValueError(f"deal_index={deal_index} is outside the {len(rules.deals)} deals of these rules")
        for name, value in (("to_play", to_play), ("dealer", dealer)):
            if not 0 <= value < n:
                raise ValueError(f"{name}={value} is not a seat of a {n}-player game")
        if direction not in (1, -1):
            raise ValueError(f"direction={direction!r} must be 1 (left) or -1 (right)")
        game.deal_index = deal_index
        game.dealer = dealer
        game.totals = list(scores) if scores is not None else [0] * n
        game.pressures = list(pressures) if pressures is not None else [0] * n
        if len(game.totals) != n or len(game.pressures) != n:
            raise ValueError(f"scores and pressures need one entry per seat ({n})")
        game._reset_deal_state()
        game.someone_out = not all(game.hand_bits)
        game.direction = direction
        game.current_player = to_play
        game.discard = [top_card]
        game.discard_bits = 1 << top_card
        game.suit_id = top_card & 3
        if suit is not None:
            named = parse_suit(suit)
            if named != game.suit_id and top_card >> 2 not in (EIGHT, NINE):
                raise ValueError(f"suit={suit!r} can only be named for a top 8 or 9, not {top}")
            game.suit_id = named
        if crank is not None:
            if crank < 1 or top_card >> 2 not in (ACE, TWO):
                raise ValueError(f"crank={crank!r} needs a count >= 1 and an A or 2 on top, not {top}")
            game.crank = crank
            game.phase_id = CRANK
        return game
