"""The bot protocol: a program in any language plays against a deckgym bot through JSON
lines on the bot's stdin and stdout (``python -m training.serve_bot AGENT``).
``docs/bot-protocol.md`` is the reference: every message, every event, a full exchange.

One request a line, one reply a line. A game is ``start`` (the game, its rules, the seat,
agent options) → ``update`` (what this seat saw happen, in card text) and ``act`` (the legal
moves; the reply is one move) as often as needed → ``stop``. The table is only ever
described in the rules' card notation, never as observation vectors.

## The state rebuilt from the messages

The server never sees another seat's cards, yet the encoder needs an engine. A session
keeps a *table*: an engine of the game (``CraitsGame`` / ``PairsDraftGame``) whose own-seat
cards and public state are exactly what the messages said, and whose hidden cards (the
other hands, the stock, the other packs, the cards set aside) are placeholders. Before each
event another seat's move needs (a card it plays, a draw that says it held nothing
playable) and after each event that shows this seat cards (cards it drew, the pack it
receives, every hand at the end of a Craits deal) the placeholders are exchanged among the
hidden places so that the engine fits what was seen; then the engine applies the move
itself, so card powers, cranks, reshuffles, pressure, pairs and takings follow the rules
as the env plays them. An event that can't fit (a card this seat holds played by another,
an unknown card, a pack that can't be the one passed back, a move out of turn, a draw
while the hidden cards can't all be unplayable, …) is refused with a message naming it,
and the whole update is undone.

Two things a seat can't compute are told by the client: a Craits deal's end by
repetition (it depends on hidden cards; the table's engine never declares it) and every
hand at a deal's end (the points need them); the table's engine leaves the next deal to
the client's ``deal`` event.

When the bot is to act, the observation is built the env's own way: the seat's view of
the table (``envs.*.view.view``: public fields and the seat's own cards, with its
``DraftMemory`` in Pairs Draft), an engine sampled from that view alone
(``envs.*.view.determinize``), put in a raw env of the same arguments (in Pairs Draft with
the seat's draft memory from the view), and the env's ``observe``: the one encoder. The
sampled engine is also what a search bot (``act_on``) searches from.

``SeatReporter`` is the client side for a game played on a real engine: the events each
seat sees, as the tests and the docs' example produce them.
"""
from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import numpy as np

from envs.cards import FULL_DECK, RANK_BITS, SUIT_BITS, SUITS, bits_to_cards, card_to_text, parse_card
from envs.craits import view as craits_view
from envs.craits.game import (BLIND_SUIT, CRANK, CRANK_BITS, DRAW, NAME_SUIT, OVER, PHASE_NAMES, UNANNOUNCED,
                              WILD_BITS, CraitsGame)
from envs.engine import MAX_SHOWN, clipped
from envs.pairs_draft import view as pairs_view
from envs.pairs_draft.game import DECK, DRAFT_PICKS, NUM_ACTIONS, NUM_PLAYERS, NUM_ROUNDS, VERBS, PairsDraftGame

from .agents import PolicyAgent, checked_act, make_agent
from .games import GAMES, EnvHandle

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 20  # bytes of UTF-8 (newline not counted): a longer request is refused while it is read
MAX_DIGITS = 4000  # an integer with more digits is refused (Python refuses to parse beyond 4300)
DECK_COUNTS = tuple(DECK.count(n) for n in range(1, NUM_ACTIONS + 1))
START_OPTIONS = ("seed", "deterministic", "scores")
SERVED_SPECS = ("'random', 'heuristic', 'ismcts[:simulations=1000,...]', a checkpoint folder or an exported bot "
                "(onnx:DIR)")


class ProtocolError(ValueError):
    """A request the server refuses; the message names the problem, nothing has changed."""

    def __init__(self, message: str, event: int | None = None):
        super().__init__(message)
        self.event = event


# ------------------------------------------------------------------------- helpers
def _shown(value) -> str:
    """A client's value as a message quotes it: JSON, clipped."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return clipped(text, MAX_SHOWN // 2)


def _json_type(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number")


def _fields(obj, what: str, required=(), optional=()) -> dict:
    """``obj`` if it is an object with the ``required`` keys and no key outside ``optional``."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"{what} must be a JSON object, not {_json_type(obj)}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise ProtocolError(f"{what} lacks {', '.join(map(repr, missing))}")
    unknown = [k for k in obj if k not in required and k not in optional]
    if unknown:
        allowed = ", ".join(repr(k) for k in (*required, *optional))
        raise ProtocolError(f"{what} has unknown field {', '.join(_shown(k) for k in unknown)}: "
                            f"its fields are {allowed}")
    return obj


