"""An exported bot (``training.agents.export`` writes one): its folder checked (bot.json's
fields against the env, model.onnx's hash, inputs, outputs and operators; regular files
only; nothing unpickled) and run with onnxruntime, no torch: ``load_exported(path, env)``
gives an ``OnnxAgent``, which plays like a checkpoint's ``PolicyAgent``."""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from training.agents.checkpoint import (
    MAX_MODEL_BYTES,
    MODEL_FILE,
    SIDECAR_FILE,
    CheckpointError,
    check_fields,
    field_error,
    fit_problems,
    is_count,
    is_env_id,
    is_object,
    read_bytes,
    read_json,
)
from training.common.files import file_stamp

EXPORT_FORMAT_VERSION = 1
ACTION_SELECTIONS = ("masked_argmax", "masked_sampling")
# Graph names: the interface other runtimes rely on.
OBSERVATION, ACTION_MASK, LOGITS, ACTION = "observation", "action_mask", "logits", "action"
ALLOWED_OPS = {"Gemm", "MatMul", "Add", "Tanh", "Relu", "Greater", "Where", "ArgMax", "Constant", "Identity"}


def require(module: str):
    """Import onnx / onnxruntime, or say how to install them."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{module} is not installed: pip install -e '.[export]' (onnx and onnxruntime)") from None


def interface(observation_size: int, action_size: int) -> dict:
    """The graph's inputs and outputs as bot.json lists them (``batch`` is a free dimension)."""
    return {
        "inputs": [
            {"name": OBSERVATION, "dtype": "float32", "shape": ["batch", observation_size]},
            {"name": ACTION_MASK, "dtype": "float32", "shape": ["batch", action_size]},
        ],
        "outputs": [
            {"name": LOGITS, "dtype": "float32", "shape": ["batch", action_size]},
            {"name": ACTION, "dtype": "int64", "shape": ["batch"]},
        ],
    }


# ---------------------------------------------------------------- loading an export
def check_sidecar(bot, file: Path) -> None:
    """Raise ``CheckpointError`` naming ``file`` and the field when ``bot`` is not a bot.json
    this deckgym can run."""
    fields = (
        "env_id",
        "env_args",
        "rules",
        "observation_size",
        "action_size",
        "observation_version",
        "actions",
        "action_selection",
        "model",
    )
    check_fields(
        bot,
        file,
        "export",
        EXPORT_FORMAT_VERSION,
        fields,
        [
            ("env_id", is_env_id, "an env id"),
            ("env_args", is_object, "an object"),
            ("rules", is_object, "an object"),
            ("model", is_object, "an object"),
            ("observation_size", is_count, "an integer > 0"),
            ("action_size", is_count, "an integer > 0"),
            ("observation_version", is_count, "an integer > 0"),
        ],
    )
    actions = bot["actions"]
    if (
        not isinstance(actions, list)
        or len(actions) != bot["action_size"]
        or not all(isinstance(a, str) for a in actions)
    ):
        raise field_error(file, "actions", f"a list of {bot['action_size']} action texts", actions)
    if bot["action_selection"] not in ACTION_SELECTIONS:
        raise field_error(file, "action_selection", f"one of {', '.join(ACTION_SELECTIONS)}", bot["action_selection"])
    model = bot["model"]
    if model.get("file") != MODEL_FILE:
        raise field_error(file, "model.file", repr(MODEL_FILE), model.get("file"))
    digest = model.get("sha256")
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise field_error(file, "model.sha256", "a SHA-256 hex digest", digest)
    expected = interface(bot["observation_size"], bot["action_size"])
    for field in ("inputs", "outputs"):
        if model.get(field) != expected[field]:
            raise field_error(file, f"model.{field}", json.dumps(expected[field]), model.get(field))


