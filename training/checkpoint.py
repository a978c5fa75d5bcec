"""Checkpoints: a folder per checkpoint, written atomically.

```
<checkpoint>/
  meta.json     format version, env id and arguments, observation and action sizes,
                algorithm, network shape, timesteps, seed, evaluation results
  policy.npz    the policy network's weights as plain arrays (numpy, loaded with
                allow_pickle=False: safe to load from anyone; no torch needed)
  model.zip     the stable-baselines3 archive, only to resume your own training runs
                (it contains pickled objects: never load one you got from someone else)
```

``policy.npz`` holds ``layer_{i}_weight`` (out × in) and ``layer_{i}_bias`` for the hidden
layers of the policy MLP, then ``action_weight`` / ``action_bias`` for the logits; meta.json
names the activation. Any frontend can run it: ``x = act(W @ x + b)`` per layer, then
``logits = A @ x + a``, illegal actions masked out.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that is missing, damaged, or made for another game or configuration."""


def write_atomically(target: Path, fill) -> Path:
    """Create the folder ``target`` by filling a temporary sibling and renaming it into
    place, so a crash never leaves a half-written checkpoint under the real name."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; a checkpoint is an ordinary folder
    try:
        fill(tmp)
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def policy_arrays(model) -> tuple[dict, str]:
    """The policy MLP of an SB3 (Maskable)PPO model as numpy arrays, and its activation."""
    import torch.nn as nn
    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    arrays = {}
    for i, layer in enumerate(linears):
        arrays[f"layer_{i}_weight"] = layer.weight.detach().cpu().numpy()
        arrays[f"layer_{i}_bias"] = layer.bias.detach().cpu().numpy()
    arrays["action_weight"] = policy.action_net.weight.detach().cpu().numpy()
    arrays["action_bias"] = policy.action_net.bias.detach().cpu().numpy()
    activation = type(policy.activation_fn()).__name__.lower()
    return arrays, activation


def save_checkpoint(path, model, meta: dict, with_model: bool = True) -> Path:
    arrays, activation = policy_arrays(model)
    meta = {"format_version": FORMAT_VERSION, **meta, "activation": activation,
            "hidden_sizes": [int(arrays[f"layer_{i}_bias"].shape[0]) for i in range(len(arrays) // 2 - 1)]}

    def fill(tmp: Path):
        np.savez(tmp / "policy.npz", **arrays)
        if with_model:
            model.save(tmp / "model.zip")
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")

    return write_atomically(Path(path), fill)


def read_meta(path) -> dict:
    path = Path(path)
    meta_file = path / "meta.json"
    if not meta_file.is_file():
        raise CheckpointError(f"{path} is not a checkpoint folder: {meta_file} is missing")
    meta = json.loads(meta_file.read_text())
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: checkpoint format {meta.get('format_version')!r} is not supported "
                              f"(this deckgym reads format {FORMAT_VERSION})")
    return meta


def check_compatible(meta: dict, env_id: str, rule_args: dict, obs_size: int, num_actions: int, where="") -> None:
    """Raise ``CheckpointError`` saying what differs when a checkpoint can't sit in this env
    (another game, other rules, other sizes). ``rule_args``: the env's ``rule_args()``."""
    problems = []
    if meta["env_id"] != env_id:
        problems.append(f"it was trained for {meta['env_id']}, not {env_id}")
    else:
        trained = meta.get("rules", {})
        for key in sorted(set(trained) | set(rule_args)):
            if trained.get(key) != rule_args.get(key):
                problems.append(f"{key}={trained.get(key)!r} in training but {rule_args.get(key)!r} here")
        if meta["observation_size"] != obs_size or meta["action_size"] != num_actions:
            problems.append(f"observation/action sizes {meta['observation_size']}/{meta['action_size']} "
                            f"vs {obs_size}/{num_actions} here")
    if problems:
        raise CheckpointError(f"checkpoint {where} does not fit this game: " + "; ".join(problems))


def load_policy(path) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]]:
    """(meta, hidden layers, action layer) from a checkpoint folder, without pickle."""
    meta = read_meta(path)
    with np.load(Path(path) / "policy.npz", allow_pickle=False) as data:
        hidden = [(data[f"layer_{i}_weight"], data[f"layer_{i}_bias"]) for i in range(len(meta["hidden_sizes"]))]
        head = (data["action_weight"], data["action_bias"])
    return meta, hidden, head