def _int(value, what: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ProtocolError(f"{what} must be an integer {low} to {high}, not {_shown(value)}")
    return value


def _list(value, what: str) -> list:
    if not isinstance(value, list):
        raise ProtocolError(f"{what} must be a list, not {_json_type(value)}")
    return value


def _card(text, what: str) -> int:
    if not isinstance(text, str):
        raise ProtocolError(f"{what}: a card is text such as \"7H\", not {_shown(text)}")
    try:
        return parse_card(text)
    except ValueError:
        raise ProtocolError(f"{what}: unknown card {_shown(text)} (rank A23456789TJQK or 10, then suit CDHS, "
                            "e.g. \"7H\")") from None


def _cards(value, what: str) -> list[int]:
    """Card texts -> distinct cards."""
    cards = [_card(text, what) for text in _list(value, what)]
    if len(set(cards)) != len(cards):
        twice = next(c for c in cards if cards.count(c) > 1)
        raise ProtocolError(f"{what}: {card_to_text(twice)} is listed twice")
    return cards


def _texts(bits: int) -> str:
    return " ".join(card_to_text(c) for c in bits_to_cards(bits)) or "nothing"


def _numbers(value, what: str) -> list[int]:
    """Pairs Draft cards: numbers 1-10 -> counts per number (index number - 1)."""
    counts = [0] * NUM_ACTIONS
    for n in _list(value, what):
        if type(n) is not int or not 1 <= n <= NUM_ACTIONS:
            raise ProtocolError(f"{what}: a Pairs Draft card is a number 1 to 10, not {_shown(n)}")
        counts[n - 1] += 1
    for a, (count, deck) in enumerate(zip(counts, DECK_COUNTS)):
        if count > deck:
            raise ProtocolError(f"{what} holds {count} cards {a + 1}: the deck has {deck}")
    return counts


def _listed(counts) -> list[int]:
    return [a + 1 for a in range(NUM_ACTIONS) for _ in range(counts[a])]


def _compare(facts: dict, event: dict, what: str) -> None:
    """A ``check`` event: every fact it gives must be the server's."""
    unknown = [k for k in event if k != "event" and k not in facts]
    if unknown:
        raise ProtocolError(f"{what} has unknown field {', '.join(_shown(k) for k in unknown)}: "
                            f"it may check {', '.join(facts)}")
    for key, value in event.items():
        if key != "event" and value != facts[key]:
            raise ProtocolError(f"check failed: {key} is {_shown(facts[key])} here, the event says {_shown(value)}")


class _Table:
    """What both games' tables share: events handed to the handler their ``"event"`` field
    names (``EVENTS``: event -> method name), and the engine's moves."""
    GAME = ""
    EVENTS: dict = {}

    def apply(self, event: dict) -> None:
        kind = event.get("event") if isinstance(event, dict) else None
        if not isinstance(kind, str) or kind not in self.EVENTS:
            if not isinstance(event, dict):
                raise ProtocolError(f"an event must be a JSON object, not {_json_type(event)}")
            *first, last = (f'"{name}"' for name in self.EVENTS)
            raise ProtocolError(f"unknown {self.GAME} event {_shown(kind)}: events are {', '.join(first)} and {last}")
        getattr(self, self.EVENTS[kind])(event)

    def to_act(self):
        return self.game.current_player if self.expect == "move" else None

    def legal_actions(self) -> list[int]:
        return list(self.game.legal_actions())

    def parse_action(self, text) -> int:
        try:
            return self.game.text_to_action(text)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None

    def text(self, action: int) -> str:
        return self.game.action_to_text(action)


# ------------------------------------------------------------------------- Craits
class _CraitsEngine(CraitsGame):
    """The table's engine: ``CraitsGame`` but the next deal comes from the client's ``deal``
    event, and no repetition is declared (it depends on the hidden cards; the client says so)."""

    def _next_deal(self) -> None:
        pass

    def _repeated(self) -> bool:
        return False


class CraitsTable(_Table):
    """One seat's Craits table, rebuilt from protocol events (see the module docstring)."""
    GAME = "Craits"
    EVENTS = {"deal": "_deal", "move": "_move", "deal_end": "_deal_end", "check": "_check"}

    def __init__(self, rules, players: int, seat: int):
        self.rules, self.n, self.seat = rules, players, seat
        self.game: _CraitsEngine | None = None
        self.expect = "deal"  # deal | move | deal_end | over
        self.next_deal = 0

    # -------------------------------------------------------------- events
    def _deal(self, ev: dict) -> None:
        _fields(ev, "a deal event", ("event", "deal", "hand", "upcard"), ("dealer",))
        deals = self.rules.deals
        k = _int(ev["deal"], "deal", 1, len(deals)) - 1
        if self.expect != "deal":
            raise ProtocolError(self._not_now("a new deal"))
        if k != self.next_deal:
            raise ProtocolError(f"the next deal is deal {self.next_deal + 1}, not {k + 1}")
        n, me = self.n, self.seat
        dealer = k % n
        if "dealer" in ev and ev["dealer"] != dealer:
            raise ProtocolError(f"deal {k + 1} is dealt by seat {dealer} (the deal passes to the left), "
                                f"not {_shown(ev['dealer'])}")
        hand = _cards(ev["hand"], "hand")
        upcard = _card(ev["upcard"], "upcard")
        if upcard in hand:
            raise ProtocolError(f"the upcard {card_to_text(upcard)} is also in your hand")
        size = deals[k]
        if not size <= len(hand) <= size + 1:
            raise ProtocolError(f"deal {k + 1} deals {size} card{'' if size == 1 else 's'} a hand, your hand lists "
                                f"{len(hand)}")
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
            raise ProtocolError(f"the upcard {card_to_text(upcard)} makes you draw {got} card"
                                f"{'' if got == 1 else 's'}: your hand must list the {size} dealt"
                                f"{' and the one drawn' if got else ''}, not {len(hand)} cards")
        self._take_drawn(dealt_bits, [card_to_text(c) for c in extra], f"the upcard {card_to_text(upcard)}")
        self.expect = "move"

    def _move(self, ev: dict) -> None:
        _fields(ev, "a move event", ("event", "seat", "move"), ("drew",))
        g = self.game
        seat = _int(ev["seat"], "seat", 0, self.n - 1)
        text = ev["move"]
        try:
            action = CraitsGame.text_to_action(text)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None
        if self.expect != "move":
            raise ProtocolError(self._not_now("a move"))
        if seat != g.current_player:
            raise ProtocolError(f"seat {seat} moved out of turn: {self._situation()}")
        me = self.seat
        if seat == me:
            if action not in g.legal_actions():
                raise ProtocolError(f"your move {_shown(text)} is not legal: {self._why_illegal(action)}")
        else:
            self._make_possible(seat, action, text)
        before = g.hand_bits[me]
        g.apply(action)
        self._take_drawn(before, ev.get("drew"), f"seat {seat}'s {_shown(text)}" if seat != me else
                         f"your {_shown(text)}")
        if g.deal_over:  # scored on the placeholders: undone until the deal_end event shows the hands
            for s, points in enumerate(g.last_deal_points):
                g.totals[s] -= points
            self.expect = "deal_end"

    def _deal_end(self, ev: dict) -> None:
        _fields(ev, "a deal_end event", ("event", "hands"), ("points", "reason"))
        g = self.game
        reason = ev.get("reason")
        if self.expect == "deal_end":
            ended = g.finished_deal["reason"]
            if reason is not None and reason != ended:
                raise ProtocolError(f"the deal ended by {ended!r} here, not {_shown(reason)}")
            reason = ended
        elif self.expect == "move":
            if reason != "repetition":
                raise ProtocolError(f"the deal is not over ({self._situation()}); a deal the server can't see "
                                    "end (by repetition) needs \"reason\": \"repetition\"")
            if g.positions is None:
                raise ProtocolError("the deal can't have ended by repetition: its stock was never reshuffled")
        else:
            raise ProtocolError(self._not_now("the end of a deal"))
        hands = _list(ev["hands"], "hands")
        if len(hands) != self.n:
            raise ProtocolError(f"hands must list {self.n} hands, one per seat, not {len(hands)}")
        me, seen = self.seat, {}
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
            raise ProtocolError(f"points: these hands score {_shown(g.last_deal_points)}, the event says "
                                f"{_shown(ev['points'])}")
        if g.deal_index + 1 < len(self.rules.deals):
            self.next_deal = g.deal_index + 1
            self.expect = "deal"
        else:
            g.game_over = True
            g.phase_id = OVER
            self.expect = "over"

    def _check(self, ev: dict) -> None:
        _compare(self.facts(), ev, "a check event")

    # --------------------------------------------------------- placeholders
    def _find(self, card: int, skip: int | None = None):
        """Where a hidden ``card`` is: ("hand", seat) or ("stock", index); None if not hidden."""
        g = self.game
        for s, bits in enumerate(g.hand_bits):
            if s != self.seat and s != skip and bits >> card & 1:
                return "hand", s
        try:
            return "stock", g.stock.index(card)
        except ValueError:
            return None

    def _exchange(self, place, out: int, into: int) -> None:
        """The hidden ``place`` gives up ``out`` and holds ``into`` instead."""
        g = self.game
        if place[0] == "hand":
            g.hand_bits[place[1]] ^= (1 << out) | (1 << into)
        else:
            g.stock[place[1]] = into
        g._legal = None

    def _make_possible(self, actor: int, action: int, text) -> None:
        """Exchange placeholders so that another seat's move is legal if anything it could hold allows it."""
        g = self.game
        hand = g.hand_bits[actor]
        if action < DRAW:  # a play
            card = action % UNANNOUNCED
            if g.hand_bits[self.seat] >> card & 1:
                raise ProtocolError(f"seat {actor} can't play {card_to_text(card)}: it is in your hand")
            if g.discard_bits >> card & 1:
                raise ProtocolError(f"seat {actor} can't play {card_to_text(card)}: it was played already "
                                    "(it is in the discard pile)")
            if not hand:
                raise ProtocolError(f"seat {actor} can't play {card_to_text(card)}: seat {actor} has no cards left")
            if not hand >> card & 1:
                place = self._find(card, skip=actor)
                swap = hand & -hand  # any of its placeholders
                self._exchange(place, card, swap.bit_length() - 1)
                g.hand_bits[actor] ^= swap | (1 << card)
        elif action == DRAW and g.phase_id not in (NAME_SUIT, BLIND_SUIT):
            playable = CRANK_BITS if g.phase_id == CRANK else (
                SUIT_BITS[g.suit_id] | RANK_BITS[g.discard[-1] >> 2] | WILD_BITS)
            bad = bits_to_cards(hand & playable)
            if bad:
                pool = [(("hand", s), c) for s, bits in enumerate(g.hand_bits) if s not in (self.seat, actor)
                        for c in bits_to_cards(bits & ~playable)]
                pool += [(("stock", i), c) for i, c in enumerate(g.stock) if not playable >> c & 1]
                if len(pool) < len(bad):
                    raise ProtocolError(f"seat {actor} can't have had nothing to play: it holds {hand.bit_count()} "
                                        f"cards, and only {len(pool) + hand.bit_count() - len(bad)} of the cards you "
                                        f"haven't seen can't be played now ({self._situation()})")
                for card, (place, other) in zip(bad, pool):
                    self._exchange(place, other, card)
                    g.hand_bits[actor] ^= (1 << card) | (1 << other)
        g._legal = None
        if action not in g.legal_actions():
            raise ProtocolError(f"seat {actor} can't {text} now: {self._situation()}")

    def _take_drawn(self, before: int, drew, what: str) -> None:
        """The cards this seat drew in the last event are those it says: exchange placeholders."""
        g, me = self.game, self.seat
        got = g.hand_bits[me] & ~before
        listed = _cards(drew if drew is not None else [], "drew")
        count = got.bit_count()
        if len(listed) != count:
            made = f"makes you draw {count} card{'' if count == 1 else 's'}" if count else "makes you draw nothing"
            raise ProtocolError(f"{what} {made}, but \"drew\" lists {len(listed)}")
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
    def _not_now(self, what: str) -> str:
        if self.expect == "deal":
            return f"{what} can't come now: the server waits for deal {self.next_deal + 1} (a \"deal\" event)"
        if self.expect == "deal_end":
            return f"{what} can't come now: the deal is over, send its \"deal_end\" event (every hand)"
        if self.expect == "over":
            return f"{what} can't come now: the game is over (send \"stop\")"
        return f"{what} can't come now: the deal is under way ({self._situation()})"

    def _situation(self) -> str:
        g = self.game
        seat, phase = g.current_player, g.phase_id
        if phase in (NAME_SUIT, BLIND_SUIT):
            return f"seat {seat} is to name a suit"
        if phase == CRANK:
            return f"seat {seat} is to answer the crank (count {g.crank}) with an A or a 2, or draw {g.crank}"
        return f"seat {seat} is to play on {card_to_text(g.discard[-1])} (suit {SUITS[g.suit_id]}) or draw"

    def _why_illegal(self, action: int) -> str:
        g = self.game
        legal = ", ".join(g.action_to_text(a) for a in g.legal_actions())
        if action < DRAW and not g.hand_bits[self.seat] >> (action % UNANNOUNCED) & 1 \
                and g.phase_id not in (NAME_SUIT, BLIND_SUIT):
            return f"you don't hold {card_to_text(action % UNANNOUNCED)}; legal moves: {legal}"
        return f"{self._situation()}; legal moves: {legal}"

    # ---------------------------------------------------------------- state
    def facts(self) -> dict:
        """The public facts a ``check`` event may assert, and the ``ok`` reply's totals."""
        g = self.game
        if g is None:
            return {"totals": [0] * self.n}
        return {"to_act": self.to_act(), "deal": g.deal_index + 1, "dealer": g.dealer, "phase": PHASE_NAMES[g.phase_id],
                "top": card_to_text(g.discard[-1]), "suit": SUITS[g.suit_id], "crank": g.crank,
                "direction": g.direction, "stock": len(g.stock), "discard": len(g.discard),
                "hand_sizes": [g.hand_size(s) for s in range(self.n)], "announced": list(g.announced),
                "totals": list(g.totals), "pressures": list(g.pressures)}

    def world(self, rng):
        """(the seat's view, an engine sampled from it alone)."""
        v = craits_view.view(self.game, self.seat)
        return v, craits_view.determinize(v, rng)

    def set_memory(self, raw, view) -> None:
        pass  # Craits observations need no memory beyond the table


# -------------------------------------------------------------------- Pairs Draft
def _first_legal(game, rng) -> int:
    return game.legal_actions()[0]


class PairsTable(_Table):
    """One seat's Pairs Draft table, rebuilt from protocol events (see the module docstring)."""
    GAME = "Pairs Draft"
    EVENTS = {"deal": "_deal", "pack": "_pack", "move": "_move", "check": "_check"}

    def __init__(self, seat: int):
        self.seat = seat
        self.n = NUM_PLAYERS
        self.game: PairsDraftGame | None = None
        self.expect = "deal"  # deal | move | pack | over
        self.memory = pairs_view.DraftMemory()
        self.passed: list[list[int]] = []  # the pack as this seat passed it, at each pick

    def _deal(self, ev: dict) -> None:
        _fields(ev, "a deal event", ("event", "start_player", "pack"))
        if self.expect != "deal":
            raise ProtocolError(self._not_now("the deal"))
        start = _int(ev["start_player"], "start_player", 0, NUM_PLAYERS - 1)
        pack = _numbers(ev["pack"], "pack")
        if sum(pack) != DRAFT_PICKS:
            raise ProtocolError(f"the first pack holds {DRAFT_PICKS} cards, this one {sum(pack)}")
        rest = _listed([d - p for d, p in zip(DECK_COUNTS, pack)])
        packs = []
        for s in range(NUM_PLAYERS):
            if s == self.seat:
                packs.append(pack)
            else:
                packs.append(_counts(rest[:DRAFT_PICKS]))
                del rest[:DRAFT_PICKS]
        g = PairsDraftGame.__new__(PairsDraftGame)
        g._setup("draft", start, [[0] * NUM_ACTIONS for _ in range(NUM_PLAYERS)], packs, _counts(rest), NUM_ROUNDS)
        self.game = g
        self.expect = "move"

    def _pack(self, ev: dict) -> None:
        _fields(ev, "a pack event", ("event", "pack"))
        pack = _numbers(ev["pack"], "pack")
        if self.expect != "pack":
            raise ProtocolError(self._not_now("a pack"))
        g, me = self.game, self.seat
        p = g.pick_index
        if sum(pack) != DRAFT_PICKS - p:
            raise ProtocolError(f"the pack of pick {p + 1} holds {DRAFT_PICKS - p} cards, this one {sum(pack)}")
        if p >= NUM_PLAYERS:  # the pack this seat passed four picks ago comes back, less three picks
            limit, source = self.passed[p - NUM_PLAYERS], f"the pack you passed at pick {p - NUM_PLAYERS + 1}"
        else:  # a pack never seen: none of the cards in your hand or the packs you passed
            limit = [d - h - sum(q[a] for q in self.passed) for a, (d, h) in
                     enumerate(zip(DECK_COUNTS, g.hand_counts(me)))]
            source = "the cards not in your hand or in the packs you passed"
        for a in range(NUM_ACTIONS):
            if pack[a] > limit[a]:
                raise ProtocolError(f"the pack of pick {p + 1} can't hold {pack[a]} × {a + 1}: it comes from "
                                    f"{source}, which {'hold' if p < NUM_PLAYERS else 'held'} {limit[a]}")
        own = g.pack_counts(me)  # the engine's list: changed in place
        places = [g._packs[i] for i in range(NUM_PLAYERS) if g._packs[i] is not own]
        places += [g._hands[s] for s in range(NUM_PLAYERS) if s != me] + [g._set_aside]
        self._fit(own, pack, places)
        self.expect = "move"

    def _fit(self, counts, target, places) -> None:
        """Make ``counts`` equal ``target`` by exchanging cards with the hidden ``places``."""
        surplus = [a for a in range(NUM_ACTIONS) for _ in range(max(counts[a] - target[a], 0))]
        for a in range(NUM_ACTIONS):
            while counts[a] < target[a]:
                place = next((q for q in places if q[a] > 0), None)
                if place is None:
                    raise ProtocolError(f"no hidden card {a + 1} is left to be here")
                b = surplus.pop()
                place[a] -= 1
                place[b] += 1
                counts[a] += 1
                counts[b] -= 1
        self.game._legal = None

    def _move(self, ev: dict) -> None:
        _fields(ev, "a move event", ("event", "seat", "move"))
        seat = _int(ev["seat"], "seat", 0, NUM_PLAYERS - 1)
        text = ev["move"]
        if not isinstance(text, str):
            raise ProtocolError(f"a move is text such as \"play 7\", not {_shown(text)}")
        if self.expect != "move":
            raise ProtocolError(self._not_now("a move"))
        g, me = self.game, self.seat
        phase = g.phase
        verb = VERBS[phase]
        words = text.lower().split()
        secret = phase in ("draft", "discard") and seat != me
        if not words or words[0] != verb or len(words) > 2:
            form = f"'{verb}'" if secret else f"'{verb} <number>'"
            raise ProtocolError(f"{_shown(text)} is no move of seat {seat} in the {phase}: write {form}")
        if secret:
            if len(words) == 2:
                raise ProtocolError(f"seat {seat}'s {verb} is secret to you: report it as {verb!r}, without the number")
        elif len(words) != 2 or not words[1].isdecimal() or not 1 <= int(words[1]) <= NUM_ACTIONS:
            raise ProtocolError(f"{_shown(text)}: write '{verb} <number>', a number 1 to 10")
        if seat != g.current_player:
            raise ProtocolError(f"seat {seat} moved out of turn: seat {g.current_player} is to {verb}")
        pick = g.pick_index
        if secret:
            action = g.legal_actions()[0]  # any: the table never shows it
        else:
            action = int(words[1]) - 1
            if seat == me:
                if phase == "draft":
                    self.memory.observe("draft", pick, tuple(g.hand_counts(me)), tuple(g.pack_counts(me)))
                if action not in g.legal_actions():
                    raise ProtocolError(f"your move {_shown(text)} is not legal: {self._why_illegal(action)}")
                if phase == "draft":
                    passed = list(g.pack_counts(me))
                    passed[action] -= 1
                    self.passed.append(passed)
            else:
                self._make_possible(seat, action)
        g.apply(action)
        if g.phase == "over":
            self.expect = "over"
        elif g.phase == "draft" and g.pick_index != pick:
            self.expect = "pack"
        elif phase == "play":
            self._check_known_picks()

    def _make_possible(self, actor: int, action: int) -> None:
        """Exchange placeholders so that another seat holds the number it plays (and, for a
        forced card, nothing else it could play instead)."""
        g, me = self.game, self.seat
        n = action + 1
        hand = g._hands[actor]
        places = [g._hands[s] for s in range(NUM_PLAYERS) if s not in (me, actor)] + [g._set_aside]
        discards = [s for s in range(NUM_PLAYERS) if s != me and g._discards[s] is not None]

        def take(wanted, give) -> bool:
            """Move one hidden card numbered in ``wanted`` into the actor's hand for its card ``give``."""
            for place in places:
                for a in wanted:
                    if place[a]:
                        place[a] -= 1
                        place[give] += 1
                        break
                else:
                    continue
                hand[a] += 1
                hand[give] -= 1
                return True
            for s in discards:
                a = g._discards[s] - 1
                if a in wanted:
                    g._discards[s] = give + 1
                    hand[a] += 1
                    hand[give] -= 1
                    return True
            return False

        if not hand[action]:
            give = max(range(NUM_ACTIONS), key=lambda a: (hand[a] > 0, g._paired >> a & 1 == 0))
            if not take([action], give):
                raise ProtocolError(f"seat {actor} can't play {n}: every {n} is in your hand, your discard or played")
        if g._paired >> action & 1:  # a forced card: the actor holds only paired numbers
            paired = [a for a in range(NUM_ACTIONS) if g._paired >> a & 1]
            for a in range(NUM_ACTIONS):
                while hand[a] and a not in paired:
                    if not take(paired, a):
                        raise ProtocolError(f"seat {actor} can't play {n}: {n} is paired this round, so it may only "
                                            f"be played from a hand of paired numbers, and too few cards you haven't "
                                            f"seen are")
        g._legal = None
        if action not in g.legal_actions():
            raise ProtocolError(f"seat {actor} can't play {n} now")

    def _check_known_picks(self) -> None:
        """The cards this seat knows the others picked (from packs it saw again) and haven't
        played yet must still fit in their hands and discards."""
        if not self.memory.complete():
            return
        g, me = self.game, self.seat
        own_picks = self.memory.own_picks()
        _, known = self.memory.knowledge(DRAFT_PICKS)
        played = [0] * NUM_ACTIONS
        for s in range(NUM_PLAYERS):
            for a in range(NUM_ACTIONS):
                played[a] += g._face_up[s][a] + g._face_down[s][a]
        for play in g._trick:
            played[play.number - 1] += 1
        own_played = [p - h for p, h in zip(own_picks, g._hands[me])]
        own_played[g._discards[me] - 1] -= 1
        still = sum(max(k - (p - o), 0) for k, p, o in zip(known, played, own_played))
        room = sum(sum(g._hands[s]) + 1 for s in range(NUM_PLAYERS) if s != me)
        if still > room:
            raise ProtocolError(f"the other seats hold {room} cards in hands and discards, but {still} cards you saw "
                                "them pick are still unplayed")

    def _check(self, ev: dict) -> None:
        _compare(self.facts(), ev, "a check event")

    def _not_now(self, what: str) -> str:
        if self.expect == "deal":
            return f"{what} can't come now: the server waits for the deal (a \"deal\" event)"
        if self.expect == "pack":
            return (f"{what} can't come now: the packs have passed; send the pack you receive for pick "
                    f"{self.game.pick_index + 1} (a \"pack\" event)")
        if self.expect == "over":
            return f"{what} can't come now: the game is over (send \"stop\")"
        g = self.game
        return f"{what} can't come now: seat {g.current_player} is to {VERBS[g.phase]}"

    def _why_illegal(self, action: int) -> str:
        g = self.game
        legal = ", ".join(g.action_to_text(a) for a in g.legal_actions())
        where = {"draft": "your pack holds", "discard": "you hold", "play": "your hand holds"}[g.phase]
        cards = g.pack(self.seat) if g.phase == "draft" else g.hand(self.seat)
        return f"{where} {' '.join(map(str, cards))}; legal moves: {legal}"

    def facts(self) -> dict:
        g = self.game
        if g is None:
            return {"totals": [0] * NUM_PLAYERS}
        phase = g.phase
        sizes = [sum(g.hand_counts(s)) for s in range(NUM_PLAYERS)]
        if phase == "draft":
            sizes = [sizes[s] if s == self.seat else g.pick_index for s in range(NUM_PLAYERS)]
        elif phase == "discard":
            sizes = [sizes[s] if s == self.seat else DRAFT_PICKS for s in range(NUM_PLAYERS)]
        return {"to_act": self.to_act(), "phase": phase, "start_player": g.start_player, "picks_done": g.pick_index,
                "rounds_done": g.round_index, "hand_sizes": sizes,
                "face_up": [g.face_up(s) for s in range(NUM_PLAYERS)],
                "face_down": [g.face_down(s) for s in range(NUM_PLAYERS)], "totals": g.scores()}

    def world(self, rng):
        v = pairs_view.view(self.game, self.seat, self.memory)
        return v, pairs_view.determinize(v, rng, _first_legal)

    def set_memory(self, raw, view) -> None:
        """The env's per-seat draft memory, from the seat's ``DraftMemory`` (the view's fields)."""
        seat = self.seat
        raw._passed[seat] = 0
        for k, counts in view.passed:
            raw._passed[seat, k - 1] = counts
        raw._others_picks[seat] = view.known_picks


def _counts(numbers) -> list[int]:
    counts = [0] * NUM_ACTIONS
    for n in numbers:
        counts[n - 1] += 1
    return counts


# -------------------------------------------------------------------------- server
class Session:
    """One game seen from one seat: the table, the agent and the env whose encoder builds
    the observation."""

    def __init__(self, agent_spec: str, message: dict, env_id: str | None = None):
        _fields(message, "start", ("type", "protocol", "game", "seat", "players"), ("rules", "options", "id"))
        if type(message["protocol"]) is not int or message["protocol"] != PROTOCOL_VERSION:
            raise ProtocolError(f"protocol version {_shown(message['protocol'])} is not spoken here: this server "
                                f"speaks version {PROTOCOL_VERSION}")
        game = message["game"]
        if not isinstance(game, str):
            raise ProtocolError(f"game must be a string (an env id), not {_json_type(game)}")
        if game not in GAMES:
            raise ProtocolError(f"unknown game {_shown(game)}: games are {', '.join(GAMES)}")
        if env_id is not None and game != env_id:
            raise ProtocolError(f"this server plays {env_id} only, not {game}")
        if not isinstance(message.get("rules", {}), dict):
            raise ProtocolError(f"rules must be a JSON object of env arguments, not {_json_type(message['rules'])}")
        rules = dict(message.get("rules") or {})
        for key in ("render_mode", "illegal_action"):
            if key in rules:
                raise ProtocolError(f"rules: {key!r} is no rule of the game")
        if game == "pairs_draft_v0":
            players = _int(message["players"], "players", NUM_PLAYERS, NUM_PLAYERS)
        else:
            players = _int(message["players"], "players", 2, 5)
            if rules.get("num_players", players) != players:
                raise ProtocolError(f"rules say num_players={_shown(rules['num_players'])} but players is {players}")
            rules["num_players"] = players
        seat = _int(message["seat"], "seat", 0, players - 1)
        options = _fields(message.get("options", {}), "options", (), START_OPTIONS)
        seed = options.get("seed")
        if seed is not None and type(seed) is not int:
            raise ProtocolError(f"options.seed must be an integer, not {_shown(seed)}")
        for key in ("deterministic", "scores"):
            if key in options and not isinstance(options[key], bool):
                raise ProtocolError(f"options.{key} must be true or false, not {_shown(options[key])}")
        try:
            env = EnvHandle(game, rules)
        except ValueError as exc:
            raise ProtocolError(f"rules: {exc}") from None
        try:
            self.agent = make_agent(agent_spec, env, seed=seed, deterministic=options.get("deterministic", True))
        except (ValueError, OSError) as exc:
            raise ProtocolError(f"agent {agent_spec}: {exc}") from None
        self.agent.reset()
        self.env, self.seat, self.players = env, seat, players
        self.scores = options.get("scores", True)
        self.raw = env.raw
        self.raw.reset(seed=0)
        self.agent_name = self.raw.possible_agents[seat]
        self.rng = random.Random(seed)
        self.table = CraitsTable(self.raw.rules, players, seat) if game == "craits_v0" else PairsTable(seat)
        self.last_observation = None  # the last observation built for the agent (for tests)

    def ready(self) -> dict:
        rules = dict(self.env.rule_args)
        if self.env.id == "craits_v0":
            rules["deals"] = list(self.raw.rules.deals)
        return {"type": "ready", "protocol": PROTOCOL_VERSION, "game": self.env.id, "seat": self.seat,
                "players": self.players, "agent": getattr(self.agent, "name", "agent"), "rules": rules}

    def update(self, message: dict) -> dict:
        _fields(message, "update", ("type", "events"), ("id",))
        events = _list(message["events"], "events")
        saved = copy.deepcopy(self.table)
        for i, event in enumerate(events):
            try:
                self.table.apply(event)
            except ProtocolError as exc:
                self.table = saved
                raise ProtocolError(f"event {i} ({_brief(event)}): {exc}", event=i) from None
            except Exception as exc:  # a bug here must not leave a half-applied update
                self.table = saved
                raise ProtocolError(f"event {i} ({_brief(event)}): internal error: {type(exc).__name__}: {exc}",
                                    event=i) from None
        return self.status("ok")

    def status(self, kind: str) -> dict:
        table = self.table
        return {"type": kind, "expect": table.expect, "to_act": table.to_act() if table.game else None,
                "totals": table.facts()["totals"]}

    def act(self, message: dict) -> dict:
        _fields(message, "act", ("type", "legal"), ("id",))
        table, seat = self.table, self.seat
        if table.expect != "move" or table.to_act() != seat:
            why = table._not_now("act") if table.expect != "move" else \
                f"act can't come now: seat {table.to_act()} is to move, not you (seat {seat})"
            raise ProtocolError(why)
        texts = _list(message["legal"], "legal")
        legal = table.legal_actions()
        given = {}
        for text in texts:
            given[table.parse_action(text)] = text
        wrong = [text for a, text in given.items() if a not in legal]
        if wrong:
            why = table._why_illegal(table.parse_action(wrong[0]))
            raise ProtocolError(f"legal lists {_shown(wrong[0])}, which is not legal here: {why}")
        missing = [table.text(a) for a in legal if a not in given]
        if missing:
            raise ProtocolError(f"legal lacks {', '.join(map(repr, missing))}: the legal moves here are "
                                f"{', '.join(table.text(a) for a in legal)}")
        observation, world = self.observe()
        action = int(checked_act(self.agent, seat, observation, world))
        reply = {"type": "move", "action": table.text(action)}
        if self.scores and len(legal) > 1:
            scores = self._scores(observation, legal)
            if scores is not None:
                reply["score_kind"], reply["scores"] = scores
        return reply

    def observe(self):
        """The seat's observation, by the env's own encoder (see the module docstring), and
        the engine it was read from (sampled from the seat's view alone)."""
        view, world = self.table.world(self.rng)
        raw = self.raw
        raw.game = world
        raw._obs_cache = {}
        if hasattr(raw, "_public_key"):
            raw._public_key = None  # Pairs Draft caches the public rows of the game it last saw
        self.table.set_memory(raw, view)
        raw.agent_selection = self.agent_name
        observation = raw.observe(self.agent_name)
        mask = np.flatnonzero(observation["action_mask"]).tolist()
        if mask != self.table.legal_actions():
            raise AssertionError(f"the sampled engine's legal moves {mask} differ from the table's")
        self.last_observation = observation
        return observation, world

    def _scores(self, observation, legal):
        agent, text = self.agent, self.table.text
        if hasattr(agent, "root_stats"):  # IS-MCTS: visits of the last search's root
            stats = agent.root_stats()
            return "visits", {text(a): stats[a][0] if a in stats else 0 for a in legal}
        if isinstance(agent, PolicyAgent):
            logits = agent.logits(observation["observation"])
        elif type(agent).__name__ == "OnnxAgent":
            logits = agent.logits(observation["observation"], observation["action_mask"])
        else:
            return None
        return "logits", {text(a): round(float(logits[a]), 6) for a in legal}


def _brief(event) -> str:
    if isinstance(event, dict) and event.get("event") == "move":
        return f"move by seat {_shown(event.get('seat'))}: {_shown(event.get('move'))}"
    if isinstance(event, dict) and "event" in event:
        return f"{_shown(event['event'])}"
    return _shown(event)


def _check_spec(spec: str) -> None:
    """Refuse at once an agent spec no start could build (each start builds the agent for
    its game and rules, where a checkpoint is checked against them)."""
    if spec in ("random", "heuristic"):
        return
    if spec == "ismcts" or spec.startswith("ismcts:"):
        from envs.search import ISMCTSBot
        ISMCTSBot.from_spec(spec, "craits")  # its options, checked
        return
    if not Path(spec.removeprefix("onnx:")).is_dir():
        raise ValueError(f"unknown agent {spec!r}: serve {SERVED_SPECS}")


class BotServer:
    """The protocol's message handler: ``handle(message)`` answers one request (a parsed
    JSON value), ``handle_line(text)`` one line; the CLI (``training.serve_bot``) and the
    tests both go through it. One game at a time."""

    def __init__(self, agent_spec: str, env_id: str | None = None):
        if agent_spec == "human":
            raise ValueError("the human agent reads the terminal, which the protocol uses: serve a bot")
        if env_id is not None and env_id not in GAMES:
            raise ValueError(f"unknown env id {env_id!r}: choose one of {', '.join(GAMES)}")
        _check_spec(agent_spec)
        self.agent_spec = agent_spec
        self.env_id = env_id
        self.session: Session | None = None

    def handle_line(self, line: str | bytes) -> dict:
        """One request line (text, or bytes that must be UTF-8) -> the reply."""
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        if len(line.rstrip(b"\r\n")) > MAX_LINE:
            return _too_long()
        try:
            message = json.loads(line.decode("utf-8"), parse_constant=_non_finite, parse_float=_finite_float,
                                 parse_int=_bounded_int)
        except UnicodeDecodeError as exc:
            return {"type": "error", "error": f"the request is not UTF-8 text: byte 0x{line[exc.start]:02x} at "
                                              f"offset {exc.start}"}
        except json.JSONDecodeError as exc:
            return {"type": "error", "error": f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"}
        except ProtocolError as exc:
            return {"type": "error", "error": str(exc)}
        except RecursionError:
            return {"type": "error", "error": "the request is nested too deeply"}
        return self.handle(message)

    def handle(self, message) -> dict:
        try:
            reply = self._dispatch(message)
        except ProtocolError as exc:
            reply = {"type": "error", "error": str(exc)}
            if exc.event is not None:
                reply["event"] = exc.event
        except Exception as exc:  # a bug or an agent's failure: say so, keep serving
            reply = {"type": "error", "error": f"internal error: {type(exc).__name__}: {clipped(str(exc))}"}
        if isinstance(message, dict) and "id" in message:
            reply["id"] = message["id"]
        return reply

    def _dispatch(self, message) -> dict:
        if not isinstance(message, dict):
            raise ProtocolError(f"a request must be a JSON object, not {_json_type(message)}")
        kind = message.get("type")
        if kind not in ("start", "update", "act", "stop"):
            raise ProtocolError(f"unknown request type {_shown(kind)}: requests are \"start\", \"update\", \"act\" "
                                "and \"stop\"")
        if kind == "start":
            if self.session is not None:
                raise ProtocolError("a game is under way: send \"stop\" before starting another")
            self.session = Session(self.agent_spec, message, self.env_id)
            return self.session.ready()
        if self.session is None:
            raise ProtocolError(f"{kind} can't come now: no game is under way (send \"start\" first)")
        if kind == "stop":
            _fields(message, "stop", ("type",), ("id",))
            self.session = None
            return {"type": "bye"}
        return self.session.update(message) if kind == "update" else self.session.act(message)


def _non_finite(name: str):
    raise ProtocolError(f"{name} is not a JSON number: numbers must be finite")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError(f"the number {clipped(text, 40)} is out of range: numbers must be finite")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > MAX_DIGITS:
        raise ProtocolError(f"an integer of {len(text)} digits is refused: at most {MAX_DIGITS}")
    return int(text)


def _too_long() -> dict:
    return {"type": "error", "error": f"the request is longer than {MAX_LINE} bytes"}


def _encoded(reply: dict) -> str:
    """The reply as strict JSON (never NaN or Infinity; requests can't carry them, and this
    holds if a reply ever would)."""
    try:
        return json.dumps(reply, allow_nan=False)
    except (ValueError, RecursionError) as exc:
        fallback = {"type": "error", "error": f"internal error: the reply can't be written as JSON: {exc}"}
        return json.dumps(fallback)


def read_lines(stdin):
    """Lines of a binary stream, each at most ``MAX_LINE`` bytes (newline not counted), or
    ``None`` for a longer one, which is skipped while it is read: memory stays bounded."""
    while True:
        line = stdin.readline(MAX_LINE + 2)  # room for "\r\n"
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= MAX_LINE:
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stdin.readline(1 << 16)
        yield None


def serve(server: BotServer, stdin, stdout) -> None:
    """Answer requests from ``stdin`` (a binary stream), one a line, until end of input;
    blank lines are ignored. No line ends the server: each bad one gets an ``error`` reply."""
    for line in read_lines(stdin):
        if line is not None and not line.strip():
            continue
        reply = _too_long() if line is None else server.handle_line(line)
        stdout.write(_encoded(reply) + "\n")
        stdout.flush()


# ------------------------------------------------------------------ the client side
class SeatReporter:
    """What one seat sees of a game played on a real engine, as protocol events: the
    client's half of the protocol (the tests and the docs' example use it).

    ``opening(game)`` gives the events of the game's start; around each move,
    ``token = before(game, action)`` (before it is applied) and ``after(game, seat, token)``
    (``seat`` the mover's) give the events of the move."""

    def __init__(self, seat: int):
        self.seat = seat

    def opening(self, game) -> list[dict]:
        if isinstance(game, CraitsGame):
            return [self._craits_deal(game)]
        return [{"event": "deal", "start_player": game.start_player, "pack": game.pack(self.seat)}]

    def before(self, game, action: int):
        if isinstance(game, CraitsGame):
            return game.hand_bits[self.seat], game.action_to_text(action)
        return game.phase, game.pick_index, game.action_to_text(action)

    def after(self, game, seat: int, token) -> list[dict]:
        if isinstance(game, CraitsGame):
            return self._craits_after(game, seat, token)
        phase, pick, text = token
        if phase in ("draft", "discard") and seat != self.seat:
            text = text.split()[0]  # another seat's pick or discard: that it happened, not what
        events = [{"event": "move", "seat": seat, "move": text}]
        if phase == "draft" and game.phase == "draft" and game.pick_index != pick:
            events.append({"event": "pack", "pack": game.pack(self.seat)})
        return events

    def _craits_deal(self, game) -> dict:
        return {"event": "deal", "deal": game.deal_index + 1, "dealer": game.dealer, "hand": game.hand(self.seat),
                "upcard": card_to_text(game.discard[0])}

    def _craits_after(self, game, seat: int, token) -> list[dict]:
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
            events.append({"event": "deal_end", "reason": finished["reason"],
                           "hands": [[card_to_text(c) for c in bits_to_cards(h)] for h in finished["hands"]],
                           "points": list(finished["points"])})
            if not game.game_over:
                events.append(self._craits_deal(game))
        return events
