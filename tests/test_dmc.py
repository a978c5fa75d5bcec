"""DMC (Deep Monte-Carlo, training.algorithms.dmc): returns, exploration, runs, resume, learning."""

import json

import numpy as np
import pytest
from helpers import interrupt_training
from test_training import _play_with

from training.agents import PolicyAgent
from training.algorithms import dmc
from training.common.games import EnvHandle
from training.learning import train as train_module
from training.learning.config import load_config


def tiny_dmc(tmp_path, **extra):
    """``test_training.tiny`` for DMC: its sections, with DMC's own keys (tiny's PPO keys,
    n_steps and n_epochs, are no DMC keys and would be refused)."""
    sets = [
        "algorithm.name=DMC",
        "training.total_timesteps=1024",
        "algorithm.train_every=64",
        "algorithm.batch_size=64",
        "algorithm.net_arch=[16]",
        "vec.n_envs=2",
        "checkpoints.every=512",
        "checkpoints.eval_every=100000",
        "checkpoints.eval_games=1",
        "opponents.self_play.snapshot_every=512",
        f"output.dir={tmp_path}",
        "output.name=run",
    ]
    data = {"env": {"id": "craits_v0", "args": {"episode": "deal", "deals": [3], "nine": "same_colour"}}}
    return load_config(data=data, overrides=sets + [f"{k}={v}" for k, v in extra.items()])


def test_monte_carlo_returns_of_a_hand_made_episode():
    rewards = [1.0, 0.5, 0.0, -2.0]
    np.testing.assert_allclose(dmc.returns_to_go(rewards, 1.0), [-0.5, -1.5, -2.0, -2.0])  # the sum from each step on
    # G3 = -2, G2 = 0 + G3 / 2 = -1, G1 = 0.5 + G2 / 2 = 0, G0 = 1 + G1 / 2 = 1
    np.testing.assert_allclose(dmc.returns_to_go(rewards, 0.5), [1.0, 0.0, -1.0, -2.0])
    assert dmc.returns_to_go([], 1.0).shape == (0,)


def test_epsilon_greedy_never_picks_a_masked_action():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(500, 9))
    masks = rng.random((500, 9)) < 0.3
    masks[np.arange(500), rng.integers(9, size=500)] = True  # at least one legal move per row
    q[:, 0] = 100.0  # the best value, often masked: it must never be picked then
    greedy = np.where(masks, q, -np.inf).argmax(1)
    for epsilon in (0.0, 0.3, 1.0):
        actions = dmc.epsilon_greedy(q, masks, epsilon, rng)
        assert masks[np.arange(500), actions].all()
        if epsilon == 0.0:
            np.testing.assert_array_equal(actions, greedy)
    mask = np.array([[1, 0, 1, 1, 0, 1, 0, 1, 1]], bool)  # exploring: uniform over the 6 legal moves
    picks = [dmc.epsilon_greedy(q[:1], mask, 1.0, rng)[0] for _ in range(3000)]
    np.testing.assert_allclose(np.bincount(picks, minlength=9) / 3000, mask[0] / 6, atol=0.03)


def test_run_writes_a_q_network_checkpoint_that_plays_without_torch(tmp_path):
    import torch

    config = tiny_dmc(tmp_path, **{"opponents.pool": "[{agent: heuristic, weight: 1}, {agent: self_play, weight: 1}]"})
    run = train_module.train(config, config.run_dir)
    ckpt = run / "checkpoint"
    meta = json.loads((ckpt / "meta.json").read_text())
    assert meta["algorithm"]["name"] == "DMC" and meta["action_selection"] == "masked_argmax"
    assert meta["hidden_sizes"] == meta["algorithm"]["net_arch"] == [16] and meta["timesteps"] >= 1024
    assert set(meta["evaluation"]) >= {"heuristic", "random"} and any((run / "snapshots").iterdir())
    assert "train/loss" in next((run / "logs").glob("from_*/progress.csv")).read_text().splitlines()[0]
    assert _play_with(ckpt, "craits_v0", {"deals": [3]}).game.game_over  # PolicyAgent: legal moves only

    env = EnvHandle(config.env.id, config.env.args)
    venv = train_module.make_vec_env(config, env, run)
    model = dmc.load(ckpt / "model.zip", venv, config)  # torch.load(weights_only=True)
    assert model.updates > 0 and model.optimizer.state  # the optimizer's statistics come back too
    obs = venv.reset()
    with torch.no_grad():
        q = model.q(torch.as_tensor(obs)).numpy()
    agent = PolicyAgent(ckpt)
    np.testing.assert_allclose(agent.logits(obs), q, rtol=1e-5, atol=1e-5)
    masks = np.stack(venv.env_method("action_masks"))
    assert [agent.act(o, m) for o, m in zip(obs, masks)] == list(np.where(masks, q, -np.inf).argmax(1))


