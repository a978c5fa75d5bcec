"""ONNX export (training/agents/export.py): the graph and its sidecar, parity with the numpy and
torch policies on observations from real games, the loader's checks, the CLI."""

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper
from test_training import tiny

from training.agents import PolicyAgent
from training.agents import export as ex
from training.agents import exported as exported_mod
from training.agents.checkpoint import CheckpointError, save_checkpoint
from training.algorithms import maskable_ppo
from training.common.games import EnvHandle
from training.learning import train as train_module

SAMPLES = 3000  # observations recorded per game for the parity checks
CRAITS_ARGS = {"episode": "deal", "deals": [3], "nine": "same_colour"}  # what tiny() trains with


def export_cli(checkpoint, out, *extra):
    ex.main([str(checkpoint), "--out", str(out), "--check", "0", *extra])
    return out


def scrambled_checkpoint(tmp_path, env_id, **overrides):
    """A tiny MaskablePPO run's checkpoint (model.zip and policy.npz) whose policy weights are
    then scrambled, so its logits are tens, not the ~0.01 of a fresh action head."""
    import torch
    from sb3_contrib import MaskablePPO

    config = tiny(tmp_path, env_id=env_id, **{"training.total_timesteps": 256, **overrides})
    checkpoint = train_module.train(config, config.run_dir) / "checkpoint"
    model = MaskablePPO.load(checkpoint / "model.zip")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for module in (model.policy.mlp_extractor.policy_net, model.policy.action_net):
            for param in module.parameters():
                fan_in = param.shape[-1] if param.ndim == 2 else 1
                param.copy_(torch.randn(param.shape, generator=generator) * 3 / fan_in**0.5)
    meta = json.loads((checkpoint / "meta.json").read_text())
    save_checkpoint(checkpoint, model, meta, maskable_ppo)
    return checkpoint


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """game -> (checkpoint with model.zip, its export, recorded observations and masks)."""
    runs = {}
    for env_id, overrides in (
        ("craits_v0", {"algorithm.net_arch": "[32,32]"}),
        ("pairs_draft_v0", {"algorithm.net_arch": "[24]", "algorithm.activation": "relu"}),
    ):
        folder = tmp_path_factory.mktemp(env_id)
        checkpoint = scrambled_checkpoint(folder, env_id, **overrides)
        exported = export_cli(checkpoint, folder / "bot")
        env = EnvHandle(env_id, CRAITS_ARGS if env_id == "craits_v0" else {})
        runs[env_id] = (checkpoint, exported, *ex.record_observations(env, SAMPLES, seed=1))
    return runs


def log_softmax(logits):
    top = logits.max(axis=1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))


# ---------------------------------------------------------------- parity
@pytest.mark.parametrize("env_id", ["craits_v0", "pairs_draft_v0"])
def test_onnx_numpy_and_torch_agree(trained, env_id):
    """On thousands of observations from real games, onnxruntime, the numpy PolicyAgent and the
    torch policy give the same legal logits (to 1e-5) and choose the same actions."""
    import torch
    from sb3_contrib import MaskablePPO

    checkpoint, exported, observations, masks = trained[env_id]
    legal = masks > 0
    onnx_logits, onnx_actions = exported_mod.OnnxAgent(exported).evaluate(observations, masks)

    policy = PolicyAgent(checkpoint)
    numpy_logits = np.where(legal, np.array([policy.logits(o) for o in observations]), -np.inf)
    numpy_actions = np.array([policy.act(o, m) for o, m in zip(observations, masks)])

    model = MaskablePPO.load(checkpoint / "model.zip")
    with torch.no_grad():
        obs = torch.as_tensor(observations)
        features = model.policy.extract_features(obs, model.policy.pi_features_extractor)
        torch_raw = model.policy.action_net(model.policy.mlp_extractor.forward_actor(features)).numpy()
        torch_log_probs = model.policy.get_distribution(obs, action_masks=masks).distribution.logits.numpy()
    torch_logits = np.where(legal, torch_raw, -np.inf)

    assert np.abs(onnx_logits[legal]).max() > 5  # the logits are not all near zero: the check means something
    assert np.array_equal(np.isneginf(onnx_logits), ~legal)  # the mask is applied in the graph, exactly
    assert np.abs(onnx_logits[legal] - numpy_logits[legal]).max() <= ex.TOLERANCE
    assert np.abs(onnx_logits[legal] - torch_logits[legal]).max() <= ex.TOLERANCE
    assert np.abs(log_softmax(onnx_logits)[legal] - torch_log_probs[legal]).max() <= ex.TOLERANCE
    assert np.array_equal(onnx_actions, numpy_actions)
    assert np.array_equal(onnx_actions, np.argmax(torch_logits, axis=1))
    assert legal[np.arange(len(onnx_actions)), onnx_actions].all()


