"""The Little Tricks AEC env. Observation (42 floats, seats relative to the observer):
own hand (12) · cards of completed tricks (12) · this trick's cards (12) · tricks won by
the seat k places to the left, k = 0..2, / 3 (3) · this trick's leader as a relative seat
(3, one-hot). Action ``a`` plays card ``a + 1``. Rewards at the end: each seat's tricks
minus the mean of the others'."""

from __future__ import annotations

import numpy as np

from envs.aec import CardGameEnv, check_arguments, versus_others, wrap
from envs.engine import check_choice

from .game import HAND_SIZE, NUM_CARDS, LittleTricksGame

OBS_SIZE = 3 * NUM_CARDS + 6


class raw_env(CardGameEnv):
    metadata = {**CardGameEnv.metadata, "name": "little_tricks_v0"}

    def __init__(
        self, num_players: int = 2, illegal_action: str = "penalty", render_mode: str | None = None, **unknown
    ):
        check_arguments(self.metadata["name"], unknown, ["num_players", "illegal_action", "render_mode"])
        check_choice("num_players", num_players, (2, 3))
        super().__init__(num_players, OBS_SIZE, NUM_CARDS, illegal_action, render_mode=render_mode)

    def rule_args(self) -> dict:
        return {"num_players": len(self.possible_agents)}

    def _new_game(self, seed) -> LittleTricksGame:
        return LittleTricksGame(len(self.possible_agents), seed)

    def _episode_over(self) -> bool:
        return self.game.is_over

    def _rewards(self):
        return versus_others(self.game.tricks) if self.game.is_over else None

    def _encode(self, seat: int, obs: np.ndarray) -> None:
        game, n = self.game, self.game.num_players
        obs[:] = 0.0
        for a in range(NUM_CARDS):
            obs[a] = game.hands[seat] >> a & 1
            obs[NUM_CARDS + a] = game.played >> a & 1
        for _, card in game.trick:
            obs[2 * NUM_CARDS + card - 1] = 1.0
        for k in range(n):
            obs[3 * NUM_CARDS + k] = game.tricks[(seat + k) % n] / HAND_SIZE
        obs[3 * NUM_CARDS + 3 + (game.leader - seat) % n] = 1.0


def env(**kwargs):
    return wrap(raw_env(**kwargs))
