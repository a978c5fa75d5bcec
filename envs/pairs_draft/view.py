"""A seat's view of a Pairs Draft game, worlds sampled from it, and a fast rollout rule: the
Pairs Draft side of the IS-MCTS search (``envs.search``).

## The view

``view(game, seat, memory)`` copies out of the engine only what the seat may know (as
the env's observation, ``envs.pairs_draft.env``): the phase, the start player, picks and
rounds done, the face-up and face-down cards of every seat, this round's plays, every
hand's public size, and the seat's own cards, pack and discard. A simultaneous step's
choices stay hidden until the step is done, so the view of a step under way is the view at
its start (plus the seat's own choice, if it has made it).

The engine keeps no history, but a seat with perfect memory knows more than the table
shows: ``memory`` (a ``DraftMemory``, kept by the bot per seat and fed only from the
seat's own views) records the pack the seat held at each of its picks and its own hand.
From it the view gets:

- ``passed``: the packs the seat passed in the last three picks, as it passed them (each
  now at the seat 1, 2 or 3 places to the left, less the picks made from it since);
- ``known_picks``: the cards known to be among the other three seats' picks: whenever the
  seat saw a pack again, what left it since it passed it; at the end of the draft, what
  it left in the packs that did not come back (the env's ``OTHERS_PICKS``);
- ``own_picks``: the seat's 11 picks once the draft is over.

With no memory (the bot joined mid-game, or the game came from ``from_position``) these
are unknown (``None`` / empty) and the determinization treats those cards as unseen.

## Determinization

``determinize(view, rng, policy)``: every card not known to be somewhere is *unseen*
(``DECK`` less the own cards, the own pack, the passed packs, the known picks and every
card played). In the draft: each passed pack loses its (unknown) picks since, one to each
seat it went through; packs the seat never saw are filled from the unseen cards; the other
seats' picks are the known picks and unseen cards, shuffled among them; the rest is set
aside. In the discard: the other seats' 11 cards are the known picks and unseen cards.
In the rounds: the other seats' hands are drawn from what they picked less what they
played (known picks first, made up from the unseen cards). The choices already made in the
current simultaneous step by the seats before this one (a pick or a discard) are unknown:
the world is built at the step's start and those seats choose again by ``policy``.

## Rollout rule

``heuristic_action(state, rng)`` is the heuristic bot's rule (``envs.pairs_draft.bot``:
the same ``draft_choice`` and ``play_choice``) fed directly from the engine of a sampled
world, each seat judging from what it would see (its own cards, discard and the table):
the same move as ``PairsDraftHeuristic`` makes from the seat's observation, about 12 µs a
move. In the draft take a number not held yet, then copies, low numbers first; discard
the card that adds least; in the rounds weigh each card's chance to pair or stay the
lowest against the chance to end the highest.
Rollouts that play as the heuristic players do were what made the search stronger than
them (a simpler rule, "pair if possible, else the lowest", misjudged draft picks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..aec import versus_others
from .bot import draft_choice, play_choice, read_round
from .env import INSTANT_WIN_BONUS, OBS_SIZE, REWARD_SCALE, raw_env
from .game import (
    DECK_COUNTS,
    DRAFT_PICKS,
    FORCED_VALUE,
    NUM_ACTIONS,
    NUM_PLAYERS,
    NUM_ROUNDS,
    PairsDraftGame,
    score_counts,
)

_ACTIONS = range(NUM_ACTIONS)
_FORCED_BIT = 1 << (FORCED_VALUE - 1)


def _sub(a, b) -> list[int]:
    return [x - y for x, y in zip(a, b)]


def _add(a, b) -> list[int]:
    return [x + y for x, y in zip(a, b)]


def _cards(counts) -> list[int]:
    """Counts → a list of actions (number − 1), one per card."""
    return [a for a in _ACTIONS for _ in range(counts[a])]


def action_counts(cards) -> list[int]:
    """Cards as actions (number - 1) -> copies of each number."""
    out = [0] * NUM_ACTIONS
    for a in cards:
        out[a] += 1
    return out


# ---------------------------------------------------------------------------- memory
class DraftMemory:
    """What one seat saw of the draft: the pack it held and its own cards at each of its
    picks from ``start`` on (consecutive), fed only from the seat's own views."""

    def __init__(self) -> None:
        self.start: int | None = None  # first pick recorded
        self.packs: list[tuple] = []
        self.hands: list[tuple] = []

    def observe(self, phase: str, pick: int, hand: tuple, pack: tuple | None) -> None:
        """Record the seat's own hand and pack at its pick ``pick`` (draft), or check that
        the memory still fits the seat's cards (after the draft); a gap or a mismatch (a new
        game) starts the memory afresh."""
        if phase == "draft":
            assert pack is not None  # a seat drafting holds a pack
            if (
                self.start is not None
                and pick == self.start + len(self.packs) - 1
                and (hand, pack) == (self.hands[-1], self.packs[-1])
            ):
                return  # the same decision asked again
            if self.start is not None and pick == self.start + len(self.packs) and self._took_one(hand):
                self.packs.append(pack)
                self.hands.append(hand)
                return
            self.start, self.packs, self.hands = pick, [pack], [hand]
        elif self.complete() and not all(h <= p for h, p in zip(hand, self.own_picks())):
            self.start, self.packs, self.hands = None, [], []

    def _took_one(self, hand) -> bool:
        diff = _sub(hand, self.hands[-1])
        return sum(diff) == 1 and min(diff) == 0 and all(self.packs[-1][a] >= d for a, d in enumerate(diff))

    def complete(self) -> bool:
        """Whether the memory reaches the last pick (so the seat's own picks are known)."""
        return self.start is not None and self.start + len(self.packs) == DRAFT_PICKS

    def own_picks(self) -> list[int]:
        return _add(self.hands[-1], self.packs[-1])  # the last pick takes the pack's last card

    def _picked(self, i: int) -> list[int] | None:
        """The seat's own pick at recorded pick ``start + i`` (counts), if known."""
        if i + 1 < len(self.hands):
            return _sub(self.hands[i + 1], self.hands[i])
        assert self.start is not None  # asked only of a memory that recorded picks
        if self.start + i == DRAFT_PICKS - 1:
            return list(self.packs[i])
        return None

    def knowledge(self, pick: int) -> tuple[tuple, tuple]:
        """``(passed, known_picks)`` at the start of pick ``pick`` (``DRAFT_PICKS`` once the
        draft is over). ``passed``: ``((k, counts), ...)``, the packs now ``k`` seats to
        the left as this seat passed them; ``known_picks``: the others' known picks."""
        known = [0] * NUM_ACTIONS
        passed = []
        if self.start is None:
            return (), tuple(known)
        for i in range(len(self.packs)):
            q = self.start + i
            picked = self._picked(i)
            if q >= pick or picked is None:
                break
            left = _sub(self.packs[i], picked)  # the pack as this seat passed it
            back = q + NUM_PLAYERS  # when it comes back
            if back < DRAFT_PICKS and back <= pick:
                if i + NUM_PLAYERS < len(self.packs):  # seen again: the others took the difference
                    known = _add(known, _sub(left, self.packs[i + NUM_PLAYERS]))
            elif back >= DRAFT_PICKS and pick >= DRAFT_PICKS:
                known = _add(known, left)  # never back: the others took all of it
            else:
                passed.append((pick - q, tuple(left)))
        return tuple(passed), tuple(known)