@pytest.mark.parametrize("game", ["craits", "pairs_draft"])
def test_shipped_checkpoints_export_with_parity(tmp_path, game):
    exported = export_cli(f"checkpoints/{game}", tmp_path / game)
    bot = json.loads((exported / "bot.json").read_text())
    observations, masks = ex.record_observations(EnvHandle(bot["env_id"], bot["env_args"]), SAMPLES)
    result = ex.parity(f"checkpoints/{game}", exported, observations, masks)
    assert result["samples"] == SAMPLES and result["illegal_masked"]
    # logits of about 20: float32 sums in another order differ by a few units in the last place
    assert result["max_rel_logit_diff"] <= ex.TOLERANCE and result["max_abs_logit_diff"] < 1e-4
    assert result["actions_agree"] >= SAMPLES - result["near_ties"] and ex.parity_ok(result)


def test_cli_check_reports_the_parity(tmp_path, capsys):
    ex.main(["checkpoints/pairs_draft", "--out", str(tmp_path / "bot"), "--check", "200"])
    out = capsys.readouterr().out
    assert "to " + str(tmp_path / "bot") in out and "on 200 observations from real games" in out
    assert "actions agree 200/200" in out


# ---------------------------------------------------------------- the files
def test_graph_inputs_outputs_and_operators(trained):
    _, exported, _, _ = trained["craits_v0"]
    model = onnx.load(str(exported / "model.onnx"))
    onnx.checker.check_model(model, full_check=True)
    assert [(v.name, v.type.tensor_type.elem_type, exported_mod._dims(v)) for v in model.graph.input] == [
        ("observation", TensorProto.FLOAT, [None, 206]),
        ("action_mask", TensorProto.FLOAT, [None, 109]),
    ]
    assert [(v.name, v.type.tensor_type.elem_type, exported_mod._dims(v)) for v in model.graph.output] == [
        ("logits", TensorProto.FLOAT, [None, 109]),
        ("action", TensorProto.INT64, [None]),
    ]
    assert [(op.domain, op.version) for op in model.opset_import] == [("", ex.OPSET)]
    assert [n.op_type for n in model.graph.node] == [
        "Gemm",
        "Tanh",
        "Gemm",
        "Tanh",
        "Gemm",
        "Greater",
        "Where",
        "ArgMax",
    ]


def test_sidecar_fields(trained):
    checkpoint, exported, _, _ = trained["craits_v0"]
    bot = json.loads((exported / "bot.json").read_text())
    meta = json.loads((checkpoint / "meta.json").read_text())
    assert bot["format_version"] == 1 and bot["env_id"] == "craits_v0" and bot["env_args"] == meta["env_args"]
    assert bot["deckgym_version"] == meta["deckgym_version"] == importlib.metadata.version("deckgym")
    assert bot["rules"] == meta["rules"] == EnvHandle("craits_v0", CRAITS_ARGS).rule_args
    assert (bot["observation_size"], bot["action_size"], bot["observation_version"]) == (206, 109, 1)
    assert bot["actions"][0] == "play AC" and bot["actions"][52] == "play AC unannounced"
    assert bot["actions"][104] == "draw" and bot["actions"][105:] == ["suit C", "suit D", "suit H", "suit S"]
    assert bot["action_selection"] == meta["action_selection"] == "masked_sampling"  # a PPO policy
    assert bot["model"]["sha256"] == hashlib.sha256((exported / "model.onnx").read_bytes()).hexdigest()
    assert bot["model"]["inputs"][1] == {"name": "action_mask", "dtype": "float32", "shape": ["batch", 109]}
    assert bot["source"] == {
        "checkpoint": str(checkpoint),
        "algorithm": "MaskablePPO",
        "timesteps": meta["timesteps"],
        "run": meta.get("run"),
        "seed": meta.get("seed"),
    }
    assert bot["network"] == {"activation": "tanh", "hidden_sizes": [32, 32]}
    pairs = json.loads((trained["pairs_draft_v0"][1] / "bot.json").read_text())
    assert pairs["actions"][6] == "number 7 (pick, discard or play)" and len(pairs["actions"]) == 10
    assert pairs["network"] == {"activation": "relu", "hidden_sizes": [24]}


