"""rllib_ppo: RLlib's PPO (new API stack) on the multi-agent game, sampled by Ray env runners.

- Sampling: ``num_env_runners`` Ray actors (0: the trainer's own process), each playing
  ``num_envs_per_env_runner`` games of ``training.learning.rllib_env.AECMultiAgentEnv`` (every seat an
  RLlib agent, each seat paid only its own rewards). The batched SB3 learner env train.py
  builds is used only for its spaces.
- Seating: ``training.learning.rllib_env.SeatMapping`` maps the learner's seat (both seats of its side
  with ``opponents.partner: learner``) to the trainable module ``learner`` and every other seat
  to a module drawn from ``opponents.pool``: ``heuristic``, ``random`` and checkpoint folders
  run as non-trainable numpy agents (``AgentModule``); ``self_play`` draws frozen copies of the
  learner's policy (``window + 1`` module slots, refreshed every ``opponents.self_play.
  snapshot_every`` learner steps).
- Counting: ``num_timesteps`` counts the learner's own moves (as the SB3 path does), not the
  opponents'. ``train_batch_size`` is RLlib's: env steps of all seats per iteration, so about
  1/seats of it (2/seats with a learner partner) are learner moves that PPO trains on.
- One ``algo.train()`` (sample, then ``num_epochs`` of minibatch updates) is one "rollout" for
  the run callback: checkpoints, snapshots and evaluations come between iterations.
- Checkpoint: the learner's policy MLP is policy.npz (``policy_arrays``); ``model.zip`` is a
  torch file of the learner group's state (weights and optimizer), the snapshots and the
  counters, tensors and plain values only (``torch.load(weights_only=True)``); ``--resume``
  builds the algorithm anew and loads it.
- Ray: ``ray.init()`` starts a local Ray, or joins the cluster named by ``RAY_ADDRESS`` (see
  docs/rllib.md); an already initialised Ray is used as it is.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import threading
import weakref
from typing import TYPE_CHECKING, Annotated, Final, Literal

import numpy as np
from pydantic import Field, model_validator

from training.agents.folders import pack_agents
from training.common.games import EnvHandle
from training.common.schema import COEF_MAX, Number, Section
from training.running.executor import SCALE_EXTRA, import_ray, runtime_env

# Imported where they are used: Ray (rllib_env and ray.rllib import it), torch and
# stable-baselines3, which config validation must not wait for; the callback (stable-baselines3)
# and games, which import the config, which imports this module.

ACTION_SELECTION: Final = "masked_sampling"


class Config(Section):
    name: Literal["rllib_ppo"] = "rllib_ppo"
    net_arch: list[Annotated[int, Field(gt=0)]] = [128, 128]
    activation: Literal["tanh", "relu"] = "tanh"
    # PPO's hyperparameters, named and meant as RLlib's PPOConfig.training() takes them
    lr: Number = Field(3e-4, gt=0, le=1)
    gamma: Number = Field(0.99, ge=0, le=1)
    lambda_: Number = Field(0.95, ge=0, le=1)
    clip_param: Number = Field(0.2, gt=0, le=1)
    vf_clip_param: Number = Field(10.0, gt=0)  # RLlib clips the value loss itself at this
    entropy_coeff: Number = Field(0.01, ge=0, le=COEF_MAX)
    vf_loss_coeff: Number = Field(0.5, ge=0, le=COEF_MAX)
    use_kl_loss: bool = False
    kl_coeff: Number = Field(0.2, ge=0, le=COEF_MAX)
    kl_target: Number = Field(0.01, gt=0)
    grad_clip: Number = Field(0.5, gt=0)  # global gradient norm
    train_batch_size: int = Field(4096, gt=0)  # env steps of all seats per iteration (RLlib's count)
    minibatch_size: int = Field(256, gt=0)  # at most train_batch_size
    num_epochs: int = Field(4, gt=0)
    num_env_runners: int = Field(1, ge=0)  # Ray actors that play the games (0: the trainer's process)
    num_envs_per_env_runner: int = Field(4, gt=0)
    num_learners: int = Field(0, ge=0)  # 0: the trainer's process updates; n: n learner actors (a cluster)
    device: Literal["cpu", "cuda", "auto"] = "cpu"  # the learner's
    torch_threads: int = Field(1, gt=0)  # the trainer's; each env runner uses one

    @model_validator(mode="after")
    def _minibatch_within_a_batch(self):
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(
                f"minibatch_size ({self.minibatch_size}) must be at most train_batch_size ({self.train_batch_size})"
            )
        return self


def memory_bytes(config, obs_size: int, n_actions: int) -> dict:
    """What training holds beside the envs, by part: an estimate on the high side."""
    a = config.algorithm
    sizes = [obs_size, *a.net_arch]
    params = 2 * sum((i + 1) * o for i, o in zip(sizes, sizes[1:])) + (sizes[-1] + 1) * (n_actions + 1)
    network = 4 * (4 * params + 3 * a.minibatch_size * (obs_size + 2 * sum(a.net_arch) + n_actions))
    # per env step: observation and mask (float32), a few floats; the episodes, the batch and
    # its tensors hold about three copies on the learner
    batch = 3 * 4 * a.train_batch_size * (obs_size + 2 * n_actions + 16)
    # Ray's own processes (raylet, GCS) and each env runner, a Python process with torch
    ray_processes = (512 << 20) + a.num_env_runners * (384 << 20)
    return {"network and optimizer": network, "train batch": batch, "ray processes": ray_processes}


def check_installed() -> None:
    """Ray with RLlib, or a ``ValueError`` naming the extra (run before training starts)."""
    import_ray("algorithm rllib_ppo")
    try:
        importlib.import_module("ray.rllib")  # plain "ray" (no [rllib] extra) lacks its dependencies
    except ImportError:
        raise ValueError(
            f"algorithm rllib_ppo needs RLlib (ray[rllib]), which is not installed: {SCALE_EXTRA}"
        ) from None


def module_ids(config) -> dict:
    """Pool spec -> module id: ``heuristic``, ``random``, ``self_play`` keep their names,
    checkpoint folders become ``checkpoint_<i>``."""
    ids, checkpoints = {}, 0
    for entry in config.opponents.pool:
        if entry.weight <= 0 or entry.agent in ids:
            continue
        if entry.agent in ("heuristic", "random", "self_play"):
            ids[entry.agent] = entry.agent
        else:
            ids[entry.agent], checkpoints = f"checkpoint_{checkpoints}", checkpoints + 1
    return ids


class RLlibPPO:
    """An SB3-like model (``learn``, ``save``, ``num_timesteps``, ``logger``) around an RLlib PPO
    ``Algorithm``."""

    def __init__(self, config, venv, snapshot_now: bool = True):
        from stable_baselines3.common.logger import Logger

        from training.learning.callback import next_multiple

        ray = import_ray("algorithm rllib_ppo")
        from training.learning.rllib_env import LEARNER

        self.config, self.a = config, config.algorithm
        self.env = venv
        self.observation_space, self.action_space = venv.observation_space, venv.action_space
        self.n_envs = max(1, self.a.num_env_runners) * self.a.num_envs_per_env_runner
        self.n_steps = max(1, self.a.train_batch_size // self.n_envs)
        if not ray.is_initialized():
            # RAY_ADDRESS (a cluster) is honoured by ray.init; otherwise a local Ray starts.
            # The code reaches env runners on other machines as the executor ships it (py_modules).
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, runtime_env=runtime_env())
        self.algo = build_config(config).build_algo()
        # Frees the env runner actors (and their CPUs) when the model goes; not at exit, where
        # Ray's own shutdown has ended them already.
        weakref.finalize(self, self.algo.stop).atexit = False
        self.restarts = 0  # env runners Ray restarted: they lose the snapshots, which are sent again
        self.learner = LEARNER
        self.num_timesteps, self.iterations = 0, 0
        self.logger = Logger(None, [])
        sp = config.opponents.self_play
        self.self_play = any(e.agent == "self_play" and e.weight > 0 for e in config.opponents.pool)
        self.snapshot_every, self.window = sp.snapshot_every, sp.window
        self.snapshots: dict[str, dict[str, np.ndarray]]
        self.snapshots, self.snapshots_taken = {}, 0  # slot -> pi weights (numpy), kept here to save and resume
        self.next_snapshot = next_multiple(0, self.snapshot_every)
        if self.self_play and snapshot_now:
            self.take_snapshot()

    # ------------------------------------------------------------------ SB3-like
    def set_logger(self, logger) -> None:
        self.logger = logger

    def get_env(self):
        return self.env

    def learn(self, total_timesteps: int, callback=None, reset_num_timesteps: bool = False):
        from stable_baselines3.common.callbacks import CallbackList

        callback = callback or CallbackList([])
        if reset_num_timesteps:
            self.num_timesteps = 0
        target = self.num_timesteps + total_timesteps
        callback.init_callback(self)
        callback.on_training_start(locals(), globals())
        going = True
        with stop_between_iterations() as stopping:
            while going and self.num_timesteps < target:
                callback.on_rollout_start()  # after the last update: checkpoints hold every step counted
                if stopping:
                    raise KeyboardInterrupt  # train.py writes the checkpoint: weights and count agree here
                going = self.iterate(callback)
        callback.on_training_end()
        return self

    def iterate(self, callback) -> bool:
        """One RLlib iteration and the callback's step; False: stop (training.max_seconds)."""
        from training.learning.callback import next_multiple

        result = self.algo.train()  # sample train_batch_size env steps, then update
        self.iterations += 1
        self.num_timesteps += self.learner_steps(result)
        if self.self_play and self.num_timesteps >= self.next_snapshot:
            self.take_snapshot()
            self.next_snapshot = next_multiple(self.num_timesteps, self.snapshot_every)
        restarts = self.algo.env_runner_group.num_remote_worker_restarts()
        if restarts > self.restarts and self.snapshots:
            self.push_snapshots(self.snapshots)
        self.restarts = restarts
        self.record(result)
        going = callback.on_step()  # False: stop (training.max_seconds)
        callback.on_rollout_end()
        return going

    def learner_steps(self, result) -> int:
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_MODULE_STEPS_SAMPLED

        return int(result.get(ENV_RUNNER_RESULTS, {}).get(NUM_MODULE_STEPS_SAMPLED, {}).get(self.learner, 0))

    def record(self, result) -> None:
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, LEARNER_RESULTS

        runners, learner = result.get(ENV_RUNNER_RESULTS, {}), result.get(LEARNER_RESULTS, {}).get(self.learner, {})
        returns = runners.get("module_episode_returns_mean", {}).get(self.learner)
        if returns is not None:
            self.logger.record("rollout/ep_rew_mean", float(returns))
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "vf_explained_var"):
            if key in learner:
                self.logger.record(f"train/{key}", float(learner[key]))
        self.logger.record("train/iterations", self.iterations)
        self.logger.dump(self.num_timesteps)

    # ------------------------------------------------------------------ weights
    def learner_weights(self) -> dict:
        """The learner module's state (numpy arrays): ``pi.<i>.*`` policy, ``vf.<i>.*`` value."""
        return self.algo.learner_group.get_weights([self.learner])[self.learner]

    def take_snapshot(self) -> None:
        """Freeze the learner's policy into the next self-play slot, on every env runner."""
        from training.learning.rllib_env import snapshot_id

        slot = snapshot_id(self.snapshots_taken, self.window)
        self.snapshots[slot] = {k: v for k, v in self.learner_weights().items() if k.startswith("pi.")}
        self.snapshots_taken += 1
        self.push_snapshots({slot: self.snapshots[slot]})

    def push_snapshots(self, slots: dict) -> None:
        """Set snapshot slots' weights and the snapshot count on every env runner (the local
        one too: it samples when there are no remote ones)."""
        slots = {slot: {k: np.asarray(v) for k, v in weights.items()} for slot, weights in slots.items()}
        taken = self.snapshots_taken

        def update(runner):
            module = getattr(runner, "module", None)
            if module is not None:
                for slot, weights in slots.items():
                    module[slot].set_state(weights)
            runner.config.policy_mapping_fn.snapshots_taken = taken

        self.algo.env_runner_group.foreach_env_runner(update, local_env_runner=True)

    def save(self, path) -> None:
        import torch

        torch.save(
            {
                "learner_group": to_torch(self.algo.learner_group.get_state()),
                "snapshots": to_torch(self.snapshots),
                "snapshots_taken": self.snapshots_taken,
                "next_snapshot": self.next_snapshot,
                "num_timesteps": int(self.num_timesteps),
                "iterations": self.iterations,
                "config": dict(vars(self.a)),
            },
            path,
        )