def check_exported_compatible(bot: dict, env, where: str) -> None:
    """Raise ``CheckpointError`` saying what differs when an exported bot can't sit in ``env``
    (another game, other rules, other sizes, another observation layout)."""
    problems = fit_problems(bot, env)
    if bot["env_id"] == env.id and bot["observation_version"] != env.spec.observation_version:
        problems.append(
            f"observation layout version {bot['observation_version']} vs {env.spec.observation_version} here"
        )
    if problems:
        raise CheckpointError(f"exported bot {where} does not fit this game: " + "; ".join(problems))


def read_sidecar(path) -> dict:
    """An exported folder's bot.json, checked (``check_sidecar``)."""
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(
            f"exported bot folder {path} does not exist"
            if not path.exists()
            else f"{path} is not an exported bot folder"
        )
    file = path / SIDECAR_FILE
    if not os.path.lexists(file):
        raise CheckpointError(f"{path} is not an exported bot folder: {file} is missing")
    bot = read_json(file)
    check_sidecar(bot, file)
    return bot


def _dims(value_info) -> list:
    shape = value_info.type.tensor_type.shape
    return [d.dim_value if d.HasField("dim_value") else None for d in shape.dim]


def check_graph(model, bot: dict, file: Path) -> None:
    """Raise ``CheckpointError`` unless ``model`` has exactly the inputs and outputs bot.json
    lists (names, dtypes, shapes), only the operators an export uses, and no external data."""
    from onnx import TensorProto
    from onnx.external_data_helper import uses_external_data

    dtypes = {"float32": TensorProto.FLOAT, "int64": TensorProto.INT64}
    for kind, listed in (("input", model.graph.input), ("output", model.graph.output)):
        wanted = bot["model"][f"{kind}s"]
        names = [v.name for v in listed]
        if names != [w["name"] for w in wanted]:
            raise CheckpointError(f"{file}: graph {kind}s are {names}, not {[w['name'] for w in wanted]}")
        for value, want in zip(listed, wanted):
            if not value.type.HasField("tensor_type") or value.type.tensor_type.elem_type != dtypes[want["dtype"]]:
                raise CheckpointError(f"{file}: graph {kind} {value.name!r} is not a {want['dtype']} tensor")
            dims = _dims(value)
            if len(dims) != len(want["shape"]) or dims[1:] != want["shape"][1:]:
                raise CheckpointError(
                    f"{file}: graph {kind} {value.name!r} has shape "
                    f"{['batch' if d is None else d for d in dims]}, not {want['shape']}"
                )
    domains = {op.domain for op in model.opset_import} - {"", "ai.onnx"}
    if domains or model.functions or len(model.graph.sparse_initializer):
        raise CheckpointError(f"{file}: uses operator domains or functions a deckgym export never has")
    unknown = sorted(
        {
            node.op_type
            for node in model.graph.node
            if node.domain not in ("", "ai.onnx") or node.op_type not in ALLOWED_OPS
        }
    )
    if unknown:
        raise CheckpointError(f"{file}: operators {', '.join(unknown)[:200]} are not in a deckgym export")
    tensors = list(model.graph.initializer) + [
        attr.t for node in model.graph.node for attr in node.attribute if attr.HasField("t")
    ]
    if any(uses_external_data(tensor) for tensor in tensors):
        raise CheckpointError(f"{file}: refers to external data files (a deckgym export holds its weights)")


def load_session(path) -> tuple[dict, Any]:
    """(bot.json, onnxruntime session) of an exported folder, everything checked first.
    Cached while the files are unchanged: evaluation seats the same bot in many games."""
    path = Path(path).resolve()

    return _load_session(path, (file_stamp(path / SIDECAR_FILE), file_stamp(path / MODEL_FILE)))


