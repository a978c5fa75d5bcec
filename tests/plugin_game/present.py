"""Little Tricks for people (``envs.present.Presentation``). It ships no ``web.js``: the web
page shows its table as ``view_lines`` writes it, with the legal moves as buttons. A seat
sees its own hand, the cards played (this trick's and the completed tricks') and the tricks
won; the other hands only by their size."""

from __future__ import annotations

from envs.present import seat_name

from .game import HAND_SIZE, bits_cards
from .spec import SPEC


def _trick_number(game) -> int:
    return min(HAND_SIZE - game.tricks_left + 1, HAND_SIZE)


def _cards(cards) -> str:
    return " ".join(map(str, cards)) or "-"


def render(game) -> str:
    """The table, every hand shown."""
    if game.is_over:
        head = "Little Tricks: over, winners " + ", ".join(map(str, game.winners()))
    else:
        head = f"Little Tricks: trick {_trick_number(game)}/{HAND_SIZE}, seat {game.leader} leads"
    lines = [head]
    for s in range(game.num_players):
        pointer = ">" if s == game.current_player and not game.is_over else " "
        lines.append(f"{pointer} seat {s}: hand {_cards(game.hand(s))}  tricks {game.tricks[s]}")
    lines.append("this trick: " + (", ".join(f"seat {s} played {c}" for s, c in game.trick) or "-"))
    return "\n".join(lines)


def seat_view(game, seat: int) -> dict:
    over = game.is_over
    return {
        "game": SPEC.id,
        "seat": seat,
        "num_players": game.num_players,
        "over": over,
        "to_act": None if over else game.current_player,
        "trick_number": _trick_number(game),
        "tricks_in_game": HAND_SIZE,
        "leader": game.leader,
        "hand": game.hand(seat),
        "trick": [{"seat": s, "card": c} for s, c in game.trick],
        "played": bits_cards(game.played),
        "seats": [{"seat": s, "cards": len(game.hand(s)), "tricks": game.tricks[s]} for s in range(game.num_players)],
        "scores": game.scores(),
        "winners": game.winners() if over else None,
        "lower_wins": False,
    }


def view_lines(view: dict, who) -> list[str]:
    head = "game over" if view["over"] else f"trick {view['trick_number']}/{view['tricks_in_game']}"
    lines = [f"Little Tricks  {head}, seat {view['leader']} leads"]
    for info in view["seats"]:
        pointer = ">" if info["seat"] == view["to_act"] else " "
        lines.append(f"{pointer} {who(info['seat']):<28} {info['cards']} cards  tricks {info['tricks']}")
    lines.append("this trick: " + (", ".join(f"seat {p['seat']} played {p['card']}" for p in view["trick"]) or "-"))
    lines.append("played before: " + _cards(view["played"]))
    lines.append("your hand: " + (_cards(view["hand"]) if view["hand"] else "(empty)"))
    return lines


def legal_moves(game, seat: int) -> list[dict]:
    if game.is_over or game.current_player != seat:
        return []
    return [{"text": game.action_to_text(a), "card": a + 1} for a in game.legal_actions()]


def prompt(game, seat: int) -> str:
    if game.is_over or game.current_player != seat:
        return ""
    if not game.trick:
        return "Lead any card: the highest card of the trick wins it."
    return f"Play any card: {max(c for _, c in game.trick)} is the card to beat."


class Narrator:
    """Every card is played face up: each move as it is, and each trick with its winner."""

    def __init__(self, viewer: int):
        self.viewer = viewer

    def start(self, game) -> list[dict]:
        return [{"kind": "info", "text": f"{HAND_SIZE} cards each; seat {game.leader} leads the first trick"}]

    def before(self, game, seat: int, action: int) -> dict:
        return {
            "seat": seat,
            "text": game.action_to_text(action),
            "card": action + 1,
            "trick": list(game.trick),
            "tricks_left": game.tricks_left,
        }

    def after(self, game, token: dict) -> list[dict]:
        seat = token["seat"]
        entries = [
            {
                "kind": "move",
                "seat": seat,
                "action": token["text"],
                "text": f"{seat_name(seat, self.viewer)} plays {token['card']}",
            }
        ]
        if game.tricks_left < token["tricks_left"]:
            cards = [c for _, c in token["trick"]] + [token["card"]]
            number = HAND_SIZE - token["tricks_left"] + 1
            entries.append(
                {
                    "kind": "round",
                    "text": f"trick {number}: {seat_name(game.leader, self.viewer)} wins it with {max(cards)}",
                }
            )
        return entries


def rule_options() -> dict:
    return {"rules": [], "presets": {}, "deals": None}