def new_memory() -> DraftMemory:
    return DraftMemory()


# ------------------------------------------------------------------------------ view
@dataclass(frozen=True)
class PairsView:
    """What ``seat`` knows of a Pairs Draft game (counts are per number, index number − 1)."""

    seat: int
    phase: str
    start_player: int
    current_player: int
    pick_index: int
    round_index: int
    rounds: int  # rounds in the game (10, or fewer from ``from_position``)
    hand: tuple  # own cards: picks so far, the 11 until it discards, then the hand
    pack: tuple | None  # own pack in the draft
    discard: int | None  # own discard (a number), once made
    face_up: tuple
    face_down: tuple
    trick: tuple  # this round's plays (Play), in order
    hand_sizes: tuple  # public sizes, at the start of the current simultaneous step in draft and discard
    set_aside_size: int
    passed: tuple  # ((k, counts), ...): packs now k seats to the left, as this seat passed them
    known_picks: tuple  # cards known to be among the other seats' picks
    own_picks: tuple | None  # the seat's 11 picks, once the draft is over and remembered


def view(game: PairsDraftGame, seat: int, memory: DraftMemory | None = None) -> PairsView:
    """The seat's view: public fields, own cards, and what ``memory`` remembers (updated here
    from this view's own fields only)."""
    if not isinstance(game, PairsDraftGame):
        raise ValueError(f"a Pairs Draft view needs a PairsDraftGame, not {type(game).__name__}")
    if type(seat) is not int or not 0 <= seat < NUM_PLAYERS:
        raise ValueError(f"seat {seat!r} is not a seat of Pairs Draft (0-{NUM_PLAYERS - 1})")
    phase = game.phase
    if phase == "over":
        raise ValueError("the game is over: there is nothing to search")
    current = game.current_player
    assert current is not None  # None only once the game is over
    hand = tuple(game.hand_counts(seat))
    pack = tuple(game.pack_counts(seat)) if phase == "draft" else None
    trick = tuple(game.current_trick()) if phase == "play" else ()
    pick = game.pick_index
    if phase == "draft":
        sizes = (pick,) * NUM_PLAYERS
    elif phase == "discard":
        sizes = (DRAFT_PICKS,) * NUM_PLAYERS
    else:
        sizes = tuple(sum(game.hand_counts(s)) for s in range(NUM_PLAYERS))  # public in the rounds
    own_size = sum(hand)
    played_now = any(p.seat == seat for p in trick)
    rounds = game.round_index + own_size + played_now if phase == "play" else NUM_ROUNDS
    passed, known, own_picks = (), (0,) * NUM_ACTIONS, None
    if memory is not None:
        if phase != "draft" or current == seat:  # a pick already made this step shows in hand
            memory.observe(phase, pick, hand, pack)
        if memory.start is not None:
            passed, known = memory.knowledge(pick if phase == "draft" else DRAFT_PICKS)
            if memory.complete() and phase != "draft":
                own_picks = tuple(memory.own_picks())
    sizes = tuple(own_size if s == seat else n for s, n in enumerate(sizes))
    return PairsView(
        seat=seat,
        phase=phase,
        start_player=game.start_player,
        current_player=current,
        pick_index=pick,
        round_index=game.round_index,
        rounds=rounds,
        hand=hand,
        pack=pack,
        discard=game.discarded(seat),
        face_up=tuple(tuple(game.face_up_counts(s)) for s in range(NUM_PLAYERS)),
        face_down=tuple(tuple(game.face_down_counts(s)) for s in range(NUM_PLAYERS)),
        trick=trick,
        hand_sizes=sizes,
        set_aside_size=len(game.set_aside()),
        passed=passed,
        known_picks=known,
        own_picks=own_picks,
    )


