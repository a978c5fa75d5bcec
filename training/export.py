"""Export a checkpoint's policy to ONNX, and run an exported bot with onnxruntime (no torch).

```
python -m training.export CHECKPOINT --out DIR     # e.g. checkpoints/craits --out bots/craits
```

An exported bot is a folder (written atomically, like a checkpoint):

```
<DIR>/
  model.onnx    the policy MLP with the action mask applied inside the graph
                inputs:  observation  float32 [batch, observation_size]
                         action_mask  float32 [batch, action_size]  (> 0: legal)
                outputs: logits       float32 [batch, action_size]  (illegal actions -inf)
                         action       int64   [batch]               (masked argmax)
  bot.json      the sidecar: format version, env id, env arguments and rules, sizes,
                observation layout version, the action table (index -> text), how the
                action is chosen, the model's inputs/outputs and SHA-256, the source checkpoint
```

The graph is built from ``policy.npz`` with the ``onnx`` helper API (torch is not needed):
per hidden layer ``Gemm(x, W, b, transB=1)`` then ``Tanh``/``Relu``; the action layer's
``Gemm`` gives the raw logits; ``Where(action_mask > 0, logits, -inf)`` masks them, and
``ArgMax(axis=1, keepdims=0)`` picks the action. ``docs/export.md`` documents the format for
other runtimes.

``load_exported(path, env)`` checks a folder (bot.json's fields against ``env``, model.onnx's
hash, inputs, outputs, operators; regular files only; nothing unpickled) and returns an
``OnnxAgent``, which plays like a checkpoint's ``PolicyAgent``.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import json
import os
import re
from pathlib import Path

import numpy as np

from .checkpoint import (MAX_PARAMETERS, CheckpointError, check_compatible, check_fields, field_error, fit_problems,
                         is_count, is_env_id, is_object, load_policy, read_bytes, read_json)
from .files import check_replaceable, file_stamp, write_atomically

EXPORT_FORMAT_VERSION = 1
MODEL_FILE, SIDECAR_FILE = "model.onnx", "bot.json"
OPSET = 17  # onnxruntime >= 1.13 and every current ONNX runtime run it
IR_VERSION = 8  # the IR version of opset 17: readable by older runtimes than onnx's default
# The observation layout of each env, as exported bots were built against it. Bump an entry
# when an env's observation encoding changes (its docstring table), so old exports are refused.
ACTION_SELECTIONS = ("masked_argmax", "masked_sampling")
ILLEGAL_LOGIT = -np.inf  # see docs/export.md: no finite logit can lose to an illegal move
# Graph names: the interface other runtimes rely on.
OBSERVATION, ACTION_MASK, LOGITS, ACTION = "observation", "action_mask", "logits", "action"
ALLOWED_OPS = {"Gemm", "MatMul", "Add", "Tanh", "Relu", "Greater", "Where", "ArgMax", "Constant", "Identity"}
MAX_MODEL_BYTES = 4 * MAX_PARAMETERS + (1 << 20)  # float32 weights of the largest network a meta.json may describe
ACTIVATION_OPS = {"tanh": "Tanh", "relu": "Relu"}
TOLERANCE = 1e-5  # logits agree to this, relative to max(1, |logit|) (float32 sums; see parity)


def _needs(module: str):
    """Import onnx / onnxruntime, or say how to install them."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{module} is not installed: pip install -e '.[export]' (onnx and onnxruntime)") from None


# ---------------------------------------------------------------- the interface
def interface(observation_size: int, action_size: int) -> dict:
    """The graph's inputs and outputs as bot.json lists them (``batch`` is a free dimension)."""
    return {
        "inputs": [{"name": OBSERVATION, "dtype": "float32", "shape": ["batch", observation_size]},
                   {"name": ACTION_MASK, "dtype": "float32", "shape": ["batch", action_size]}],
        "outputs": [{"name": LOGITS, "dtype": "float32", "shape": ["batch", action_size]},
                    {"name": ACTION, "dtype": "int64", "shape": ["batch"]}],
    }


def action_table(env) -> list[str]:
    """Every action's meaning as text, index by index (``env``: an ``EnvHandle``)."""
    if env.spec.action_names is not None:  # a game whose verbs depend on the phase names them itself
        return list(env.spec.action_names)
    raw = env.new_raw()
    raw.reset(seed=0)
    return [raw.game.action_to_text(a) for a in range(env.num_actions)]


