"""A person at the table: what one seat may see, the moves told as that seat sees them, and
a terminal agent (the ``human`` agent spec of ``training.play``).

Everything here is built from the seat's point of view, never from ``game.render()``
(which shows every hand):

- ``seat_view(game, seat)``: the table as ``seat`` sees it, JSON-ready: its own cards
  (Craits: not while the dealer names a suit for an upcard 8 or 9 unseen), the public table
  (top card, suit, crank, hand sizes, face-up and face-down cards, this round, scores), the
  cards seen and the result once the game is over. The web app (``training.web``) sends it
  as it is; ``view_text`` writes it for the terminal.
- ``Narrator(viewer)``: every move as ``viewer`` may know it: a Craits move with what its
  power did (draw counts, not the cards drawn, except the viewer's own), the end of a deal
  with every hand (shown to all then); in Pairs Draft another seat's pick or discard without
  its number, each completed round with who took what.
- ``HumanAgent``: prompts in the terminal with the hand, the table and the legal moves;
  reads a move as its text (``play 7H``, ``pick 7``) or the part after the verb (``7H``,
  ``S``, ``7``); bad input prompts again; end of input, Ctrl-C or ``quit`` ends the game
  cleanly (``HumanQuit``, a ``SystemExit``: no traceback).
"""
from __future__ import annotations

import sys

from envs.cards import SUITS, bits_to_cards, card_to_text
from envs.craits.game import BLIND_SUIT, CRANK, DRAW, EXTRA_TURN, NAME_SUIT, SUIT_ACTION, UNANNOUNCED, CraitsGame
from envs.pairs_draft.game import DECK, DRAFT_PICKS, FORCED_VALUE, NUM_ACTIONS, NUM_ROUNDS, PairsDraftGame

SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
DEAL_END_REASONS = {"stalemate": "stalemate: nobody could draw or play",
                    "repetition": "repetition: the same position for the third time",
                    "cut": "cut after 10,000 actions"}


def game_kind(game) -> str:
    if isinstance(game, CraitsGame):
        return "craits"
    if isinstance(game, PairsDraftGame):
        return "pairs_draft"
    raise TypeError(f"no seat view for {type(game).__name__}")


def seat_name(seat: int, viewer: int | None) -> str:
    return f"seat {seat} (you)" if seat == viewer else f"seat {seat}"


def _names(seats) -> str:
    seats = list(seats)
    return ("seat " if len(seats) == 1 else "seats ") + ", ".join(map(str, seats))


# --------------------------------------------------------------------------- views
def seat_view(game, seat: int) -> dict:
    """The table as ``seat`` sees it (JSON-ready; see the module docstring)."""
    return _craits_view(game, seat) if game_kind(game) == "craits" else _pairs_view(game, seat)


def legal_moves(game, seat: int) -> list[dict]:
    """The legal moves of ``seat`` (none unless it is to act) as text, each with the card it
    plays where it plays one: ``{"text": "play 7H", "card": "7H"}`` (Craits; ``"unannounced":
    true`` for the unannounced play), ``{"text": "pick 7", "card": 7, "zone": "pack"}``."""
    if game.is_over or game.current_player != seat:
        return []
    moves = []
    if game_kind(game) == "craits":
        for action in game.legal_actions():
            move = {"text": game.action_to_text(action)}
            if action < DRAW:
                move["card"] = card_to_text(action % UNANNOUNCED)
                move["unannounced"] = action >= UNANNOUNCED
            elif action >= SUIT_ACTION:
                move["suit"] = SUITS[action - SUIT_ACTION]
            moves.append(move)
    else:
        zone = "pack" if game.phase == "draft" else "hand"
        for action in game.legal_actions():
            moves.append({"text": game.action_to_text(action), "card": action + 1, "zone": zone})
    return moves


def prompt(game, seat: int) -> str:
    """What ``seat`` must decide now, in plain words ('' when it is not to act)."""
    if game.is_over or game.current_player != seat:
        return ""
    legal = game.legal_actions()
    if game_kind(game) == "craits":
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
    if game.phase == "draft":
        last = game.pick_index == DRAFT_PICKS - 1
        return ("Take the last card of your pack." if last else
                f"Pick {game.pick_index + 1} of {DRAFT_PICKS}: keep a number from your pack; the rest passes left.")
    if game.phase == "discard":
        return f"Discard one of your {DRAFT_PICKS} cards face down; the other {DRAFT_PICKS - 1} are your hand."
    paired = game.paired_numbers()
    if all(a + 1 in paired for a in legal):
        return "You hold only numbers already paired this round: play one; it counts 11."
    return "Play a number from your hand" + (f" ({', '.join(map(str, paired))} paired: not playable)."
                                             if paired else ".")