# --------------------------------------------------------------------- determinize
def _take(pool: list[int], k: int) -> list[int]:
    """``k`` cards (actions) drawn at random from ``pool`` (a list of actions, shuffled by
    the caller): removed from its end."""
    if not 0 <= k <= len(pool):
        raise AssertionError(f"inconsistent view: {k} cards wanted from {len(pool)} unseen")
    out = pool[len(pool) - k :]
    del pool[len(pool) - k :]
    return out


def _played_counts(v: PairsView) -> list[int]:
    played = [0] * NUM_ACTIONS
    for counts in v.face_up + v.face_down:
        played = _add(played, counts)
    for play in v.trick:
        played[play.number - 1] += 1
    return played


def _new_engine(v: PairsView, hands, packs, set_aside, discards, phase, current) -> PairsDraftGame:
    g = PairsDraftGame.__new__(PairsDraftGame)
    g._phase = phase
    g._start_player = v.start_player
    g._current = current
    g._hands = hands
    g._packs = packs
    g._set_aside = set_aside
    g._rounds = v.rounds
    g._pick_index = v.pick_index
    g._round_index = v.round_index
    g._discards = discards
    g._face_up = [list(c) for c in v.face_up]
    g._face_down = [list(c) for c in v.face_down]
    g._trick = list(v.trick)
    played = paired = 0
    for play in v.trick:
        bit = _FORCED_BIT if play.forced else 1 << (play.number - 1)
        if played & bit:
            paired |= bit
        else:
            played |= bit
    g._played, g._paired = played, paired
    g._previous_trick = []
    g._legal = None
    return g


def _catch_up(g: PairsDraftGame, seat: int, rng, policy) -> PairsDraftGame:
    """Let the seats before ``seat`` in the current simultaneous step choose (hidden)."""
    while g._current != seat:
        g.apply(policy(g, rng))
    return g


