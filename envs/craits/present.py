"""Craits for people (``envs.present.Presentation``): the table as text, the table as one
seat sees it (JSON and terminal lines), the moves in words, and the web form's rules.

- ``render(game)``: the table as text, every hand shown: the deal that just ended, the
  table, the last move with what its power did, and what the player to act must decide;
- ``seat_view(game, seat)``: the seat's own cards (not while the dealer names a suit for
  an upcard 8 or 9 unseen), the public table (top card, suit, crank, hand sizes, the
  discard pile, scores), the result once the game is over;
- ``Narrator(viewer)``: every move with what its power did (draw counts, not the cards
  drawn, except the viewer's own), the end of a deal with every hand (shown to all then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..cards import SUITS, bits_to_cards, card_to_text
from ..present import seat_name, seats_named
from .game import ACE, BLIND_SUIT, CRANK, DRAW, EXTRA_TURN, FOUR, NAME_SUIT, SIX, SUIT_ACTION, TEN, TWO, UNANNOUNCED
from .rules import CHOICES, DEAL_SIZES, PRESETS

SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
DEAL_END_REASONS = {
    "stalemate": "stalemate: nobody could draw or play",
    "repetition": "repetition: the same position for the third time",
    "cut": "cut after 10,000 actions",
}


# ---------------------------------------------------------------- the whole table
def render(game) -> str:
    """The table as text: the deal that just ended (if one did), the table, the last
    move with what its power did, and what the player to act must decide."""
    lines = []
    if game.finished_deal is not None and (game.deal_over or game.game_over):
        lines += _finished_lines(game, game.finished_deal) + [""]
    if game.game_over:
        lines.append(_result_line(game))
        return "\n".join(lines)
    n = game.num_players
    deals = game.rules.deals
    way = "left" if game.direction == 1 else "right"
    lines += [
        f"Craits  deal {game.deal_index + 1}/{len(deals)} (hand size {deals[game.deal_index]}), "
        f"dealer seat {game.dealer}, play goes {way}",
        f"top {game.top}  suit {game.suit}  stock {len(game.stock)}  discard {len(game.discard)}"
        + (f"  crank {game.crank}" if game.crank else ""),
    ]
    for seat in range(n):
        marks = []
        if game.announced[seat]:
            marks.append("last card!")
        if game.lose_turn[seat]:
            marks.append("loses next turn")
        if game.rules.partnership:
            marks.append(f"side {seat % 2}")
        pointer = ">" if seat == game.current_player else " "
        lines.append(
            f"{pointer} seat {seat}: {' '.join(game.hand(seat)) or '(out)':<40} "
            f"score {game.totals[seat]:>4}{_pressure_text(game, seat)}" + (f"  ({', '.join(marks)})" if marks else "")
        )
    if game.rules.partnership:
        lines.append(_sides_text(game))
    if game.last_move is not None:
        lines.append("last: " + describe_move(game, game.last_move, game.events, game.hand_bits))
    lines.append(_table_prompt(game))
    return "\n".join(lines)


def _pressure_text(game, seat: int) -> str:
    """The pressure tally and the points it has cost (5, 10, 20, … : 5·(2^k − 1) in all)."""
    if game.rules.empty_stock != "pressure":
        return ""
    count = game.pressures[seat]
    return f"  pressure {count} ({5 * ((1 << count) - 1)} points)"


def _sides_text(game) -> str:
    return "sides: " + ", ".join(
        f"seats {'+'.join(map(str, side))} total {sum(game.totals[s] for s in side)}" for side in game.sides()
    )


def _result_line(game) -> str:
    winners = game.winners()
    scores = ", ".join(f"seat {s} {game.totals[s]}" for s in range(game.num_players))
    extra = f"; {_sides_text(game)}" if game.rules.partnership else ""
    who = "seats " + ", ".join(map(str, winners)) + " win" if len(winners) > 1 else f"seat {winners[0]} wins"
    return f"game over: {who} (lowest total; scores {scores}{extra})"


def _finished_lines(game, deal: dict) -> list[str]:
    hands, points = deal["hands"], deal["points"]
    out = [s for s, h in enumerate(hands) if not h]
    reason = (
        f"seat{'s' if len(out) > 1 else ''} {', '.join(map(str, out))} went out"
        if deal["reason"] == "out"
        else DEAL_END_REASONS[deal["reason"]]
    )
    lines = [
        f"deal {deal['deal_index'] + 1}/{len(game.rules.deals)} is over: {reason}",
        "last: " + describe_move(game, deal["last_move"], deal["events"], hands),
    ]
    for seat, (bits, p) in enumerate(zip(hands, points)):
        cards = " ".join(card_to_text(c) for c in bits_to_cards(bits)) or "(out)"
        lines.append(f"  seat {seat}: {cards:<40} {p:>4} points")
    if game.rules.partnership:
        lines.append(
            "  sides: "
            + ", ".join(
                f"seats {'+'.join(map(str, side))} {sum(points[s] for s in side)} points" for side in game.sides()
            )
        )
    return lines


def describe_move(game, move, events, hands, name=lambda seat: f"seat {seat}") -> str:
    """One move (the engine's ``last_move`` or a finished deal's) in words with what its
    power did, e.g. "seat 1 plays 5H: seats 2, 3, 0 draw 1". ``name(seat)`` names a seat
    (a narrator says "you"); ``hands`` are the hand bit sets after the move."""
    seat, action, crank_before, upcard = move
    effects = []
    if action >= SUIT_ACTION and not upcard:
        text = f"{name(seat)} names {SUITS[action - SUIT_ACTION]}"
    elif action == DRAW and not upcard:
        text = f"{name(seat)} " + ("takes the crank" if crank_before else "cannot play")
    else:
        card = action % UNANNOUNCED
        if upcard:
            text = f"upcard {card_to_text(card)} (the dealer's play)"
        else:
            text = f"{name(seat)} plays {card_to_text(card)}" + (" without announcing" if action >= UNANNOUNCED else "")
        rank, out = card >> 2, not upcard and not hands[seat]
        if out:
            effects.append("goes out")
        if rank in (ACE, TWO) and crank_before:
            effects.append("the crank goes on")
        elif rank == TWO:
            effects.append("starts a crank")
        elif out:
            pass  # a last 4, 6 or 10 does nothing more: the deal is over
        elif rank == FOUR:
            effects.append("plays again" if game.num_players == 2 else "skips the next player")
        elif rank == SIX:
            effects.append("plays again")
        elif rank == TEN and game.num_players > 2:
            effects.append("reverses the direction")
    draws: dict[int, list[int]] = {}
    mover = "" if upcard else seat  # the mover's own draws read "draws 2", others' "seat 3 draws 1"
    for event in events:
        if event[0] == "draw" and event[2]:
            draws.setdefault(event[2], []).append(event[1])
        elif event[0] == "pressure":
            who = "" if event[1] == mover else f"{name(event[1])} "
            effects.append(f"{who}takes a pressure ({event[2]} points)")
        elif event[0] == "lost_turn":
            effects.append(f"{name(event[1])} loses this turn (missed announcement)")
    for count, seats in draws.items():
        if seats == [mover]:
            effects.append(f"draws {count}")
        else:
            who = f"seat {seats[0]} draws" if len(seats) == 1 else f"seats {', '.join(map(str, seats))} draw"
            effects.append(f"{who} {count}")
    if (
        action == DRAW
        and not upcard
        and not any(e[0] in ("draw", "pressure") and (e[0] == "pressure" or e[2]) for e in events)
    ):
        effects.append("nothing to draw")
    return text + (": " + ", ".join(effects) if effects else "")


def _table_prompt(game) -> str:
    """What the player to act must decide, in plain words, with the choices."""
    seat, phase = game.current_player, game.phase_id
    legal = game.legal_actions()
    options = [game.action_to_text(a).removeprefix("play ").removeprefix("suit ") for a in legal]
    choices = ", ".join(options[:-1]) + " or " + options[-1] if len(options) > 1 else options[0]
    if phase == BLIND_SUIT:
        return f"seat {seat} (dealer) names a suit for the upcard without seeing their hand: {choices}"
    if phase == NAME_SUIT:
        return f"seat {seat} names a suit: {choices}"
    if legal == [DRAW]:
        if phase == CRANK:
            return f"seat {seat} must take the crank: draw {game.crank}"
        return f"seat {seat} cannot play: draw 1"
    if phase == CRANK:
        return f"seat {seat} must add to the crank (count {game.crank}): play {choices}"
    again = " again (after a 6)" if phase == EXTRA_TURN else ""
    return f"seat {seat} to play{again}: {choices}"


# ------------------------------------------------------------------ one seat's view
def seat_view(game, seat: int) -> dict:
    over = game.is_over
    blind = not over and game.phase_id == BLIND_SUIT and game.current_player == seat
    rules = game.rules
    return {
        "game": "craits",
        "seat": seat,
        "num_players": game.num_players,
        "over": over,
        "to_act": None if over else game.current_player,
        "phase": game.phase,
        "deal": game.deal_index + 1,
        "deals": len(rules.deals),
        "hand_size": rules.deals[game.deal_index],
        "dealer": game.dealer,
        "direction": "left" if game.direction == 1 else "right",
        "top": game.top,
        "suit": game.suit,
        "crank": game.crank,
        "stock": len(game.stock),
        # The discard pile, bottom first: every card in it was seen played (since the stock was last formed).
        "discard": [card_to_text(c) for c in game.discard],
        "hand": None if blind else game.hand(seat),
        "seats": [
            {
                "seat": s,
                "cards": game.hand_size(s),
                "announced": game.announced[s],
                "loses_turn": game.lose_turn[s],
                "score": game.totals[s],
                "pressure": game.pressures[s],
            }
            for s in range(game.num_players)
        ],
        "pressure_rule": rules.empty_stock == "pressure",
        "partnership": rules.partnership,
        "sides": game.sides(),
        "scores": game.scores(),
        "winners": game.winners() if over else None,
        "lower_wins": True,
    }


def view_lines(view: dict, who) -> list[str]:
    lines = [
        f"Craits  deal {view['deal']}/{view['deals']} (hand size {view['hand_size']}), dealer seat "
        f"{view['dealer']}, play goes {view['direction']}",
        f"top {view['top']}  suit {view['suit']} ({SUIT_NAMES[view['suit']]})  stock {view['stock']}"
        + (f"  crank {view['crank']}" if view["crank"] else ""),
    ]
    for info in view["seats"]:
        s = info["seat"]
        marks = [m for m, on in (("last card!", info["announced"]), ("loses next turn", info["loses_turn"])) if on]
        pressure = f"  pressure {info['pressure']}" if view["pressure_rule"] else ""
        pointer = ">" if s == view["to_act"] else " "
        lines.append(
            f"{pointer} {who(s):<28} {info['cards']:>2} cards  score {info['score']:>4}{pressure}"
            + (f"  ({', '.join(marks)})" if marks else "")
        )
    seen = view["discard"]
    lines.append(f"seen (discard pile, {len(seen)}): {' '.join(seen)}")
    hand = view["hand"]
    lines.append(
        "your hand: "
        + ("(hidden: you name the suit without seeing it)" if hand is None else " ".join(hand) or "(empty)")
    )
    return lines


def legal_moves(game, seat: int) -> list[dict]:
    """``{"text": "play 7H", "card": "7H", "unannounced": False}`` (``true`` for the
    unannounced play), ``{"text": "suit S", "suit": "S"}``, ``{"text": "draw"}``."""
    if game.is_over or game.current_player != seat:
        return []
    moves = []
    for action in game.legal_actions():
        move = {"text": game.action_to_text(action)}
        if action < DRAW:
            move["card"] = card_to_text(action % UNANNOUNCED)
            move["unannounced"] = action >= UNANNOUNCED
        elif action >= SUIT_ACTION:
            move["suit"] = SUITS[action - SUIT_ACTION]
        moves.append(move)
    return moves


def prompt(game, seat: int) -> str:
    if game.is_over or game.current_player != seat:
        return ""
    legal = game.legal_actions()
    phase = game.phase_id
    if phase == BLIND_SUIT:
        return f"You are the dealer: name a suit for the upcard {game.top} without seeing your hand."
    if phase == NAME_SUIT:
        return "Name the suit to play next."
    if legal == [DRAW]:
        return f"You must take the crank: draw {game.crank}." if phase == CRANK else "You cannot play: draw a card."
    if phase == CRANK:
        return f"Add to the crank (count {game.crank}) with an A or a 2."
    again = "Play again (after a 6): " if phase == EXTRA_TURN else "Your turn: "
    return f"{again}play a card of suit {game.suit} or rank {game.top[0]}, or an 8 or 9."


# ------------------------------------------------------------------------ narration
class Narrator:
    """Moves as ``viewer`` may know them (``envs.present.SeatNarrator``): the opening is
    the first upcard; a deal's end (kind ``"deal"``) shows every hand with its points."""

    def __init__(self, viewer: int):
        self.viewer = viewer

    def start(self, game) -> list[dict]:
        return [self._deal_start(game)]

    def before(self, game, seat: int, action: int) -> dict:
        return {
            "seat": seat,
            "action": int(action),
            "text": game.action_to_text(action),
            "deal": game.deal_index,
            "hand": game.hand_bits[self.viewer],
        }

    def after(self, game, token: dict) -> list[dict]:
        seat = token["seat"]
        finished = game.finished_deal if game.deal_over else None
        if finished is not None:
            move, events, hands = finished["last_move"], finished["events"], finished["hands"]
        else:
            move, events, hands = game.last_move, game.events, game.hand_bits
        text = self._move(game, move, events, hands)
        if finished is None and game.deal_index == token["deal"]:
            drawn = game.hand_bits[self.viewer] & ~token["hand"]
            if drawn:
                text += f" (you drew {' '.join(card_to_text(c) for c in bits_to_cards(drawn))})"
        entries = [{"kind": "move", "seat": seat, "action": token["text"], "text": text}]
        if finished is not None:
            entries.append(self._deal_end(game, finished))
            if not game.is_over:
                entries.append(self._deal_start(game))
        return entries

    def _deal_start(self, game) -> dict:
        deals = game.rules.deals
        head = (
            f"deal {game.deal_index + 1}/{len(deals)} (hand size {deals[game.deal_index]}), dealer seat {game.dealer}"
        )
        if game.last_move is None or not game.last_move[3]:  # told after its upcard was played on
            return {"kind": "info", "text": head}
        return {"kind": "info", "text": f"{head}: " + self._move(game, game.last_move, game.events, game.hand_bits)}

    def _deal_end(self, game, deal: dict) -> dict:
        hands, points = deal["hands"], deal["points"]
        if deal["reason"] == "out":
            reason = seats_named(s for s, h in enumerate(hands) if not h) + " went out"
        else:
            reason = DEAL_END_REASONS[deal["reason"]]
        cards = [[card_to_text(c) for c in bits_to_cards(h)] for h in hands]
        text = f"deal {deal['deal_index'] + 1}/{len(game.rules.deals)} is over: {reason}; " + "; ".join(
            f"{seat_name(s, self.viewer)} {' '.join(c) or '(out)'}: {p} point{'' if abs(p) == 1 else 's'}"
            for s, (c, p) in enumerate(zip(cards, points))
        )
        return {
            "kind": "deal",
            "deal": deal["deal_index"] + 1,
            "reason": deal["reason"],
            "text": text,
            "hands": cards,
            "points": list(points),
            "totals": game.scores(),
        }

    def _move(self, game, move, events, hands) -> str:
        """One move in words with what its power did, seats named from the viewer's side."""
        return describe_move(game, move, events, hands, name=lambda seat: seat_name(seat, self.viewer))


# ------------------------------------------------------------------ the web form
def rule_options() -> dict:
    rules: list[dict] = [{"name": "preset", "choices": list(PRESETS), "default": "craits"}]
    rules += [{"name": name, "choices": list(choices), "default": None} for name, choices in CHOICES.items()]
    rules.append({"name": "partnership", "choices": [False, True], "default": False})
    return {
        "rules": rules,
        "presets": PRESETS,
        "deals": {"presets": {k: list(v) for k, v in DEAL_SIZES.items()}, "default": "full"},
    }


if TYPE_CHECKING:  # mypy checks this module against the contract
    from ..present import Presentation
    from . import present as _this

    _checked: Presentation = _this
