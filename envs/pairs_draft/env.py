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
from .game import DECK, DRAFT_PICKS, NUM_ACTIONS, NUM_PLAYERS, NUM_ROUNDS, PairsDraftGame, Score

OBS_SIZE = 206
(PHASE, PICK, ROUND, START, HAND, PACK, PASSED_PACKS, OTHERS_PICKS, DISCARD, TRICK, PAIRED, PLAYED, UNSEEN,
 SEATS) = (0, 4, 5, 6, 10, 20, 30, 60, 70, 80, 124, 134, 144, 154)
TRICK_SLOT = 11  # number one-hot, forced flag
SEAT_SIZE = 13  # face-up counts, face-down count, points, cards in hand
FACE_DOWN, POINTS, HAND_SIZE = 10, 11, 12  # offsets in a seat slot
COUNT_SCALE, POINTS_SCALE = 10.0, 30.0
PHASES = ("draft", "discard", "play", "over")
REWARDS = ("points", "win")
INSTANT_WIN_BONUS = 100
REWARD_SCALE = 20.0

_COPIES = np.bincount(np.array(DECK) - 1, minlength=NUM_ACTIONS)  # copies of each number in the deck
_ROTATIONS = (np.arange(NUM_PLAYERS)[:, None] + np.arange(NUM_PLAYERS)) % NUM_PLAYERS  # [observer, slot] -> seat


def _build_scale() -> np.ndarray:
    """Raw observation (counts, indices) -> scaled one, in one multiply."""
    scale = np.ones(OBS_SIZE, np.float32)
    for start, size in ((HAND, 10), (PACK, 10), (PASSED_PACKS, 30), (OTHERS_PICKS, 10), (PLAYED, 10),
                        (UNSEEN, 10)):
        scale[start:start + size] = 1 / COUNT_SCALE
    scale[PICK] = 1 / DRAFT_PICKS
    scale[ROUND] = 1 / NUM_ROUNDS
    seats = scale[SEATS:].reshape(NUM_PLAYERS, SEAT_SIZE)
    seats[:, :FACE_DOWN + 1] = 1 / COUNT_SCALE
    seats[:, POINTS] = 1 / POINTS_SCALE
    seats[:, HAND_SIZE] = 1 / COUNT_SCALE
    return scale


_SCALE = _build_scale()


def _build_base_rows() -> np.ndarray:
    """[phase, start player, observer] -> raw row with the phase, the start player's slot
    and every copy of the deck unaccounted for."""
    rows = np.zeros((len(PHASES), NUM_PLAYERS, NUM_PLAYERS, OBS_SIZE), np.float32)
    for phase in range(len(PHASES)):
        rows[phase, ..., PHASE + phase] = 1.0
        for start in range(NUM_PLAYERS):
            for seat in range(NUM_PLAYERS):
                rows[phase, start, seat, START + (start - seat) % NUM_PLAYERS] = 1.0
    rows[..., UNSEEN:UNSEEN + NUM_ACTIONS] = _COPIES
    return rows


_BASE_ROWS = _build_base_rows()


def result(score: Score) -> int:
    """What the points reward compares: points, plus ``INSTANT_WIN_BONUS`` for an instant win."""
    return score.points + INSTANT_WIN_BONUS * score.instant_win