def synthetic_checkpoint(folder, hidden_sizes=(), activation="relu", bias=None, **meta_changes):
    """A craits_v0 (default rules) checkpoint of random weights, no model.zip."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(len(hidden_sizes))
    sizes = [206, *hidden_sizes, 109]
    arrays = {}
    for i, (inputs, outputs) in enumerate(zip(sizes, sizes[1:])):
        name = f"layer_{i}" if i < len(hidden_sizes) else "action"
        arrays[f"{name}_weight"] = rng.normal(size=(outputs, inputs)) / inputs**0.5
        arrays[f"{name}_bias"] = rng.normal(size=outputs) if bias is None or i < len(hidden_sizes) else bias
    np.savez(folder / "policy.npz", **arrays)
    meta = {
        "format_version": 1,
        "env_id": "craits_v0",
        "env_args": {},
        "rules": EnvHandle("craits_v0").rule_args,
        "observation_size": 206,
        "action_size": 109,
        "activation": activation,
        "hidden_sizes": list(hidden_sizes),
        **meta_changes,
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("hidden, activation", [((), "tanh"), ((7, 5, 3), "relu")])
def test_any_depth_and_activation(tmp_path, hidden, activation):
    checkpoint = synthetic_checkpoint(tmp_path / "ckpt", hidden, activation)
    exported = export_cli(checkpoint, tmp_path / "bot")
    observations, masks = ex.record_observations(EnvHandle("craits_v0"), 500)
    result = ex.parity(checkpoint, exported, observations, masks)
    assert result["max_rel_logit_diff"] <= ex.TOLERANCE and result["actions_agree"] == 500


def test_action_selection_is_carried(tmp_path):
    checkpoint = synthetic_checkpoint(tmp_path / "ckpt", action_selection="masked_sampling")
    bot = json.loads((export_cli(checkpoint, tmp_path / "bot") / "bot.json").read_text())
    assert bot["action_selection"] == "masked_sampling"
    assert (
        exported_mod.load_exported(tmp_path / "bot", EnvHandle("craits_v0"), deterministic=None).deterministic is False
    )
    synthetic_checkpoint(tmp_path / "bad", action_selection="epsilon_greedy")
    with pytest.raises(CheckpointError, match="field 'action_selection' must be one of masked_argmax"):
        ex.export(tmp_path / "bad", tmp_path / "bot2")


# ---------------------------------------------------------------- the agent
def test_mask_is_applied_inside_the_graph(tmp_path):
    """A huge logit on an illegal move never wins: not in the graph's action, not in sampling."""
    bias = np.zeros(109)
    bias[0] = 1e30
    checkpoint = synthetic_checkpoint(tmp_path / "ckpt", bias=bias)
    agent = exported_mod.load_exported(export_cli(checkpoint, tmp_path / "bot"), EnvHandle("craits_v0"), seed=0)
    observations, masks = ex.record_observations(EnvHandle("craits_v0"), 200)
    masks[:, 0] = 0
    masks[:, 1] = 1
    logits, actions = agent.evaluate(observations, masks)
    assert np.isneginf(logits[:, 0]).all() and (actions != 0).all()
    assert (masks[np.arange(200), agent.act_batch(observations, masks)] == 1).all()
    agent.deterministic = False
    assert (masks[np.arange(200), agent.act_batch(observations, masks)] == 1).all()
    with pytest.raises(ValueError, match="no legal move"):
        agent.act(observations[0], np.zeros(109))


