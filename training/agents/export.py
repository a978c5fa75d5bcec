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

Reading and running an exported bot is ``training.agents.exported`` (``load_exported``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from training.agents.checkpoint import (
    MODEL_FILE,
    SIDECAR_FILE,
    CheckpointError,
    check_compatible,
    field_error,
    load_policy,
)
from training.agents.exported import (
    ACTION,
    ACTION_MASK,
    ACTION_SELECTIONS,
    EXPORT_FORMAT_VERSION,
    LOGITS,
    OBSERVATION,
    OnnxAgent,
    interface,
    require,
)
from training.agents.policy import PolicyAgent
from training.common.commands import command_parser
from training.common.files import check_replaceable, write_atomically
from training.common.games import EnvHandle
from training.common.version import deckgym_version

OPSET = 17  # onnxruntime >= 1.13 and every current ONNX runtime run it
IR_VERSION = 8  # the IR version of opset 17: readable by older runtimes than onnx's default
ILLEGAL_LOGIT = -np.inf  # see docs/export.md: no finite logit can lose to an illegal move
ACTIVATION_OPS = {"tanh": "Tanh", "relu": "Relu"}
TOLERANCE = 1e-5  # logits agree to this, relative to max(1, |logit|) (float32 sums; see parity)


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
    onnx = require("onnx")
    from onnx import TensorProto, helper, numpy_helper

    obs_size = (hidden[0][0] if hidden else head[0]).shape[1]
    action_size = head[0].shape[0]
    initializers, nodes = [], []
    x = OBSERVATION
    for i, (weight, bias) in enumerate([*hidden, head]):
        name = f"layer_{i}" if i < len(hidden) else "action"
        initializers += [
            numpy_helper.from_array(np.asarray(weight, np.float32), f"{name}_weight"),
            numpy_helper.from_array(np.asarray(bias, np.float32), f"{name}_bias"),
        ]
        out = f"{name}_linear" if i < len(hidden) else "raw_logits"
        nodes.append(
            helper.make_node("Gemm", [x, f"{name}_weight", f"{name}_bias"], [out], name=f"{name}_gemm", transB=1)
        )
        if i < len(hidden):
            x = f"{name}_out"
            nodes.append(helper.make_node(ACTIVATION_OPS[activation], [out], [x], name=f"{name}_{activation}"))
    initializers += [
        numpy_helper.from_array(np.array(0, np.float32), "zero"),
        numpy_helper.from_array(np.array(ILLEGAL_LOGIT, np.float32), "illegal_logit"),
    ]
    nodes += [
        helper.make_node("Greater", [ACTION_MASK, "zero"], ["legal"], name="legal"),
        helper.make_node("Where", ["legal", "raw_logits", "illegal_logit"], [LOGITS], name="mask"),
        helper.make_node("ArgMax", [LOGITS], [ACTION], name="choose", axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "deckgym_policy",
        [
            helper.make_tensor_value_info(OBSERVATION, TensorProto.FLOAT, ["batch", obs_size]),
            helper.make_tensor_value_info(ACTION_MASK, TensorProto.FLOAT, ["batch", action_size]),
        ],
        [
            helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT, ["batch", action_size]),
            helper.make_tensor_value_info(ACTION, TensorProto.INT64, ["batch"]),
        ],
        initializer=initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="deckgym",
        producer_version="training.agents.export",
        ir_version=IR_VERSION,
        doc_string="deckgym policy: masked logits and the masked argmax action; see bot.json",
    )
    for key, value in (meta or {}).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(model, full_check=True)
    return model


def sidecar(meta: dict, env, model_bytes: bytes, source: str) -> dict:
    """bot.json for checkpoint ``meta`` (checked, fitting ``env``) and the model's bytes."""
    selection = meta.get("action_selection", "masked_argmax")
    if selection not in ACTION_SELECTIONS:
        raise field_error(
            f"{source}/meta.json", "action_selection", f"one of {', '.join(ACTION_SELECTIONS)}", selection
        )
    algorithm = meta.get("algorithm", {})
    return {
        "format_version": EXPORT_FORMAT_VERSION,
        "deckgym_version": deckgym_version(),
        "env_id": env.id,
        "env_args": meta.get("env_args", {}),
        "rules": env.rule_args,
        "observation_size": env.obs_size,
        "action_size": env.num_actions,
        "observation_version": env.spec.observation_version,
        "actions": action_table(env),
        "action_selection": selection,
        "model": {
            "file": MODEL_FILE,
            "sha256": hashlib.sha256(model_bytes).hexdigest(),
            "opset": OPSET,
            "illegal_logit": "-inf",
            **interface(env.obs_size, env.num_actions),
        },
        "network": {"activation": meta["activation"], "hidden_sizes": meta["hidden_sizes"]},
        "source": {
            "checkpoint": source,
            "algorithm": algorithm.get("name"),
            "timesteps": meta.get("timesteps"),
            "run": meta.get("run"),
            "seed": meta.get("seed"),
        },
    }


def export(checkpoint, out) -> Path:
    """Write the exported bot of ``checkpoint`` to the folder ``out`` (atomically); return it."""
    checkpoint, out = Path(checkpoint), Path(out)
    meta, hidden, head = load_policy(checkpoint)  # every check a checkpoint gets
    check_replaceable(out, {MODEL_FILE, SIDECAR_FILE}, "an exported bot", {checkpoint: "the checkpoint"})
    try:
        env = EnvHandle(meta["env_id"], meta.get("env_args", {}))
    except ValueError as exc:
        raise CheckpointError(f"{checkpoint}/meta.json: its env can't be built here ({exc})") from None
    check_compatible(meta, env, where=str(checkpoint))
    model = build_model(
        hidden, head, meta["activation"], {"deckgym_format_version": EXPORT_FORMAT_VERSION, "deckgym_env_id": env.id}
    )
    model_bytes = model.SerializeToString()
    bot = sidecar(meta, env, model_bytes, str(checkpoint))

    def fill(tmp: Path):
        (tmp / MODEL_FILE).write_bytes(model_bytes)
        (tmp / SIDECAR_FILE).write_text(json.dumps(bot, indent=2) + "\n")

    return write_atomically(out, fill)


# ---------------------------------------------------------------- parity
def record_observations(env, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` (observation, mask) pairs of the acting seats in real games of ``env`` (an
    ``EnvHandle``): each move the heuristic's or a uniformly random legal one, half and half."""
    raw = env.new_raw()
    heuristic = env.spec.heuristic(raw)
    rng = np.random.default_rng(seed)
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
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
            move = (
                heuristic.act(obs["observation"], obs["action_mask"])
                if rng.random() < 0.5
                else int(legal[rng.integers(len(legal))])
            )
            raw.step(move)
    return np.array(observations, np.float32), np.array(masks, np.int8)


def parity(checkpoint, exported, observations, masks) -> dict:
    """Compare an export with its checkpoint's numpy ``PolicyAgent`` on recorded observations:
    the largest difference of the legal moves' logits (absolute, and relative to
    ``max(1, |logit|)``: float32 sums in another order differ by a few units in the last place,
    about 2e-6 at a logit of 20), whether the illegal ones are exactly the -inf ones, and how
    many chosen actions agree (``near_ties``: observations whose two best legal logits are
    within ``TOLERANCE`` of each other, where rounding may pick either)."""
    policy = PolicyAgent(checkpoint)
    agent = OnnxAgent(exported)
    logits, actions = agent.evaluate(observations, masks)
    legal = np.asarray(masks) > 0
    reference = np.where(legal, np.array([policy.logits(o) for o in observations]), -np.inf)
    numpy_actions = np.array([policy.act(o, m) for o, m in zip(observations, masks)])
    diff = np.abs(logits[legal] - reference[legal])
    ranked = np.sort(reference, axis=1)
    gaps = ranked[:, -1] - ranked[:, -2] if reference.shape[1] > 1 else np.full(len(reference), np.inf)
    return {
        "samples": len(observations),
        "max_abs_logit_diff": float(diff.max()),
        "max_rel_logit_diff": float((diff / np.maximum(1.0, np.abs(reference[legal]))).max()),
        "max_abs_logit": float(np.abs(reference[legal]).max()),
        "actions_agree": int((actions == numpy_actions).sum()),
        "near_ties": int((gaps <= TOLERANCE).sum()),
        "illegal_masked": bool(np.array_equal(np.isneginf(logits), ~legal)),
    }


def parity_ok(result: dict) -> bool:
    """Logits within ``TOLERANCE`` relative to max(1, |logit|), the illegal ones -inf, and the
    same action wherever the choice is not a near-tie."""
    return (
        result["max_rel_logit_diff"] <= TOLERANCE
        and result["illegal_masked"]
        and result["actions_agree"] >= result["samples"] - result["near_ties"]
    )


def main(argv=None):
    parser = command_parser("export", __doc__)
    parser.add_argument("checkpoint", help="checkpoint folder (meta.json + policy.npz)")
    parser.add_argument(
        "--out",
        required=True,
        help="folder to write model.onnx and bot.json in (replaced if it holds an earlier export)",
    )
    parser.add_argument(
        "--check",
        type=int,
        default=1000,
        metavar="N",
        help="compare the export with the checkpoint on N observations from real games (0: skip)",
    )
    args = parser.parse_args(argv)
    try:
        if args.check < 0:
            raise ValueError(f"--check {args.check}: give a number of observations >= 0")
        out = export(args.checkpoint, args.out)
        bot = json.loads((out / SIDECAR_FILE).read_text())
        print(
            f"exported {args.checkpoint} ({bot['env_id']}, {bot['source']['algorithm']}, "
            f"{bot['source']['timesteps']} timesteps) to {out}: {MODEL_FILE} "
            f"({(out / MODEL_FILE).stat().st_size // 1024} kB), {SIDECAR_FILE}"
        )
        if args.check:
            env = EnvHandle(bot["env_id"], bot["env_args"])
            result = parity(args.checkpoint, out, *record_observations(env, args.check))
            print(
                f"checked against the numpy policy on {result['samples']} observations from real games: "
                f"max |logit difference| {result['max_abs_logit_diff']:.2e} (logits up to "
                f"{result['max_abs_logit']:.1f}; relative {result['max_rel_logit_diff']:.1e}), actions agree "
                f"{result['actions_agree']}/{result['samples']}"
            )
            if not parity_ok(result):
                raise CheckpointError("the export does not match its checkpoint (see the figures above)")
    except (ValueError, ImportError, OSError) as error:  # CheckpointError is a ValueError
        parser.exit(1, f"error: {error}\n")


if __name__ == "__main__":
    main()
