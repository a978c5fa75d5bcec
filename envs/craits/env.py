"""
# Craits (``craits_v0``)

A Crazy-Eights-family shedding game with card powers, "the crank" (a chain of A and 2
that makes the first player without one draw the count), a last-card announcement, and a
game of 15 deals with hand sizes 8…1…8. Rules: ``envs/RULES.md`` section 1; engine:
``envs.craits.game``.

```python
from envs import craits_v0
env = craits_v0.env(num_players=4, render_mode="ansi")
env.reset(seed=7)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
    env.step(action)
```

| | |
|---|---|
| Import | `from envs import craits_v0` (also `pettingzoo.make("aec", "deckgym/craits-v0")` after `import envs`) |
| Actions | Discrete(109) |
| Agents | `player_0` … `player_{n-1}`, n = 2…5 |
| Observation | Dict: `observation` float32 (206,), `action_mask` int8 (109,) |

## Arguments

| argument | default | meaning |
|---|---|---|
| `preset` | `"craits"` | rule preset, `"craits"` or `"create"` (RULES.md 1.1) |
| `crank_count`, `nine`, `seven_target`, `empty_stock`, `three_scoring`, `missed_announce_penalty`, `announce`, `partnership`, `deals` | from the preset | every rule option of ``Rules``; a bad name or value raises ``ValueError`` naming it |
| `num_players` | 4 | 2 to 5; partnership needs 4 |
| `episode` | `"game"` | `"game"`: an episode is the whole game of deals. `"deal"`: an episode is one deal; ``reset()`` without a seed continues the same game with its next deal (a new game after the last), ``reset(seed=...)`` starts a new game |
| `reward` | `"deal"` | see Rewards |
| `illegal_action` | `"penalty"` | `"penalty"`: the PettingZoo-classic outcome, the episode ends, the offender gets `illegal_reward` (-1) and the others 0, ``info["illegal_action"]`` is set; `"raise"`: ``ValueError`` naming the action and the legal ones |
| `render_mode` | None | `"ansi"` (``render()`` returns the table as text) or `"human"` (prints it after every step) |

## Actions

| action | meaning |
|---|---|
| 0…51 | play card `a` (card = rank·4 + suit, ranks A…K, suits C D H S), announcing "last card" when it leaves one |
| 52…103 | play card `a − 52` without the announcement (legal only with `announce="action"`) |
| 104 | draw (one card; or take the crank's count) |
| 105…108 | name suit C, D, H, S (after an 8 or 9) |

## Observation (what the seat knows, with perfect memory)

Seats are relative to the observer: slot k (k = 1…4) is the seat k places to the left;
slots beyond the number of players are zero. Numbers are scaled to roughly [0, 1].

The names are constants of this module (block starts, and field offsets within the own
block and within a slot), for decoders such as the heuristic bot.

| index | name | content |
|---|---|---|
| 0–51 | `HAND` | own hand (all zero while the dealer names a suit for an upcard 8 or 9 without seeing it) |
| 52–103 | `SEEN` | cards seen played since the stock was last formed (the discard pile) |
| 104–155 | `TOP` | top card of the discard pile (one-hot) |
| 156–159 | `SUIT` | current suit (one-hot) |
| 160–164 | `PHASE` | phase (one-hot, index `game.PLAY` … `game.CRANK`): play, suit naming, blind suit naming (upcard), extra turn after a 6, crank |
| 165 | `CRANK_COUNT` | crank count / 10 |
| 166 | `DIRECTION` | direction: 1 = to the left, 0 = to the right |
| 167 | `STOCK` | stock size / 52 |
| 168 | `DEAL` | deal number / number of deals |
| 169 | `DEAL_SIZE` | this deal's hand size / 8 |
| 170–173 | `OWN` | own: `OWN_HAND_SIZE` hand size / 10, `OWN_SCORE` game score / 100 (clipped to ±10), `OWN_PRESSURE` pressure tally / 10, `OWN_LOSES_TURN` loses next turn |
| 174–205 | `OTHERS` | 4 slots × `SLOT_SIZE` (8): `PRESENT`, `HAND_SIZE` / 10, `ONE_CARD` holds one card, `ANNOUNCED` last card, `PARTNER`, `SCORE` game score / 100 (clipped), `PRESSURE` tally / 10, `LOSES_TURN` loses next turn |

## Rewards

Zero-sum. `reward="deal"` (default): when a deal ends every side (a seat, or a partnership)
gets (mean of the other sides' deal points − its own deal points) / 100, pressure
penalties included; partners both get their side's. `reward="win"`: only at the end of the
game, +1 split among the winners and −1 split among the rest (0 for a full tie).

Under `empty_stock="pressure"` penalties double without bound, so deal rewards of weak
players (random play, say) can be huge; `reward="win"` is bounded.

A deal cut by the 10,000-action safety net ends the episode with ``truncations`` set.

## State (for centralised critics)

``state()`` is the whole table: the observations of seats 0, 1, … one after another (each
as that seat sees it, in the layout above), a float32 vector of ``state_space`` (the number
of seats × 206). Together they hold every hand and what each seat remembers;
the cards nobody has seen (the stock) are the deck less all of these. It is for a critic
trained beside the policy (MAPPO): an agent that acts on it sees what its seat may not.

Every ``infos`` entry has the key ``illegal_action`` from the reset on (False until an
illegal action ends the episode), so libraries that read the info keys at reset see it.

## Rule decisions (RULES.md leaves these open; implemented exactly)

- A 10 with 2 players changes nothing (the direction is not flipped).
- Stalemate: `draw` actions in a row that obtained no card (empty stock and nothing to
  reshuffle, or pressure instead) are counted; playing or drawing a card resets the count;
  when it reaches the number of players the deal ends and is scored as it stands.
- Repetition: the deal ends, scored as it stands, when the same position occurs for the
  third time in it (every hand, the stock in order, the discard pile's cards and top, the
  current suit, who acts and what they decide, crank count, direction, announcements,
  pending lost turns). Only a reshuffle lets a position come back, so positions are
  counted only from a deal's first reshuffle.
- A deal is cut after 10,000 actions (scored as it stands, reported as a truncation).
- A deal never goes on after someone has gone out: when a crank started by (or run
  through) a player's last card comes back to them, they draw the count and the deal
  ends with that crank, the drawer scoring the cards drawn.
- A missed announcement's lost turn is used up by the next time the turn would reach the
  player, also through a 4's extra turn with 2 players; a player skipped by a 4 keeps it.
  One still pending when the deal ends lapses with the deal (pressure tallies run on).
- `three_scoring="create"`: each 3 first cancels one card that is neither a 3 nor an 8;
  3s left over then cancel each other in pairs (`3 3 A` scores 6).
- The upcard's power applies in both presets (the dealer's play), not only for 8 and 9.
- `episode="deal"`: `reset()` after an episode cut short by an illegal action starts the
  next deal (the cut deal is not scored), or a new game after the last deal.
- Each deal's cards come from a generator seeded by the game seed and the deal number, so
  a deal is the same whatever happened before it (duplicate evaluation relies on this).

## Version history
- v0: first release.
"""

