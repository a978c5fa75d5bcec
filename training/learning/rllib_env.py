"""What RLlib (new API stack) trains with: the turn-based AEC games as an RLlib
``MultiAgentEnv``, the masked policy RLModule, opponent modules and the per-episode seating.

- ``AECMultiAgentEnv``: one deckgym game; every seat is an RLlib agent (``player_0`` …). Only
  the seat to act gets an observation, a dict ``{"observation", "action_mask"}``. Each seat's
  rewards are summed as the game pays them (its own move, the others' moves, the end) and
  held for that seat alone: paid with its next observation after it has acted, or at the
  episode's end, never to another seat. Rewards earned before a seat's first move join its
  first move's reward (as ``training.learning.learner_env`` does); a seat that never moved is never
  paid (it made no decision to learn from).
- ``MaskedPolicyModule``: the policy MLP ``observation -> net_arch (activation) -> logits``,
  exactly what a checkpoint's policy.npz holds, with illegal logits pushed to RLlib's
  ``FLOAT_MIN`` (logits + clamp(log mask)). ``MaskedPPOModule`` adds a separate value MLP
  (RLlib's PPO needs ``ValueFunctionAPI``): the learner. Frozen self-play snapshots are
  ``MaskedPolicyModule``s (no value head, so PPO builds no optimizer for them).
- ``AgentModule``: any deckgym agent (``heuristic``, ``random``, a checkpoint folder) as a
  non-trainable module: it runs the numpy agent on each observation and returns logits that
  force its choice.
- ``SeatMapping``: the ``policy_mapping_fn``: per episode, the learner's seat (or both seats
  of its side) and, for every other seat, a draw from the YAML ``opponents.pool`` with the
  pool semantics of ``training.learning.learner_env.OpponentPool`` (self_play: the latest snapshot
  with probability ``latest_weight``, else one of the ``window`` before it).
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import gymnasium
import numpy as np
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN

from training.agents import make_agent
from training.common.games import EnvHandle
from training.running.executor import write_folder

LEARNER = "learner"


def snapshot_id(k: int, window: int) -> str:
    """The module slot of the ``k``-th snapshot: ``window + 1`` slots reused in turn."""
    return f"self_play_{k % (window + 1)}"


def symlog(x: float) -> float:
    return float(np.sign(x) * np.log1p(abs(x)))


# ---------------------------------------------------------------- the env
class AECMultiAgentEnv(MultiAgentEnv):
    """A deckgym AEC game as an RLlib ``MultiAgentEnv`` (see the module doc for the reward
    rule). ``config``: ``env_id``, ``env_args``, optionally ``reward_transform`` (``"symlog"``:
    each payment squashed, as ``training.reward_transform``)."""

    def __init__(self, config=None):
        super().__init__()
        config = dict(config or {})
        if "env_id" not in config:
            raise ValueError("AECMultiAgentEnv needs env_config {'env_id': ..., 'env_args': {...}}")
        self.raw = EnvHandle(config["env_id"], config.get("env_args", {})).new_raw()
        self.symlog = config.get("reward_transform", "none") == "symlog"
        self.possible_agents = list(self.raw.possible_agents)
        self.agents = []
        n_obs, n_actions = self.raw.obs_size, self.raw.num_actions
        space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(-np.inf, np.inf, (n_obs,), np.float32),
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, (n_actions,), np.float32),
            }
        )
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(n_actions) for a in self.possible_agents}
        self.held: dict = {}  # seat -> reward earned since its last payment
        self.acted: set = set()  # seats that have moved this episode (only they can be paid)

    def _observe(self, agent) -> dict:
        obs = self.raw.observe(agent)
        return {"observation": obs["observation"].copy(), "action_mask": obs["action_mask"].astype(np.float32)}

    def _pay(self, agent) -> float:
        reward, self.held[agent] = self.held[agent], 0.0
        return symlog(reward) if self.symlog else float(reward)

    def reset(self, *, seed=None, options=None):
        self.raw.reset(seed=seed)
        self.agents = list(self.possible_agents)
        self.held = {a: 0.0 for a in self.possible_agents}
        self.acted = set()
        acting = self.raw.agent_selection
        return {acting: self._observe(acting)}, {}

    def step(self, action_dict):
        raw, acting = self.raw, self.raw.agent_selection
        if set(action_dict) != {acting}:
            raise ValueError(f"turn-based game: only {acting} may act now, got actions for {sorted(action_dict)}")
        raw.step(int(action_dict[acting]))
        self.acted.add(acting)
        for agent in self.possible_agents:  # raw.rewards: what the step just made paid each seat
            self.held[agent] += raw.rewards[agent]
        if any(raw.terminations.values()) or any(raw.truncations.values()):
            # Every seat that moved gets its last observation and what it is still owed.
            paid = [a for a in self.possible_agents if a in self.acted]
            obs = {a: self._observe(a) for a in paid}
            rewards = {a: self._pay(a) for a in paid}
            truncated = any(raw.truncations.values()) and not any(raw.terminations.values())
            self.agents = []
            return (
                obs,
                rewards,
                {**{a: not truncated for a in paid}, "__all__": not truncated},
                {**{a: truncated for a in paid}, "__all__": truncated},
                {},
            )
        nxt = raw.agent_selection
        # Paid only once it has acted: RLlib drops a reward that comes with a first observation.
        rewards = {nxt: self._pay(nxt)} if nxt in self.acted else {}
        return {nxt: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}


# ---------------------------------------------------------------- the modules
def mlp(sizes, activation: str, outputs: int):
    import torch.nn as nn

    layers = []
    for inputs, width in zip(sizes, sizes[1:]):
        layers += [nn.Linear(inputs, width), {"tanh": nn.Tanh, "relu": nn.ReLU}[activation]()]
    return nn.Sequential(*layers, nn.Linear(sizes[-1], outputs))


def masked(logits, mask):
    """Illegal logits to about FLOAT_MIN: finite (no NaN in softmax or entropy, even for the
    all-zero mask of a final observation), yet never sampled."""
    import torch

    return logits + torch.clamp(torch.log(mask), min=FLOAT_MIN)


class MaskedPolicyModule(TorchRLModule):
    """The policy MLP with the action mask applied. ``model_config``: ``net_arch``,
    ``activation``. Frozen self-play snapshots are this module alone."""

    def setup(self):
        c = self.model_config
        obs_size = self.observation_space["observation"].shape[0]
        self.pi = mlp([obs_size, *c["net_arch"]], c["activation"], self.action_space.n)

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: masked(self.pi(obs["observation"]), obs["action_mask"])}


class MaskedPPOModule(MaskedPolicyModule, ValueFunctionAPI):
    """The learner: the masked policy and a separate value MLP of the same hidden sizes."""

    def setup(self):
        super().setup()
        c = self.model_config
        self.vf = mlp([self.observation_space["observation"].shape[0], *c["net_arch"]], c["activation"], 1)

    def compute_values(self, batch, embeddings=None):
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)


class AgentModule(TorchRLModule):
    """A deckgym agent as a non-trainable module. ``model_config``: ``env_id``, ``env_args``,
    ``agent`` (a ``training.agents.make_agent`` spec), ``deterministic``, ``seed``, and for a
    checkpoint or exported bot ``files`` (``training.agents.folders.pack_agents``: its files, read
    by the driver), written into a temporary folder where the module runs, so env runners on
    other machines need no shared disk."""

    def setup(self):
        c = self.model_config
        spec = c["agent"]
        if c.get("files"):
            spec = str(Path(tempfile.mkdtemp(prefix="deckgym-agent-")) / "agent")
            write_folder(Path(spec), c["files"])
        self.agent = make_agent(
            spec, EnvHandle(c["env_id"], c["env_args"]), seed=c.get("seed"), deterministic=c.get("deterministic", False)
        )

    def _forward(self, batch, **kwargs):
        import torch

        obs = batch[Columns.OBS]
        observations, masks = obs["observation"].cpu().numpy(), obs["action_mask"].cpu().numpy()
        logits = np.full(masks.shape, FLOAT_MIN, np.float32)
        for row, (observation, mask) in enumerate(zip(observations, masks)):
            if mask.any():  # a final observation has nothing to choose
                logits[row, self.agent.act(observation, mask.astype(np.int8))] = 0.0
        return {Columns.ACTION_DIST_INPUTS: torch.as_tensor(logits)}


# ---------------------------------------------------------------- seating
class SeatMapping:
    """``policy_mapping_fn(agent_id, episode)``: per episode (drawn from its id, so every
    call for one episode agrees), the learner's seat(s) and an opponent module per other seat.

    ``pool``: ``[(module_id or "self_play", weight)]``; ``snapshots_taken``: how many self-play
    snapshots exist, kept current on every env runner by the algorithm."""

    def __init__(self, agents, pool, learner_seat="random", own_partner=False, latest_weight=0.5, window=10):
        self.agents, self.learner_seat, self.own_partner = list(agents), learner_seat, own_partner
        self.pool = [(m, w) for m, w in pool if w > 0]
        if not self.pool:
            raise ValueError("the opponent pool needs an entry of weight > 0")
        self.latest_weight, self.window = latest_weight, window
        self.snapshots_taken = 0

    def seating(self, episode_id) -> dict:
        rng, n = random.Random(str(episode_id)), len(self.agents)
        seat = rng.randrange(n) if self.learner_seat == "random" else self.learner_seat
        controlled = {seat, (seat + 2) % n} if self.own_partner else {seat}
        modules, weights = zip(*self.pool)
        out = {}
        for s, agent in enumerate(self.agents):
            out[agent] = LEARNER if s in controlled else self.opponent(rng.choices(modules, weights)[0], rng)
        return out

    def opponent(self, module_id: str, rng) -> str:
        if module_id != "self_play":
            return module_id
        latest = self.snapshots_taken - 1
        if latest < 0:
            raise RuntimeError("self_play opponent drawn before the first snapshot")
        older = list(range(max(0, latest - self.window), latest))
        k = latest if not older or rng.random() < self.latest_weight else rng.choice(older)
        return snapshot_id(k, self.window)

    def __call__(self, agent_id, episode, **kwargs):
        return self.seating(episode.id_)[agent_id]


def learner_class():
    """RLlib's torch PPO learner, building optimizers only for the modules it trains: its
    default gives every torch module one, and fails on the parameterless ``AgentModule``."""
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner

    class DeckgymPPOLearner(PPOTorchLearner):
        def configure_optimizers_for_module(self, module_id, config=None):
            if self.should_module_be_updated(module_id):
                super().configure_optimizers_for_module(module_id, config)

    return DeckgymPPOLearner
