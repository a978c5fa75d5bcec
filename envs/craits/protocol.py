"""The bot protocol's Craits table (``Table``) and events (``Reporter``); the protocol's
machinery is ``envs/protocol.py``, the server ``training/frontends/protocol.py``, the messages
``docs/bot-protocol.md``.

Cards are text such as ``"7H"``. Events: ``deal`` (the deal's number, this seat's hand and
the upcard), ``move`` (a seat's move, with the cards this seat drew), ``deal_end`` (every
hand, and the reason) and ``check``. The table is a ``CraitsGame`` whose other hands and
stock are placeholders, exchanged before another seat's move needs a card (the card it
plays; before a draw, hands that held nothing playable) and after this seat draws.

Two things a seat can't compute are told by the client: a deal's end by repetition (it
depends on hidden cards; the table's engine never declares it) and every hand at a deal's
end (the points need them); the table's engine leaves the next deal to the client's
``deal`` event. Craits observations need no memory beyond the table: the seat's view
(``view.view``) and an engine sampled from it (``view.determinize``) are all the env reads.
"""

from __future__ import annotations

from ..cards import FULL_DECK, RANK_BITS, SUIT_BITS, SUITS, bits_to_cards, card_to_text, parse_card
from ..protocol import EventTable, ProtocolError, fields, integer, json_list, players_in_rules, quoted
from . import view as craits_view
from .game import BLIND_SUIT, CRANK, CRANK_BITS, DRAW, NAME_SUIT, OVER, PHASE_NAMES, UNANNOUNCED, WILD_BITS, CraitsGame


def _card(text, what: str) -> int:
    if not isinstance(text, str):
        raise ProtocolError(f'{what}: a card is text such as "7H", not {quoted(text)}')
    try:
        return parse_card(text)
    except ValueError:
        raise ProtocolError(
            f'{what}: unknown card {quoted(text)} (rank A23456789TJQK or 10, then suit CDHS, e.g. "7H")'
        ) from None


def _cards(value, what: str) -> list[int]:
    """Card texts -> distinct cards."""
    cards = [_card(text, what) for text in json_list(value, what)]
    if len(set(cards)) != len(cards):
        twice = next(c for c in cards if cards.count(c) > 1)
        raise ProtocolError(f"{what}: {card_to_text(twice)} is listed twice")
    return cards


def _texts(bits: int) -> str:
    return " ".join(card_to_text(c) for c in bits_to_cards(bits)) or "nothing"


class _CraitsEngine(CraitsGame):
    """The table's engine: ``CraitsGame`` but the next deal comes from the client's ``deal``
    event, and no repetition is declared (it depends on the hidden cards; the client says so)."""

    def _next_deal(self) -> None:
        pass

    def _repeated(self) -> bool:
        return False