# ---------------------------------------------------------------- building the graph
def build_model(hidden, head, activation: str, meta: dict | None = None):
    """The ONNX model of an MLP: ``hidden`` [(W out×in, b)], ``head`` (A, a), masked inside."""
    onnx = _needs("onnx")
    from onnx import TensorProto, helper, numpy_helper
    obs_size = (hidden[0][0] if hidden else head[0]).shape[1]
    action_size = head[0].shape[0]
    initializers, nodes = [], []
    x = OBSERVATION
    for i, (weight, bias) in enumerate([*hidden, head]):
        name = f"layer_{i}" if i < len(hidden) else "action"
        initializers += [numpy_helper.from_array(np.asarray(weight, np.float32), f"{name}_weight"),
                         numpy_helper.from_array(np.asarray(bias, np.float32), f"{name}_bias")]
        out = f"{name}_linear" if i < len(hidden) else "raw_logits"
        nodes.append(helper.make_node("Gemm", [x, f"{name}_weight", f"{name}_bias"], [out], name=f"{name}_gemm",
                                      transB=1))
        if i < len(hidden):
            x = f"{name}_out"
            nodes.append(helper.make_node(ACTIVATION_OPS[activation], [out], [x], name=f"{name}_{activation}"))
    initializers += [numpy_helper.from_array(np.array(0, np.float32), "zero"),
                     numpy_helper.from_array(np.array(ILLEGAL_LOGIT, np.float32), "illegal_logit")]
    nodes += [helper.make_node("Greater", [ACTION_MASK, "zero"], ["legal"], name="legal"),
              helper.make_node("Where", ["legal", "raw_logits", "illegal_logit"], [LOGITS], name="mask"),
              helper.make_node("ArgMax", [LOGITS], [ACTION], name="choose", axis=1, keepdims=0)]
    graph = helper.make_graph(
        nodes, "deckgym_policy",
        [helper.make_tensor_value_info(OBSERVATION, TensorProto.FLOAT, ["batch", obs_size]),
         helper.make_tensor_value_info(ACTION_MASK, TensorProto.FLOAT, ["batch", action_size])],
        [helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT, ["batch", action_size]),
         helper.make_tensor_value_info(ACTION, TensorProto.INT64, ["batch"])],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="deckgym",
                              producer_version="training.export", ir_version=IR_VERSION,
                              doc_string="deckgym policy: masked logits and the masked argmax action; see bot.json")
    for key, value in (meta or {}).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(model, full_check=True)
    return model


def sidecar(meta: dict, env, model_bytes: bytes, source: str) -> dict:
    """bot.json for checkpoint ``meta`` (checked, fitting ``env``) and the model's bytes."""
    selection = meta.get("action_selection", "masked_argmax")
    if selection not in ACTION_SELECTIONS:
        raise field_error(f"{source}/meta.json", "action_selection", f"one of {', '.join(ACTION_SELECTIONS)}",
                          selection)
    algorithm = meta.get("algorithm", {})
    return {
        "format_version": EXPORT_FORMAT_VERSION,
        "env_id": env.id,
        "env_args": meta.get("env_args", {}),
        "rules": env.rule_args,
        "observation_size": env.obs_size,
        "action_size": env.num_actions,
        "observation_version": env.spec.observation_version,
        "actions": action_table(env),
        "action_selection": selection,
        "model": {"file": MODEL_FILE, "sha256": hashlib.sha256(model_bytes).hexdigest(), "opset": OPSET,
                  "illegal_logit": "-inf", **interface(env.obs_size, env.num_actions)},
        "network": {"activation": meta["activation"], "hidden_sizes": meta["hidden_sizes"]},
        "source": {"checkpoint": source, "algorithm": algorithm.get("name"), "timesteps": meta.get("timesteps"),
                   "run": meta.get("run"), "seed": meta.get("seed")},
    }


def export(checkpoint, out) -> Path:
    """Write the exported bot of ``checkpoint`` to the folder ``out`` (atomically); return it."""
    from .games import EnvHandle  # here, not at the top: see ``parity``
    checkpoint, out = Path(checkpoint), Path(out)
    meta, hidden, head = load_policy(checkpoint)  # every check a checkpoint gets
    check_replaceable(out, {MODEL_FILE, SIDECAR_FILE}, "an exported bot", {checkpoint: "the checkpoint"})
    try:
        env = EnvHandle(meta["env_id"], meta.get("env_args", {}))
    except ValueError as exc:
        raise CheckpointError(f"{checkpoint}/meta.json: its env can't be built here ({exc})") from None
    check_compatible(meta, env, where=str(checkpoint))
    model = build_model(hidden, head, meta["activation"],
                        {"deckgym_format_version": EXPORT_FORMAT_VERSION, "deckgym_env_id": env.id})
    model_bytes = model.SerializeToString()
    bot = sidecar(meta, env, model_bytes, str(checkpoint))

    def fill(tmp: Path):
        (tmp / MODEL_FILE).write_bytes(model_bytes)
        (tmp / SIDECAR_FILE).write_text(json.dumps(bot, indent=2) + "\n")

    return write_atomically(out, fill)


