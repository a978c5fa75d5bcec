"""Double DQN with action masking: the classic value-based, off-policy baseline of RLCard and
OpenSpiel. A Q-network gives one value per action; the move is the masked argmax.

- Acting: masked epsilon-greedy over the N games of the batched env, one batched forward pass
  per step; epsilon falls linearly from ``epsilon_start`` to ``epsilon_end`` over
  ``epsilon_decay_steps`` timesteps (then stays).
- Replay: preallocated numpy arrays of (obs, action, reward, next obs, next mask, done).
  The next observation is the learner's next one in the same game (the env's auto-reset puts
  the last one of an ended episode in ``infos[i]["terminal_observation"]``), and the next
  mask is that observation's legal actions.
- Target: a* = argmax over the legal next actions of Q_online(s'),
  y = r + gamma (1 - done) Q_target(s', a*); Huber (smooth L1) or MSE loss, Adam, gradient
  norm clipping. The target network is a copy of the online one, refreshed every
  ``target_update`` gradient steps (a hard update, as RLCard and OpenSpiel do).
- n-step returns (``n_step`` > 1): a transition's reward is the discounted sum of the
  learner's next ``n_step`` rewards, and its target bootstraps from the observation ``n_step``
  learner turns on, discounted by gamma ** n_step (fewer at an episode's end). A reward that
  comes only at the end of a long game (Pairs Draft's) then reaches the early decisions in
  fewer rounds of bootstrapping. Rewards are taken as played (epsilon-greedy), uncorrected,
  as Rainbow does; ``n_step: 1`` is plain one-step Double DQN.
- Truncation: as SB3 does, an episode cut short (``TimeLimit.truncated``: Craits' 10,000-action
  safety net) is bootstrapped, not terminal. The env gives no mask for a terminal
  observation, so the max is then taken over all actions (an ended episode's stored mask is
  all True; a terminal one's is never used).
- Training: every ``train_freq`` vectorised steps (``train_freq x n_envs`` transitions),
  ``gradient_steps`` minibatches, once the buffer holds ``learning_starts`` transitions (and
  at least a batch). The callback's ``on_rollout_start`` comes right after each round, so
  the snapshots and checkpoints it makes hold weights that learnt from every step counted.
- Resume: ``save`` keeps both networks, the optimizer and the counters, not the replay
  buffer: a resumed run refills it, and trains again once it holds ``learning_starts``.
"""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Annotated, Final, Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from training.common.schema import Number, Section

from .value_nets import epsilon_greedy, network_arrays, q_network

ACTION_SELECTION: Final = "masked_argmax"
LOG_EVERY = 10_000  # timesteps between the rows the logger writes (and one when learn() ends)


class Config(Section):
    name: Literal["DoubleDQN"] = "DoubleDQN"
    net_arch: list[Annotated[int, Field(gt=0)]] = [128, 128]
    activation: Literal["tanh", "relu"] = "relu"
    learning_rate: Number = Field(1e-4, gt=0, le=1)
    # {timestep: rate}: from that timestep on, that rate (a step schedule; learning_rate before
    # the first). Its future may change when a run resumes: a long run's last stretch at a lower
    # rate settles its Q-values' noise (docs/strength.md).
    learning_rate_steps: dict[Annotated[int, Field(ge=0)], Annotated[Number, Field(gt=0, le=1)]] = {}
    buffer_size: int = Field(100_000, gt=0)  # transitions kept (the oldest make way)
    batch_size: int = Field(128, gt=0)  # at most buffer_size
    gamma: Number = Field(0.99, ge=0, le=1)
    n_step: int = Field(1, gt=0)  # learner turns summed before bootstrapping (module doc)
    learning_starts: int = Field(5_000, ge=0)  # transitions in the buffer before the first gradient step
    train_freq: int = Field(4, gt=0)  # vectorised env steps (of n_envs transitions each) between rounds
    gradient_steps: int = Field(1, gt=0)  # minibatches per round
    target_update: int = Field(1_000, gt=0)  # gradient steps between copies of the online network to the target
    epsilon_start: Number = Field(1.0, ge=0, le=1)
    epsilon_end: Number = Field(0.05, ge=0, le=1)
    epsilon_decay_steps: int = Field(100_000, gt=0)  # timesteps
    loss: Literal["huber", "mse"] = "huber"
    max_grad_norm: Number = Field(10.0, gt=0)
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    torch_threads: int = Field(1, gt=0)  # see MaskablePPO's: one thread suits small MLPs

    @field_validator("batch_size")
    @classmethod
    def _batch_fits_the_buffer(cls, batch_size, info: ValidationInfo):
        buffer_size = info.data.get("buffer_size")  # absent when it is itself wrong
        if buffer_size is not None and batch_size > buffer_size:
            raise ValueError(f"must be at most algorithm.buffer_size ({buffer_size})")
        return batch_size