class Table(EventTable[_CraitsEngine]):
    """One seat's Craits table, rebuilt from protocol events (see the module docstring)."""

    GAME = "Craits"
    EVENTS = {"deal": "_deal", "move": "_move", "deal_end": "_deal_end", "check": "_check"}

    def __init__(self, rules, players: int, seat: int):
        self.rules, self.n, self.seat = rules, players, seat
        self.game = None
        self.expect = "deal"  # deal | move | deal_end | over
        self.next_deal = 0

    @classmethod
    def start_rules(cls, rules: dict, players: int) -> dict:
        return players_in_rules(rules, players)

    @classmethod
    def from_env(cls, raw, seat: int) -> Table:
        return cls(raw.rules, len(raw.possible_agents), seat)

    def ready_rules(self) -> dict:
        return {"deals": list(self.rules.deals)}  # a preset's or "short" deals, spelt out

    # -------------------------------------------------------------- events
    def _deal(self, ev: dict) -> None:
        fields(ev, "a deal event", ("event", "deal", "hand", "upcard"), ("dealer",))
        deals = self.rules.deals
        k = integer(ev["deal"], "deal", 1, len(deals)) - 1
        if self.expect != "deal":
            raise ProtocolError(self.not_now("a new deal"))
        if k != self.next_deal:
            raise ProtocolError(f"the next deal is deal {self.next_deal + 1}, not {k + 1}")
        n, me = self.n, self.seat
        dealer = k % n
        if "dealer" in ev and ev["dealer"] != dealer:
            raise ProtocolError(
                f"deal {k + 1} is dealt by seat {dealer} (the deal passes to the left), not {quoted(ev['dealer'])}"
            )
        hand = _cards(ev["hand"], "hand")
        upcard = _card(ev["upcard"], "upcard")
        if upcard in hand:
            raise ProtocolError(f"the upcard {card_to_text(upcard)} is also in your hand")
        size = deals[k]
        if not size <= len(hand) <= size + 1:
            raise ProtocolError(
                f"deal {k + 1} deals {size} card{'' if size == 1 else 's'} a hand, your hand lists {len(hand)}"
            )
        hand.sort()
        dealt, extra = hand[:size], hand[size:]  # which one was drawn (an upcard 5 or 7) doesn't matter
        rest = [c for c in range(52) if c not in hand and c != upcard] + extra  # extra on top of the stock
        hands = []
        for s in range(n):
            if s == me:
                hands.append(sum(1 << c for c in dealt))
            else:
                hands.append(sum(1 << c for c in rest[:size]))
                del rest[:size]
        g = self.game
        if g is None:
            g = object.__new__(_CraitsEngine)
            g._setup(self.rules, n, 0)
            g.totals = [0] * n
            g.pressures = [0] * n
        g.deal_index, g.dealer = k, dealer
        g.hand_bits, g.stock = hands, rest
        g._reset_deal_state()
        g.current_player = dealer
        g.deal_over = g.deal_truncated = False
        g.last_move = (dealer, upcard, 0, True)
        g.events = []
        g._legal = None
        self.game = g
        dealt_bits = hands[me]
        g._play_card(dealer, upcard, upcard=True)
        got = (g.hand_bits[me] & ~dealt_bits).bit_count()
        if got != len(extra):
            raise ProtocolError(
                f"the upcard {card_to_text(upcard)} makes you draw {got} card"
                f"{'' if got == 1 else 's'}: your hand must list the {size} dealt"
                f"{' and the one drawn' if got else ''}, not {len(hand)} cards"
            )
        self._take_drawn(dealt_bits, [card_to_text(c) for c in extra], f"the upcard {card_to_text(upcard)}")
        self.expect = "move"

    def _move(self, ev: dict) -> None:
        fields(ev, "a move event", ("event", "seat", "move"), ("drew",))
        seat = integer(ev["seat"], "seat", 0, self.n - 1)
        text = ev["move"]
        try:
            action = CraitsGame.text_to_action(text)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None
        if self.expect != "move":
            raise ProtocolError(self.not_now("a move"))
        g = self.engine
        if seat != g.current_player:
            raise ProtocolError(f"seat {seat} moved out of turn: {self._situation()}")
        me = self.seat
        if seat == me:
            if action not in g.legal_actions():
                raise ProtocolError(f"your move {quoted(text)} is not legal: {self.why_illegal(action)}")
        else:
            self._make_possible(seat, action, text)
        before = g.hand_bits[me]
        g.apply(action)
        self._take_drawn(
            before, ev.get("drew"), f"seat {seat}'s {quoted(text)}" if seat != me else f"your {quoted(text)}"
        )
        if g.deal_over:  # scored on the placeholders: undone until the deal_end event shows the hands
            assert g.last_deal_points is not None  # scored as the deal ended
            for s, points in enumerate(g.last_deal_points):
                g.totals[s] -= points
            self.expect = "deal_end"

    def _deal_end(self, ev: dict) -> None:
        fields(ev, "a deal_end event", ("event", "hands"), ("points", "reason"))
        reason = ev.get("reason")
        if self.expect == "deal_end":
            g = self.engine
            assert g.finished_deal is not None  # the deal ended
            ended = g.finished_deal["reason"]
            if reason is not None and reason != ended:
                raise ProtocolError(f"the deal ended by {ended!r} here, not {quoted(reason)}")
            reason = ended
        elif self.expect == "move":
            g = self.engine
            if reason != "repetition":
                raise ProtocolError(
                    f"the deal is not over ({self._situation()}); a deal the server can't see "
                    'end (by repetition) needs "reason": "repetition"'
                )
            if g.positions is None:
                raise ProtocolError("the deal can't have ended by repetition: its stock was never reshuffled")
        else:
            raise ProtocolError(self.not_now("the end of a deal"))
        hands = json_list(ev["hands"], "hands")
        if len(hands) != self.n:
            raise ProtocolError(f"hands must list {self.n} hands, one per seat, not {len(hands)}")
        me = self.seat
        seen: dict[int, int] = {}  # card -> the seat whose hand lists it
        revealed = []
        for s, listed in enumerate(hands):
            cards = _cards(listed, f"hands[{s}]")
            bits = sum(1 << c for c in cards)
            if s == me and bits != g.hand_bits[me]:
                raise ProtocolError(f"hands[{s}] is your hand: {_texts(g.hand_bits[me])}, not {_texts(bits)}")
            if len(cards) != g.hand_bits[s].bit_count():
                raise ProtocolError(f"seat {s} holds {g.hand_bits[s].bit_count()} cards, hands[{s}] lists {len(cards)}")
            for c in cards:
                if c in seen:
                    raise ProtocolError(f"{card_to_text(c)} is in hands[{seen[c]}] and hands[{s}]")
                seen[c] = s
                if s != me and (g.hand_bits[me] | g.discard_bits) >> c & 1:
                    where = "your hand" if g.hand_bits[me] >> c & 1 else "the discard pile"
                    raise ProtocolError(f"seat {s} can't hold {card_to_text(c)}: it is in {where}")
            revealed.append(bits)
        hidden = FULL_DECK & ~(g.hand_bits[me] | g.discard_bits)
        others = 0
        for s, bits in enumerate(revealed):
            if s != me:
                others |= bits
        g.hand_bits = revealed
        g.stock = bits_to_cards(hidden & ~others)
        g._end_deal(reason)
        if "points" in ev and ev["points"] != g.last_deal_points:
            raise ProtocolError(
                f"points: these hands score {quoted(g.last_deal_points)}, the event says {quoted(ev['points'])}"
            )
        if g.deal_index + 1 < len(self.rules.deals):
            self.next_deal = g.deal_index + 1
            self.expect = "deal"
        else:
            g.game_over = True
            g.phase_id = OVER
            self.expect = "over"

    # --------------------------------------------------------- placeholders
    def _find(self, card: int, skip: int | None = None):
        """Where a hidden ``card`` is: ("hand", seat) or ("stock", index); None if not hidden."""
        g = self.engine
        for s, bits in enumerate(g.hand_bits):
            if s != self.seat and s != skip and bits >> card & 1:
                return "hand", s
        try:
            return "stock", g.stock.index(card)
        except ValueError:
            return None

    def _exchange(self, place, out: int, into: int) -> None:
        """The hidden ``place`` gives up ``out`` and holds ``into`` instead."""
        g = self.engine
        if place[0] == "hand":
            g.hand_bits[place[1]] ^= (1 << out) | (1 << into)
        else:
            g.stock[place[1]] = into
        g._legal = None

    def _make_possible(self, actor: int, action: int, text) -> None:
        """Exchange placeholders so that another seat's move is legal if anything it could hold allows it."""
        g = self.engine
        hand = g.hand_bits[actor]
        if action < DRAW:  # a play
            card = action % UNANNOUNCED
            if g.hand_bits[self.seat] >> card & 1:
                raise ProtocolError(f"seat {actor} can't play {card_to_text(card)}: it is in your hand")
            if g.discard_bits >> card & 1:
                raise ProtocolError(
                    f"seat {actor} can't play {card_to_text(card)}: it was played already (it is in the discard pile)"
                )
            if not hand:
                raise ProtocolError(f"seat {actor} can't play {card_to_text(card)}: seat {actor} has no cards left")
            if not hand >> card & 1:
                place = self._find(card, skip=actor)
                swap = hand & -hand  # any of its placeholders
                self._exchange(place, card, swap.bit_length() - 1)
                g.hand_bits[actor] ^= swap | (1 << card)
        elif action == DRAW and g.phase_id not in (NAME_SUIT, BLIND_SUIT):
            playable = (
                CRANK_BITS
                if g.phase_id == CRANK
                else (SUIT_BITS[g.suit_id] | RANK_BITS[g.discard[-1] >> 2] | WILD_BITS)
            )
            bad = bits_to_cards(hand & playable)
            if bad:
                pool = [
                    (("hand", s), c)
                    for s, bits in enumerate(g.hand_bits)
                    if s not in (self.seat, actor)
                    for c in bits_to_cards(bits & ~playable)
                ]
                pool += [(("stock", i), c) for i, c in enumerate(g.stock) if not playable >> c & 1]
                if len(pool) < len(bad):
                    raise ProtocolError(
                        f"seat {actor} can't have had nothing to play: it holds {hand.bit_count()} "
                        f"cards, and only {len(pool) + hand.bit_count() - len(bad)} of the cards you "
                        f"haven't seen can't be played now ({self._situation()})"
                    )
                for card, (place, other) in zip(bad, pool):
                    self._exchange(place, other, card)
                    g.hand_bits[actor] ^= (1 << card) | (1 << other)
        g._legal = None
        if action not in g.legal_actions():
            raise ProtocolError(f"seat {actor} can't {text} now: {self._situation()}")

    def _take_drawn(self, before: int, drew, what: str) -> None:
        """The cards this seat drew in the last event are those it says: exchange placeholders."""
        g, me = self.engine, self.seat
        got = g.hand_bits[me] & ~before
        listed = _cards(drew if drew is not None else [], "drew")
        count = got.bit_count()
        if len(listed) != count:
            made = f"makes you draw {count} card{'' if count == 1 else 's'}" if count else "makes you draw nothing"
            raise ProtocolError(f'{what} {made}, but "drew" lists {len(listed)}')
        wanted = sum(1 << c for c in listed)
        spare = bits_to_cards(got & ~wanted)  # placeholders drawn in place of the listed cards
        for card in listed:
            if got >> card & 1:
                continue
            if before >> card & 1:
                raise ProtocolError(f"you can't have drawn {card_to_text(card)}: it was in your hand already")
            if g.discard_bits >> card & 1:
                raise ProtocolError(f"you can't have drawn {card_to_text(card)}: it is in the discard pile")
            other = spare.pop()
            self._exchange(self._find(card), card, other)
            g.hand_bits[me] ^= (1 << card) | (1 << other)

    # ---------------------------------------------------------------- words
    def not_now(self, what: str) -> str:
        if self.expect == "deal":
            return f'{what} can\'t come now: the server waits for deal {self.next_deal + 1} (a "deal" event)'
        if self.expect == "deal_end":
            return f'{what} can\'t come now: the deal is over, send its "deal_end" event (every hand)'
        if self.expect == "over":
            return f'{what} can\'t come now: the game is over (send "stop")'
        return f"{what} can't come now: the deal is under way ({self._situation()})"

    def _situation(self) -> str:
        g = self.engine
        seat, phase = g.current_player, g.phase_id
        if phase in (NAME_SUIT, BLIND_SUIT):
            return f"seat {seat} is to name a suit"
        if phase == CRANK:
            return f"seat {seat} is to answer the crank (count {g.crank}) with an A or a 2, or draw {g.crank}"
        return f"seat {seat} is to play on {card_to_text(g.discard[-1])} (suit {SUITS[g.suit_id]}) or draw"

    def why_illegal(self, action: int) -> str:
        g = self.engine
        legal = ", ".join(g.action_to_text(a) for a in g.legal_actions())
        if (
            action < DRAW
            and not g.hand_bits[self.seat] >> (action % UNANNOUNCED) & 1
            and g.phase_id not in (NAME_SUIT, BLIND_SUIT)
        ):
            return f"you don't hold {card_to_text(action % UNANNOUNCED)}; legal moves: {legal}"
        return f"{self._situation()}; legal moves: {legal}"

    # ---------------------------------------------------------------- state
    def facts(self) -> dict:
        """The public facts a ``check`` event may assert, and the ``ok`` reply's totals."""
        g = self.game
        if g is None:
            return {"totals": [0] * self.n}
        return {
            "to_act": self.to_act(),
            "deal": g.deal_index + 1,
            "dealer": g.dealer,
            "phase": PHASE_NAMES[g.phase_id],
            "top": card_to_text(g.discard[-1]),
            "suit": SUITS[g.suit_id],
            "crank": g.crank,
            "direction": g.direction,
            "stock": len(g.stock),
            "discard": len(g.discard),
            "hand_sizes": [g.hand_size(s) for s in range(self.n)],
            "announced": list(g.announced),
            "totals": list(g.totals),
            "pressures": list(g.pressures),
        }

    def world(self, rng):
        """(the seat's view, an engine sampled from it alone)."""
        v = craits_view.view(self.game, self.seat)
        return v, craits_view.determinize(v, rng)


