"""The bot protocol's Pairs Draft table (``Table``) and events (``Reporter``); the
protocol's machinery is ``envs/protocol.py``, the server ``training/frontends/protocol.py``, the
messages ``docs/bot-protocol.md``.

Cards are numbers 1 to 10. Events: ``deal`` (the starting player and this seat's first
pack), ``move`` (a seat's move; another seat's pick or discard without its number: it is
secret), ``pack`` (the pack this seat receives after each pick) and ``check``. The table is
a ``PairsDraftGame`` whose other packs, hands and set-aside cards are placeholders,
exchanged after this seat receives a pack and before another seat plays a number.

The observation needs the seat's memory of the draft: the table keeps a ``DraftMemory``
(``view.DraftMemory``) of the packs the seat saw, which the seat's view carries and the
env is given before it encodes.
"""

from __future__ import annotations

from ..protocol import EventTable, ProtocolError, fields, integer, json_list, quoted
from . import view as pairs_view
from .game import DECK_COUNTS, DRAFT_PICKS, NUM_ACTIONS, NUM_PLAYERS, NUM_ROUNDS, VERBS, PairsDraftGame, number_counts


def _numbers(value, what: str) -> list[int]:
    """Pairs Draft cards: numbers 1-10 -> counts per number (index number - 1)."""
    counts = [0] * NUM_ACTIONS
    for n in json_list(value, what):
        if type(n) is not int or not 1 <= n <= NUM_ACTIONS:
            raise ProtocolError(f"{what}: a Pairs Draft card is a number 1 to 10, not {quoted(n)}")
        counts[n - 1] += 1
    for a, (count, deck) in enumerate(zip(counts, DECK_COUNTS)):
        if count > deck:
            raise ProtocolError(f"{what} holds {count} cards {a + 1}: the deck has {deck}")
    return counts


def _listed(counts) -> list[int]:
    return [a + 1 for a in range(NUM_ACTIONS) for _ in range(counts[a])]


def _first_legal(game, rng) -> int:
    return game.legal_actions()[0]


