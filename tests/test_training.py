"""Training: configs, the learner env's rewards, checkpoints as opponents, resume."""

import importlib.metadata
import json
import os
import random

import numpy as np
import pytest
from helpers import interrupt_training

from training.agents import PolicyAgent, make_agent
from training.agents.checkpoint import CheckpointError
from training.common.games import EnvHandle
from training.learning import train as train_module
from training.learning.config import ConfigError, PoolEntry, load_config
from training.learning.learner_env import LearnerEnv, OpponentPool
from training.learning.preflight import check_config

QUICK = "configs/craits_quick.yaml"


def tiny(tmp_path, env_id="craits_v0", **extra):
    """A config small enough for a smoke run: a few rollouts, tiny network."""
    sets = [
        f"env.id={env_id}",
        "training.total_timesteps=1024",
        "algorithm.n_steps=128",
        "algorithm.batch_size=64",
        "algorithm.n_epochs=1",
        "algorithm.net_arch=[16]",
        "vec.n_envs=2",
        "checkpoints.every=512",
        "checkpoints.eval_every=100000",
        "checkpoints.eval_games=1",
        "opponents.self_play.snapshot_every=512",
        f"output.dir={tmp_path}",
        "output.name=run",
    ]
    data = {
        "env": {
            "id": env_id,
            "args": {"episode": "deal", "deals": [3], "nine": "same_colour"} if env_id == "craits_v0" else {},
        }
    }
    return load_config(data=data, overrides=sets + [f"{k}={v}" for k, v in extra.items()])


# ---------------------------------------------------------------- configs
def test_shipped_configs_load():
    from pathlib import Path

    for path in sorted(Path("configs").glob("*.yaml")):
        if path.name.startswith("benchmark_"):  # benchmark configs (training.learning.benchmark)
            continue
        config = load_config(path)
        assert config.training.total_timesteps > 0, path


@pytest.mark.parametrize(
    "override, message",
    [
        ("algorithm.lerning_rate=0.1", "unknown config key 'algorithm.lerning_rate'"),
        ("algorithm.n_steps=many", "'algorithm.n_steps' must be a valid integer, got 'many'"),
        ("algorithm.activation=sigmoid", "'algorithm.activation' must be 'tanh' or 'relu', got 'sigmoid'"),
        ("algorithm.gamma=1.5", "'algorithm.gamma' must be less than or equal to 1, got 1.5"),
        ("env.args.nine=any", "'env.args'.*nine"),
        ("env.args.colour=red", "'env.args'.*colour"),
        ("env.id=poker_v0", "'env.id'.*poker_v0"),
        ("opponents.pool=[{agent: heuristic, wieght: 1}]", "opponents.pool\\[0\\].wieght"),
        ("opponents.learner_seat=7", "learner_seat"),
        (
            "opponents.pool=[{agent: checkpoints/nothing_here}]",
            "'opponents.pool\\[0\\].agent': unknown agent 'checkpoints/nothing_here'",
        ),
        ("vec.n_envs=0", "'vec.n_envs' must be greater than 0"),
    ],
)
def test_config_errors_name_the_key(override, message):
    with pytest.raises(ConfigError, match=message):  # at load, or in the checks before training (env, agents)
        check_config(load_config(QUICK, [override]))


def test_unknown_top_level_section():
    with pytest.raises(ConfigError, match="unknown config key 'trainng'.*allowed keys here are env, algorithm"):
        load_config(data={"trainng": {}})


# ---------------------------------------------------------------- learner env
class RecordingPool:
    """Always the same agent; lets the test see every AEC step's rewards."""

    def __init__(self, agent):
        self.agent = agent

    def draw(self):
        return self.agent


