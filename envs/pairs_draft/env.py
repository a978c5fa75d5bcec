"""
# Pairs Draft (``pairs_draft_v0``)

A 4-player game for the Pairs deck (one 1, two 2s, … ten 10s): draft 11 cards from packs
passed to the left, discard one face down, then play 10 rounds in which playing the same
number as another player (a *pair*) keeps your card face up, while the highest unpaired
card takes the others face down (−1 each). Face-up cards score by distinct numbers and by
copies of one number; 10 distinct numbers or 5 copies win at once. Rules: ``envs/RULES.md``
section 2; engine: ``envs.pairs_draft.game``.

```python
from envs import pairs_draft_v0
env = pairs_draft_v0.env(render_mode="ansi")
env.reset(seed=7)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
    env.step(action)
```

| | |
|---|---|
| Import | `from envs import pairs_draft_v0` (also `pettingzoo.make("aec", "deckgym/pairs_draft-v0")` after `import envs`) |
| Actions | Discrete(10) |
| Agents | `player_0` … `player_3` |
| Observation | Dict: `observation` float32 (206,), `action_mask` int8 (10,) |

## Arguments

| argument | default | meaning |
|---|---|---|
| `reward` | `"points"` | see Rewards: `"points"` or `"win"` |
| `illegal_action` | `"penalty"` | `"penalty"`: the PettingZoo-classic outcome, the episode ends, the offender gets −1 and the others 0, ``info["illegal_action"]`` is set; `"raise"`: ``ValueError`` naming the action and the legal ones |
| `render_mode` | None | `"ansi"` (``render()`` returns the table as text, all hands shown) or `"human"` (prints it after every step) |

## Actions

Action `a` (0…9) is the number `a + 1` in every phase: the number picked from the pack
(draft), discarded face down (discard) or played (rounds). The mask is valid in every
phase: the numbers in the pack, in the own 11 cards, or playable from the hand (a number
already paired this round only when the hand holds nothing else; it then counts 11).

## Simultaneous steps

A draft pick and the discard are simultaneous: the four seats act one after another, from
the start player going left, and nothing a seat chooses shows in another seat's
observation before all four have acted (the packs pass, or the rounds begin). Other seats'
card counts during the draft and discard are the public ones (the number of completed
picks; 11 during the discard). The env keeps each seat's draft memory (the packs it
passed, the picks it inferred) and updates it when a pick step completes, so drive the
game through ``step()``.

## Observation (what the seat knows, with perfect memory)

Seats are relative to the observer: slot k (k = 0…3) is the seat k places to the left,
slot 0 the observer itself. Card fields are counts per number (index `number − 1`)
divided by `COUNT_SCALE` (10), so every count lies in [0, 1]. The layout's offsets
(`HAND`, `PACK`, `SEATS`, …) are constants of this module, for decoders such as the
heuristic bot.

| index | content |
|---|---|
| 0–3 | phase: draft, discard, rounds, game over (one-hot) |
| 4 | completed picks / 11 |
| 5 | completed rounds / 10 |
| 6–9 | start player (the dealer in draft and discard, then the round's first player), as a slot (one-hot) |
| 10–19 | own cards: the picks so far (draft), the 11 cards until this seat discards, then the hand |
| 20–29 | the pack in hand (draft only) |
| 30–59 | 3 × 10: the pack now held by the seat k = 1, 2, 3 places to the left, as this seat passed it (draft only; zero before this seat has seen it) |
| 60–69 | cards known to be among the other three seats' picks (together): whenever this seat sees a pack again, what left it since it passed it; at the end of the draft, what it left in each pack |
| 70–79 | own discard (one-hot; zero before it) |
| 80–123 | this round's cards in play order: 4 × (number one-hot 10, forced flag); slot i was played by the start player + i |
| 124–133 | numbers paired this round (unplayable unless forced) |
| 134–143 | cards of the completed rounds (face up and face down, every seat: their numbers were seen in play) |
| 144–153 | copies not accounted for: the deck's copies minus own cards, own discard and every card played (the rest are in others' cards or discards, in the packs, or set aside) |
| 154–205 | 4 slots × 13: face-up counts (10), face-down count / 10, points / 30, cards in hand / 10 (others' public counts during the draft and discard; the own slot its real count) |

## Rewards

Zero-sum, paid when the game ends (0 before). A seat's *result* is its points (2.5,
face-down cards included), plus `INSTANT_WIN_BONUS` = 100 for an instant win (10 distinct
numbers or 5 copies of a number face up); points lie in −30…42, so an instant winner's
result beats any other. `reward="points"` (default): (own result − mean of the other
three results) / `REWARD_SCALE` (20; random play gives a standard deviation of about 0.3,
an instant win about +5). `reward="win"`: +1 split among the winners (instant winners,
or else the highest points; ties share) and −1 split among the rest.

## State (for centralised critics)

``state()`` is the whole table: the observations of seats 0, 1, … one after another (each
as that seat sees it, in the layout above), a float32 vector of ``state_space`` (the number
of seats × 206). Together they hold every hand, pack and discard and what each seat remembers;
the cards nobody has seen (the cards set aside) are the deck less all of these. It is for a critic
trained beside the policy (MAPPO): an agent that acts on it sees what its seat may not.

Every ``infos`` entry has the key ``illegal_action`` from the reset on (False until an
illegal action ends the episode), so libraries that read the info keys at reset see it.

## Rule decisions (RULES.md leaves these open; implemented exactly)

- Two forced cards (two 11s) form a pair of 11s.
- Winners: every player with an instant win (10 distinct numbers, or 5 copies of a number,
  face up) shares the win; otherwise the highest total wins, ties share.
- The start player moves one seat left after every round, the last included.

## Version history
- v0: first release.
"""