def test_sampling_matches_policy_agent_and_batches(trained):
    checkpoint, exported, observations, masks = trained["pairs_draft_v0"]
    observations, masks = observations[:300], masks[:300]
    onnx_agent = exported_mod.OnnxAgent(exported, deterministic=False, seed=7)
    policy = PolicyAgent(checkpoint, deterministic=False, seed=7)
    one_by_one = [onnx_agent.act(o, m) for o, m in zip(observations, masks)]
    assert one_by_one == [policy.act(o, m) for o, m in zip(observations, masks)]
    assert len(set(one_by_one)) > 1
    batch = exported_mod.OnnxAgent(exported, deterministic=False, seed=7).act_batch(observations, masks)
    assert batch.dtype == np.int64 and batch.tolist() == one_by_one
    deterministic = exported_mod.OnnxAgent(exported)
    assert deterministic.act_batch(observations, masks).tolist() == [
        deterministic.act(o, m) for o, m in zip(observations, masks)
    ]


def test_exported_bot_plays_whole_games_without_torch(trained):
    """Seated in real games and checked like a checkpoint, in a process that never imports torch."""
    _, exported, _, _ = trained["pairs_draft_v0"]
    code = f"""
import sys
from training.agents.exported import load_exported
from training.agents import checked_act
from training.common.games import EnvHandle
env = EnvHandle("pairs_draft_v0")
agents = [load_exported({str(exported)!r}, env, seed=s, name="onnx:bot") for s in range(4)]
for game in range(3):
    env.raw.reset(seed=game)
    for agent_id in env.raw.agent_iter():
        obs, _, term, trunc, _ = env.raw.last()
        seat = env.raw.agent_name_mapping[agent_id]
        env.raw.step(None if term or trunc else checked_act(agents[seat], seat, obs, env.raw.game))
    assert env.raw.game.is_over
assert agents[0].name == "onnx:bot"
assert "torch" not in sys.modules, "torch was imported"
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


# ---------------------------------------------------------------- the loader's checks
@pytest.fixture
def bot_copy(trained, tmp_path):
    """A fresh copy of the craits export to damage."""
    folder = tmp_path / "bot"
    folder.mkdir()
    for name in ("model.onnx", "bot.json"):
        (folder / name).write_bytes((trained["craits_v0"][1] / name).read_bytes())
    return folder


def edit_sidecar(folder, **changes):
    bot = json.loads((folder / "bot.json").read_text())
    for key, value in changes.items():
        if value is None:
            del bot[key]
        else:
            bot[key] = value
    (folder / "bot.json").write_text(json.dumps(bot))


def replace_model(folder, model):
    data = model.SerializeToString()
    (folder / "model.onnx").write_bytes(data)
    bot = json.loads((folder / "bot.json").read_text())
    bot["model"]["sha256"] = hashlib.sha256(data).hexdigest()
    (folder / "bot.json").write_text(json.dumps(bot))


def load(folder, env_id="craits_v0", args=CRAITS_ARGS):
    return exported_mod.load_exported(folder, EnvHandle(env_id, args))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"format_version": 2}, "bot.json: field 'format_version' is 2: export format not supported"),
        ({"env_id": None}, "bot.json lacks env_id"),
        ({"observation_size": "206"}, "bot.json: field 'observation_size' must be an integer > 0, got '206'"),
        ({"rules": []}, "bot.json: field 'rules' must be an object"),
        ({"actions": ["draw"]}, "bot.json: field 'actions' must be a list of 109 action texts"),
        ({"action_selection": "best"}, "bot.json: field 'action_selection' must be one of masked_argmax"),
        ({"model": {"file": "../x.onnx"}}, "bot.json: field 'model.file' must be 'model.onnx'"),
    ],
)
def test_damaged_sidecar_is_refused_naming_the_field(bot_copy, changes, message):
    edit_sidecar(bot_copy, **changes)
    with pytest.raises(CheckpointError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load(bot_copy)


def test_sidecar_and_model_damage(bot_copy):
    (bot_copy / "bot.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="bot.json is not readable UTF-8 JSON"):
        load(bot_copy)
    (bot_copy / "bot.json").unlink()
    with pytest.raises(CheckpointError, match="is not an exported bot folder: .*bot.json is missing"):
        load(bot_copy)


def test_model_not_matching_its_hash_is_refused(bot_copy):
    data = bytearray((bot_copy / "model.onnx").read_bytes())
    data[-100] ^= 1
    (bot_copy / "model.onnx").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="model.onnx does not match the SHA-256 in .*bot.json"):
        load(bot_copy)


@pytest.mark.parametrize("name", ["model.onnx", "bot.json"])
def test_fifo_is_refused_without_blocking(bot_copy, name):
    (bot_copy / name).unlink()
    os.mkfifo(bot_copy / name)
    with pytest.raises(CheckpointError, match=f"{name} is not a regular file"):
        load(bot_copy)


def test_graph_with_other_inputs_operators_or_external_data_is_refused(bot_copy):
    original = onnx.load(str(bot_copy / "model.onnx"))
    renamed = onnx.ModelProto()
    renamed.CopyFrom(original)
    renamed.graph.input[1].name = "mask"
    for node in renamed.graph.node:
        node.input[:] = ["mask" if i == "action_mask" else i for i in node.input]
    replace_model(bot_copy, renamed)
    with pytest.raises(CheckpointError, match=r"graph inputs are \['observation', 'mask'\]"):
        load(bot_copy)

    reshaped = onnx.ModelProto()
    reshaped.CopyFrom(original)
    reshaped.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 108
    replace_model(bot_copy, reshaped)
    with pytest.raises(CheckpointError, match="graph output 'logits' has shape"):
        load(bot_copy)

    foreign = onnx.ModelProto()
    foreign.CopyFrom(original)
    foreign.graph.node[1].op_type = "Softmax"
    replace_model(bot_copy, foreign)
    with pytest.raises(CheckpointError, match="operators Softmax are not in a deckgym export"):
        load(bot_copy)

    external = onnx.ModelProto()
    external.CopyFrom(original)
    weight = external.graph.initializer[0]
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "/etc/passwd"
    replace_model(bot_copy, external)
    with pytest.raises(CheckpointError, match="refers to external data files"):
        load(bot_copy)

    (bot_copy / "model.onnx").write_bytes(b"not a model")
    edit_sidecar(
        bot_copy,
        model={
            **json.loads((bot_copy / "bot.json").read_text())["model"],
            "sha256": hashlib.sha256(b"not a model").hexdigest(),
        },
    )
    with pytest.raises(CheckpointError, match="model.onnx is not an ONNX model"):
        load(bot_copy)


def test_export_for_another_game_rules_or_layout_is_refused(bot_copy):
    with pytest.raises(CheckpointError, match="trained for craits_v0, not pairs_draft_v0"):
        load(bot_copy, "pairs_draft_v0", {})
    with pytest.raises(CheckpointError, match="nine='same_colour' in training but 'own_suit' here"):
        load(bot_copy, "craits_v0", {**CRAITS_ARGS, "nine": "own_suit"})
    edit_sidecar(bot_copy, observation_version=2)
    with pytest.raises(CheckpointError, match="observation layout version 2 vs 1 here"):
        load(bot_copy)


def test_non_finite_logits_are_refused(tmp_path):
    checkpoint = synthetic_checkpoint(tmp_path / "ckpt", (4,), "relu")
    exported = export_cli(checkpoint, tmp_path / "bot")
    model = onnx.load(str(exported / "model.onnx"))
    bias = next(t for t in model.graph.initializer if t.name == "action_bias")
    bias.CopyFrom(numpy_helper.from_array(np.full(109, np.nan, np.float32), "action_bias"))
    replace_model(exported, model)
    agent = exported_mod.load_exported(exported, EnvHandle("craits_v0"))
    with pytest.raises(CheckpointError, match="gives NaN logits for the legal moves"):
        agent.act(np.zeros(206), np.ones(109))


# ---------------------------------------------------------------- the CLI
def test_cli_errors_are_one_line(tmp_path, capsys):
    def error(*argv):
        with pytest.raises(SystemExit) as stop:
            ex.main([str(a) for a in argv])
        assert stop.value.code == 1
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1
        return err

    assert "checkpoint folder" in error(tmp_path / "nothing", "--out", tmp_path / "out") and "does not exist" in error(
        tmp_path / "nothing", "--out", tmp_path / "out"
    )
    damaged = synthetic_checkpoint(tmp_path / "damaged")
    (damaged / "policy.npz").write_bytes(b"PK garbage")
    assert "policy.npz is not a policy file written by deckgym" in error(damaged, "--out", tmp_path / "out")
    good = synthetic_checkpoint(tmp_path / "good")
    assert "is the checkpoint itself" in error(good, "--out", good)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("keep me")
    assert "holds notes.txt: not an exported bot" in error(good, "--out", tmp_path / "busy")
    assert (tmp_path / "busy" / "notes.txt").read_text() == "keep me"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "out, message",
    [
        ("ck/", "is the checkpoint itself"),
        ("./link", "is the checkpoint itself"),  # a symlink to the checkpoint
        (".", "is the current folder itself: replacing it would delete it"),
        ("..", "holds the current folder"),
    ],
)
def test_out_spelled_otherwise_is_still_the_checkpoint_or_the_current_folder(
    tmp_path, monkeypatch, capsys, out, message
):
    """The same check as ``training.agents.ensemble``'s --out (``training.common.files.check_replaceable``)."""
    work = tmp_path / "work"
    synthetic_checkpoint(work / "ck")
    (work / "link").symlink_to("ck")
    monkeypatch.chdir(work)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as stop:
        ex.main(["ck", "--out", out, "--check", "0"])
    assert stop.value.code == 1 and message in capsys.readouterr().err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in work.iterdir()) == ["ck", "link"] and (work / "link").is_symlink()