@pytest.mark.parametrize(
    "env_id, args",
    [
        ("craits_v0", {"num_players": 3, "episode": "deal"}),
        ("craits_v0", {"partnership": True, "deals": [4, 3]}),
        ("craits_v0", {"num_players": 2, "reward": "win", "deals": [3, 2]}),
        ("craits_v0", {"num_players": 5, "deals": [1, 1, 2]}),
        ("pairs_draft_v0", {}),
    ],
)
def test_learner_reward_is_its_own_aec_reward(env_id, args):
    """Summed over an episode, step() rewards equal the learner seat's AEC rewards, all of them
    (those arriving on opponents' moves and at the end included)."""
    from training.agents import RandomAgent

    env = LearnerEnv(EnvHandle(env_id, args), RecordingPool(RandomAgent(1)), seed=3)
    raw = env.table.raw
    aec_total = {}
    original_step = raw.step

    def step(action):
        original_step(action)
        for agent, r in raw.rewards.items():
            aec_total[agent] = aec_total.get(agent, 0.0) + r

    original_reset = raw.reset

    def reset(seed=None, options=None):  # an episode discarded before the learner moved counts for nothing
        aec_total.clear()
        original_reset(seed=seed, options=options)

    raw.step, raw.reset = step, reset
    rng = random.Random(0)
    nonzero = 0
    for episode in range(12):
        obs, info = env.reset(seed=episode)
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            assert obs.shape == env.observation_space.shape and mask.any()
            obs, reward, terminated, truncated, _ = env.step(rng.choice(np.flatnonzero(mask).tolist()))
            total += reward
            done = terminated or truncated
        assert total == pytest.approx(aec_total.get(env.table.learner, 0.0))
        nonzero += total != 0
    assert nonzero > 0


def test_opponent_pool_draws_by_weight_and_self_play_snapshots(tmp_path):
    entries = [PoolEntry("random", 1.0), PoolEntry("heuristic", 3.0)]
    pool = OpponentPool(entries, EnvHandle("craits_v0"), seed=0)
    names = [pool.draw().name for _ in range(400)]
    assert 0.65 < names.count("heuristic") / 400 < 0.85
    with pytest.raises(RuntimeError, match="no snapshot"):
        OpponentPool([PoolEntry("self_play", 1.0)], EnvHandle("craits_v0"), snapshot_dir=tmp_path, seed=0).draw()


# ---------------------------------------------------------------- runs and checkpoints
def _play_with(agent_path, env_id, args, seed=0):
    env = EnvHandle(env_id, args)
    agent, raw = make_agent(str(agent_path), env), env.raw
    raw.reset(seed=seed)
    for _name in raw.agent_iter():
        obs, _, term, trunc, _ = raw.last()
        raw.step(None if term or trunc else agent.act(obs["observation"], obs["action_mask"]))
    return raw


def test_smoke_run_writes_a_checkpoint_that_plays_as_opponent(tmp_path):
    config = tiny(tmp_path, **{"opponents.pool": "[{agent: heuristic, weight: 1}, {agent: self_play, weight: 1}]"})
    run = train_module.train(config, config.run_dir)
    ckpt = run / "checkpoint"
    meta = json.loads((ckpt / "meta.json").read_text())
    assert meta["env_id"] == "craits_v0" and meta["timesteps"] >= 1024
    assert meta["observation_size"] == 206 and meta["action_size"] == 109
    assert meta["deckgym_version"] == importlib.metadata.version("deckgym")  # what made it
    assert set(meta["evaluation"]) >= {"heuristic", "random"}
    assert (ckpt / "policy.npz").is_file() and (ckpt / "model.zip").is_file()
    assert any((run / "snapshots").iterdir())
    assert list((run / "logs").glob("from_*/progress.csv"))
    raw = _play_with(ckpt, "craits_v0", {"deals": [3]})
    assert raw.game.game_over


def test_pairs_draft_smoke_run_plays_as_opponent(tmp_path):
    config = tiny(tmp_path, "pairs_draft_v0", **{"opponents.pool": "[{agent: heuristic, weight: 1}]"})
    ckpt = train_module.train(config, config.run_dir) / "checkpoint"
    meta = json.loads((ckpt / "meta.json").read_text())
    assert meta["env_id"] == "pairs_draft_v0" and meta["action_size"] == 10
    raw = _play_with(ckpt, "pairs_draft_v0", {})
    assert raw.game.phase == "over" and len(raw.game.winners()) >= 1


def test_policy_agent_matches_the_torch_policy(tmp_path):
    import torch

    config = tiny(tmp_path, **{"training.total_timesteps": 256})
    run = train_module.train(config, config.run_dir)
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(run / "checkpoint" / "model.zip")
    agent = PolicyAgent(run / "checkpoint")
    raw = EnvHandle("craits_v0").raw
    raw.reset(seed=1)
    obs = raw.observe(raw.agent_selection)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs["observation"])[None])
    logits = agent.logits(obs["observation"])
    log_probs = logits - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
    np.testing.assert_allclose(log_probs, dist.distribution.logits[0].numpy(), atol=1e-4)