from __future__ import annotations

import dataclasses
import itertools
import struct

import numpy as np

from ..aec import CardGameEnv, check_arguments, versus_others, wrap, zero_sum_win_rewards
from ..engine import check_choice
from .game import BLIND_SUIT, NUM_ACTIONS, OVER, SUIT_ACTION, UNANNOUNCED, CraitsGame
from .rules import Rules

# The observation layout (the docstring's table). Block starts:
HAND, SEEN, TOP, SUIT, PHASE = 0, 52, 104, 156, 160
CRANK_COUNT, DIRECTION, STOCK, DEAL, DEAL_SIZE = 165, 166, 167, 168, 169
OWN, OTHERS = 170, 174
OWN_HAND_SIZE, OWN_SCORE, OWN_PRESSURE, OWN_LOSES_TURN = range(4)  # offsets in the own block
PRESENT, HAND_SIZE, ONE_CARD, ANNOUNCED, PARTNER, SCORE, PRESSURE, LOSES_TURN = range(8)  # offsets in a slot
SLOT_SIZE = 8
MAX_OTHERS = 4
OBS_SIZE = OTHERS + MAX_OTHERS * SLOT_SIZE
# _encode writes the blocks back to back, in this order:
assert (HAND, SEEN, TOP, SUIT, PHASE, CRANK_COUNT) == (0, 52, 104, 156, 160, PHASE + OVER)
assert (DIRECTION, STOCK, DEAL, DEAL_SIZE, OWN) == tuple(range(CRANK_COUNT + 1, CRANK_COUNT + 6))
assert OTHERS == OWN + 4
EPISODES = ("game", "deal")
REWARDS = ("deal", "win")


