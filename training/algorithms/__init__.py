"""The learning algorithms, by name: each is one module here, registered in ``MODULES``.

What an algorithm module defines is ``AlgorithmModule`` below, a ``typing.Protocol`` that mypy
checks every module against (each ends with the check; see ``docs/algorithms.md``, and
``maskable_ppo`` as the example):

- ``Config``: its config section, a ``training.common.schema.Section`` with
  ``name: Literal["<Name>"]`` and every hyperparameter with its default and bounds, among
  them ``net_arch`` and ``activation`` (the network a checkpoint keeps), ``device`` and
  ``torch_threads`` (``AlgorithmConfig``: what the rest of training reads of it). The module
  must import without torch at the top (config validation reads ``Config``).
- ``new(config, venv) -> model`` and ``load(path, venv, config) -> model``: a learner
  for the batched learner env ``venv`` (an SB3 ``VecEnv`` of N games: ``reset``,
  ``step_async``/``step_wait``, ``env_method("action_masks")``), new or from ``model.zip``.
  The model is SB3-like (``Model``): ``learn(total_timesteps, callback, reset_num_timesteps=False)``
  calling the callback's hooks as SB3 does, ``num_timesteps``, ``save(path)``,
  ``set_logger(logger)``, ``logger``, ``get_env()``, ``observation_space``, ``action_space``.
- ``policy_arrays(model) -> (arrays, activation)``: the network that picks the moves as
  plain arrays (``training.agents.checkpoint``'s policy.npz layout: one score per action).
- ``memory_bytes(config, obs_size, n_actions) -> {part: bytes}``: what it holds beside the
  envs (network, optimizer, experience), an estimate on the high side, checked against the
  machine before a run starts.
- ``check_installed()``: raises ``ValueError`` naming the extra to install when a package
  the algorithm needs is missing (``rllib_ppo``: Ray), checked before a run starts; a no-op
  for an algorithm that needs nothing beyond the train extra.
- ``ACTION_SELECTION``: how the scores pick a move, ``"masked_sampling"`` (policy logits)
  or ``"masked_argmax"`` (action values), recorded in every checkpoint's meta.json.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    from gymnasium import spaces

MODULES = {
    "MaskablePPO": "training.algorithms.maskable_ppo",
    "DoubleDQN": "training.algorithms.dqn",
    "DMC": "training.algorithms.dmc",
    "rllib_ppo": "training.algorithms.rllib_ppo",
}

# How a checkpoint's scores pick a move: sampled from the masked softmax of policy logits, or
# the best legal one of action values.
ActionSelection = Literal["masked_sampling", "masked_argmax"]


class AlgorithmConfig(Protocol):
    """What training outside the algorithm's module reads of its config section (``Config``,
    the run config's ``algorithm``); the section, a pydantic ``Section``, holds more."""

    @property
    def name(self) -> str: ...  # the algorithm's name in MODULES: ``name: Literal["<Name>"]``

    @property
    def net_arch(self) -> list[int]: ...  # the hidden sizes of the network a checkpoint keeps

    @property
    def activation(self) -> str: ...  # that network's: "tanh" or "relu"

    @property
    def device(self) -> str: ...

    @property
    def torch_threads(self) -> int: ...  # at most the cores of the machine that trains (preflight)


class Model(Protocol):
    """An algorithm's learner, SB3-like: the run callback (``training.learning.callback``, an
    SB3 callback) and ``training.learning.train`` drive it as they drive an SB3 model.
    ``callback`` and ``logger`` are SB3's ``BaseCallback`` and ``Logger`` (not imported here:
    stable-baselines3 is imported only once training starts)."""

    num_timesteps: int  # env steps learnt from (vectorised steps x n_envs); a resumed run sets it

    @property
    def n_steps(self) -> int: ...  # vectorised steps per collection chunk ...

    @property
    def n_envs(self) -> int: ...  # ... of n_envs games each

    @property
    def observation_space(self) -> spaces.Box: ...

    @property
    def action_space(self) -> spaces.Discrete: ...

    @property
    def logger(self) -> Any: ...

    def learn(self, total_timesteps: int, callback: Any, reset_num_timesteps: bool = ...) -> object:
        """Train ``total_timesteps`` more, calling the callback's hooks as SB3 does (see
        ``docs/algorithms.md``); reset the envs only on the first call."""
        ...

    def save(self, path: Path) -> None:
        """Write what ``load`` needs to resume (``model.zip``)."""
        ...

    def set_logger(self, logger: Any) -> None: ...

    def get_env(self) -> Any: ...  # the learner env it was made for


class AlgorithmModule(Protocol):
    """An algorithm's module (``MODULES``): see this package's doc. ``config`` is the whole run
    config (``training.learning.config.Config``: not imported here, it imports this package),
    ``venv`` the batched learner env (an SB3 ``VecEnv``)."""

    @property
    def Config(self) -> type[AlgorithmConfig]: ...  # a class of the module

    @property
    def ACTION_SELECTION(self) -> ActionSelection: ...  # a module constant: ``Final``

    def new(self, config: Any, venv: Any) -> Model: ...

    def load(self, path: Path, venv: Any, config: Any) -> Model: ...

    def policy_arrays(self, model: Model) -> tuple[dict[str, np.ndarray], str]: ...

    def memory_bytes(self, config: Any, obs_size: int, n_actions: int) -> dict[str, int]: ...

    def check_installed(self) -> None: ...


def algorithm(name: str) -> AlgorithmModule:
    """The module of algorithm ``name``."""
    if name not in MODULES:
        raise ValueError(f"unknown algorithm {name!r}: choose one of {', '.join(MODULES)}")
    return importlib.import_module(MODULES[name])


def config_classes() -> list[type[AlgorithmConfig]]:
    """Every algorithm's config section, the first the default."""
    return [algorithm(name).Config for name in MODULES]