def test_export_replaces_an_earlier_export_atomically(tmp_path, monkeypatch):
    first = synthetic_checkpoint(tmp_path / "first")
    export_cli(first, tmp_path / "bot")
    old = (tmp_path / "bot" / "model.onnx").read_bytes()
    second = synthetic_checkpoint(tmp_path / "second", (3,), "tanh")
    monkeypatch.setattr(ex, "sidecar", lambda *a: {"unwritable": object()})  # fails after model.onnx is written
    with pytest.raises(TypeError):
        ex.export(second, tmp_path / "bot")
    assert (tmp_path / "bot" / "model.onnx").read_bytes() == old  # untouched by the failed export
    monkeypatch.undo()
    export_cli(second, tmp_path / "bot")
    assert (tmp_path / "bot" / "model.onnx").read_bytes() != old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bot", "first", "second"]  # no temporary leftovers


def test_an_exported_bot_is_an_agent_everywhere(tmp_path):
    """``onnx:DIR`` or the folder itself seats the exported bot wherever agents are named,
    playing the moves of the checkpoint it came from."""
    from training.agents import make_agent
    from training.matches.evaluate import evaluate

    export_cli("checkpoints/craits", tmp_path / "bot")
    env = EnvHandle("craits_v0", {"deals": [3, 2]})
    for spec in (f"onnx:{tmp_path / 'bot'}", str(tmp_path / "bot")):
        assert isinstance(make_agent(spec, env), exported_mod.OnnxAgent)
        exported = evaluate(env, [spec, "heuristic", "random", "heuristic"], games=3, seed=4, processes=1)
        original = evaluate(
            env, ["checkpoints/craits", "heuristic", "random", "heuristic"], games=3, seed=4, processes=1
        )
        assert exported["agents"][spec] == original["agents"]["checkpoints/craits"]
    with pytest.raises(CheckpointError, match="pairs_draft_v0"):
        make_agent(f"onnx:{tmp_path / 'bot'}", EnvHandle("pairs_draft_v0"))