def memory_bytes(config, obs_size: int, n_actions: int) -> dict:
    """What training holds beside the envs, by part: an estimate on the high side."""
    a = config.algorithm
    sizes = [obs_size, *a.net_arch, n_actions]
    params = sum((i + 1) * o for i, o in zip(sizes, sizes[1:]))
    transition = 8 * obs_size + n_actions + 16  # obs and next obs (float32), next mask (bool), action, reward, done
    transition += 4 * (a.n_step > 1)  # the bootstrap's discount (float32)
    # float32: online and target weights, gradients, Adam's two moments; a minibatch's activations
    # (three passes: online on obs and next obs, target on next obs), forward and backward, and
    # the minibatch itself as numpy arrays and as tensors
    network = 4 * (5 * params + 2 * 3 * a.batch_size * (sum(sizes))) + 2 * a.batch_size * transition
    return {"network and optimizer": network, "replay buffer": a.buffer_size * transition}


def check_installed() -> None:
    """Nothing to check: it needs only torch and stable-baselines3, as training itself does."""


class ReplayBuffer:
    """The last ``capacity`` transitions, in preallocated arrays (a ring)."""

    def __init__(self, capacity: int, obs_size: int, n_actions: int, discounts: bool = False):
        self.capacity, self.pos, self.size = capacity, 0, 0
        # the bootstrap's discount per transition: only n-step returns vary it
        self.discounts = np.zeros(capacity, np.float32) if discounts else None
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.next_obs = np.zeros((capacity, obs_size), np.float32)
        self.next_masks = np.zeros((capacity, n_actions), bool)
        self.actions = np.zeros(capacity, np.int64)
        self.rewards = np.zeros(capacity, np.float32)
        self.dones = np.zeros(capacity, np.float32)

    def add(self, obs, actions, rewards, next_obs, next_masks, dones, discounts=None) -> None:
        rows = (self.pos + np.arange(len(obs))) % self.capacity
        if self.discounts is not None:
            self.discounts[rows] = discounts
        self.obs[rows], self.actions[rows], self.rewards[rows] = obs, actions, rewards
        self.next_obs[rows], self.next_masks[rows], self.dones[rows] = next_obs, next_masks, dones
        self.pos = int(rows[-1] + 1) % self.capacity
        self.size = min(self.size + len(obs), self.capacity)

    def sample(self, n: int, rng) -> tuple:
        """(obs, actions, rewards, next obs, next masks, dones), and the discounts when kept."""
        rows = rng.integers(self.size, size=n)
        batch = (
            self.obs[rows],
            self.actions[rows],
            self.rewards[rows],
            self.next_obs[rows],
            self.next_masks[rows],
            self.dones[rows],
        )
        return batch if self.discounts is None else (*batch, self.discounts[rows])