def test_interrupted_run_resumes_with_its_weights_and_counters(tmp_path, monkeypatch):
    config = tiny_dmc(tmp_path, **{"training.total_timesteps": 2048})
    stopped_at = interrupt_training(config, monkeypatch)
    ckpt = config.run_dir / "checkpoint"
    assert 0 < stopped_at < 2048 and stopped_at % (64 * 2) == 0  # at an update
    saved = dict(np.load(ckpt / "policy.npz"))
    model = dmc.load(
        ckpt / "model.zip",
        train_module.make_vec_env(config, EnvHandle("craits_v0", config.env.args), config.run_dir),
        config,
    )
    arrays, _ = dmc.policy_arrays(model)
    for name, array in saved.items():
        np.testing.assert_array_equal(arrays[name], array)
    updates = model.updates
    assert updates == stopped_at // 128  # one update per train_every x n_envs steps

    train_module.main(["--resume", str(config.run_dir)])
    meta = json.loads((ckpt / "meta.json").read_text())
    assert meta["timesteps"] >= 2048 and meta["training_seconds"] > 0
    second = config.run_dir / "logs" / f"from_{stopped_at:09d}" / "progress.csv"
    rows = second.read_text().splitlines()
    column = rows[0].split(",").index("train/updates")
    assert float(rows[1].split(",")[column]) == updates + 1  # the counters go on from the checkpoint


def test_a_callback_returning_false_stops_learning(tmp_path):
    from stable_baselines3.common.callbacks import BaseCallback

    class StopAfter(BaseCallback):
        ended = False

        def _on_step(self):
            return self.n_calls < 30

        def _on_training_end(self):
            self.ended = True

    config = tiny_dmc(tmp_path, **{"opponents.pool": "[{agent: random, weight: 1}]"})
    env = EnvHandle(config.env.id, config.env.args)
    model = dmc.new(config, train_module.make_vec_env(config, env, tmp_path))
    callback = StopAfter()
    model.learn(10_000, callback=callback)
    assert model.num_timesteps == 30 * 2 and callback.ended  # stopped within its first train_every (64) steps
    assert model.updates == 1  # having learnt from the episodes it finished


def test_shipped_dmc_config_writes_every_value_out():
    import yaml

    written = yaml.safe_load(open("configs/craits_dmc_quick.yaml"))["algorithm"]
    config = load_config("configs/craits_dmc_quick.yaml")
    assert config.algorithm.name == "DMC" and set(written) == set(dmc.Config.model_fields)


class DelayedRewardGames:
    """N toy games for the learner: three moves, each with a right one (action (t + bit) % 3,
    the bit in the observation) among two legal moves; the reward, one point per right move,
    comes only at the end. Only Monte-Carlo returns of the right episodes teach it."""

    def __init__(self, n, seed=0):
        import gymnasium

        self.num_envs, self.rng = n, np.random.default_rng(seed)
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(3)
        self.t, self.bit, self.right = np.zeros(n, int), self.rng.integers(2, size=n), np.zeros(n)

    def observe(self):
        obs = np.zeros((self.num_envs, 4), np.float32)
        obs[np.arange(self.num_envs), self.t] = 1.0
        obs[:, 3] = self.bit
        return obs

    def target(self):
        return (self.t + self.bit) % 3

    def env_method(self, name):
        assert name == "action_masks"
        masks = np.zeros((self.num_envs, 3), bool)
        masks[np.arange(self.num_envs), self.target()] = True
        masks[np.arange(self.num_envs), (self.target() + 1 + self.t % 2) % 3] = True  # one wrong move
        return list(masks)

    def reset(self):
        return self.observe()

    def step(self, actions):
        assert np.stack(self.env_method("action_masks"))[np.arange(self.num_envs), actions].all()
        self.right += actions == self.target()
        self.t += 1
        dones = self.t == 3
        rewards = np.where(dones, self.right, 0.0).astype(np.float32)
        self.t[dones], self.right[dones], self.bit[dones] = 0, 0, self.rng.integers(2, size=dones.sum())
        return self.observe(), rewards, dones, [{} for _ in range(self.num_envs)]


@pytest.fixture
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as training sets it: more threads only fight over the cores
    yield
    torch.set_num_threads(threads)


def test_dmc_learns_the_right_moves_from_delayed_rewards(tmp_path, one_thread):
    import torch

    config = tiny_dmc(
        tmp_path,
        **{
            "vec.n_envs": 8,
            "algorithm.net_arch": "[32]",
            "algorithm.optimizer": "adam",
            "algorithm.learning_rate": 3e-3,
            "algorithm.train_every": 8,
            "algorithm.batch_size": 32,
            "algorithm.epsilon": 0.2,
        },
    )
    games = DelayedRewardGames(8)
    model = dmc.new(config, games)
    model.learn(8 * 2000)  # about 1 s
    games.t, games.bit = np.array([0, 1, 2, 0, 1, 2, 0, 0]), np.array([0, 0, 0, 1, 1, 1, 0, 0])
    with torch.no_grad():
        q = model.q(torch.as_tensor(games.observe())).numpy()
    masks = np.stack(games.env_method("action_masks"))
    np.testing.assert_array_equal(dmc.epsilon_greedy(q, masks, 0.0, np.random.default_rng(0)), games.target())
    # The return of a move counts the episode's points from the start (the state doesn't say
    # how many were made): right moves are made with chance 1 - epsilon / 2 = 0.9, so the right
    # move is worth 0.9 x 2 + 1 whatever the step, a wrong one a point less.
    right = q[np.arange(8), games.target()]
    np.testing.assert_allclose(right, 2.8, atol=0.2)
    wrong = np.where(masks, q, np.inf).min(1)
    assert (wrong < right - 0.4).all()