@functools.lru_cache(maxsize=16)
def _load_session(path: Path, stamp):
    onnx, ort = require("onnx"), require("onnxruntime")
    bot = read_sidecar(path)
    file = path / MODEL_FILE
    data = read_bytes(file, MAX_MODEL_BYTES)  # read once: what is checked is what runs
    if hashlib.sha256(data).hexdigest() != bot["model"]["sha256"]:
        raise CheckpointError(f"{file} does not match the SHA-256 in {path / SIDECAR_FILE} (damaged or replaced)")
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise CheckpointError(f"{file} is not an ONNX model ({type(exc).__name__}: {str(exc)[:200]})") from None
    check_graph(model, bot, file)
    try:
        onnx.checker.check_model(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1  # many games run side by side
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnx's ValidationError, onnxruntime's Fail/InvalidGraph
        raise CheckpointError(f"{file} can't be run ({type(exc).__name__}: {str(exc)[:300]})") from None
    return bot, session


class OnnxAgent:
    """An exported bot run by onnxruntime: the masked argmax comes out of the graph; sampling
    (``deterministic=False``) draws from the softmax of the masked logits with a seeded numpy
    generator, exactly as ``PolicyAgent`` does (the same seed gives the same moves)."""

    def __init__(self, path, deterministic: bool | None = True, seed=None, name=None):
        self.path = str(path)
        self.name = self.path if name is None else str(name)
        self.meta, self.session = load_session(path)
        self.obs_size, self.num_actions = self.meta["observation_size"], self.meta["action_size"]
        if deterministic is None:  # what bot.json says
            deterministic = self.meta["action_selection"] == "masked_argmax"
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def evaluate(self, observations, action_masks) -> tuple[np.ndarray, np.ndarray]:
        """(masked logits [N, actions], argmax actions [N]) for a batch."""
        obs = np.asarray(observations, np.float32)
        masks = np.asarray(action_masks, np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_size or masks.shape != (obs.shape[0], self.num_actions):
            raise ValueError(
                f"{self.name}: expected observations [N, {self.obs_size}] and masks "
                f"[N, {self.num_actions}], got {obs.shape} and {masks.shape}"
            )
        if not (masks > 0).any(axis=1).all():
            raise ValueError(f"{self.name}: an action mask with no legal move")
        logits, actions = self.session.run([LOGITS, ACTION], {OBSERVATION: obs, ACTION_MASK: masks})
        top = logits.max(axis=1)  # NaN if a legal logit is NaN
        if not np.isfinite(top).all():
            bad = top[~np.isfinite(top)][0]
            raise CheckpointError(
                f"exported bot {self.path}: its policy gives {'NaN' if np.isnan(bad) else 'infinite'} "
                "logits for the legal moves, so it can't choose a move"
            )
        return logits, actions

    def logits(self, observation, action_mask) -> np.ndarray:
        """The masked logits of one observation (illegal actions -inf)."""
        return self.evaluate(np.asarray(observation)[None], np.asarray(action_mask)[None])[0][0]

    def act_batch(self, observations, action_masks) -> np.ndarray:
        """One move per row (int64 [N]); sampling draws one uniform per row, in row order."""
        logits, actions = self.evaluate(observations, action_masks)
        if self.deterministic:
            chosen = actions.astype(np.int64)
        else:
            weights = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
            draws = self.rng.random(len(weights)) * weights[:, -1]
            chosen = (weights <= draws[:, None]).sum(axis=1).astype(np.int64)  # searchsorted(side="right")
        masks = np.asarray(action_masks)
        if (
            not (masks[np.arange(len(chosen)), np.minimum(chosen, self.num_actions - 1)] > 0).all()
            or (chosen >= self.num_actions).any()
        ):  # the graph masks: only a foreign graph gets here
            raise CheckpointError(f"exported bot {self.path} chose an illegal move: its graph does not apply the mask")
        return chosen

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


def load_exported(path, env, seed=None, deterministic: bool | None = True, name=None) -> OnnxAgent:
    """The agent of an exported folder, checked against ``env`` (an ``EnvHandle``) like a
    checkpoint: ``CheckpointError`` names the file and field, or says what differs.
    ``deterministic=None`` follows bot.json's ``action_selection``; ``name`` defaults to ``path``."""
    agent = OnnxAgent(path, deterministic, seed, name)
    check_exported_compatible(agent.meta, env, where=str(path))
    return agent
