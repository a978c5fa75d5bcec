"""MaskablePPO (sb3-contrib): PPO whose policy never samples a masked action."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import Field

from training.common.schema import COEF_MAX, Number, Section

ACTION_SELECTION: Final = "masked_sampling"


class Config(Section):
    name: Literal["MaskablePPO"] = "MaskablePPO"
    net_arch: list[Annotated[int, Field(gt=0)]] = [128, 128]
    activation: Literal["tanh", "relu"] = "tanh"
    learning_rate: Number = Field(3e-4, gt=0, le=1)
    n_steps: int = Field(64, gt=0)  # per env, per rollout (x vec.n_envs: 2048 by default)
    batch_size: int = Field(256, ge=2)  # at most one rollout: see Config
    n_epochs: int = Field(4, gt=0)
    gamma: Number = Field(0.99, ge=0, le=1)
    gae_lambda: Number = Field(0.95, ge=0, le=1)
    clip_range: Number = Field(0.2, gt=0, le=1)
    ent_coef: Number = Field(0.01, ge=0, le=COEF_MAX)
    vf_coef: Number = Field(0.5, ge=0, le=COEF_MAX)
    max_grad_norm: Number = Field(0.5, gt=0)  # any size is safe: a big one just never clips
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    # Small MLPs run fastest on one thread; more threads fight the env for cores. At most
    # os.cpu_count(), checked on the machine that trains (training.learning.preflight).
    torch_threads: int = Field(1, gt=0)


def memory_bytes(config, obs_size: int, n_actions: int) -> dict:
    """What training holds beside the envs, by part: an estimate on the high side."""
    a, n_envs = config.algorithm, config.vec.n_envs
    sizes = [obs_size, *a.net_arch]
    trunk = sum((i + 1) * o for i, o in zip(sizes, sizes[1:]))  # one MLP; SB3 builds one for policy, one for value
    params = 2 * trunk + (sizes[-1] + 1) * (n_actions + 1)
    # float32 weights, gradients and Adam's two moments; a minibatch's activations, forward and backward
    network = 4 * (4 * params + 3 * a.batch_size * (obs_size + 2 * sum(a.net_arch) + n_actions))
    # per step and env: observation, action mask (float32 in SB3) and 8 floats (action, reward, value,
    # ...), twice: SB3 copies each array as it flattens the buffer for training
    rollout = 2 * 4 * a.n_steps * n_envs * (obs_size + n_actions + 8)
    return {"network and optimizer": network, "rollout buffer": rollout}


def check_installed() -> None:
    """Nothing to check: sb3-contrib comes with the train extra, as training itself does."""


def new(config, venv):
    import torch.nn as nn
    from sb3_contrib import MaskablePPO

    a = config.algorithm
    return MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=a.learning_rate,
        n_steps=a.n_steps,
        batch_size=a.batch_size,
        n_epochs=a.n_epochs,
        gamma=a.gamma,
        gae_lambda=a.gae_lambda,
        clip_range=a.clip_range,
        ent_coef=a.ent_coef,
        vf_coef=a.vf_coef,
        max_grad_norm=a.max_grad_norm,
        device=a.device,
        seed=config.training.seed,
        verbose=0,
        policy_kwargs={"net_arch": list(a.net_arch), "activation_fn": {"tanh": nn.Tanh, "relu": nn.ReLU}[a.activation]},
    )


def load(path, venv, config):
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path, env=venv, device=config.algorithm.device)


def policy_arrays(model) -> tuple[dict, str]:
    """The policy MLP of the model as numpy arrays (its logits), and its activation."""
    import torch.nn as nn

    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    arrays = {}
    for i, layer in enumerate(linears):
        arrays[f"layer_{i}_weight"] = layer.weight.detach().cpu().numpy()
        arrays[f"layer_{i}_bias"] = layer.bias.detach().cpu().numpy()
    arrays["action_weight"] = policy.action_net.weight.detach().cpu().numpy()
    arrays["action_bias"] = policy.action_net.bias.detach().cpu().numpy()
    return arrays, type(policy.activation_fn()).__name__.lower()


if TYPE_CHECKING:  # mypy checks this module against the contract every algorithm module keeps
    from training.algorithms import AlgorithmModule
    from training.algorithms import maskable_ppo as _this

    _check: AlgorithmModule = _this