class DoubleDQN:
    """The learner: SB3-like (``learn``, ``save``, ``num_timesteps``, ``logger`` ...)."""

    def __init__(self, config, venv):
        import torch

        a = self.config = config.algorithm
        self.env, self.seed = venv, config.training.seed
        self.observation_space, self.action_space = venv.observation_space, venv.action_space
        self.n_envs, self.n_steps = venv.num_envs, a.train_freq  # n_steps: vectorised steps per round
        auto = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(auto if a.device == "auto" else a.device)
        torch.manual_seed(self.seed)
        obs_size, n_actions = int(self.observation_space.shape[0]), int(self.action_space.n)
        self.q_net = q_network(obs_size, a.net_arch, a.activation, n_actions).to(self.device)
        self.q_target = copy.deepcopy(self.q_net).requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.q_net.parameters(), lr=a.learning_rate)
        self.buffer = ReplayBuffer(a.buffer_size, obs_size, n_actions, discounts=a.n_step > 1)
        # n-step returns: per env, the learner's turns not yet stored, as [obs, action, return so far]
        self._pending: list[list[list]] = [[] for _ in range(self.n_envs)]
        self.rng = np.random.default_rng(self.seed)
        self.num_timesteps = self.n_updates = 0
        self._last_obs = self._last_masks = None
        self._logger = None

    # ------------------------------------------------------------------ SB3-like surface
    def get_env(self):
        return self.env

    def set_logger(self, logger) -> None:
        self._logger = logger

    @property
    def logger(self):
        if self._logger is None:
            from stable_baselines3.common.logger import Logger

            self._logger = Logger(folder=None, output_formats=[])
        return self._logger

    @property
    def learning_rate(self) -> float:
        """The rate of the schedule at the current timestep."""
        a = self.config
        return next(
            (a.learning_rate_steps[t] for t in sorted(a.learning_rate_steps, reverse=True) if t <= self.num_timesteps),
            a.learning_rate,
        )

    @property
    def epsilon(self) -> float:
        a = self.config
        done = min(1.0, self.num_timesteps / a.epsilon_decay_steps)
        return a.epsilon_start + done * (a.epsilon_end - a.epsilon_start)

    def save(self, path) -> None:
        """Networks, optimizer and counters (not the replay buffer), for ``torch.load(weights_only=True)``."""
        import torch

        torch.save(
            {
                "q_net": self.q_net.state_dict(),
                "q_target": self.q_target.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "num_timesteps": self.num_timesteps,
                "n_updates": self.n_updates,
            },
            path,
        )

    # ------------------------------------------------------------------ acting and learning
    def act(self, obs: np.ndarray, masks: np.ndarray, epsilon: float) -> np.ndarray:
        """Masked epsilon-greedy moves for a batch: a uniformly drawn legal action with
        probability ``epsilon``, else the legal action of highest value."""
        import torch

        with torch.no_grad():
            q = self.q_net(torch.as_tensor(obs, device=self.device)).cpu().numpy()
        return epsilon_greedy(q, masks, epsilon, self.rng)

    def targets(self, rewards, next_obs, next_masks, dones, discounts=None):
        """Double DQN targets: the online network picks the best legal next action, the target
        network values it, discounted by gamma (or by each transition's ``discounts``)."""
        import torch

        discount = self.config.gamma if discounts is None else discounts
        with torch.no_grad():
            best = self.q_net(next_obs).masked_fill(~next_masks, -torch.inf).argmax(1, keepdim=True)
            return rewards + discount * (1 - dones) * self.q_target(next_obs).gather(1, best).squeeze(1)

    def _masks(self) -> np.ndarray:
        return np.stack(self.env.env_method("action_masks")).astype(bool)

    def _collect_step(self) -> None:
        obs, masks = self._last_obs, self._last_masks
        actions = self.act(obs, masks, self.epsilon)
        new_obs, rewards, dones, infos = self.env.step(actions)
        new_masks = self._masks()
        next_obs, next_masks, terminal = new_obs.copy(), new_masks.copy(), dones.astype(np.float32)
        for i in np.flatnonzero(dones):  # the new observation is the next episode's: take the last one
            next_obs[i] = infos[i]["terminal_observation"]
            next_masks[i] = True  # no mask comes with it: see the module's doc (truncation)
            terminal[i] = not infos[i].get("TimeLimit.truncated", False)
            if "episode" in infos[i]:  # VecMonitor's
                self.logger.record_mean("rollout/ep_rew_mean", infos[i]["episode"]["r"])
        if self.config.n_step == 1:
            self.buffer.add(obs, actions, rewards, next_obs, next_masks, terminal)
        else:
            self._add_n_step(obs, actions, rewards, next_obs, next_masks, terminal, dones)
        self._last_obs, self._last_masks = new_obs, new_masks
        self.num_timesteps += self.n_envs

    def _add_n_step(self, obs, actions, rewards, next_obs, next_masks, terminal, dones) -> None:
        """Store the transitions whose n-step return this step completes: per env, the oldest
        pending turn once ``n_step`` are pending, or every pending turn when the episode ends."""
        gamma, n = self.config.gamma, self.config.n_step
        rows: list[tuple] = []
        for i, pending in enumerate(self._pending):
            for k, turn in enumerate(reversed(pending)):  # the newest turn is 1 step back from this reward
                turn[2] += gamma ** (k + 1) * rewards[i]
            pending.append([obs[i].copy(), actions[i], float(rewards[i])])  # a copy: obs may be a reused buffer
            ready = len(pending) if dones[i] else int(len(pending) == n)  # never more than n pending
            for _ in range(ready):
                first_obs, action, ret = pending.pop(0)
                # bootstrapping from next_obs[i], len(pending) + 1 turns after first_obs
                rows.append(
                    (first_obs, action, ret, next_obs[i], next_masks[i], terminal[i], gamma ** (len(pending) + 1))
                )
        if rows:
            columns = [np.array(column) for column in zip(*rows)]
            self.buffer.add(*columns)

    def _train(self) -> None:
        import torch
        import torch.nn.functional as F

        a = self.config
        if self.buffer.size < max(a.learning_starts, a.batch_size):
            return
        loss_fn = F.smooth_l1_loss if a.loss == "huber" else F.mse_loss
        for group in self.optimizer.param_groups:  # the schedule's, not the rate a resumed optimizer saved
            group["lr"] = self.learning_rate
        for _ in range(a.gradient_steps):
            obs, actions, rewards, next_obs, next_masks, dones, *discounts = (
                torch.as_tensor(x, device=self.device) for x in self.buffer.sample(a.batch_size, self.rng)
            )
            q = self.q_net(obs).gather(1, actions[:, None]).squeeze(1)
            loss = loss_fn(q, self.targets(rewards, next_obs, next_masks, dones, *discounts))
            self.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.q_net.parameters(), a.max_grad_norm)
            self.optimizer.step()
            self.n_updates += 1
            if self.n_updates % a.target_update == 0:
                self.q_target.load_state_dict(self.q_net.state_dict())
            self.logger.record_mean("train/loss", loss.item())
            self.logger.record_mean("train/q_taken", q.mean().item())

    def learn(self, total_timesteps: int, callback=None, reset_num_timesteps: bool = True, **_):
        """Collect ``train_freq`` vectorised steps, train, repeat, until ``total_timesteps``
        more timesteps (counted in whole rounds, as SB3 counts whole rollouts)."""
        from stable_baselines3.common.callbacks import CallbackList

        callback = callback or CallbackList([])
        if reset_num_timesteps or self._last_obs is None:  # like SB3: the envs' seeds are used once
            self._last_obs = self.env.reset()
            self._last_masks = self._masks()
        if reset_num_timesteps:
            self.num_timesteps = 0
        total = self.num_timesteps + total_timesteps
        started, first = time.time(), self.num_timesteps
        next_log = (self.num_timesteps // LOG_EVERY + 1) * LOG_EVERY
        callback.init_callback(self)
        callback.on_training_start(locals(), globals())
        going = True
        while going and self.num_timesteps < total:
            callback.on_rollout_start()  # right after the last round's gradient steps
            for _step in range(self.n_steps):  # not ``_``: learn()'s ``**_`` holds SB3's other arguments
                self._collect_step()
                if not callback.on_step():
                    going = False  # the round's steps are still trained on: what is counted is learnt from
                    break
            callback.on_rollout_end()
            self._train()
            if self.num_timesteps >= next_log or not going or self.num_timesteps >= total:
                next_log = (self.num_timesteps // LOG_EVERY + 1) * LOG_EVERY
                self.logger.record("rollout/epsilon", self.epsilon)
                self.logger.record("train/learning_rate", self.learning_rate)
                self.logger.record("train/n_updates", self.n_updates)
                self.logger.record("time/fps", int((self.num_timesteps - first) / max(time.time() - started, 1e-9)))
                self.logger.dump(self.num_timesteps)
        callback.on_training_end()
        return self


def new(config, venv) -> DoubleDQN:
    return DoubleDQN(config, venv)


def load(path, venv, config) -> DoubleDQN:
    """A learner from ``save``'s file; its replay buffer starts empty (see the module's doc)."""
    import torch

    model = DoubleDQN(config, venv)
    state = torch.load(path, map_location=model.device, weights_only=True)
    model.q_net.load_state_dict(state["q_net"])
    model.q_target.load_state_dict(state["q_target"])
    model.optimizer.load_state_dict(state["optimizer"])
    model.num_timesteps, model.n_updates = int(state["num_timesteps"]), int(state["n_updates"])
    model.rng = np.random.default_rng([model.seed, model.num_timesteps])  # new draws, as the envs get new seeds
    return model


def policy_arrays(model) -> tuple[dict, str]:
    """The online Q-network as numpy arrays (one value per action), and its activation."""
    return network_arrays(model.q_net), model.config.activation


if TYPE_CHECKING:  # mypy checks this module against the contract every algorithm module keeps
    from training.algorithms import AlgorithmModule
    from training.algorithms import dqn as _this

    _check: AlgorithmModule = _this