class Table(EventTable[PairsDraftGame]):
    """One seat's Pairs Draft table, rebuilt from protocol events (see the module docstring)."""

    GAME = "Pairs Draft"
    EVENTS = {"deal": "_deal", "pack": "_pack", "move": "_move", "check": "_check"}

    def __init__(self, seat: int):
        self.seat = seat
        self.n = NUM_PLAYERS
        self.game = None
        self.expect = "deal"  # deal | move | pack | over
        self.memory = pairs_view.DraftMemory()
        self.passed: list[list[int]] = []  # the pack as this seat passed it, at each pick

    @classmethod
    def from_env(cls, raw, seat: int) -> Table:
        return cls(seat)

    def _deal(self, ev: dict) -> None:
        fields(ev, "a deal event", ("event", "start_player", "pack"))
        if self.expect != "deal":
            raise ProtocolError(self.not_now("the deal"))
        start = integer(ev["start_player"], "start_player", 0, NUM_PLAYERS - 1)
        pack = _numbers(ev["pack"], "pack")
        if sum(pack) != DRAFT_PICKS:
            raise ProtocolError(f"the first pack holds {DRAFT_PICKS} cards, this one {sum(pack)}")
        rest = _listed([d - p for d, p in zip(DECK_COUNTS, pack)])
        packs = []
        for s in range(NUM_PLAYERS):
            if s == self.seat:
                packs.append(pack)
            else:
                packs.append(number_counts(rest[:DRAFT_PICKS]))
                del rest[:DRAFT_PICKS]
        g = PairsDraftGame.__new__(PairsDraftGame)
        g._setup(
            "draft", start, [[0] * NUM_ACTIONS for _ in range(NUM_PLAYERS)], packs, number_counts(rest), NUM_ROUNDS
        )
        self.game = g
        self.expect = "move"

    def _pack(self, ev: dict) -> None:
        fields(ev, "a pack event", ("event", "pack"))
        pack = _numbers(ev["pack"], "pack")
        if self.expect != "pack":
            raise ProtocolError(self.not_now("a pack"))
        g, me = self.engine, self.seat
        p = g.pick_index
        if sum(pack) != DRAFT_PICKS - p:
            raise ProtocolError(f"the pack of pick {p + 1} holds {DRAFT_PICKS - p} cards, this one {sum(pack)}")
        if p >= NUM_PLAYERS:  # the pack this seat passed four picks ago comes back, less three picks
            limit, source = self.passed[p - NUM_PLAYERS], f"the pack you passed at pick {p - NUM_PLAYERS + 1}"
        else:  # a pack never seen: none of the cards in your hand or the packs you passed
            limit = [
                d - h - sum(q[a] for q in self.passed) for a, (d, h) in enumerate(zip(DECK_COUNTS, g.hand_counts(me)))
            ]
            source = "the cards not in your hand or in the packs you passed"
        for a in range(NUM_ACTIONS):
            if pack[a] > limit[a]:
                raise ProtocolError(
                    f"the pack of pick {p + 1} can't hold {pack[a]} × {a + 1}: it comes from "
                    f"{source}, which {'hold' if p < NUM_PLAYERS else 'held'} {limit[a]}"
                )
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
        self.engine._legal = None

    def _move(self, ev: dict) -> None:
        fields(ev, "a move event", ("event", "seat", "move"))
        seat = integer(ev["seat"], "seat", 0, NUM_PLAYERS - 1)
        text = ev["move"]
        if not isinstance(text, str):
            raise ProtocolError(f'a move is text such as "play 7", not {quoted(text)}')
        if self.expect != "move":
            raise ProtocolError(self.not_now("a move"))
        g, me = self.engine, self.seat
        phase = g.phase
        verb = VERBS[phase]
        words = text.lower().split()
        secret = phase in ("draft", "discard") and seat != me
        if not words or words[0] != verb or len(words) > 2:
            form = f"'{verb}'" if secret else f"'{verb} <number>'"
            raise ProtocolError(f"{quoted(text)} is no move of seat {seat} in the {phase}: write {form}")
        if secret:
            if len(words) == 2:
                raise ProtocolError(f"seat {seat}'s {verb} is secret to you: report it as {verb!r}, without the number")
        elif len(words) != 2 or not words[1].isdecimal() or not 1 <= int(words[1]) <= NUM_ACTIONS:
            raise ProtocolError(f"{quoted(text)}: write '{verb} <number>', a number 1 to 10")
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
                    raise ProtocolError(f"your move {quoted(text)} is not legal: {self.why_illegal(action)}")
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
        g, me = self.engine, self.seat
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
                        raise ProtocolError(
                            f"seat {actor} can't play {n}: {n} is paired this round, so it may only "
                            f"be played from a hand of paired numbers, and too few cards you haven't "
                            f"seen are"
                        )
        g._legal = None
        if action not in g.legal_actions():
            raise ProtocolError(f"seat {actor} can't play {n} now")

    def _check_known_picks(self) -> None:
        """The cards this seat knows the others picked (from packs it saw again) and haven't
        played yet must still fit in their hands and discards."""
        if not self.memory.complete():
            return
        g, me = self.engine, self.seat
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
            raise ProtocolError(
                f"the other seats hold {room} cards in hands and discards, but {still} cards you saw "
                "them pick are still unplayed"
            )

    def not_now(self, what: str) -> str:
        if self.expect == "deal":
            return f'{what} can\'t come now: the server waits for the deal (a "deal" event)'
        if self.expect == "pack":
            return (
                f"{what} can't come now: the packs have passed; send the pack you receive for pick "
                f'{self.engine.pick_index + 1} (a "pack" event)'
            )
        if self.expect == "over":
            return f'{what} can\'t come now: the game is over (send "stop")'
        g = self.engine
        return f"{what} can't come now: seat {g.current_player} is to {VERBS[g.phase]}"

    def why_illegal(self, action: int) -> str:
        g = self.engine
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
        return {
            "to_act": self.to_act(),
            "phase": phase,
            "start_player": g.start_player,
            "picks_done": g.pick_index,
            "rounds_done": g.round_index,
            "hand_sizes": sizes,
            "face_up": [g.face_up(s) for s in range(NUM_PLAYERS)],
            "face_down": [g.face_down(s) for s in range(NUM_PLAYERS)],
            "totals": g.scores(),
        }

    def world(self, rng):
        v = pairs_view.view(self.game, self.seat, self.memory)
        return v, pairs_view.determinize(v, rng, _first_legal)

    def prepare_env(self, raw, view, world) -> None:
        """Also the env's per-seat draft memory, from the seat's ``DraftMemory`` (the view's
        fields); the env caches the public rows of the game it last saw: forgotten."""
        super().prepare_env(raw, view, world)
        raw._public_key = None
        seat = self.seat
        raw._passed[seat] = 0
        for k, counts in view.passed:
            raw._passed[seat, k - 1] = counts
        raw._others_picks[seat] = view.known_picks


class Reporter:
    """What one seat sees of a Pairs Draft game played on a real engine, as protocol events
    (``envs.protocol.ProtocolReporter``)."""

    def __init__(self, seat: int):
        self.seat = seat

    def opening(self, game) -> list[dict]:
        return [{"event": "deal", "start_player": game.start_player, "pack": game.pack(self.seat)}]

    def before(self, game, action: int):
        return game.phase, game.pick_index, game.action_to_text(action)

    def after(self, game, seat: int, token) -> list[dict]:
        phase, pick, text = token
        if phase in ("draft", "discard") and seat != self.seat:
            text = text.split()[0]  # another seat's pick or discard: that it happened, not what
        events = [{"event": "move", "seat": seat, "move": text}]
        if phase == "draft" and game.phase == "draft" and game.pick_index != pick:
            events.append({"event": "pack", "pack": game.pack(self.seat)})
        return events
