"""Little Tricks over the bot protocol (``envs.protocol.ProtocolTable``). Events: ``deal``
(this seat's hand: three cards 1-12), ``move`` (a seat and its move text, ``play 7``) and
``check``. The other hands are placeholders: a card another seat plays is swapped into its
hand first, from wherever the placeholders put it."""

from __future__ import annotations

from envs.protocol import EventTable, ProtocolError, fields, integer, json_list, players_in_rules

from . import view as seat_view
from .game import HAND_SIZE, NUM_CARDS, LittleTricksGame


class Table(EventTable[LittleTricksGame]):
    GAME = "Little Tricks"
    EVENTS = {"deal": "_deal", "move": "_move", "check": "_check"}

    def __init__(self, players: int, seat: int):
        self.players, self.seat, self.game, self.expect = players, seat, None, "deal"

    @classmethod
    def start_rules(cls, rules: dict, players: int) -> dict:
        return players_in_rules(rules, players)

    @classmethod
    def from_env(cls, raw, seat: int) -> Table:
        return cls(len(raw.possible_agents), seat)

    def _deal(self, event: dict) -> None:
        if self.game is not None:
            raise ProtocolError("the cards are dealt once a game")
        fields(event, "a deal event", ("event", "hand"))
        hand = json_list(event["hand"], "hand")
        if (
            len(hand) != HAND_SIZE
            or len(set(map(repr, hand))) != HAND_SIZE
            or not all(type(c) is int and 1 <= c <= NUM_CARDS for c in hand)
        ):
            raise ProtocolError(f"hand: {HAND_SIZE} different cards 1-{NUM_CARDS}, not {hand!r}")
        rest = [c for c in range(1, NUM_CARDS + 1) if c not in hand]
        hands = [hand if s == self.seat else [rest.pop() for _ in hand] for s in range(self.players)]
        self.game = LittleTricksGame.from_position(hands)
        self.expect = "move"

    def _move(self, event: dict) -> None:
        if self.game is None:
            raise ProtocolError(self.not_now("a move"))
        fields(event, "a move event", ("event", "seat", "move"))
        seat = integer(event["seat"], "seat", 0, self.players - 1)
        game = self.game
        if seat != game.current_player:
            raise ProtocolError(f"seat {game.current_player} is to move, not seat {seat}")
        action = self.parse_action(event["move"])
        if seat != self.seat and not game.hands[seat] >> action & 1:
            card = 1 << action
            if game.hands[self.seat] & card or game.played & card or any(c == action + 1 for _, c in game.trick):
                raise ProtocolError(f"card {action + 1} can't be seat {seat}'s: it was seen elsewhere")
            placeholder = game.hands[seat] & -game.hands[seat]  # the lowest card it holds
            owner = next((s for s in range(self.players) if game.hands[s] & card), None)
            game.hands[seat] ^= placeholder | card
            if owner is not None:
                game.hands[owner] ^= placeholder | card
            game._legal = None
        if action not in game.legal_actions():
            raise ProtocolError(f"seat {seat} can't {event['move']}: {self.why_illegal(action)}")
        game.apply(action)
        self.expect = "over" if game.is_over else "move"

    def not_now(self, what: str) -> str:
        return f"{what} can't come now: the table waits for {'a deal' if self.expect == 'deal' else 'nothing'}"

    def why_illegal(self, action: int) -> str:
        return f"card {action + 1} is not in the hand"

    def facts(self) -> dict:
        return {"totals": self.game.scores() if self.game else [0] * self.players}

    def world(self, rng):
        view = seat_view.view(self.game, self.seat)
        return view, seat_view.determinize(view, rng)


class Reporter:
    """The events one seat sees: its hand, then every move."""

    def __init__(self, seat: int):
        self.seat = seat

    def opening(self, game: LittleTricksGame) -> list[dict]:
        return [{"event": "deal", "hand": game.hand(self.seat)}]

    def before(self, game: LittleTricksGame, action: int) -> str:
        return game.action_to_text(action)

    def after(self, game: LittleTricksGame, seat: int, token: str) -> list[dict]:
        return [{"event": "move", "seat": seat, "move": token}]
