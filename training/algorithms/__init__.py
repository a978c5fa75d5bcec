"""The learning algorithms, by name: each is one module here, registered in ``MODULES``.

An algorithm module defines (see ``docs/algorithms.md``, and ``maskable_ppo`` as the example):

- ``Config``: its config section, a ``training.common.schema.Section`` with
  ``name: Literal["<Name>"]`` and every hyperparameter with its default and bounds, among
  them ``net_arch`` and ``activation`` (the network a checkpoint keeps), ``device`` and
  ``torch_threads``. The module must import without torch at the top (config validation
  reads ``Config``).
- ``new(config, venv) -> model`` and ``load(path, venv, config) -> model``: a learner
  for the batched learner env ``venv`` (an SB3 ``VecEnv`` of N games: ``reset``,
  ``step_async``/``step_wait``, ``env_method("action_masks")``), new or from ``model.zip``.
  The model is SB3-like: ``learn(total_timesteps, callback, reset_num_timesteps=False)``
  calling the callback's hooks as SB3 does, ``num_timesteps``, ``save(path)``,
  ``set_logger(logger)``, ``logger``, ``get_env()``, ``observation_space``, ``action_space``.
- ``policy_arrays(model) -> (arrays, activation)``: the network that picks the moves as
  plain arrays (``training.agents.checkpoint``'s policy.npz layout: one score per action).
- ``memory_bytes(config, obs_size, n_actions) -> {part: bytes}``: what it holds beside the
  envs (network, optimizer, experience), an estimate on the high side, checked against the
  machine before a run starts.
- optionally ``check_installed()``: raises ``ValueError`` naming the extra to install when
  a package the algorithm needs is missing (``rllib_ppo``: Ray), checked before a run starts.
- ``ACTION_SELECTION``: how the scores pick a move, ``"masked_sampling"`` (policy logits)
  or ``"masked_argmax"`` (action values), recorded in every checkpoint's meta.json.
"""

from __future__ import annotations

import importlib

MODULES = {
    "MaskablePPO": "training.algorithms.maskable_ppo",
    "DoubleDQN": "training.algorithms.dqn",
    "DMC": "training.algorithms.dmc",
    "rllib_ppo": "training.algorithms.rllib_ppo",
}


def algorithm(name: str):
    """The module of algorithm ``name``."""
    if name not in MODULES:
        raise ValueError(f"unknown algorithm {name!r}: choose one of {', '.join(MODULES)}")
    return importlib.import_module(MODULES[name])


def config_classes() -> list:
    """Every algorithm's config section, the first the default."""
    return [algorithm(name).Config for name in MODULES]