def _craits_view(game: CraitsGame, seat: int) -> dict:
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
        "seats": [{"seat": s, "cards": game.hand_size(s), "announced": game.announced[s],
                   "loses_turn": game.lose_turn[s], "score": game.totals[s], "pressure": game.pressures[s]}
                  for s in range(game.num_players)],
        "pressure_rule": rules.empty_stock == "pressure",
        "partnership": rules.partnership,
        "sides": game.sides(),
        "scores": game.scores(),
        "winners": game.winners() if over else None,
        "lower_wins": True,
    }


def _pairs_view(game: PairsDraftGame, seat: int) -> dict:
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
        rounds = game.round_index + max(len(game.hand(s)) for s in range(players))
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
        "previous": [{"seat": t.seat, "number": t.number, "forced": t.forced, "taker": t.taker, "face_up": t.face_up}
                     for t in game.previous_trick()],
        "seats": [{"seat": s, "cards": cards(s), "face_up": game.face_up(s), "face_down": game.face_down(s),
                   "score": game.score(s).points, "instant_win": game.score(s).instant_win}
                  for s in range(players)],
        "played": played,
        "unseen": unseen,
        "scores": game.scores(),
        "winners": game.winners() if over else None,
        "lower_wins": False,
    }


def view_text(view: dict, names=None) -> str:
    """A ``seat_view`` as text for the terminal; ``names`` (one per seat) label the seats."""
    seat = view["seat"]

    def who(s):
        label = seat_name(s, seat)
        return f"{label} [{names[s]}]" if names and s != seat else label

    lines = []
    if view["game"] == "craits":
        lines.append(f"Craits  deal {view['deal']}/{view['deals']} (hand size {view['hand_size']}), dealer seat "
                     f"{view['dealer']}, play goes {view['direction']}")
        lines.append(f"top {view['top']}  suit {view['suit']} ({SUIT_NAMES[view['suit']]})  stock {view['stock']}"
                     + (f"  crank {view['crank']}" if view["crank"] else ""))
        for info in view["seats"]:
            s = info["seat"]
            marks = [m for m, on in (("last card!", info["announced"]), ("loses next turn", info["loses_turn"])) if on]
            pressure = f"  pressure {info['pressure']}" if view["pressure_rule"] else ""
            pointer = ">" if s == view["to_act"] else " "
            lines.append(f"{pointer} {who(s):<28} {info['cards']:>2} cards  score {info['score']:>4}{pressure}"
                         + (f"  ({', '.join(marks)})" if marks else ""))
        seen = view["discard"]
        lines.append(f"seen (discard pile, {len(seen)}): {' '.join(seen)}")
        hand = view["hand"]
        lines.append("your hand: " + ("(hidden: you name the suit without seeing it)" if hand is None
                                      else " ".join(hand) or "(empty)"))
    else:
        phase = view["phase"]
        stage = {"draft": f"draft, pick {view['pick']}/{view['picks']}", "discard": "discard",
                 "play": f"round {view['round']}/{view['rounds']}", "over": "game over"}[phase]
        lines.append(f"Pairs Draft  {stage}, start player seat {view['start_player']}")
        for info in view["seats"]:
            s = info["seat"]
            pointer = ">" if s == view["to_act"] else " "
            up = " ".join(map(str, info["face_up"])) or "-"
            lines.append(f"{pointer} {who(s):<28} {info['cards']:>2} cards  face up [{up}]  face down "
                         f"{len(info['face_down'])}  score {info['score']}"
                         + ("  INSTANT WIN" if info["instant_win"] else ""))
        if view["previous"]:
            lines.append("last round: " + ", ".join(
                f"seat {t['seat']} {t['number']}{'*' if t['forced'] else ''}"
                + (" kept" if t["face_up"] and t["taker"] == t["seat"] else f" to seat {t['taker']} face down")
                for t in view["previous"]))
        if view["trick"]:
            lines.append("this round: " + ", ".join(f"seat {p['seat']} played {p['number']}"
                                                    + (" (forced: 11)" if p["forced"] else "") for p in view["trick"]))
        if view["paired"]:
            lines.append("paired this round: " + " ".join(map(str, view["paired"])))
        lines.append("not accounted for (number x copies; deck less your cards and all played): " + "  ".join(
            f"{n + 1}x{c}" for n, c in enumerate(view["unseen"]) if c))
        if phase == "draft":
            lines.append("your pack: " + " ".join(map(str, view["pack"])))
            lines.append("your picks: " + (" ".join(map(str, view["hand"])) or "(none yet)"))
        else:
            lines.append("your hand: " + (" ".join(map(str, view["hand"])) or "(empty)")
                         + (f"  (discarded {view['discarded']})" if view["discarded"] is not None else ""))
    return "\n".join(lines)