from __future__ import annotations

import numpy as np

from ..aec import CardGameEnv, check_arguments, versus_others, wrap, zero_sum_win_rewards
from ..engine import check_choice
from .game import DECK_COUNTS, DRAFT_PICKS, NUM_ACTIONS, NUM_PLAYERS, NUM_ROUNDS, PairsDraftGame, Score, score_counts

OBS_SIZE = 206
(PHASE, PICK, ROUND, START, HAND, PACK, PASSED_PACKS, OTHERS_PICKS, DISCARD, TRICK, PAIRED, PLAYED, UNSEEN, SEATS) = (
    0,
    4,
    5,
    6,
    10,
    20,
    30,
    60,
    70,
    80,
    124,
    134,
    144,
    154,
)
TRICK_SLOT = 11  # number one-hot, forced flag
SEAT_SIZE = 13  # face-up counts, face-down count, points, cards in hand
FACE_DOWN, POINTS, HAND_SIZE = 10, 11, 12  # offsets in a seat slot
COUNT_SCALE, POINTS_SCALE = 10.0, 30.0
PHASES = ("draft", "discard", "play", "over")
REWARDS = ("points", "win")
INSTANT_WIN_BONUS = 100
REWARD_SCALE = 20.0

# [observer, i] -> index in the seat-by-seat table of the seat slots' i-th value (slot k: seat observer + k)
_TABLE_SIZE = NUM_PLAYERS * SEAT_SIZE
_SLOTS = (np.arange(NUM_PLAYERS)[:, None] * SEAT_SIZE + np.arange(_TABLE_SIZE)) % _TABLE_SIZE


def _build_scale() -> np.ndarray:
    """Raw observation (counts, indices) -> scaled one, in one multiply."""
    scale = np.ones(OBS_SIZE, np.float32)
    for start, size in ((HAND, 10), (PACK, 10), (PASSED_PACKS, 30), (OTHERS_PICKS, 10), (PLAYED, 10), (UNSEEN, 10)):
        scale[start : start + size] = 1 / COUNT_SCALE
    scale[PICK] = 1 / DRAFT_PICKS
    scale[ROUND] = 1 / NUM_ROUNDS
    seats = scale[SEATS:].reshape(NUM_PLAYERS, SEAT_SIZE)
    seats[:, : FACE_DOWN + 1] = 1 / COUNT_SCALE
    seats[:, POINTS] = 1 / POINTS_SCALE
    seats[:, HAND_SIZE] = 1 / COUNT_SCALE
    return scale


_SCALE = _build_scale()


_TEMPLATES: dict[tuple[str, int, int, int], np.ndarray] = {}  # (phase, start player, round, pick) -> _template(...)