def determinize(v: PairsView, rng, policy) -> PairsDraftGame:
    """A whole engine consistent with ``v`` (see the module docstring)."""
    seat = v.seat
    others = [(seat + k) % NUM_PLAYERS for k in range(1, NUM_PLAYERS)]
    hands: list[list[int] | None] = [None] * NUM_PLAYERS
    hands[seat] = list(v.hand)
    known = list(v.known_picks)
    if v.phase == "draft":
        assert v.pack is not None  # a draft view holds the seat's pack
        p = v.pick_index
        located = _add(_add(v.hand, v.pack), known)
        for _, counts in v.passed:
            located = _add(located, counts)
        pool = _cards(_sub(DECK_COUNTS, located))
        rng.shuffle(pool)
        picks: dict[int, list[int]] = {s: [] for s in others}
        packs: list[list[int] | None] = [None] * NUM_PLAYERS
        packs[(seat - p) % NUM_PLAYERS] = list(v.pack)
        passed = dict(v.passed)
        for k in range(1, NUM_PLAYERS):
            holder = (seat + k) % NUM_PLAYERS
            if k in passed:  # it lost one card to each seat it went through since
                cards = _cards(passed[k])
                rng.shuffle(cards)
                for j in range(1, k):
                    picks[(seat + j) % NUM_PLAYERS].append(cards.pop())
                packs[(holder - p) % NUM_PLAYERS] = action_counts(cards)
            else:
                packs[(holder - p) % NUM_PLAYERS] = action_counts(_take(pool, DRAFT_PICKS - p))
        slots = sum(p - len(picks[s]) for s in others)
        fill = _cards(known) + _take(pool, slots - sum(known))
        rng.shuffle(fill)
        for s in others:
            need = p - len(picks[s])
            picks[s] += fill[len(fill) - need :]
            del fill[len(fill) - need :]
            hands[s] = action_counts(picks[s])
        if len(pool) != v.set_aside_size:
            raise AssertionError(f"inconsistent view: {len(pool)} cards left to set aside, not {v.set_aside_size}")
        g = _new_engine(v, hands, packs, action_counts(pool), [None] * NUM_PLAYERS, "draft", v.start_player)
        return _catch_up(g, seat, rng, policy)
    packs = [[0] * NUM_ACTIONS for _ in range(NUM_PLAYERS)]
    if v.phase == "discard":
        if v.discard is not None:  # this seat has discarded: it acts again only in the rounds
            raise AssertionError("a seat that has discarded is not to act in the discard step")
        pool = _cards(_sub(_sub(DECK_COUNTS, v.hand), known))  # the hand is the seat's 11 picks
        rng.shuffle(pool)
        fill = _cards(known) + _take(pool, DRAFT_PICKS * len(others) - sum(known))
        rng.shuffle(fill)
        for i, s in enumerate(others):
            hands[s] = action_counts(fill[i * DRAFT_PICKS : (i + 1) * DRAFT_PICKS])
        g = _new_engine(v, hands, packs, action_counts(pool), [None] * NUM_PLAYERS, "discard", v.start_player)
        return _catch_up(g, seat, rng, policy)
    # the rounds
    played = _played_counts(v)
    opp_hand = sum(v.hand_sizes[s] for s in others)
    if v.own_picks is not None and v.discard is not None:
        own_played = _sub(_sub(v.own_picks, v.hand), action_counts([v.discard - 1]))
        opp_played = _sub(played, own_played)
        extra = [max(x - k, 0) for x, k in zip(opp_played, known)]  # played, not among the known picks
        still_known = [max(k - x, 0) for x, k in zip(opp_played, known)]
        unseen = _sub(_sub(_sub(DECK_COUNTS, v.own_picks), known), extra)
        pool = _cards(unseen)
        rng.shuffle(pool)
        opp_cards = opp_hand + len(others)  # their hands and discards
        if not sum(still_known) <= opp_cards <= sum(still_known) + len(pool):
            raise AssertionError("inconsistent view: the remembered picks do not fit the hands")
        rest = _cards(still_known) + _take(pool, opp_cards - sum(still_known))
    else:
        unseen = _sub(_sub(DECK_COUNTS, v.hand), played)
        if v.discard is not None:
            unseen[v.discard - 1] -= 1
        rest = _cards(unseen)
    rng.shuffle(rest)
    discards: list[int | None] = [None] * NUM_PLAYERS
    discards[seat] = v.discard
    for s in others:
        size = v.hand_sizes[s]
        hands[s] = action_counts(rest[len(rest) - size :])
        del rest[len(rest) - size :]
    if v.discard is not None:
        for s in others:
            discards[s] = rest.pop() + 1 if rest else None
    return _new_engine(v, hands, packs, [0] * NUM_ACTIONS, discards, "play", v.current_player)