def result_text(view: dict, names=None) -> str:
    """The final score sheet of a finished game's view."""
    better = "lower" if view["lower_wins"] else "higher"
    lines = [f"final scores ({better} is better):"]
    for s, score in enumerate(view["scores"]):
        label = seat_name(s, view["seat"]) + (f" [{names[s]}]" if names and s != view["seat"] else "")
        lines.append(f"  {label:<30} {score:>5}" + ("  wins" if view["winners"] and s in view["winners"] else ""))
    return "\n".join(lines)


# ----------------------------------------------------------------------- narration
class Narrator:
    """Moves as ``viewer`` may know them. ``start(game)`` tells the opening (the first
    upcard); around each move, ``token = before(game, seat, action)`` (before it is
    applied) and ``after(game, token)`` give the entries to show: dicts with ``kind``
    (``move``, ``deal``, ``round``, ``info``), ``text`` and, for a move, ``seat``."""

    def __init__(self, viewer: int):
        self.viewer = viewer

    def start(self, game) -> list[dict]:
        if game_kind(game) == "craits":
            return [self._craits_deal_start(game)]
        return [{"kind": "info", "text": f"the draft begins: seat {game.start_player} deals; "
                                        f"each seat keeps one number from its pack, then the packs pass left"}]

    def before(self, game, seat: int, action: int) -> dict:
        token = {"seat": seat, "action": int(action), "text": game.action_to_text(action)}
        if game_kind(game) == "craits":
            token["deal"] = game.deal_index
            token["hand"] = game.hand_bits[self.viewer]
        else:
            token.update(phase=game.phase, pick=game.pick_index, round=game.round_index,
                         forced=game.phase == "play" and action + 1 in game.paired_numbers())
        return token

    def after(self, game, token: dict) -> list[dict]:
        return self._craits_after(game, token) if game_kind(game) == "craits" else self._pairs_after(game, token)

    # Craits ----------------------------------------------------------------------
    def _craits_after(self, game: CraitsGame, token: dict) -> list[dict]:
        seat = token["seat"]
        finished = game.finished_deal if game.deal_over else None
        if finished is not None:
            move, events, hands = finished["last_move"], finished["events"], finished["hands"]
        else:
            move, events, hands = game.last_move, game.events, game.hand_bits
        text = self._craits_move(game, move, events, hands)
        if finished is None and game.deal_index == token["deal"]:
            drawn = game.hand_bits[self.viewer] & ~token["hand"]
            if drawn:
                text += f" (you drew {' '.join(card_to_text(c) for c in bits_to_cards(drawn))})"
        entries = [{"kind": "move", "seat": seat, "action": token["text"], "text": text}]
        if finished is not None:
            entries.append(self._craits_deal_end(game, finished))
            if not game.is_over:
                entries.append(self._craits_deal_start(game))
        return entries

    def _craits_deal_start(self, game: CraitsGame) -> dict:
        deals = game.rules.deals
        head = (f"deal {game.deal_index + 1}/{len(deals)} (hand size {deals[game.deal_index]}), dealer seat "
                f"{game.dealer}")
        if game.last_move is None or not game.last_move[3]:  # told after its upcard was played on
            return {"kind": "info", "text": head}
        return {"kind": "info", "text": f"{head}: " + self._craits_move(game, game.last_move, game.events,
                                                                        game.hand_bits)}

    def _craits_deal_end(self, game: CraitsGame, deal: dict) -> dict:
        hands, points = deal["hands"], deal["points"]
        if deal["reason"] == "out":
            reason = _names(s for s, h in enumerate(hands) if not h) + " went out"
        else:
            reason = DEAL_END_REASONS[deal["reason"]]
        cards = [[card_to_text(c) for c in bits_to_cards(h)] for h in hands]
        text = f"deal {deal['deal_index'] + 1}/{len(game.rules.deals)} is over: {reason}; " + "; ".join(
            f"{seat_name(s, self.viewer)} {' '.join(c) or '(out)'}: {p} point{'' if abs(p) == 1 else 's'}"
            for s, (c, p) in enumerate(zip(cards, points)))
        return {"kind": "deal", "deal": deal["deal_index"] + 1, "reason": deal["reason"], "text": text,
                "hands": cards, "points": list(points), "totals": game.scores()}

    def _craits_move(self, game: CraitsGame, move, events, hands) -> str:
        """One move in words with what its power did: the engine's own text, seats named from
        the viewer's side."""
        return game.describe_move(move, events, hands, name=lambda seat: seat_name(seat, self.viewer))

    # Pairs Draft -------------------------------------------------------------------
    def _pairs_after(self, game: PairsDraftGame, token: dict) -> list[dict]:
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
        entries = [{"kind": "move", "seat": seat, "action": token["text"] if mine or phase == "play" else None,
                    "text": text}]
        if phase == "draft" and game.pick_index > token["pick"]:
            if game.phase == "discard":
                entries.append({"kind": "info", "text": "the draft is over: each seat discards one card face down"})
            else:
                entries.append({"kind": "info", "text": f"pick {token['pick'] + 1} done: the packs pass left"})
        elif phase == "discard" and game.phase == "play":
            entries.append({"kind": "info", "text": f"the rounds begin: seat {game.start_player} leads round 1"})
        elif phase == "play" and game.round_index > token["round"]:
            entries.append(self._pairs_round(game, token["round"]))
        return entries

    def _pairs_round(self, game: PairsDraftGame, index: int) -> dict:
        record = game.previous_trick()
        values = [FORCED_VALUE if t.forced else t.number for t in record]
        pairs = sorted({v for v in values if values.count(v) > 1})
        kind = (("two pairs" if len(pairs) == 2 else "one pair") + " (" + ", ".join(
            "forced 11s" if v == FORCED_VALUE else f"{v}s" for v in pairs) + ")") if pairs else "no pair"
        down = sorted(t.number for t in record if not t.face_up)
        if down:
            taker = next(t.taker for t in record if not t.face_up)
            taken = f"{seat_name(taker, self.viewer)} takes {' '.join(map(str, down))} face down (-{len(down)})"
        else:
            taken = "everyone keeps their card face up"
        kept = [t for t in record if t.face_up]
        text = f"round {index + 1}: {kind}; {taken}" + (
            "; kept face up: " + ", ".join(f"seat {t.seat} {t.number}" for t in kept) if kept and down else "")
        if game.is_over:
            text += "; that was the last round"
        return {"kind": "round", "round": index + 1, "text": text,
                "cards": [{"seat": t.seat, "number": t.number, "forced": t.forced, "taker": t.taker,
                           "face_up": t.face_up} for t in record]}