# ---------------------------------------------------------------- loading an export
def check_sidecar(bot, file: Path) -> None:
    """Raise ``CheckpointError`` naming ``file`` and the field when ``bot`` is not a bot.json
    this deckgym can run."""
    fields = ("env_id", "env_args", "rules", "observation_size", "action_size", "observation_version", "actions",
              "action_selection", "model")
    check_fields(bot, file, "export", EXPORT_FORMAT_VERSION, fields,
                 [("env_id", is_env_id, "an env id"), ("env_args", is_object, "an object"),
                  ("rules", is_object, "an object"), ("model", is_object, "an object"),
                  ("observation_size", is_count, "an integer > 0"), ("action_size", is_count, "an integer > 0"),
                  ("observation_version", is_count, "an integer > 0")])
    actions = bot["actions"]
    if not isinstance(actions, list) or len(actions) != bot["action_size"] or \
            not all(isinstance(a, str) for a in actions):
        raise field_error(file, "actions", f"a list of {bot['action_size']} action texts", actions)
    if bot["action_selection"] not in ACTION_SELECTIONS:
        raise field_error(file, "action_selection", f"one of {', '.join(ACTION_SELECTIONS)}",
                          bot["action_selection"])
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
        problems.append(f"observation layout version {bot['observation_version']} vs "
                        f"{env.spec.observation_version} here")
    if problems:
        raise CheckpointError(f"exported bot {where} does not fit this game: " + "; ".join(problems))


def read_sidecar(path) -> dict:
    """An exported folder's bot.json, checked (``check_sidecar``)."""
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(f"exported bot folder {path} does not exist" if not path.exists()
                              else f"{path} is not an exported bot folder")
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
                raise CheckpointError(f"{file}: graph {kind} {value.name!r} has shape "
                                      f"{['batch' if d is None else d for d in dims]}, not {want['shape']}")
    domains = {op.domain for op in model.opset_import} - {"", "ai.onnx"}
    if domains or model.functions or len(model.graph.sparse_initializer):
        raise CheckpointError(f"{file}: uses operator domains or functions a deckgym export never has")
    unknown = sorted({node.op_type for node in model.graph.node if node.domain not in ("", "ai.onnx")
                      or node.op_type not in ALLOWED_OPS})
    if unknown:
        raise CheckpointError(f"{file}: operators {', '.join(unknown)[:200]} are not in a deckgym export")
    tensors = list(model.graph.initializer) + [attr.t for node in model.graph.node for attr in node.attribute
                                               if attr.HasField("t")]
    if any(uses_external_data(tensor) for tensor in tensors):
        raise CheckpointError(f"{file}: refers to external data files (a deckgym export holds its weights)")


def load_session(path) -> tuple[dict, object]:
    """(bot.json, onnxruntime session) of an exported folder, everything checked first.
    Cached while the files are unchanged: evaluation seats the same bot in many games."""
    path = Path(path).resolve()

    return _load_session(path, (file_stamp(path / SIDECAR_FILE), file_stamp(path / MODEL_FILE)))


@functools.lru_cache(maxsize=16)
def _load_session(path: Path, stamp):
    onnx, ort = _needs("onnx"), _needs("onnxruntime")
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
            raise ValueError(f"{self.name}: expected observations [N, {self.obs_size}] and masks "
                             f"[N, {self.num_actions}], got {obs.shape} and {masks.shape}")
        if not (masks > 0).any(axis=1).all():
            raise ValueError(f"{self.name}: an action mask with no legal move")
        logits, actions = self.session.run([LOGITS, ACTION], {OBSERVATION: obs, ACTION_MASK: masks})
        top = logits.max(axis=1)  # NaN if a legal logit is NaN
        if not np.isfinite(top).all():
            bad = top[~np.isfinite(top)][0]
            raise CheckpointError(f"exported bot {self.path}: its policy gives {'NaN' if np.isnan(bad) else 'infinite'} "
                                  "logits for the legal moves, so it can't choose a move")
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
        if not (masks[np.arange(len(chosen)), np.minimum(chosen, self.num_actions - 1)] > 0).all() or \
                (chosen >= self.num_actions).any():  # the graph masks: only a foreign graph gets here
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


def is_exported(path) -> bool:
    """Whether ``path`` is a folder holding an export (its model.onnx), for ``make_agent``."""
    try:
        return Path(path).is_dir() and os.path.lexists(Path(path) / MODEL_FILE)
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


