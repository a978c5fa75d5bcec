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

Loading checks meta.json's fields, then every policy.npz member's .npy header against the
network meta.json describes (names, shapes, float dtypes), before any array data is read.
"""

from __future__ import annotations

import functools
import json
import math
import os
import stat
import zipfile
import zlib
from pathlib import Path

import numpy as np

from training.common.files import file_stamp, recover_leftovers, write_atomically

FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that is missing, damaged, or made for another game or configuration."""


def clean_leftovers(run_dir) -> None:
    """Finish swaps a kill interrupted, then remove what a kill left of ``write_atomically``
    in a run folder: temporary ``.checkpoint.*`` siblings in the run folder and ``.step_*``
    ones under ``snapshots/``. Real checkpoints (no leading dot) are never touched."""
    run_dir = Path(run_dir)
    recover_leftovers(run_dir, ".checkpoint.")
    recover_leftovers(run_dir / "snapshots", ".step_")


def save_checkpoint(path, model, meta: dict, learner, with_model: bool = True) -> Path:
    """A checkpoint of ``model``, trained by ``learner`` (the algorithm's module, see
    ``training.algorithms``): its move-picking network as policy.npz (the algorithm's
    ``policy_arrays``), meta.json with how the network's scores pick a move, and the model
    itself for ``--resume``."""
    arrays, activation = learner.policy_arrays(model)
    meta = {
        "format_version": FORMAT_VERSION,
        **meta,
        "activation": activation,
        "action_selection": learner.ACTION_SELECTION,
        "hidden_sizes": [int(arrays[f"layer_{i}_bias"].shape[0]) for i in range(len(arrays) // 2 - 1)],
    }

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


ACTIVATIONS = ("tanh", "relu")
MAX_PARAMETERS = 100_000_000  # far above any deckgym policy; bounds what a meta.json can make us allocate
MAX_MODEL_BYTES = 4 * MAX_PARAMETERS + (1 << 20)  # float32 weights of the largest network a meta.json may describe
MODEL_FILE, SIDECAR_FILE = "model.onnx", "bot.json"  # an exported bot's files (training.agents.export)
MAX_META_BYTES = 16 << 20  # a real one is a few kB; more is no meta.json to parse


def is_count(value) -> bool:
    return type(value) is int and value > 0  # bool is an int subclass: true is no size


def is_env_id(value) -> bool:
    return isinstance(value, str) and bool(value)


def is_object(value) -> bool:
    return isinstance(value, dict)


def field_error(source, field: str, wanted: str, value) -> CheckpointError:
    """``field`` of the file ``source`` is not ``wanted``: the message shows at most 100
    characters of the value (the file may hold anything)."""
    return CheckpointError(f"{source}: field {field!r} must be {wanted}, got {repr(value)[:100]}")


def check_fields(data, source, kind: str, version: int, required, fields) -> None:
    """Raise ``CheckpointError`` naming ``source`` and the field unless ``data`` (a meta.json, an
    export's bot.json) is a JSON object in ``kind``'s format ``version`` that holds every
    ``required`` field, and every field of ``fields`` (``(name, test, what it must be)``,
    checked in this order) that it holds passes its test."""
    if not isinstance(data, dict):
        raise CheckpointError(f"{source} must hold a JSON object, not {type(data).__name__}")
    found = data.get("format_version")
    if type(found) is not int or found != version:
        raise CheckpointError(
            f"{source}: field 'format_version' is {repr(found)[:100]}: {kind} format not "
            f"supported (this deckgym reads format {version})"
        )
    missing = [key for key in required if key not in data]
    if missing:
        raise CheckpointError(f"{source} lacks {', '.join(missing)}")
    for field, test, wanted in fields:
        if field in data and not test(data[field]):
            raise field_error(source, field, wanted, data[field])


def _check_meta(meta, source: str) -> None:
    """Raise ``CheckpointError`` naming ``source`` and the field when ``meta`` is not a meta.json
    this deckgym can use: the loaders index it without further checks."""
    check_fields(
        meta,
        source,
        "checkpoint",
        FORMAT_VERSION,
        ("env_id", "observation_size", "action_size", "activation", "hidden_sizes"),
        [
            ("env_id", is_env_id, "an env id"),
            ("observation_size", is_count, "an integer > 0"),
            ("action_size", is_count, "an integer > 0"),
            (
                "activation",
                lambda value: isinstance(value, str) and value in ACTIVATIONS,
                f"one of {', '.join(ACTIVATIONS)}",
            ),
            (
                "hidden_sizes",
                lambda value: isinstance(value, list) and all(is_count(n) for n in value),
                "a list of layer sizes > 0",
            ),
            ("env_args", is_object, "an object"),
            ("rules", is_object, "an object"),
            ("algorithm", is_object, "an object"),
        ],
    )
    hidden = meta["hidden_sizes"]
    net_arch = meta.get("algorithm", {}).get("net_arch", hidden)
    if net_arch != hidden:  # both are written from the same network: a difference is an edit
        raise CheckpointError(
            f"{source}: field 'hidden_sizes' {hidden!r} disagrees with algorithm.net_arch {net_arch!r}"
        )
    sizes = [meta["observation_size"], *hidden, meta["action_size"]]
    if sum((inputs + 1) * outputs for inputs, outputs in zip(sizes, sizes[1:])) > MAX_PARAMETERS:
        raise CheckpointError(
            f"{source}: the network of observation_size, hidden_sizes and action_size has "
            f"over {MAX_PARAMETERS} parameters"
        )


def _regular_file(file: Path) -> os.stat_result:
    """Stat before opening: a FIFO or device under a checkpoint's file name would block or
    stream forever, so only a regular file (or a link to one) is ever opened."""
    try:
        info = os.stat(file)
    except FileNotFoundError:
        raise CheckpointError(f"{file.parent} is not a checkpoint folder: {file} is missing") from None
    except OSError as exc:
        raise CheckpointError(f"{file} can't be read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise CheckpointError(f"{file} is not a regular file")
    return info


def read_meta(path) -> dict:
    """A checkpoint's meta.json, checked (see ``_check_meta``)."""
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(
            f"checkpoint folder {path} does not exist" if not path.exists() else f"{path} is not a checkpoint folder"
        )
    meta_file = path / "meta.json"
    meta = read_json(meta_file)
    _check_meta(meta, str(meta_file))
    return meta


def read_bytes(file: Path, limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them (a bigger one is no deckgym file)."""
    if _regular_file(file).st_size > limit:
        raise CheckpointError(f"{file} is over {limit} bytes: not a deckgym file")
    try:
        with open(file, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise CheckpointError(f"{file} can't be read ({exc.strerror})") from None
    if len(data) > limit:  # it grew since the stat
        raise CheckpointError(f"{file} is over {limit} bytes: not a deckgym file")
    return data


def read_json(file: Path, limit: int = MAX_META_BYTES):
    """A JSON file (meta.json, an export's bot.json), read safely: regular, bounded, UTF-8."""
    try:
        return json.loads(read_bytes(file, limit).decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        raise CheckpointError(f"{file} is not readable UTF-8 JSON ({type(exc).__name__}: {exc})") from None


def check_compatible(meta: dict, env, where="") -> None:
    """Raise ``CheckpointError`` saying what differs when a checkpoint can't sit in ``env``
    (an ``EnvHandle``: another game, other rules, other sizes)."""
    _check_meta(meta, f"{where}/meta.json" if where else "checkpoint meta.json")
    problems = fit_problems(meta, env)
    if problems:
        raise CheckpointError(f"checkpoint {where} does not fit this game: " + "; ".join(problems))


def fit_problems(trained: dict, env) -> list[str]:
    """What differs between the game a bot was trained for (``trained``: a meta.json or an
    export's bot.json: env_id, rules, observation_size, action_size) and ``env``."""
    if trained["env_id"] != env.id:
        return [f"it was trained for {trained['env_id']}, not {env.id}"]
    rules, problems = trained.get("rules", {}), []
    for key in sorted(set(rules) | set(env.rule_args)):
        if rules.get(key) != env.rule_args.get(key):
            problems.append(f"{key}={rules.get(key)!r} in training but {env.rule_args.get(key)!r} here")
    if trained["observation_size"] != env.obs_size or trained["action_size"] != env.num_actions:
        problems.append(
            f"observation/action sizes {trained['observation_size']}/{trained['action_size']} "
            f"vs {env.obs_size}/{env.num_actions} here"
        )
    return problems


def load_policy(path) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]]:
    """(meta, hidden layers, action layer) from a checkpoint folder, without pickle, checked
    against the sizes in meta.json. Cached while the files are unchanged: evaluation seats
    the same checkpoint in many games."""
    path = Path(path).resolve()

    return _load_policy(path, (file_stamp(path / "meta.json"), file_stamp(path / "policy.npz")))


def _layer_names(meta: dict) -> list[str]:
    return [f"layer_{i}" for i in range(len(meta["hidden_sizes"]))] + ["action"]


def expected_arrays(meta: dict) -> dict[str, tuple[int, ...]]:
    """The arrays policy.npz must hold for the network meta.json describes, with their shapes."""
    sizes = [meta["observation_size"], *meta["hidden_sizes"], meta["action_size"]]
    shapes: dict[str, tuple[int, ...]] = {}
    for name, inputs, outputs in zip(_layer_names(meta), sizes, sizes[1:]):
        shapes[f"{name}_weight"], shapes[f"{name}_bias"] = (outputs, inputs), (outputs,)
    return shapes


def _read_header(member) -> tuple[tuple, np.dtype]:
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
    else:
        raise ValueError(f".npy format {version} (deckgym writes 1.0)")
    return shape, dtype


def read_policy_arrays(weights: Path, shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """The arrays of ``weights``, which must be exactly ``shapes`` (names and shapes), each of a
    float dtype. Every member's header is checked before any array data is read: a file
    with an extra, misshapen or object array is refused without decompressing it."""
    if _regular_file(weights).st_size == 0:
        raise CheckpointError(f"{weights} is empty")
    try:
        with zipfile.ZipFile(weights) as archive:
            members = {}
            for info in archive.infolist():
                name = info.filename[: -len(".npy")] if info.filename.endswith(".npy") else None
                if name not in shapes or name in members:
                    raise CheckpointError(
                        f"{weights}: unexpected member {info.filename!r} (meta.json's network "
                        f"has {', '.join(shapes)}, each once)"
                    )
                members[name] = info
            missing = [name for name in shapes if name not in members]
            if missing:
                raise CheckpointError(f"{weights} lacks {', '.join(missing)} of the network meta.json describes")
            for name, info in members.items():
                with archive.open(info) as member:
                    shape, dtype = _read_header(member)
                    data_size = info.file_size - member.tell()
                if shape != shapes[name]:
                    raise CheckpointError(f"{weights}: {name} is {shape}, but meta.json's network needs {shapes[name]}")
                if dtype.kind != "f":
                    raise CheckpointError(f"{weights}: {name} has dtype {dtype}, not a float dtype")
                if data_size != dtype.itemsize * math.prod(shape):
                    raise CheckpointError(
                        f"{weights}: {name} holds {data_size} bytes of data, not the "
                        f"{dtype.itemsize * math.prod(shape)} its header says"
                    )
            arrays = {}
            for name, info in members.items():
                with archive.open(info) as member:
                    arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
    except CheckpointError:
        raise
    except (
        OSError,
        EOFError,
        ValueError,
        zipfile.BadZipFile,
        NotImplementedError,
        RuntimeError,
        zlib.error,
    ) as exc:  # RuntimeError: encrypted members; NotImplementedError: unknown compression
        raise CheckpointError(
            f"{weights} is not a policy file written by deckgym ({type(exc).__name__}: {exc})"
        ) from None
    return arrays


@functools.lru_cache(maxsize=64)
def _load_policy(path: Path, stamp):
    meta = read_meta(path)
    arrays = read_policy_arrays(path / "policy.npz", expected_arrays(meta))
    bad = [name for name, array in arrays.items() if not np.isfinite(array).all()]
    if bad:  # such a policy can't choose a move: refuse it before any game is played
        raise CheckpointError(
            f"{path / 'policy.npz'}: {', '.join(bad)} hold NaN or infinite values (a diverged training run?)"
        )
    layers = [
        (arrays[f"{name}_weight"].astype(np.float32), arrays[f"{name}_bias"].astype(np.float32))
        for name in _layer_names(meta)
    ]
    return meta, layers[:-1], layers[-1]