# --------------------------------------------------------------------- the terminal
class HumanQuit(SystemExit):
    """The person ended the game (end of input, Ctrl-C, ``quit``). A ``SystemExit`` with
    status 130: uncaught, it ends the program without a traceback."""

    def __init__(self, message: str = "game abandoned"):
        super().__init__(130)
        self.message = message


HELP = ("Type a move as listed (e.g. 'play 7H', 'draw', 'suit S', 'pick 7') or just its card or number "
        "('7H', 'S', '7'). 'table' shows the table again, 'moves' the legal moves, 'quit' ends the game.")


class HumanAgent:
    """A person in the terminal. ``act`` shows the seat's view of the table (the engine of
    the env it is bound to, as ``seat_view`` sees it) and the legal moves, and reads one.

    Bind it to the AEC env it plays in and its seat: ``HumanAgent(raw_env, seat)`` or
    ``HumanAgent().bind(raw_env, seat, names)``; without a seat it takes the seat that
    first asks it to act. Pass ``on_move`` to ``play_game`` to have every move told as this
    seat sees it (from the start when the seat is bound, else from its first turn), and
    call ``finish()`` after the game for the last moves and the score sheet."""

    name = "human"

    def __init__(self, raw_env=None, seat: int | None = None, names=None, input=input, output=None):
        self.raw, self.seat, self.names = raw_env, seat, names
        self._input = input
        self._output = output
        self.reset()

    def bind(self, raw_env, seat: int | None = None, names=None) -> "HumanAgent":
        self.raw, self.seat = raw_env, seat
        if names is not None:
            self.names = list(names)
        return self

    def reset(self) -> None:
        self._narrator = None
        self._pending = None
        self._game = None

    # -- output --------------------------------------------------------------------
    def _print(self, text: str = "") -> None:
        print(text, file=self._output or sys.stdout, flush=True)

    def _narrate(self, game) -> None:
        """Print what happened since the last call: the pending move (now applied) first."""
        if self._narrator is None or self._game is not game:
            self._narrator, self._game = Narrator(self.seat), game
            for entry in self._narrator.start(game):
                self._print(entry["text"])
        if self._pending is not None:
            for entry in self._narrator.after(game, self._pending):
                self._print(self._line(entry))
            self._pending = None

    def _line(self, entry: dict) -> str:
        seat = entry.get("seat")
        if entry["kind"] == "move" and self.names and seat is not None and seat != self._narrator.viewer:
            return f"{entry['text']}  [{self.names[seat]}]"
        return entry["text"]

    def on_move(self, raw_env, seat: int, action) -> None:
        """``play_game``'s hook (called before each move is made): tells the moves as this
        seat sees them."""
        if self.raw is None:
            self.raw = raw_env
        if self.seat is None:  # not bound to a seat: told from its first turn on
            return
        game = raw_env.game
        self._narrate(game)
        self._pending = self._narrator.before(game, seat, action)

    def finish(self) -> None:
        """After the game: the moves not told yet and the score sheet."""
        if self.raw is None or self.raw.game is None or self.seat is None:
            return
        game = self.raw.game
        self._narrate(game)
        if game.is_over:
            self._print("\n" + result_text(seat_view(game, self.seat), self.names))

    # -- input ---------------------------------------------------------------------
    def act(self, observation, action_mask) -> int:
        if self.raw is None:
            raise RuntimeError("HumanAgent is not bound to an env: HumanAgent(raw_env) or .bind(raw_env, seat)")
        game = self.raw.game
        if self.seat is None:  # not bound to a seat: it plays the seat that first asks it
            self.seat = self.raw.agent_name_mapping[self.raw.agent_selection]
        seat = self.seat
        self._narrate(game)
        legal = [int(a) for a in range(len(action_mask)) if action_mask[a]]
        self._show(game, seat, legal)
        while True:
            try:
                line = self._input("your move> ")
            except (EOFError, KeyboardInterrupt):
                self._print("\ngame abandoned")
                raise HumanQuit() from None
            if line is None:  # an input function that ran dry
                self._print("\ngame abandoned")
                raise HumanQuit()
            command = " ".join(str(line).lower().split())
            if command in ("quit", "exit", "q"):
                self._print("game abandoned")
                raise HumanQuit()
            if command in ("?", "help", "h"):
                self._print(HELP)
            elif command in ("table", "t"):
                self._show(game, seat, legal)
            elif command in ("moves", "m"):
                self._print(self._moves(game, legal))
            elif command:
                action = self.parse(game, command, legal)
                if action is not None:
                    return action
                self._print(f"{line.strip()!r} is not a legal move here. {self._moves(game, legal)}  ('?' for help)")

    def _show(self, game, seat: int, legal) -> None:
        self._print("")
        self._print(view_text(seat_view(game, seat), self.names))
        self._print(prompt(game, seat) if game.current_player == seat else "")
        self._print(self._moves(game, legal))

    @staticmethod
    def _moves(game, legal) -> str:
        return "legal moves: " + ", ".join(game.action_to_text(a) for a in legal)

    @staticmethod
    def parse(game, text: str, legal) -> int | None:
        """The legal action ``text`` names, or None: the move's text (any case), or the part
        after its verb ('7H', '7H unannounced', 'S', '7')."""
        candidates = [text] + [f"{verb} {text}" for verb in
                               dict.fromkeys(game.action_to_text(a).split()[0] for a in legal)]
        for candidate in candidates:
            try:
                action = game.text_to_action(candidate)
            except (ValueError, IndexError):
                continue
            if action in legal:
                return action
        return None


def narrating_agent(agents) -> HumanAgent | None:
    """The first ``HumanAgent`` among ``agents`` (its ``on_move`` tells the moves), or None."""
    return next((a for a in agents if isinstance(a, HumanAgent)), None)