def test_interrupted_run_resumes_without_loss(tmp_path, monkeypatch):
    config = tiny(tmp_path, **{"training.total_timesteps": 2048})
    stopped_at = interrupt_training(config, monkeypatch)
    assert 0 < stopped_at < 2048
    train_module.main(["--resume", str(config.run_dir)])
    meta = json.loads((config.run_dir / "checkpoint" / "meta.json").read_text())
    assert meta["timesteps"] >= 2048
    assert meta["training_seconds"] > 0
    train_module.main(["--resume", str(config.run_dir)])  # complete: nothing more to do, nothing changed
    assert json.loads((config.run_dir / "checkpoint" / "meta.json").read_text()) == meta
    segments = sorted(p.name for p in (config.run_dir / "logs").iterdir())
    assert segments[0] == "from_000000000" and len(segments) == 2 and int(segments[1][5:]) == stopped_at


def test_checkpoint_for_another_game_or_configuration_is_refused(tmp_path):
    config = tiny(tmp_path, **{"training.total_timesteps": 256})
    ckpt = train_module.train(config, config.run_dir) / "checkpoint"
    with pytest.raises(CheckpointError, match="trained for craits_v0, not pairs_draft_v0"):
        make_agent(str(ckpt), EnvHandle("pairs_draft_v0"))
    with pytest.raises(CheckpointError, match="nine='same_colour' in training but 'own_suit' here"):
        make_agent(str(ckpt), EnvHandle("craits_v0", {"nine": "own_suit"}))


def test_bad_agent_spec_is_named():
    with pytest.raises(ValueError, match="unknown agent 'heuristc'"):
        make_agent("heuristc", EnvHandle("craits_v0"))


def test_stochastic_policy_agent_samples_the_masked_softmax(tmp_path):
    np.savez(
        tmp_path / "policy.npz",
        layer_0_weight=np.zeros((2, 3)),
        layer_0_bias=np.zeros(2),
        action_weight=np.zeros((4, 2)),
        action_bias=np.log([1.0, 2.0, 3.0, 4.0]),
    )
    (tmp_path / "meta.json").write_text(
        json.dumps(
            {
                "format_version": 1,
                "env_id": "craits_v0",
                "activation": "tanh",
                "hidden_sizes": [2],
                "observation_size": 3,
                "action_size": 4,
            }
        )
    )
    agent = PolicyAgent(tmp_path, deterministic=False, seed=0)
    counts = np.bincount([agent.act(np.zeros(3), np.array([1, 0, 1, 1])) for _ in range(8000)], minlength=4)
    np.testing.assert_allclose(counts / counts.sum(), [1 / 8, 0, 3 / 8, 4 / 8], atol=0.02)
    assert PolicyAgent(tmp_path).act(np.zeros(3), np.array([1, 1, 1, 0])) == 2  # deterministic: best legal


def test_cli_trains_shows_and_compares(tmp_path, capsys):
    config = tiny(tmp_path, **{"training.total_timesteps": 256})
    path = tmp_path / "tiny.yaml"
    from training.learning.config import dump_config

    path.write_text(dump_config(config))
    train_module.main(["--config", str(path), "--show", "--compare", "--compare-games", "2"])
    out = capsys.readouterr().out
    # one bot against three heuristic bots: not in seats 0 and 2, as the list [bot, heuristic] repeated would seat it
    assert "(seat 0) against the heuristic in the other seats" in out and "game over" in out
    assert out.count(str(config.run_dir / "checkpoint")) >= 2 and "win share" in out
    train_module.main(["--config", str(path)])  # the same name again: a new folder, nothing overwritten
    assert (tmp_path / "run-2" / "checkpoint" / "meta.json").is_file()


def test_cli_reports_config_errors_without_a_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("algorithm:\n  n_step: 64\n")
    with pytest.raises(SystemExit, match="unknown config key 'algorithm.n_step'"):
        train_module.main(["--config", str(path)])


