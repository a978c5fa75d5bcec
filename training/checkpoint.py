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

import functools
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that is missing, damaged, or made for another game or configuration."""


def _old(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


def recover_swap(target) -> None:
    """Finish a replacement cut between its two renames (the previous version waits under
    ``.<name>.old``), so the checkpoint is found under its real name again."""
    target = Path(target)
    if not target.exists() and _old(target).is_dir():
        os.replace(_old(target), target)


def write_atomically(target: Path, fill) -> Path:
    """Create the folder ``target`` by filling a temporary sibling and renaming it into
    place, so a crash never leaves a half-written checkpoint under the real name."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_swap(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; a checkpoint is an ordinary folder
    try:
        fill(tmp)
        if target.exists():
            old = _old(target)
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


def update_meta(path, changes: dict) -> None:
    """Update fields of a checkpoint's meta.json alone (the weights are unchanged), atomically."""
    meta = {**json.loads((Path(path) / "meta.json").read_text()), **changes}
    tmp = Path(path) / ".meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, Path(path) / "meta.json")


REQUIRED_META = ("env_id", "observation_size", "action_size", "activation", "hidden_sizes")


def read_meta(path) -> dict:
    path = Path(path)
    meta_file = path / "meta.json"
    if not meta_file.is_file():
        raise CheckpointError(f"{path} is not a checkpoint folder: {meta_file} is missing")
    try:
        meta = json.loads(meta_file.read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{meta_file} is not readable JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{meta_file} must hold a JSON object")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: checkpoint format {meta.get('format_version')!r} is not supported "
                              f"(this deckgym reads format {FORMAT_VERSION})")
    missing = [key for key in REQUIRED_META if key not in meta]
    if missing:
        raise CheckpointError(f"{meta_file} lacks {', '.join(missing)}")
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
    """(meta, hidden layers, action layer) from a checkpoint folder, without pickle, checked
    against the sizes in meta.json. Cached while the files are unchanged: evaluation seats
    the same checkpoint in many games."""
    path = Path(path).resolve()
    files = (path / "meta.json", path / "policy.npz")
    stamp = tuple(f.stat().st_mtime_ns if f.is_file() else None for f in files)
    return _load_policy(path, stamp)


@functools.lru_cache(maxsize=64)
def _load_policy(path: Path, stamp):
    meta = read_meta(path)
    weights = path / "policy.npz"
    try:
        with np.load(weights, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise CheckpointError(f"{weights} is missing or not a policy file written by deckgym "
                              f"({type(exc).__name__})") from None
    sizes = [meta["observation_size"], *meta["hidden_sizes"], meta["action_size"]]
    names = [f"layer_{i}" for i in range(len(meta["hidden_sizes"]))] + ["action"]
    layers = []
    for name, inputs, outputs in zip(names, sizes, sizes[1:]):
        weight, bias = arrays.get(f"{name}_weight"), arrays.get(f"{name}_bias")
        if weight is None or bias is None or weight.shape != (outputs, inputs) or bias.shape != (outputs,):
            raise CheckpointError(f"{weights}: {name} should be {outputs}x{inputs} with {outputs} biases "
                                  f"as meta.json says, but is {getattr(weight, 'shape', 'missing')}")
        layers.append((weight.astype(np.float32), bias.astype(np.float32)))
    return meta, layers[:-1], layers[-1]