def _template(phase: str, start: int, round_index: int, pick: int) -> np.ndarray:
    """The raw rows (one per seat) of what a build starts from: the phase, the start
    player's slot, picks and rounds done, every copy of the deck unaccounted for, and the
    public hand sizes in draft and discard (the own slot too: the count before its choice
    this step). A few hundred exist; each is made once."""
    key = (phase, start, round_index, pick)
    rows = _TEMPLATES.get(key)
    if rows is None:
        rows = np.zeros((NUM_PLAYERS, OBS_SIZE), np.float32)
        rows[:, PHASE + PHASES.index(phase)] = 1.0
        for seat in range(NUM_PLAYERS):
            rows[seat, START + (start - seat) % NUM_PLAYERS] = 1.0
        rows[:, PICK] = pick
        rows[:, ROUND] = round_index
        rows[:, UNSEEN : UNSEEN + NUM_ACTIONS] = DECK_COUNTS
        if phase in ("draft", "discard"):
            rows[:, SEATS + HAND_SIZE :: SEAT_SIZE] = pick
        rows.flags.writeable = False
        _TEMPLATES[key] = rows
    return rows


def count_rows(lists) -> np.ndarray:
    """Lists of card counts (0-255) as one uint8 array, a row per list: through ``bytes``,
    several times faster than ``np.array`` on lists of ints."""
    return np.frombuffer(bytes(sum(lists, [])), np.uint8).reshape(len(lists), NUM_ACTIONS)


def result(score: Score) -> int:
    """What the points reward compares: points, plus ``INSTANT_WIN_BONUS`` for an instant win."""
    return score.points + INSTANT_WIN_BONUS * score.instant_win