@contextlib.contextmanager
def stop_between_iterations():
    """Ctrl-C and SIGTERM noted (the yielded list fills), not raised: raised inside RLlib's
    iteration they are lost in its sampling, which goes on; the loop stops at the next
    iteration boundary instead."""
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    stopping = []
    handlers = {
        sig: signal.signal(sig, lambda signum, frame: stopping.append(signum))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield stopping
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def to_torch(tree):
    """numpy arrays (and numpy scalars) as tensors (and Python numbers): what
    ``torch.load(weights_only=True)`` reads back."""
    import torch

    if isinstance(tree, dict):
        return {k: to_torch(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_torch(v) for v in tree)
    if isinstance(tree, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(tree))
    if isinstance(tree, np.generic):
        return tree.item()
    return tree


def to_numpy(tree):
    import torch

    if isinstance(tree, dict):
        return {k: to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_numpy(v) for v in tree)
    if isinstance(tree, torch.Tensor):
        return tree.numpy()
    return tree


def build_config(config):
    """The RLlib ``PPOConfig`` of a deckgym run config."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from training.learning.rllib_env import (
        LEARNER,
        AECMultiAgentEnv,
        AgentModule,
        MaskedPolicyModule,
        MaskedPPOModule,
        SeatMapping,
        learner_class,
        snapshot_id,
    )

    a, opp = config.algorithm, config.opponents
    env = EnvHandle(config.env.id, config.env.args)
    probe = AECMultiAgentEnv({"env_id": env.id, "env_args": env.args})
    obs_space, act_space = (
        probe.observation_spaces[probe.possible_agents[0]],
        probe.action_spaces[probe.possible_agents[0]],
    )
    net = {"net_arch": list(a.net_arch), "activation": a.activation}
    specs = {
        LEARNER: RLModuleSpec(
            module_class=MaskedPPOModule, observation_space=obs_space, action_space=act_space, model_config=net
        )
    }
    ids = module_ids(config)
    for spec, mid in ids.items():
        if spec == "self_play":
            for k in range(opp.self_play.window + 1):
                specs[snapshot_id(k, opp.self_play.window)] = RLModuleSpec(
                    module_class=MaskedPolicyModule,
                    observation_space=obs_space,
                    action_space=act_space,
                    model_config=net,
                )
        else:
            specs[mid] = RLModuleSpec(
                module_class=AgentModule,
                observation_space=obs_space,
                action_space=act_space,
                model_config={
                    "env_id": env.id,
                    "env_args": dict(env.args),
                    "agent": spec,
                    "files": pack_agents([spec]).get(spec),
                    "deterministic": opp.deterministic,
                    "seed": config.training.seed,
                },
            )
    weights = {}
    for entry in [e for e in opp.pool if e.agent in ids]:
        weights[ids[entry.agent]] = weights.get(ids[entry.agent], 0.0) + entry.weight
    own_partner = bool(env.rule_args.get("partnership", False)) and opp.partner == "learner"
    mapping = SeatMapping(
        probe.possible_agents,
        list(weights.items()),
        opp.learner_seat,
        own_partner,
        opp.self_play.latest_weight,
        opp.self_play.window,
    )
    device = a.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    return (
        PPOConfig()
        .environment(
            AECMultiAgentEnv,
            env_config={
                "env_id": env.id,
                "env_args": dict(env.args),
                "reward_transform": config.training.reward_transform,
            },
            disable_env_checking=True,
        )
        .env_runners(
            num_env_runners=a.num_env_runners,
            num_envs_per_env_runner=a.num_envs_per_env_runner,
            num_cpus_per_env_runner=1,
            # RLlib drops a sample slower than its default 60 s (a loaded machine, a big
            # batch) and the iteration then trains on nothing: wait for it instead
            sample_timeout_s=None,
        )
        .learners(
            num_learners=a.num_learners,
            num_gpus_per_learner=1 if device == "cuda" else 0,
            learner_class=learner_class(),
        )
        .training(
            lr=a.lr,
            gamma=a.gamma,
            lambda_=a.lambda_,
            clip_param=a.clip_param,
            vf_clip_param=a.vf_clip_param,
            entropy_coeff=a.entropy_coeff,
            vf_loss_coeff=a.vf_loss_coeff,
            use_kl_loss=a.use_kl_loss,
            kl_coeff=a.kl_coeff,
            kl_target=a.kl_target,
            grad_clip=a.grad_clip,
            grad_clip_by="global_norm",
            train_batch_size_per_learner=a.train_batch_size // max(1, a.num_learners),
            minibatch_size=a.minibatch_size,
            num_epochs=a.num_epochs,
        )
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .debugging(seed=config.training.seed, log_level="ERROR")
    )


def new(config, venv) -> RLlibPPO:
    return RLlibPPO(config, venv)


def load(path, venv, config) -> RLlibPPO:
    import torch

    model = RLlibPPO(config, venv, snapshot_now=False)
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.algo.learner_group.set_state(to_numpy(state["learner_group"]))
    model.algo.env_runner_group.sync_weights(from_worker_or_learner_group=model.algo.learner_group, inference_only=True)
    model.snapshots, model.snapshots_taken = to_numpy(state["snapshots"]), state["snapshots_taken"]
    model.next_snapshot, model.iterations = state["next_snapshot"], state["iterations"]
    model.num_timesteps = state["num_timesteps"]
    if model.snapshots:
        model.push_snapshots(model.snapshots)
    return model


def policy_arrays(model) -> tuple[dict, str]:
    """The learner's policy MLP (``pi``: Linear, activation, …, Linear) as checkpoint arrays."""
    weights = model.learner_weights()
    linears = sorted({int(k.split(".")[1]) for k in weights if k.startswith("pi.")})
    arrays = {}
    for i, index in enumerate(linears):
        name = "action" if i == len(linears) - 1 else f"layer_{i}"
        arrays[f"{name}_weight"] = weights[f"pi.{index}.weight"]
        arrays[f"{name}_bias"] = weights[f"pi.{index}.bias"]
    return arrays, model.a.activation


if TYPE_CHECKING:  # mypy checks this module against the contract every algorithm module keeps
    from training.algorithms import AlgorithmModule
    from training.algorithms import rllib_ppo as _this

    _check: AlgorithmModule = _this