def suit_symmetries() -> list[tuple[np.ndarray, np.ndarray]]:
    """The game's suit symmetries, as index arrays over the observation and the actions.

    Relabelling the suits turns a game into one that plays the same, as long as the two
    colours stay paired (a 9 under ``nine="same_colour"`` names a suit of its colour): the 8
    permutations that map {C, S} and {D, H} onto {C, S} or {D, H}, the identity first. For each,
    ``(observation_index, action_index)``: the relabelled game's observation is
    ``observation[observation_index]``, and the move ``a`` is ``action_index[a]`` there.
    Averaging a network's scores over them (``training.ensemble --symmetries``) averages out
    what it learnt of one suit and not of another."""
    out = []
    for p in itertools.permutations(range(4)):
        if {p[0], p[3]} not in ({0, 3}, {1, 2}):  # black (C, S) must go to one colour
            continue
        card = np.array([(c >> 2) * 4 + p[c & 3] for c in range(52)])  # card c relabelled
        observation = np.arange(OBS_SIZE)
        for block in (HAND, SEEN, TOP):
            observation[block + card] = block + np.arange(52)
        observation[SUIT + np.array(p)] = SUIT + np.arange(4)
        action = np.arange(NUM_ACTIONS)
        action[:52], action[UNANNOUNCED : UNANNOUNCED + 52] = card, UNANNOUNCED + card
        action[SUIT_ACTION : SUIT_ACTION + 4] = SUIT_ACTION + np.array(p)
        out.append((observation, action))
    return out


# The encoder assembles an observation as one byte string of native float32s from precomputed
# pieces and copies it in once: a numpy call per piece (zeroing, unpacking bits, slice
# writes) costs more than the pieces themselves.
_F32 = np.dtype(np.float32)


def _floats(*values) -> bytes:
    return struct.pack(f"={len(values)}f", *values)


_BYTE_BITS = tuple(_floats(*(b >> i & 1 for i in range(8))) for b in range(256))  # a byte's 8 bits, low first
_TOP_ONE_HOT = tuple(_floats(*(c == card for c in range(52))) for card in range(52))
# SUIT and PHASE together, by suit then phase (no phase flag once the game is over)
_SUIT_PHASE = tuple(
    tuple(_floats(*(s == suit for s in range(4)), *(p == phase for p in range(OVER))) for phase in range(OVER + 1))
    for suit in range(4)
)
# Per number of players n: the other seats in slot order from each seat, the packer of the
# scalars from CRANK_COUNT on (n - 1 slots) and the zeros of the absent slots.
_SLOT_SEATS = {n: tuple(tuple((seat + k) % n for k in range(1, n)) for seat in range(n)) for n in range(2, 6)}
_SCALARS = {n: struct.Struct(f"={OTHERS - CRANK_COUNT + (n - 1) * SLOT_SIZE}f") for n in range(2, 6)}
_ABSENT_SLOTS = {n: bytes(4 * (MAX_OTHERS - n + 1) * SLOT_SIZE) for n in range(2, 6)}