def test_subprocess_envs_train(tmp_path):
    config = tiny(tmp_path, **{"training.total_timesteps": 256, "vec.workers": 2})
    ckpt = train_module.train(config, config.run_dir) / "checkpoint"
    assert json.loads((ckpt / "meta.json").read_text())["timesteps"] >= 256


@pytest.mark.parametrize("partner, both", [("learner", True), ("pool", False)])
def test_partnership_partner_is_the_learner_or_drawn_from_the_pool(partner, both):
    from training.agents import RandomAgent

    env = LearnerEnv(
        EnvHandle("craits_v0", {"partnership": True, "deals": [5]}),
        RecordingPool(RandomAgent(2)),
        learner_seat=1,
        partner=partner,
        seed=0,
    )
    acting = set()
    rng = random.Random(1)
    for episode in range(3):
        env.reset(seed=episode)
        done = False
        while not done:
            acting.add(env.table.raw.agent_selection)
            _, _, terminated, truncated, _ = env.step(rng.choice(np.flatnonzero(env.action_masks()).tolist()))
            done = terminated or truncated
    assert acting == ({"player_1", "player_3"} if both else {"player_1"})


def _damage(folder, what):
    meta = json.loads((folder / "meta.json").read_text())
    if what == "no weights":
        (folder / "policy.npz").unlink()
    elif what == "text weights":
        (folder / "policy.npz").write_text("not an archive")
    elif what == "truncated weights":
        data = (folder / "policy.npz").read_bytes()
        (folder / "policy.npz").write_bytes(data[: len(data) // 2])
    elif what == "bad json":
        (folder / "meta.json").write_text("{oops")
    elif what == "json list":
        (folder / "meta.json").write_text("[]")
    elif what == "meta lacks sizes":
        (folder / "meta.json").write_text(json.dumps({"format_version": 1, "env_id": "craits_v0"}))
    elif what == "shapes disagree":
        meta["hidden_sizes"] = [7, 7]
        (folder / "meta.json").write_text(json.dumps(meta))


@pytest.mark.parametrize(
    "what",
    ["no weights", "text weights", "truncated weights", "bad json", "json list", "meta lacks sizes", "shapes disagree"],
)
def test_damaged_checkpoint_is_a_clear_error(tmp_path, what):
    import shutil

    folder = tmp_path / "ckpt"
    shutil.copytree("checkpoints/craits", folder)
    _damage(folder, what)
    with pytest.raises(CheckpointError) as error:
        make_agent(str(folder), EnvHandle("craits_v0"))
    assert str(folder) in str(error.value) and "allow_pickle" not in str(error.value)


def test_a_replacement_cut_between_renames_is_recovered(tmp_path):
    from training.common.files import recover_swap, write_atomically

    target = tmp_path / "checkpoint"
    write_atomically(target, lambda d: (d / "meta.json").write_text("1"))
    target.rename(tmp_path / ".checkpoint.old")  # as if stopped between the two renames
    recover_swap(target)
    assert (target / "meta.json").read_text() == "1"
    write_atomically(target, lambda d: (d / "meta.json").write_text("2"))
    assert (target / "meta.json").read_text() == "2" and not (tmp_path / ".checkpoint.old").exists()
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o777 & ~umask  # an ordinary folder, not mkdtemp's private one


def test_resume_refuses_to_change_the_experiment(tmp_path):
    config = tiny(tmp_path, **{"training.total_timesteps": 256})
    run = train_module.train(config, config.run_dir)
    before = (run / "config.yaml").read_text()
    for change in ("algorithm.learning_rate=0.1", "env.args.num_players=3", "opponents.pool=[{agent: random}]"):
        with pytest.raises(SystemExit, match=f"a resumed run can't change {change.split('=')[0].rsplit('.', 1)[0]}"):
            train_module.main(["--resume", str(run), "--set", change])
    assert (run / "config.yaml").read_text() == before  # nothing rewritten by a refused resume


def test_compare_is_checked_before_training(tmp_path):
    config = tiny(tmp_path)
    path = tmp_path / "tiny.yaml"
    from training.learning.config import dump_config

    path.write_text(dump_config(config))
    with pytest.raises(SystemExit, match="--compare checkpoints/pairs_draft: .*trained for pairs_draft_v0"):
        train_module.main(["--config", str(path), "--compare", "checkpoints/pairs_draft"])
    assert not config.run_dir.exists()


def test_a_run_ending_on_an_evaluation_is_not_evaluated_twice(tmp_path):
    config = tiny(tmp_path, **{"training.total_timesteps": 512, "checkpoints.eval_every": 256})
    run = train_module.train(config, config.run_dir)
    steps = [json.loads(line)["timesteps"] for line in (run / "evaluations.jsonl").read_text().splitlines()]
    assert len(steps) == len(set(steps)) >= 2
    meta = json.loads((run / "checkpoint" / "meta.json").read_text())
    assert meta["evaluation"]["timesteps"] == steps[-1] == meta["timesteps"]
    rows = (next((run / "logs").iterdir()) / "progress.csv").read_text()
    assert "eval/win_share_vs_heuristic" in rows.splitlines()[0]


def test_defaults_config_shows_every_default_the_code_uses():
    from training.learning.config import Config

    assert load_config("configs/defaults.yaml").to_dict() == load_config(data={}).to_dict() == Config().to_dict()


def test_self_play_draws_latest_or_window_and_frees_older_snapshots(tmp_path):
    import shutil

    snaps = tmp_path / "snapshots"
    pool = OpponentPool(
        [PoolEntry("self_play", 1.0)], EnvHandle("craits_v0"), snapshot_dir=snaps, latest_weight=0.5, window=1, seed=0
    )
    for step in (1, 2, 3):
        shutil.copytree("checkpoints/craits", snaps / f"step_{step:09d}")
        os.utime(snaps, ns=(step, step))  # a new listing each time, even within one clock tick
        drawn = {pool.draw().path for _ in range(60)}
        assert drawn == {str(snaps / f"step_{s:09d}") for s in (step - 1, step) if s >= 1}
        assert len(pool._agents) <= 2


def test_a_wall_clock_cap_stops_training_and_a_resume_has_nothing_left(tmp_path, capsys):
    config = tiny(tmp_path, **{"training.total_timesteps": 1_000_000, "training.max_seconds": 1})
    run = train_module.train(config, config.run_dir)
    meta = json.loads((run / "checkpoint" / "meta.json").read_text())
    assert 0 < meta["timesteps"] < 1_000_000 and meta["training_seconds"] >= 1
    train_module.main(["--resume", str(run)])
    assert "nothing to train" in capsys.readouterr().out
    # A longer cap is how long the run goes, not what it learns: a resume may raise it.
    train_module.main(
        [
            "--resume",
            str(run),
            "--set",
            "training.max_seconds=2",
            "--set",
            f"training.total_timesteps={meta['timesteps'] + 1}",
        ]
    )
    assert json.loads((run / "checkpoint" / "meta.json").read_text())["timesteps"] > meta["timesteps"]


def test_symlog_reward_transform_squashes_the_learner_reward_and_keeps_its_sign(tmp_path):
    """The same games with and without ``training.reward_transform: symlog``: rewards equal
    sign(r)·ln(1+|r|) of the plain ones, step by step; the episode log keeps the env's own."""
    from training.learning.train import make_vec_env

    runs = {}
    for transform in ("none", "symlog"):
        config = tiny(
            tmp_path / transform, **{"training.reward_transform": transform, "opponents.pool": "[{agent: random}]"}
        )
        env = EnvHandle(config.env.id, config.env.args)
        venv = make_vec_env(config, env, tmp_path / transform)
        venv.reset()
        rng = np.random.default_rng(0)
        rewards, logged = [], []
        for _ in range(400):
            masks = np.array(venv.env_method("action_masks"))
            venv.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            _, r, dones, infos = venv.step_wait()
            rewards.append(r.copy())
            logged += [info["episode"]["r"] for info in infos if "episode" in info]
        venv.close()
        runs[transform] = (np.array(rewards), logged)
    plain, squashed = runs["none"][0], runs["symlog"][0]
    assert np.count_nonzero(plain) > 0 and np.abs(plain).max() > 0.5  # rewards the transform changes
    np.testing.assert_allclose(squashed, np.sign(plain) * np.log1p(np.abs(plain)), rtol=1e-6)
    assert runs["symlog"][1] == runs["none"][1] and runs["none"][1]