# ------------------------------------------------------------------ search hooks
def encoder(v: PairsView) -> Callable[[PairsDraftGame, int], np.ndarray]:
    """``encode(state, player)``: ``player``'s env observation in a world sampled from ``v``,
    for the network that guides a search (``envs.search``). The env's observation holds a
    seat's draft memory (``PASSED_PACKS``, ``OTHERS_PICKS``): the searcher's is its memory
    at the root (``v.passed``, ``v.known_picks``), the other seats' is unknown and left
    empty, and neither is brought up to date as the tree's picks go on (a prior, not the
    game's record)."""
    env = raw_env()
    env._start_memory()
    for k, counts in v.passed:
        env._passed[v.seat, k - 1] = counts
    env._others_picks[v.seat] = v.known_picks

    def encode_world(state: PairsDraftGame, player: int) -> np.ndarray:
        env.game = state
        env._public_key = None  # the row cache is keyed by the step, and each world differs
        obs = np.empty(OBS_SIZE, np.float32)
        env._encode(player, obs)
        return obs

    return encode_world


def is_terminal(state: PairsDraftGame) -> bool:
    return state._phase == "over"


def visible(state: PairsDraftGame, searcher: int) -> bool:
    """Whether the searcher sees the action about to be chosen: its own, and every play in
    the rounds; the others' picks and discards are secret."""
    return state._phase == "play" or state._current == searcher


def private(state: PairsDraftGame, searcher: int):
    """The searcher's private observation at its next decision: the pack it receives."""
    if state._phase == "draft":
        return tuple(state._packs[(searcher - state._pick_index) % NUM_PLAYERS])
    return None


def returns(state: PairsDraftGame) -> list[float]:
    """The env's points reward: (own result − mean of the others') / 20."""
    results = []
    for seat in range(NUM_PLAYERS):
        score = score_counts(state._face_up[seat], sum(state._face_down[seat]))
        results.append(score.points + INSTANT_WIN_BONUS * score.instant_win)
    return [gain / REWARD_SCALE for gain in versus_others(results)]


def heuristic_action(state: PairsDraftGame, rng=None) -> int:
    """A fast rule-of-thumb move on the engine (see the module docstring): the heuristic
    bot's own rule (``draft_choice``, ``play_choice``), fed from the engine with what the
    seat to act would see."""
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    phase = state._phase
    seat = state._current
    if phase == "draft":
        return draft_choice(state._hands[seat], legal)
    if phase == "discard":
        return draft_choice(state._hands[seat], legal, discard=True)
    hand = state._hands[seat]
    trick = state._trick
    played = [sum(column) for column in zip(*state._face_up, *state._face_down)]
    for play in trick:
        played[play.number - 1] += 1
    unseen = [c - h - p for c, h, p in zip(DECK_COUNTS, hand, played)]  # from this seat's view
    discard = state._discards[seat]
    if discard is not None:
        unseen[discard - 1] -= 1
    start = state._start_player
    later_sizes = [sum(state._hands[(start + i) % NUM_PLAYERS]) for i in range(len(trick) + 1, NUM_PLAYERS)]
    paired = state._paired & ~_FORCED_BIT
    return play_choice(
        legal,
        bool(paired >> legal[0] & 1),
        hand,
        [u if u > 0 else 0 for u in unseen],
        state._face_up[seat],
        sum(state._face_down[seat]),
        sum(hand) > 1,
        later_sizes,
        read_round([(play.number, play.forced) for play in trick], paired),
    )


def sides(state: PairsDraftGame) -> list[list[int]]:
    """Every seat is a side of its own (a network-valued search shares its leaf values out
    by side: ``envs.search``)."""
    return [[seat] for seat in range(NUM_PLAYERS)]