class raw_env(CardGameEnv):
    metadata = {**CardGameEnv.metadata, "name": "pairs_draft_v0"}
    game: PairsDraftGame  # None until reset()

    def __init__(
        self, reward: str = "points", illegal_action: str = "penalty", render_mode: str | None = None, **unknown
    ):
        check_arguments(self.metadata["name"], unknown, ["reward", "illegal_action", "render_mode"])
        check_choice("reward", reward, REWARDS)
        self.reward = reward
        super().__init__(NUM_PLAYERS, OBS_SIZE, NUM_ACTIONS, illegal_action, render_mode=render_mode)

    def _new_game(self, seed) -> PairsDraftGame:
        return PairsDraftGame(seed)

    def _start_episode(self) -> None:
        super()._start_episode()
        self._start_memory()

    def _start_memory(self) -> None:
        # Per-seat draft memory, updated only when a pick step completes: the packs this
        # seat passed in the last three picks (now at the seats 1, 2, 3 to the left), as it
        # passed them, and the cards it knows the others picked.
        self._passed = np.zeros((NUM_PLAYERS, 3, NUM_ACTIONS), np.int64)
        self._passed_flat = self._passed.reshape(NUM_PLAYERS, 3 * NUM_ACTIONS)  # a view, for the encoder
        self._others_picks = np.zeros((NUM_PLAYERS, NUM_ACTIONS), np.int64)
        self._public_key = None  # what the cached rows were built for (see _rows)

    def step(self, action):
        game = self.game
        pick = game._pick_index  # the engine's own field: this runs every step
        CardGameEnv.step(self, action)
        if game._pick_index != pick:
            self._remember_packs()

    def _remember_packs(self) -> None:
        """A pick step is complete: every seat passes its pack and sees the next one."""
        game = self.game
        passed = self._passed
        packs = count_rows([game.pack_counts(s % NUM_PLAYERS) for s in range(NUM_PLAYERS + 1)])
        held, passed_on = packs[:NUM_PLAYERS], packs[1:]  # by the seat now holding it; the one its left holds
        if game.pick_index >= 4:  # the pack passed 4 picks ago is back: the others took the difference
            self._others_picks += passed[:, 2] - held
        passed[:, 1:] = passed[:, :2]  # (numpy copies overlapping slices safely)
        passed[:, 0] = passed_on
        if game.pick_index == DRAFT_PICKS:  # the others took whatever the packs still held
            self._others_picks += passed.sum(axis=1)
            passed[:] = 0

    def _episode_over(self) -> bool:
        return self.game.phase == "over"

    def _rewards(self):
        game = self.game
        if game.phase != "over":
            return None
        if self.reward == "win":
            return zero_sum_win_rewards(game.winners(), NUM_PLAYERS)
        return [
            gain / REWARD_SCALE for gain in versus_others([result(game.score(seat)) for seat in range(NUM_PLAYERS)])
        ]

    def _rows(self, key) -> np.ndarray:
        """Every seat's raw observation row (unscaled), built together as the game stands:
        a copy of the template, the engine's counts converted at once, a few numpy
        operations on 4-row arrays. They stay valid while ``key`` (phase, round, pick)
        holds, for each seat until its own cards change (its own pick, discard or play);
        ``_encode`` adds the others' plays since the build. The others' simultaneous
        choices change nothing a seat sees, so in the usual order (each seat observed
        before it acts) one build serves a whole pick step or round, where encoding each
        observation on its own cost several times more. The memory (``_passed``,
        ``_others_picks``) changes only with the pick; whoever writes it otherwise resets
        ``_public_key``."""
        game = self.game
        phase, round_index, pick = key
        seats = range(NUM_PLAYERS)
        hands = [game.hand_counts(s) for s in seats]
        sizes = [sum(hand) for hand in hands]
        trick = game.current_trick()
        rows = _template(phase, game.start_player, round_index, pick).copy()
        rows[:, OTHERS_PICKS : OTHERS_PICKS + NUM_ACTIONS] = self._others_picks
        unseen = rows[:, UNSEEN : UNSEEN + NUM_ACTIONS]  # a view: the copies, less what each seat knows of
        if phase == "draft":
            cards = count_rows(hands + [game.pack_counts(s) for s in seats])
            rows[:, PACK : PACK + NUM_ACTIONS] = cards[NUM_PLAYERS:]
            rows[:, PASSED_PACKS : PASSED_PACKS + 30] = self._passed_flat
            cards = cards[:NUM_PLAYERS]
        elif phase == "discard":
            cards = count_rows(hands)
        else:  # cards have been taken
            face_ups = [game.face_up_counts(s) for s in seats]
            face_downs = [game.face_down_counts(s) for s in seats]
            played = list(map(sum, zip(*face_ups, *face_downs)))
            table = []  # seat by seat: face-up counts, face-down count, points, cards in hand
            for s in seats:
                down = sum(face_downs[s])
                table += face_ups[s]
                table += (down, score_counts(face_ups[s], down).points, sizes[s])
            values = np.array(table + played + [c - p for c, p in zip(DECK_COUNTS, played)])  # points may be negative
            rows[:, SEATS:] = values[_SLOTS]
            rows[:, PLAYED : PLAYED + NUM_ACTIONS] = values[_TABLE_SIZE : _TABLE_SIZE + NUM_ACTIONS]
            unseen[:] = values[_TABLE_SIZE + NUM_ACTIONS :]  # the copies not played
            cards = count_rows(hands)
            for i, (_, number, forced) in enumerate(trick):
                base = TRICK + i * TRICK_SLOT
                rows[:, base + number - 1] = 1.0
                rows[:, base + NUM_ACTIONS] = forced
                unseen[:, number - 1] -= 1
            if len(trick) > 1:  # a pair needs two cards
                for number in game.paired_numbers():
                    rows[:, PAIRED + number - 1] = 1.0
        rows[:, HAND : HAND + NUM_ACTIONS] = cards
        unseen -= cards
        if phase != "draft":
            for s in seats:
                discard = game.discarded(s)
                if discard is not None:
                    rows[s, DISCARD + discard - 1] = 1.0
                    unseen[s, discard - 1] -= 1
        if phase in ("draft", "discard") and sizes.count(pick) != NUM_PLAYERS:  # a seat already chose this step
            rows[:, SEATS + HAND_SIZE] = sizes  # its own count it knows at once
        self._public_key, self._rows_cache, self._row_sizes, self._row_plays = key, rows, sizes, len(trick)
        return rows

    def _encode(self, seat: int, obs: np.ndarray) -> None:
        game = self.game
        key = (game._phase, game._round_index, game._pick_index)  # the engine's own fields: properties cost more
        rows = self._rows_cache if key == self._public_key else self._rows(key)
        if sum(game._hands[seat]) != self._row_sizes[seat]:  # the seat acted since the build
            rows = self._rows(key)
        trick = game._trick
        if len(trick) == self._row_plays:  # the row as built: copied and scaled in one operation
            np.multiply(rows[seat], _SCALE, out=obs)
            return
        obs[:] = rows[seat]
        for i in range(self._row_plays, len(trick)):  # the others' plays since the build
            player, number, forced = trick[i]
            base = TRICK + i * TRICK_SLOT
            obs[base + number - 1] = 1.0
            if forced:
                obs[base + NUM_ACTIONS] = 1.0
            obs[UNSEEN + number - 1] -= 1
            obs[SEATS + (player - seat) % NUM_PLAYERS * SEAT_SIZE + HAND_SIZE] -= 1
        if len(trick) > 1:
            for number in game.paired_numbers():
                obs[PAIRED + number - 1] = 1.0
        obs *= _SCALE


def env(**kwargs):
    return wrap(raw_env(**kwargs))
