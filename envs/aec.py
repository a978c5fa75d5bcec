"""PettingZoo AEC plumbing shared by every deckgym game.

A game module subclasses :class:`CardGameEnv` and supplies the engine, the observation
encoder and the reward rule; this class owns the AEC bookkeeping (agents, rewards,
terminations, illegal actions, seeding, rendering) in one place, so both games behave
the same way.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .engine import IllegalActionError, check_choice, shown
from .present import presentation

ILLEGAL_ACTION_MODES = ("penalty", "raise")


def zero_sum_win_rewards(winners, num_players: int) -> list[float]:
    """+1 split among the winners, -1 split among the rest (0 for all when everyone wins)."""
    losers = num_players - len(winners)
    if not losers:
        return [0.0] * num_players
    win, lose = 1.0 / len(winners), -1.0 / losers
    return [win if s in winners else lose for s in range(num_players)]


def versus_others(values) -> list[float]:
    """Each value minus the mean of the others': zero-sum, the shape of both games' rewards."""
    total, others = sum(values), len(values) - 1
    return [v - (total - v) / others for v in values]


def check_arguments(env_name: str, given, allowed) -> None:
    """``ValueError`` naming every argument of ``given`` that the env does not take."""
    unknown = [k for k in given if k not in allowed]
    if unknown:
        raise ValueError(
            f"unknown {env_name} argument {', '.join(shown(k) for k in unknown)}: "
            f"the arguments are {', '.join(allowed)}"
        )


class CardGameEnv(AECEnv):
    """AEC env around a ``GameEngine``. Subclasses implement:

    - ``_new_game(seed) -> engine``
    - ``_encode(seat, out)`` writes the seat's observation vector into ``out`` (float32, ``obs_size``)
    - ``_rewards() -> list[float] | None`` rewards earned by the action just applied
    - ``_episode_over() -> bool``
    - optionally ``_truncated() -> bool`` and ``rule_args() -> dict``

    ``render()`` writes the table with the game's ``present`` module (``envs/present.py``).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "is_parallelizable": False}
    # The engine (a ``GameEngine``), ``None`` until ``reset()``; each game's env declares its class.
    game: Any

    def __init__(
        self,
        num_players: int,
        obs_size: int,
        num_actions: int,
        illegal_action: str = "penalty",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
    ):
        super().__init__()
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        check_choice("render_mode", render_mode, (*self.metadata["render_modes"], None))
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.num_actions = num_actions
        self.obs_size = obs_size
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, (obs_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces: dict[str, Any] = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        # The whole table for a centralised critic (``state()``): every seat's observation.
        self.state_space = spaces.Box(-np.inf, np.inf, (num_players * obs_size,), np.float32)
        self._seeder = random.Random()
        self.game = None

    def rule_args(self) -> dict:
        """The effective rule options of this env (defaults resolved), JSON-ready: what a
        trained policy must agree with to sit at this table. Games without options: {}."""
        return {}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ AEC
    def reset(self, seed=None, options=None):
        if seed is not None:
            self._seeder.seed(seed)
        self.game = self._new_game(self._seeder.getrandbits(64))
        self._start_episode()

    def _start_episode(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        # A step's infos have the same keys from the reset on (TorchRL builds its spec from reset's).
        self.infos: dict[str, dict] = {a: {"illegal_action": False} for a in self.agents}
        self._obs_cache: dict[str, dict[str, np.ndarray]] = {}
        self._paid = False
        self.agent_selection = self.agents[self.game.current_player]

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self.agent_name_mapping[agent]
        self._cumulative_rewards[agent] = 0.0
        game = self.game
        try:
            game.apply(action)  # the engine's own legality check, the only one
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            rewards = [0.0] * self.num_agents
            rewards[seat] = self.illegal_reward
            self._finish(rewards, illegal=True)
            return
        self._obs_cache = {}
        rewards = self._rewards()
        if self._episode_over():
            self._finish(rewards or [0.0] * self.num_agents)
            return
        if rewards is None:
            if self._paid:  # clear last step's rewards only when there were some
                self._paid = False
                for a in self.agents:
                    self.rewards[a] = 0.0
        else:
            self._paid = True
            for a, r in zip(self.agents, rewards):
                self.rewards[a] = r
                self._cumulative_rewards[a] += r
        self.agent_selection = self.agents[game.current_player]
        if self.render_mode == "human":
            self.render()

    def _truncated(self) -> bool:
        """Whether the episode that just ended was cut short (a safety net) rather than finished."""
        return False

    def _finish(self, rewards, illegal: bool = False) -> None:
        self._obs_cache = {}
        truncated = not illegal and self._truncated()
        for a, r in zip(self.agents, rewards):
            self.rewards[a] = r
            self._cumulative_rewards[a] += r
            self.terminations[a] = not truncated
            self.truncations[a] = truncated
            if illegal:
                self.infos[a] = {"illegal_action": True}
        if self.render_mode == "human":
            self.render()

    def observe(self, agent):
        obs = self._obs_cache.get(agent)
        if obs is None:
            obs = self._obs_cache[agent] = {
                "observation": np.empty(self.obs_size, np.float32),
                "action_mask": np.empty(self.num_actions, np.int8),
            }
            self.observe_into(agent, obs["observation"], obs["action_mask"])
        return obs

    def state(self) -> np.ndarray:
        """The whole table, every hidden card included: the observations of seats 0, 1, ...
        (each relative to its own seat, as ``observe`` gives it) one after another, a float32
        vector of ``state_space``'s shape. Together they hold every hand, pack and discard
        and what each seat remembers; the cards nobody has seen (a stock's order, cards set
        aside) are the deck less all of these. For centralised critics (MAPPO); an agent
        that acts on it sees what its seat may not."""
        state = np.empty(self.state_space.shape, np.float32)
        for seat in range(len(self.possible_agents)):
            self._encode(seat, state[seat * self.obs_size : (seat + 1) * self.obs_size])
        return state

    def observe_into(self, agent, observation: np.ndarray, action_mask: np.ndarray) -> None:
        """Write ``agent``'s observation and action mask into the given arrays: what a batched
        learner uses to fill its ``[N, ...]`` buffers without allocating per step."""
        self._encode(self.agent_name_mapping[agent], observation)
        action_mask[:] = 0
        if agent == self.agent_selection and not (self.terminations[agent] or self.truncations[agent]):
            for action in self.game.legal_actions():  # a few actions: faster than fancy indexing
                action_mask[action] = 1

    def render(self):
        if self.render_mode is None:
            logger.warn("render() called without render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = presentation(self.game).render(self.game)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self):
        pass


def _forwarded(name: str) -> property:
    def get(self):
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(get)


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order checks, with the attributes ``last()`` and ``agent_iter()`` read on
    every step forwarded by properties: the generic ``__getattr__`` fallback used to cost
    more than the raw env's whole step."""

    agent_selection = _forwarded("agent_selection")
    agents = _forwarded("agents")
    rewards = _forwarded("rewards")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    infos = _forwarded("infos")
    _cumulative_rewards = _forwarded("_cumulative_rewards")

    def last(self, observe: bool = True):
        if not self._has_reset:
            raise AttributeError("last() cannot be called before reset")
        return self.env.last(observe)

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            return super().agent_iter(max_iter)  # PettingZoo's error
        return _AgentIterator(self, max_iter)

    def step(self, action) -> None:
        if self._has_reset and self.env.agents:  # the usual case in one test, then straight to the env
            self._has_updated = True
            self.env.step(action)
        else:  # PettingZoo's errors and warnings
            super().step(action)


class _AgentIterator:
    """PettingZoo's order-enforcing ``agent_iter`` (a step or reset between two agents),
    reading the raw env directly instead of through the wrapper's forwarding."""

    def __init__(self, wrapper: OrderEnforcing, max_iter: int):
        self.wrapper, self.raw, self.left = wrapper, wrapper.env, max_iter

    def __iter__(self):
        return self

    def __next__(self):
        if not self.raw.agents or self.left <= 0:
            raise StopIteration
        self.left -= 1
        if not self.wrapper._has_updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        self.wrapper._has_updated = False
        return self.raw.agent_selection


def wrap(raw):
    """The classic order checks. Out-of-range and illegal actions are handled by the raw env
    itself (it checks legality anyway), so no bounds wrapper and no wrapper that rebuilds
    an observation to find the mask."""
    return OrderEnforcing(raw)