class raw_env(CardGameEnv):
    metadata = {**CardGameEnv.metadata, "name": "pairs_draft_v0"}

    def __init__(self, reward: str = "points", illegal_action: str = "penalty", render_mode: str | None = None,
                 **unknown):
        check_arguments(self.metadata["name"], unknown, ["reward", "illegal_action", "render_mode"])
        check_choice("reward", reward, REWARDS)
        self.reward = reward
        super().__init__(NUM_PLAYERS, OBS_SIZE, NUM_ACTIONS, illegal_action, render_mode=render_mode)

    def _new_game(self, seed) -> PairsDraftGame:
        return PairsDraftGame(seed)

    def _start_episode(self) -> None:
        super()._start_episode()
        # Per-seat draft memory, updated only when a pick step completes: the packs this
        # seat passed in the last three picks (now at the seats 1, 2, 3 to the left), as it
        # passed them, and the cards it knows the others picked.
        self._passed = np.zeros((NUM_PLAYERS, 3, NUM_ACTIONS), np.int64)
        self._passed_flat = self._passed.reshape(NUM_PLAYERS, 3 * NUM_ACTIONS)  # a view, for the encoder
        self._others_picks = np.zeros((NUM_PLAYERS, NUM_ACTIONS), np.int64)
        self._public_key = None  # what the cached public rows were built for

    def step(self, action):
        pick = self.game.pick_index
        super().step(action)
        if self.game.pick_index != pick:
            self._remember_packs()

    def _remember_packs(self) -> None:
        """A pick step is complete: every seat passes its pack and sees the next one."""
        game = self.game
        held = np.array([game.pack_counts(s) for s in range(NUM_PLAYERS)])  # by the seat now holding it
        returning = self._passed[:, 2].copy()  # passed 4 picks ago, now back in hand
        self._passed[:, 1:] = self._passed[:, :2]
        self._passed[:, 0] = held[_ROTATIONS[:, 1]]  # seat s's pack is now at s + 1
        if game.pick_index >= 4:  # a pack seen before is back: the others took the difference
            self._others_picks += returning - held
        if game.pick_index == DRAFT_PICKS:  # the others took whatever the packs still held
            self._others_picks += self._passed.sum(axis=1)
            self._passed[:] = 0

    def _episode_over(self) -> bool:
        return self.game.phase == "over"

    def _rewards(self):
        game = self.game
        if game.phase != "over":
            return None
        if self.reward == "win":
            return zero_sum_win_rewards(game.winners(), NUM_PLAYERS)
        return [gain / REWARD_SCALE for gain in versus_others([result(game.score(seat)) for seat in range(NUM_PLAYERS)])]

    def _public_rows(self, key) -> np.ndarray:
        """Raw observation rows (one per seat) with what every seat sees alike, in its own
        frame: phase, start player, the seat table and the cards of completed rounds.
        They change only with the phase or the round (``key``), so they are cached."""
        if self._public_key != key:
            game = self.game
            phase, round_index = key
            rows = _BASE_ROWS[PHASES.index(phase), game.start_player].copy()
            rows[:, ROUND] = round_index
            if phase == "discard":
                rows[:, SEATS + HAND_SIZE::SEAT_SIZE] = DRAFT_PICKS
            elif phase != "draft":  # cards have been taken
                cards = np.array([game.face_up_counts(s) for s in range(NUM_PLAYERS)]
                                 + [game.face_down_counts(s) for s in range(NUM_PLAYERS)])
                face_up, face_down = cards[:NUM_PLAYERS], cards[NUM_PLAYERS:].sum(axis=1)
                played = cards.sum(axis=0)
                table = np.empty((NUM_PLAYERS, SEAT_SIZE), np.float32)
                table[:, :NUM_ACTIONS] = face_up
                table[:, FACE_DOWN] = face_down
                table[:, POINTS] = game.scores()
                in_hand = [sum(game.hand_counts(s)) for s in range(NUM_PLAYERS)]
                for play in game.current_trick():
                    in_hand[play.seat] += 1
                table[:, HAND_SIZE] = in_hand  # at the start of the round; the encoder counts the plays
                rows[:, SEATS:] = table[_ROTATIONS].reshape(NUM_PLAYERS, NUM_PLAYERS * SEAT_SIZE)
                rows[:, PLAYED:PLAYED + NUM_ACTIONS] = played
                rows[:, UNSEEN:UNSEEN + NUM_ACTIONS] -= played
            self._public_key, self._public_rows_cache = key, rows
        return self._public_rows_cache

    def _encode(self, seat: int, obs: np.ndarray) -> None:
        game = self.game
        phase = game.phase
        obs[:] = self._public_rows((phase, game.round_index))[seat]
        hand = game.hand_counts(seat)
        own = obs[HAND:HAND + NUM_ACTIONS]
        own[:] = hand
        obs[OTHERS_PICKS:OTHERS_PICKS + NUM_ACTIONS] = self._others_picks[seat]
        unseen = obs[UNSEEN:UNSEEN + NUM_ACTIONS]
        unseen -= own
        if phase == "draft":
            obs[PICK] = game.pick_index
            obs[PACK:PACK + NUM_ACTIONS] = game.pack_counts(seat)
            obs[PASSED_PACKS:PASSED_PACKS + 30] = self._passed_flat[seat]
            obs[SEATS + HAND_SIZE::SEAT_SIZE] = game.pick_index
            obs[SEATS + HAND_SIZE] = sum(hand)  # its own count it knows at once
        else:
            obs[PICK] = DRAFT_PICKS
            discard = game.discarded(seat)
            if discard is not None:
                obs[DISCARD + discard - 1] = 1.0
                unseen[discard - 1] -= 1
            trick = game.current_trick()
            for i, play in enumerate(trick):
                base = TRICK + i * TRICK_SLOT
                obs[base + play.number - 1] = 1.0
                obs[base + NUM_ACTIONS] = play.forced
                unseen[play.number - 1] -= 1
                obs[SEATS + (play.seat - seat) % NUM_PLAYERS * SEAT_SIZE + HAND_SIZE] -= 1
            if len(trick) > 1:  # a pair needs two cards
                for number in game.paired_numbers():
                    obs[PAIRED + number - 1] = 1.0
        if phase == "discard":
            obs[SEATS + HAND_SIZE] = sum(hand)
        obs *= _SCALE


def env(**kwargs):
    return wrap(raw_env(**kwargs))