# ---------------------------------------------------------------- parity
def record_observations(env, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` (observation, mask) pairs of the acting seats in real games of ``env`` (an
    ``EnvHandle``): each move the heuristic's or a uniformly random legal one, half and half."""
    raw = env.new_raw()
    heuristic = env.spec.heuristic(raw)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    game = 0
    while len(observations) < count:
        raw.reset(seed=seed * 100_003 + game)
        game += 1
        heuristic.reset()
        for _ in raw.agent_iter():
            obs, _, termination, truncation, _ = raw.last()
            if termination or truncation:
                raw.step(None)
                continue
            if len(observations) == count:
                break
            observations.append(obs["observation"].copy())
            masks.append(obs["action_mask"].copy())
            legal = np.flatnonzero(obs["action_mask"])
            move = heuristic.act(obs["observation"], obs["action_mask"]) if rng.random() < 0.5 \
                else int(legal[rng.integers(len(legal))])
            raw.step(move)
    return np.array(observations, np.float32), np.array(masks, np.int8)


def parity(checkpoint, exported, observations, masks) -> dict:
    """Compare an export with its checkpoint's numpy ``PolicyAgent`` on recorded observations:
    the largest difference of the legal moves' logits (absolute, and relative to
    ``max(1, |logit|)``: float32 sums in another order differ by a few units in the last place,
    about 2e-6 at a logit of 20), whether the illegal ones are exactly the -inf ones, and how
    many chosen actions agree (``near_ties``: observations whose two best legal logits are
    within ``TOLERANCE`` of each other, where rounding may pick either)."""
    # Imported here: the agent factory (training.agents) and the executor import this module to
    # run exported bots, and games imports the config and the algorithms, whose rllib_ppo
    # imports the executor; at the top these imports would close a circle.
    from .agents import PolicyAgent
    policy = PolicyAgent(checkpoint)
    agent = OnnxAgent(exported)
    logits, actions = agent.evaluate(observations, masks)
    legal = np.asarray(masks) > 0
    reference = np.where(legal, np.array([policy.logits(o) for o in observations]), -np.inf)
    numpy_actions = np.array([policy.act(o, m) for o, m in zip(observations, masks)])
    diff = np.abs(logits[legal] - reference[legal])
    ranked = np.sort(reference, axis=1)
    gaps = ranked[:, -1] - ranked[:, -2] if reference.shape[1] > 1 else np.full(len(reference), np.inf)
    return {"samples": len(observations), "max_abs_logit_diff": float(diff.max()),
            "max_rel_logit_diff": float((diff / np.maximum(1.0, np.abs(reference[legal]))).max()),
            "max_abs_logit": float(np.abs(reference[legal]).max()),
            "actions_agree": int((actions == numpy_actions).sum()),
            "near_ties": int((gaps <= TOLERANCE).sum()),
            "illegal_masked": bool(np.array_equal(np.isneginf(logits), ~legal))}


def parity_ok(result: dict) -> bool:
    """Logits within ``TOLERANCE`` relative to max(1, |logit|), the illegal ones -inf, and the
    same action wherever the choice is not a near-tie."""
    return result["max_rel_logit_diff"] <= TOLERANCE and result["illegal_masked"] \
        and result["actions_agree"] >= result["samples"] - result["near_ties"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m training.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="checkpoint folder (meta.json + policy.npz)")
    parser.add_argument("--out", required=True, help="folder to write model.onnx and bot.json in (replaced if it "
                                                     "holds an earlier export)")
    parser.add_argument("--check", type=int, default=1000, metavar="N",
                        help="compare the export with the checkpoint on N observations from real games (0: skip)")
    args = parser.parse_args(argv)
    try:
        if args.check < 0:
            raise ValueError(f"--check {args.check}: give a number of observations >= 0")
        out = export(args.checkpoint, args.out)
        bot = json.loads((out / SIDECAR_FILE).read_text())
        print(f"exported {args.checkpoint} ({bot['env_id']}, {bot['source']['algorithm']}, "
              f"{bot['source']['timesteps']} timesteps) to {out}: {MODEL_FILE} "
              f"({(out / MODEL_FILE).stat().st_size // 1024} kB), {SIDECAR_FILE}")
        if args.check:
            from .games import EnvHandle  # here, not at the top: see ``parity``
            env = EnvHandle(bot["env_id"], bot["env_args"])
            result = parity(args.checkpoint, out, *record_observations(env, args.check))
            print(f"checked against the numpy policy on {result['samples']} observations from real games: "
                  f"max |logit difference| {result['max_abs_logit_diff']:.2e} (logits up to "
                  f"{result['max_abs_logit']:.1f}; relative {result['max_rel_logit_diff']:.1e}), actions agree "
                  f"{result['actions_agree']}/{result['samples']}")
            if not parity_ok(result):
                raise CheckpointError("the export does not match its checkpoint (see the figures above)")
    except (ValueError, ImportError, OSError) as error:  # CheckpointError is a ValueError
        parser.exit(1, f"error: {error}\n")


if __name__ == "__main__":
    main()
