"""DMC, Deep Monte-Carlo as in DouZero (Zha et al. 2021): a Q-network over the masked actions,
epsilon-greedy actors, each Q(s, a) regressed on the Monte-Carlo return of its episode.

- Network: an MLP from the observation to one action value per action. DouZero feeds each
  candidate action to the network as an input and scores them one by one; here the actions
  are a fixed discrete table, so a head with one output per action is the natural
  equivalent (every legal action scored in one pass). This MLP is the checkpoint's
  policy.npz: ``PolicyAgent``'s masked argmax plays it greedily (``ACTION_SELECTION``).
- Actors: the N games of the batched learner env. Each vectorised step picks, per game, the
  masked argmax of Q (one batched forward pass under ``torch.no_grad``), or with probability
  epsilon a uniformly random legal action; epsilon goes linearly from ``epsilon_start`` to
  ``epsilon`` over the first ``epsilon_anneal_timesteps`` (0: DouZero's constant 0.01).
- Targets: each game keeps its trajectory (observation, action, reward) until its episode
  ends; then every step's return-to-go, G_t = r_t + gamma G_{t+1} (DouZero: gamma 1, the
  final reward), goes into the training buffer with its observation and action. A truncated
  episode's returns are cut at its end (no bootstrap, as the env seldom truncates).
- Updates: every ``train_every`` vectorised steps (a "rollout" of train_every x N env steps,
  ``n_steps x n_envs`` as SB3 names it) the buffer, every transition whose episode ended
  since the last update, is trained on ``n_epochs`` times in shuffled minibatches of
  ``batch_size`` (MSE between Q(s)[a] and G, RMSprop or Adam, gradient norm clipped), then
  emptied. Like DouZero's learner each transition is used once by default, and a checkpoint
  holds no experience: the steps of episodes still under way at an interrupt are the only
  ones a resumed run never trains on (it deals anew).

The model follows SB3's ``learn``/callback protocol, and ``save`` writes a torch file of
tensors and plain values only (loadable with ``torch.load(weights_only=True)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Final, Literal

import numpy as np
from pydantic import Field

from training.common.schema import Number, Section

from .value_nets import epsilon_greedy, network_arrays, q_network

ACTION_SELECTION: Final = "masked_argmax"


class Config(Section):
    name: Literal["DMC"] = "DMC"
    net_arch: list[Annotated[int, Field(gt=0)]] = [256, 256]
    activation: Literal["tanh", "relu"] = "relu"
    optimizer: Literal["rmsprop", "adam"] = "rmsprop"
    learning_rate: Number = Field(1e-4, gt=0, le=1)  # DouZero: RMSprop lr 1e-4, alpha 0.99, eps 1e-5
    rmsprop_alpha: Number = Field(0.99, gt=0, lt=1)  # RMSprop's smoothing constant (unused by Adam)
    optimizer_eps: Number = Field(1e-5, gt=0, le=1)
    train_every: int = Field(128, gt=0)  # vectorised steps (per env) between updates
    batch_size: int = Field(256, gt=0)  # transitions per gradient step
    n_epochs: int = Field(1, gt=0)  # passes over each update's transitions
    gamma: Number = Field(1.0, ge=0, le=1)  # discount of the Monte-Carlo return
    epsilon: Number = Field(0.01, ge=0, le=1)  # exploration rate (after annealing)
    epsilon_start: Number = Field(0.01, ge=0, le=1)
    epsilon_anneal_timesteps: int = Field(0, ge=0)  # linear from epsilon_start to epsilon; 0: constant
    max_grad_norm: Number = Field(40.0, gt=0)  # DouZero: 40
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    torch_threads: int = Field(1, gt=0)  # at most os.cpu_count() (training.learning.preflight)


def memory_bytes(config, obs_size: int, n_actions: int) -> dict:
    """What training holds beside the envs, by part: an estimate on the high side."""
    a, n_envs = config.algorithm, config.vec.n_envs
    sizes = [obs_size, *a.net_arch, n_actions]
    params = sum((i + 1) * o for i, o in zip(sizes, sizes[1:]))
    # float32 weights, gradients, two optimizer moments; a minibatch's activations forward and backward
    network = 4 * (4 * params + 3 * a.batch_size * sum(sizes))
    # a transition: its observation (float32), action and reward or return; the trajectories under
    # way and the buffer hold about one update's steps (counted thrice: episodes that straddle
    # updates), and stacking them for training copies them once more
    experience = 2 * 3 * a.train_every * n_envs * (4 * obs_size + 24)
    return {"network and optimizer": network, "experience": experience}


def check_installed() -> None:
    """Nothing to check: it needs only torch and stable-baselines3, as training itself does."""


def returns_to_go(rewards, gamma: float):
    """G_t = r_t + gamma G_{t+1} for every step of one episode (float32)."""
    out, g = np.zeros(len(rewards), np.float32), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        g = float(rewards[t]) + gamma * g
        out[t] = g
    return out


class DMC:
    """The learner: an SB3-like model (``learn``, ``save``, ``num_timesteps``, ``logger``)."""

    def __init__(self, config, venv):
        import torch
        from stable_baselines3.common.logger import Logger

        self.a, self.seed = config.algorithm, config.training.seed
        self.env, self.n_envs, self.n_steps = venv, venv.num_envs, self.a.train_every
        self.observation_space, self.action_space = venv.observation_space, venv.action_space
        device = self.a.device
        self.device = torch.device(
            "cuda" if device == "auto" and torch.cuda.is_available() else "cpu" if device == "auto" else device
        )
        torch.manual_seed(self.seed)
        self.q = q_network(self.observation_space.shape[0], self.a.net_arch, self.a.activation, self.action_space.n).to(
            self.device
        )
        if self.a.optimizer == "rmsprop":
            self.optimizer = torch.optim.RMSprop(
                self.q.parameters(), lr=self.a.learning_rate, alpha=self.a.rmsprop_alpha, eps=self.a.optimizer_eps
            )
        else:
            self.optimizer = torch.optim.Adam(self.q.parameters(), lr=self.a.learning_rate, eps=self.a.optimizer_eps)
        self.num_timesteps, self.updates = 0, 0
        self.logger = Logger(None, [])  # train.py sets the run's (set_logger)
        self._obs = None  # the games' current observations; None: reset them on the next learn()
        self.returns = []  # finished episodes' total rewards, for the log
        self.rng = np.random.default_rng(self.seed)  # learn() reseeds it where training stands

    def set_logger(self, logger) -> None:
        self.logger = logger

    def get_env(self):
        return self.env

    def epsilon_now(self) -> float:
        a = self.a
        if self.num_timesteps >= a.epsilon_anneal_timesteps:
            return a.epsilon
        return a.epsilon_start + (a.epsilon - a.epsilon_start) * self.num_timesteps / a.epsilon_anneal_timesteps

    def act(self, obs, masks, epsilon: float):
        import torch

        with torch.no_grad():
            q = self.q(torch.as_tensor(obs, device=self.device)).cpu().numpy()
        return epsilon_greedy(q, masks, epsilon, self.rng)

    def learn(self, total_timesteps: int, callback=None, reset_num_timesteps: bool = False):
        from stable_baselines3.common.callbacks import CallbackList

        callback = callback or CallbackList([])
        if reset_num_timesteps:
            self.num_timesteps, self._obs = 0, None
        target = self.num_timesteps + total_timesteps
        # Seeded from where training stands: a resumed run draws as a fresh one would there.
        self.rng = np.random.default_rng([self.seed, self.num_timesteps])
        if self._obs is None:
            self._obs = self.env.reset()
            # per game, its episode so far: (observation, action, reward) per step
            self.trajectories: list[list[tuple[np.ndarray, int, float]]] = [[] for _ in range(self.n_envs)]
        self.buffer: list[tuple[np.ndarray, int, float]] = []  # finished episodes' (observation, action, return)
        callback.init_callback(self)
        callback.on_training_start(locals(), globals())
        going = True
        while going and self.num_timesteps < target:
            callback.on_rollout_start()  # after the last update: the weights have learnt all they can
            for _ in range(self.n_steps):
                self.collect_step()
                going = callback.on_step()  # False: stop (RunCallback: training.max_seconds)
                if not going:
                    break
            else:
                callback.on_rollout_end()
            self.train()  # a stopped run trains on its finished episodes too
        callback.on_training_end()
        return self

    def collect_step(self) -> None:
        """One vectorised step of the N games; finished episodes go into the buffer."""
        masks = np.stack(self.env.env_method("action_masks")).astype(bool)
        actions = self.act(self._obs, masks, self.epsilon_now())
        obs, rewards, dones, infos = self.env.step(actions)
        self.num_timesteps += self.n_envs
        for i in range(self.n_envs):
            self.trajectories[i].append((self._obs[i], int(actions[i]), float(rewards[i])))
            if dones[i]:
                steps, self.trajectories[i] = self.trajectories[i], []
                targets = returns_to_go([r for _, _, r in steps], self.a.gamma)
                self.buffer += [(o, act, g) for (o, act, _), g in zip(steps, targets)]
                self.returns = self.returns[-99:] + [sum(r for _, _, r in steps)]
        self._obs = obs

    def train(self) -> None:
        """One pass (``n_epochs``) over the finished episodes' transitions, then forget them."""
        import torch

        if not self.buffer:
            return
        obs = torch.as_tensor(np.stack([o for o, _, _ in self.buffer]), device=self.device)
        actions = torch.as_tensor([act for _, act, _ in self.buffer], device=self.device)
        targets = torch.as_tensor([g for _, _, g in self.buffer], dtype=torch.float32, device=self.device)
        n, losses = len(self.buffer), []
        self.buffer = []
        for _ in range(self.a.n_epochs):
            order = torch.as_tensor(self.rng.permutation(n), device=self.device)
            for start in range(0, n, self.a.batch_size):
                batch = order[start : start + self.a.batch_size]
                q = self.q(obs[batch]).gather(1, actions[batch, None]).squeeze(1)
                loss = torch.nn.functional.mse_loss(q, targets[batch])
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.q.parameters(), self.a.max_grad_norm)
                self.optimizer.step()
                losses.append(loss.item())
        self.updates += 1
        self.logger.record("train/loss", float(np.mean(losses)))
        self.logger.record("train/epsilon", self.epsilon_now())
        self.logger.record("train/transitions", n)
        self.logger.record("train/updates", self.updates)
        if self.returns:
            self.logger.record("rollout/ep_rew_mean", float(np.mean(self.returns)))
        self.logger.dump(self.num_timesteps)

    def save(self, path) -> None:
        import torch

        torch.save(
            {
                "network": self.q.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "num_timesteps": int(self.num_timesteps),
                "updates": int(self.updates),
                "config": dict(vars(self.a)),
            },
            path,
        )


def new(config, venv) -> DMC:
    return DMC(config, venv)


def load(path, venv, config) -> DMC:
    import torch

    model = DMC(config, venv)
    state = torch.load(path, map_location=model.device, weights_only=True)
    model.q.load_state_dict(state["network"])
    model.optimizer.load_state_dict(state["optimizer"])
    model.num_timesteps, model.updates = state["num_timesteps"], state["updates"]
    return model


def policy_arrays(model) -> tuple[dict, str]:
    """The Q-network as numpy arrays (one action value per action), and its activation."""
    return network_arrays(model.q), model.a.activation


if TYPE_CHECKING:  # mypy checks this module against the contract every algorithm module keeps
    from training.algorithms import AlgorithmModule
    from training.algorithms import dmc as _this

    _check: AlgorithmModule = _this