class Reporter:
    """What one seat sees of a Craits game played on a real engine, as protocol events
    (``envs.protocol.ProtocolReporter``)."""

    def __init__(self, seat: int):
        self.seat = seat

    def opening(self, game) -> list[dict]:
        return [self._deal(game)]

    def before(self, game, action: int):
        return game.hand_bits[self.seat], game.action_to_text(action)

    def after(self, game, seat: int, token) -> list[dict]:
        before, text = token
        me = self.seat
        finished = game.finished_deal if game.deal_over else None
        hand = finished["hands"][me] if finished else game.hand_bits[me]
        event = {"event": "move", "seat": seat, "move": text}
        drew = hand & ~before
        if drew:
            event["drew"] = [card_to_text(c) for c in bits_to_cards(drew)]
        events = [event]
        if finished:
            events.append(
                {
                    "event": "deal_end",
                    "reason": finished["reason"],
                    "hands": [[card_to_text(c) for c in bits_to_cards(h)] for h in finished["hands"]],
                    "points": list(finished["points"]),
                }
            )
            if not game.game_over:
                events.append(self._deal(game))
        return events

    def _deal(self, game) -> dict:
        return {
            "event": "deal",
            "deal": game.deal_index + 1,
            "dealer": game.dealer,
            "hand": game.hand(self.seat),
            "upcard": card_to_text(game.discard[0]),
        }
