"""Pairs Draft for people (``envs.present.Presentation``): the table as text, the table as
one seat sees it (JSON and terminal lines), the moves in words, and the web form's rules.

- ``render(game)``: the table as text, every hand shown: what is happening in plain words,
  each seat's cards, the last completed round (who played what, who took it, face up or
  face down), this round so far, and what the seat to act must do;
- ``seat_view(game, seat)``: the seat's own cards (picks, pack, hand, discard), what the
  table knows of the others' (how many, face up, face down), this round and the last,
  every number's copies played and those not accounted for;
- ``Narrator(viewer)``: another seat's pick or discard without its number, each completed
  round with who took what.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..present import seat_name
from .game import DECK, DRAFT_PICKS, FORCED_VALUE, NUM_ACTIONS, NUM_PLAYERS, NUM_ROUNDS, score_counts


def _joined(numbers) -> str:
    return " ".join(map(str, numbers))


def _rounds(game) -> int:
    """The rounds of the game, once the rounds have begun: those played and those the hands hold."""
    return game.round_index + max(len(game.hand(s)) for s in range(game.num_players))


# ---------------------------------------------------------------- the whole table
def render(game) -> str:
    """The table as text, every hand shown. The engine keeps only the last round's record
    (``previous_trick``); all text is built here."""
    phase = game.phase
    if phase == "draft":
        stage = f"pick {game.pick_index + 1}/{DRAFT_PICKS}"
    elif phase == "play":
        stage = f"round {game.round_index + 1}/{_rounds(game)}"
    else:
        stage = phase
    header = f"Pairs Draft: {stage}, start player {game.start_player}"
    lines = [header if game.current_player is None else f"{header}, to act: {game.current_player}"]
    if phase == "draft":
        lines.append(
            f"draft, pick {game.pick_index + 1} of {DRAFT_PICKS}: each seat keeps one number from the "
            "pack it holds; when all four have picked, the packs pass left"
        )
    elif phase == "discard":
        lines.append(
            f"discard: each seat puts one of its {DRAFT_PICKS} cards out of the game face down; "
            f"the other {DRAFT_PICKS - 1} are its hand for the rounds"
        )
    for seat in range(NUM_PLAYERS):
        parts = [f"seat {seat}:"]
        if phase == "draft":
            dealt_to = (seat - game.pick_index) % NUM_PLAYERS
            parts.append(
                f"pack [{_joined(game.pack(seat))}] (dealt to seat {dealt_to}), picked [{_joined(game.hand(seat))}]"
            )
        else:
            parts.append(f"hand [{_joined(game.hand(seat))}]")
        if phase in ("play", "over"):
            result = game.score(seat)
            parts.append(
                f"face up [{_joined(game.face_up(seat))}]"
                f" face down [{_joined(game.face_down(seat))}]"
                f" score {result.points}" + (" (instant win)" if result.instant_win else "")
            )
        if game.discarded(seat) is not None:
            parts.append(f"discarded {game.discarded(seat)}")
        lines.append(" ".join(parts))
    lines += _last_round_lines(game)
    trick = game.current_trick()
    if trick:
        lines.append(
            f"this round (led by seat {trick[0].seat}): "
            + ", ".join(
                f"seat {p.seat} played {p.number}" + (" (forced: counts 11)" if p.forced else "") for p in trick
            )
        )
    lines.append(_winners_line(game) if phase == "over" else _table_prompt(game))
    return "\n".join(lines)


def _last_round_lines(game) -> list[str]:
    """The last completed round: a line per card (who played it, where it went), the
    face-down cost, instant wins it brought and what comes next."""
    record = game.previous_trick()
    if not record:
        return []
    values = [FORCED_VALUE if t.forced else t.number for t in record]
    pairs = sorted({v for v in values if values.count(v) > 1})
    names = ", ".join("forced 11s" if v == FORCED_VALUE else f"{v}s" for v in pairs)
    kind = f"two pairs ({names})" if len(pairs) == 2 else f"one pair ({names})" if pairs else "no pair"
    lines = [f"last round ({game.round_index}/{_rounds(game)}, led by seat {record[0].seat}): {kind}"]
    for t, value in zip(record, values):
        card = f"{t.number} (forced: counts 11)" if t.forced else str(t.number)
        if not t.face_up:
            where = f"face down to seat {t.taker}" + (", the highest unpaired card" if t.taker == t.seat else "")
        elif value in pairs:
            partner = next(o.seat for o, v in zip(record, values) if v == value and o is not t)
            where = f"face up, paired with seat {partner}"
        else:
            where = "face up, the lowest card"
        lines.append(f"  seat {t.seat} played {card}: {where}")
    down = sorted(t.number for t in record if not t.face_up)
    if down:  # one taker per round (2.4)
        taker = next(t.taker for t in record if not t.face_up)
        lines.append(f"  seat {taker} takes {_joined(down)} face down: -{len(down)} points")
    else:
        lines.append("  everyone keeps their card face up")
    for seat in range(NUM_PLAYERS):
        # An instant win is news only in the round that brought it: compare with the
        # seat's face-up cards before this round's were added.
        now = game.face_up_counts(seat)
        before = now[:]
        for t in record:
            if t.face_up and t.taker == seat:
                before[t.number - 1] -= 1
        if score_counts(now, 0).instant_win and not score_counts(before, 0).instant_win:
            lines.append(
                f"  instant win: seat {seat} now has {_instant_reason(now)}; it wins when the game ends"
                " (shared with any other instant winner)"
            )
    if game.phase == "over":
        lines.append("  that was the last round: the game is over")
    else:
        lines.append(f"  seat {game.start_player} leads round {game.round_index + 1}")
    return lines


def _table_prompt(game) -> str:
    """What the seat to act must do, in plain words, with the numbers it may choose."""
    seat, legal = game.current_player, game.legal_actions()
    numbers = ", ".join(str(a + 1) for a in legal)
    if game.phase == "draft":
        if game.pick_index == DRAFT_PICKS - 1:
            return f"seat {seat} takes the last card of its pack: {numbers}"
        return f"seat {seat} picks a number from its pack to keep: {numbers}"
    if game.phase == "discard":
        return f"seat {seat} discards one card face down: {numbers}"
    paired = game.paired_numbers()
    if all(a + 1 in paired for a in legal):
        return (
            f"seat {seat} holds only numbers already paired this round, so it must play one;"
            f" it counts 11 for taking cards: {numbers}"
        )
    text = f"seat {seat} plays a number from its hand: {numbers}"
    if paired:
        text += f" ({', '.join(map(str, paired))} paired this round: not playable)"
    return text


def _winners_line(game) -> str:
    winners = game.winners()
    if game.score(winners[0]).instant_win:
        reasons = "; ".join(f"seat {s} has {_instant_reason(game.face_up_counts(s))}" for s in winners)
        return f"winners: {_joined(winners)} (instant win: {reasons})"
    shared = ", shared" if len(winners) > 1 else ""
    return f"winners: {_joined(winners)} (highest score: {game.score(winners[0]).points}{shared})"


def _instant_reason(counts) -> str:
    """Why face-up ``counts`` (index number - 1) are an instant win (2.5)."""
    if all(counts):
        return f"{NUM_ACTIONS} different numbers face up"
    a = max(range(NUM_ACTIONS), key=counts.__getitem__)
    return f"{counts[a]} copies of {a + 1} face up"


# ------------------------------------------------------------------ one seat's view
def seat_view(game, seat: int) -> dict:
    phase, over = game.phase, game.is_over
    players = game.num_players

    def cards(s):  # what the table knows of a hand's size: picks done (draft), 11 (discard)
        if s == seat or phase in ("play", "over"):
            return len(game.hand(s))
        return game.pick_index if phase == "draft" else DRAFT_PICKS

    played = [0] * NUM_ACTIONS  # every card of the completed rounds and of this one: all seen
    for s in range(players):
        for n in game.face_up(s) + game.face_down(s):
            played[n - 1] += 1
    trick = game.current_trick()
    for play in trick:
        played[play.number - 1] += 1
    unseen = [DECK.count(n + 1) - played[n] for n in range(NUM_ACTIONS)]
    own = game.hand(seat) + (game.pack(seat) if phase == "draft" else [])
    if game.discarded(seat) is not None:
        own.append(game.discarded(seat))
    for n in own:
        unseen[n - 1] -= 1
    if phase == "play":
        rounds = _rounds(game)
    else:
        rounds = game.round_index if over else NUM_ROUNDS
    return {
        "game": "pairs_draft",
        "seat": seat,
        "num_players": players,
        "over": over,
        "to_act": game.current_player,
        "phase": phase,
        "pick": min(game.pick_index + 1, DRAFT_PICKS),
        "picks": DRAFT_PICKS,
        "round": min(game.round_index + 1, rounds),
        "rounds": rounds,
        "start_player": game.start_player,
        "hand": game.hand(seat),
        "pack": game.pack(seat) if phase == "draft" else [],
        "discarded": game.discarded(seat),
        "trick": [{"seat": p.seat, "number": p.number, "forced": p.forced} for p in trick],
        "paired": game.paired_numbers(),
        "previous": [
            {"seat": t.seat, "number": t.number, "forced": t.forced, "taker": t.taker, "face_up": t.face_up}
            for t in game.previous_trick()
        ],
        "seats": [
            {
                "seat": s,
                "cards": cards(s),
                "face_up": game.face_up(s),
                "face_down": game.face_down(s),
                "score": game.score(s).points,
                "instant_win": game.score(s).instant_win,
            }
            for s in range(players)
        ],
        "played": played,
        "unseen": unseen,
        "scores": game.scores(),
        "winners": game.winners() if over else None,
        "lower_wins": False,
    }


def view_lines(view: dict, who) -> list[str]:
    phase = view["phase"]
    stage = {
        "draft": f"draft, pick {view['pick']}/{view['picks']}",
        "discard": "discard",
        "play": f"round {view['round']}/{view['rounds']}",
        "over": "game over",
    }[phase]
    lines = [f"Pairs Draft  {stage}, start player seat {view['start_player']}"]
    for info in view["seats"]:
        s = info["seat"]
        pointer = ">" if s == view["to_act"] else " "
        up = " ".join(map(str, info["face_up"])) or "-"
        lines.append(
            f"{pointer} {who(s):<28} {info['cards']:>2} cards  face up [{up}]  face down "
            f"{len(info['face_down'])}  score {info['score']}" + ("  INSTANT WIN" if info["instant_win"] else "")
        )
    if view["previous"]:
        lines.append(
            "last round: "
            + ", ".join(
                f"seat {t['seat']} {t['number']}{'*' if t['forced'] else ''}"
                + (" kept" if t["face_up"] and t["taker"] == t["seat"] else f" to seat {t['taker']} face down")
                for t in view["previous"]
            )
        )
    if view["trick"]:
        lines.append(
            "this round: "
            + ", ".join(
                f"seat {p['seat']} played {p['number']}" + (" (forced: 11)" if p["forced"] else "")
                for p in view["trick"]
            )
        )
    if view["paired"]:
        lines.append("paired this round: " + " ".join(map(str, view["paired"])))
    lines.append(
        "not accounted for (number x copies; deck less your cards and all played): "
        + "  ".join(f"{n + 1}x{c}" for n, c in enumerate(view["unseen"]) if c)
    )
    if phase == "draft":
        lines.append("your pack: " + " ".join(map(str, view["pack"])))
        lines.append("your picks: " + (" ".join(map(str, view["hand"])) or "(none yet)"))
    else:
        lines.append(
            "your hand: "
            + (" ".join(map(str, view["hand"])) or "(empty)")
            + (f"  (discarded {view['discarded']})" if view["discarded"] is not None else "")
        )
    return lines


def legal_moves(game, seat: int) -> list[dict]:
    """``{"text": "pick 7", "card": 7, "zone": "pack"}`` (``"hand"`` outside the draft)."""
    if game.is_over or game.current_player != seat:
        return []
    zone = "pack" if game.phase == "draft" else "hand"
    return [{"text": game.action_to_text(action), "card": action + 1, "zone": zone} for action in game.legal_actions()]


def prompt(game, seat: int) -> str:
    if game.is_over or game.current_player != seat:
        return ""
    legal = game.legal_actions()
    if game.phase == "draft":
        last = game.pick_index == DRAFT_PICKS - 1
        return (
            "Take the last card of your pack."
            if last
            else f"Pick {game.pick_index + 1} of {DRAFT_PICKS}: keep a number from your pack; the rest passes left."
        )
    if game.phase == "discard":
        return f"Discard one of your {DRAFT_PICKS} cards face down; the other {DRAFT_PICKS - 1} are your hand."
    paired = game.paired_numbers()
    if all(a + 1 in paired for a in legal):
        return "You hold only numbers already paired this round: play one; it counts 11."
    return "Play a number from your hand" + (
        f" ({', '.join(map(str, paired))} paired: not playable)." if paired else "."
    )


# ------------------------------------------------------------------------ narration
class Narrator:
    """Moves as ``viewer`` may know them (``envs.present.SeatNarrator``): another seat's
    pick or discard is told as done, without its number; each completed round (kind
    ``"round"``) with who took what."""

    def __init__(self, viewer: int):
        self.viewer = viewer

    def start(self, game) -> list[dict]:
        return [
            {
                "kind": "info",
                "text": f"the draft begins: seat {game.start_player} deals; "
                f"each seat keeps one number from its pack, then the packs pass left",
            }
        ]

    def before(self, game, seat: int, action: int) -> dict:
        return {
            "seat": seat,
            "action": int(action),
            "text": game.action_to_text(action),
            "phase": game.phase,
            "pick": game.pick_index,
            "round": game.round_index,
            "forced": game.phase == "play" and action + 1 in game.paired_numbers(),
        }

    def after(self, game, token: dict) -> list[dict]:
        seat, phase, mine = token["seat"], token["phase"], token["seat"] == self.viewer
        number = token["action"] + 1
        name = seat_name(seat, self.viewer)
        if phase == "draft":
            text = f"{name} picks {number}" if mine else f"{name} picks a card"
        elif phase == "discard":
            text = f"{name} discards {number} face down" if mine else f"{name} discards a card face down"
        else:
            text = f"{name} plays {number}" + (" (forced: counts 11)" if token["forced"] else "")
        # A pick or a discard is shown to the others only as done: no action text for them.
        entries = [
            {"kind": "move", "seat": seat, "action": token["text"] if mine or phase == "play" else None, "text": text}
        ]
        if phase == "draft" and game.pick_index > token["pick"]:
            if game.phase == "discard":
                entries.append({"kind": "info", "text": "the draft is over: each seat discards one card face down"})
            else:
                entries.append({"kind": "info", "text": f"pick {token['pick'] + 1} done: the packs pass left"})
        elif phase == "discard" and game.phase == "play":
            entries.append({"kind": "info", "text": f"the rounds begin: seat {game.start_player} leads round 1"})
        elif phase == "play" and game.round_index > token["round"]:
            entries.append(self._round(game, token["round"]))
        return entries

    def _round(self, game, index: int) -> dict:
        record = game.previous_trick()
        values = [FORCED_VALUE if t.forced else t.number for t in record]
        pairs = sorted({v for v in values if values.count(v) > 1})
        kind = (
            (
                ("two pairs" if len(pairs) == 2 else "one pair")
                + " ("
                + ", ".join("forced 11s" if v == FORCED_VALUE else f"{v}s" for v in pairs)
                + ")"
            )
            if pairs
            else "no pair"
        )
        down = sorted(t.number for t in record if not t.face_up)
        if down:
            taker = next(t.taker for t in record if not t.face_up)
            taken = f"{seat_name(taker, self.viewer)} takes {' '.join(map(str, down))} face down (-{len(down)})"
        else:
            taken = "everyone keeps their card face up"
        kept = [t for t in record if t.face_up]
        text = f"round {index + 1}: {kind}; {taken}" + (
            "; kept face up: " + ", ".join(f"seat {t.seat} {t.number}" for t in kept) if kept and down else ""
        )
        if game.is_over:
            text += "; that was the last round"
        return {
            "kind": "round",
            "round": index + 1,
            "text": text,
            "cards": [
                {"seat": t.seat, "number": t.number, "forced": t.forced, "taker": t.taker, "face_up": t.face_up}
                for t in record
            ],
        }


# ------------------------------------------------------------------ the web form
def rule_options() -> dict:
    return {"rules": [], "presets": {}, "deals": None}


if TYPE_CHECKING:  # mypy checks this module against the contract
    from ..present import Presentation
    from . import present as _this

    _checked: Presentation = _this