def encode(game: CraitsGame, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation of ``game`` into ``obs`` (float32, ``OBS_SIZE``): the env's
    encoder, also used on the sampled worlds of a network-guided search (``envs.craits.view``)."""
    n = game.num_players
    phase = game.phase_id
    hands = game.hand_bits
    # HAND and SEEN: 104 bits, 13 bytes
    bits = (hands[seat] if phase != BLIND_SUIT else 0) | game.discard_bits << 52
    parts = [_BYTE_BITS[byte] for byte in bits.to_bytes(13, "little")]
    parts.append(_TOP_ONE_HOT[game.discard[-1]])
    parts.append(_SUIT_PHASE[game.suit_id][phase])
    deals = game.rules.deals
    pressures, lose_turn, announced = game.pressures, game.lose_turn, game.announced
    partner = (seat + 2) % 4 if game.rules.partnership else None  # game.partner(seat), without the call
    # Game scores / 100, clipped to ±10: pressure penalties double without bound, and one
    # huge input would swamp the others.
    score = [-10.0 if s < -1000 else 10.0 if s > 1000 else s / 100.0 for s in game.totals]
    values = [
        game.crank / 10.0,
        game.direction == 1,
        len(game.stock) / 52.0,
        game.deal_index / len(deals),
        deals[game.deal_index] / 8.0,
        # OWN: OWN_HAND_SIZE, OWN_SCORE, OWN_PRESSURE, OWN_LOSES_TURN
        hands[seat].bit_count() / 10.0,
        score[seat],
        pressures[seat] / 10.0,
        lose_turn[seat],
    ]
    for other in _SLOT_SEATS[n][seat]:
        size = hands[other].bit_count()
        # PRESENT, HAND_SIZE, ONE_CARD, ANNOUNCED, PARTNER, SCORE, PRESSURE, LOSES_TURN
        values += (
            1.0,
            size / 10.0,
            size == 1,
            announced[other],
            other == partner,
            score[other],
            pressures[other] / 10.0,
            lose_turn[other],
        )
    parts.append(_SCALARS[n].pack(*values))
    parts.append(_ABSENT_SLOTS[n])
    data = b"".join(parts)
    if obs.dtype is _F32:
        try:
            # a plain copy; numpy's stubs make an ndarray a Buffer only from Python 3.12 on:
            memoryview(obs).cast("B")[:] = data  # type: ignore[arg-type]  # a Buffer at run time
            return
        except TypeError:  # not contiguous (or read-only: numpy's own error below)
            pass
    obs[:] = np.frombuffer(data, np.float32)


class raw_env(CardGameEnv):
    metadata = {**CardGameEnv.metadata, "name": "craits_v0"}
    game: CraitsGame  # None until reset()

    def __init__(
        self,
        preset: str = "craits",
        num_players: int = 4,
        episode: str = "game",
        reward: str = "deal",
        illegal_action: str = "penalty",
        render_mode: str | None = None,
        **options,
    ):
        check_choice("episode", episode, EPISODES)
        check_choice("reward", reward, REWARDS)
        check_arguments(
            self.metadata["name"],
            options,
            [
                "preset",
                "num_players",
                "episode",
                "reward",
                "illegal_action",
                "render_mode",
                *(f.name for f in dataclasses.fields(Rules)),
            ],
        )
        self.rules = Rules.preset(preset, **options)
        self.rules.check_players(num_players)
        self.episode = episode
        self.reward = reward
        super().__init__(num_players, OBS_SIZE, NUM_ACTIONS, illegal_action, render_mode=render_mode)

    def rule_args(self) -> dict:
        args = {k: v for k, v in dataclasses.asdict(self.rules).items() if k != "deals"}
        return {**args, "num_players": len(self.possible_agents)}

    def _new_game(self, seed) -> CraitsGame:
        return CraitsGame(self.rules, len(self.possible_agents), seed)

    def reset(self, seed=None, options=None):
        game = self.game
        if self.episode == "deal" and seed is None and game is not None and not game.game_over:
            if not game.deal_over and game.deal_actions:
                game.abandon_deal()  # the last episode stopped mid-deal (an illegal action)
            if not game.game_over:
                self._start_episode()  # the next deal of the same game
                return
        super().reset(seed, options)

    def _episode_over(self) -> bool:
        game = self.game
        return game.game_over or game.deal_truncated or (self.episode == "deal" and game.deal_over)

    def _truncated(self) -> bool:
        return self.game.deal_truncated

    def _rewards(self):
        game = self.game
        if self.reward == "win":
            return zero_sum_win_rewards(game.winners(), game.num_players) if game.game_over else None
        if not game.deal_over:
            return None
        sides = game.sides()
        gains = versus_others([-sum(game.last_deal_points[s] for s in side) for side in sides])  # points hurt
        rewards = [0.0] * game.num_players
        for side, gain in zip(sides, gains):
            for seat in side:
                rewards[seat] = gain / 100.0
        return rewards

    def _encode(self, seat: int, obs: np.ndarray) -> None:
        encode(self.game, seat, obs)


def env(**kwargs):
    return wrap(raw_env(**kwargs))
