"""Double DQN (training.algorithms.dqn): runs, checkpoints, the masked target, acting, replay, resume."""

import json
import shutil

import gymnasium
import numpy as np
import pytest
import torch
from helpers import interrupt_training
from test_training import tiny

from training.agents import PolicyAgent, checked_act
from training.algorithms import dqn
from training.common.games import EnvHandle
from training.learning import train as train_module
from training.learning.config import load_config

SMALL = dict(
    net_arch=[16],
    buffer_size=4096,
    batch_size=32,
    learning_starts=256,
    train_freq=8,
    target_update=20,
    epsilon_decay_steps=512,
)


def dqn_tiny(tmp_path, env_id="craits_v0", algorithm=None, **extra):
    """test_training's tiny run, trained by DoubleDQN."""
    config = tiny(tmp_path, env_id, **extra)
    return config.model_copy(update={"algorithm": dqn.Config(**{**SMALL, **(algorithm or {})})})


def q_values(model_file, obs_size, n_actions, net_arch, activation, observations):
    """The torch Q-network of a saved model (read as the resume file is: weights only)."""
    state = torch.load(model_file, weights_only=True)
    net = dqn.q_network(obs_size, net_arch, activation, n_actions)
    net.load_state_dict(state["q_net"])
    with torch.no_grad():
        return net(torch.as_tensor(np.asarray(observations, np.float32))).numpy()


# ---------------------------------------------------------------- runs and checkpoints
@pytest.mark.parametrize("env_id", ["craits_v0", "pairs_draft_v0"])
def test_tiny_run_writes_a_checkpoint_that_plays_legal_moves(tmp_path, env_id):
    config = dqn_tiny(
        tmp_path, env_id, **{"opponents.pool": "[{agent: heuristic, weight: 1}, {agent: self_play, weight: 1}]"}
    )
    run = train_module.train(config, config.run_dir)
    ckpt = run / "checkpoint"
    meta = json.loads((ckpt / "meta.json").read_text())
    assert meta["algorithm"]["name"] == "DoubleDQN" and meta["action_selection"] == "masked_argmax"
    assert meta["hidden_sizes"] == [16] and meta["activation"] == "relu" and meta["timesteps"] >= 1024
    assert set(meta["evaluation"]) >= {"heuristic", "random"}
    assert len(list((run / "snapshots").iterdir())) >= 2
    header = next((run / "logs").glob("from_*/progress.csv")).read_text().splitlines()[0]
    assert "train/loss" in header and "rollout/epsilon" in header
    state = torch.load(ckpt / "model.zip", weights_only=True)
    assert state["n_updates"] > 0 and state["num_timesteps"] >= 1024

    env = EnvHandle(env_id, config.env.args)
    agent, raw = PolicyAgent(ckpt), env.raw  # numpy only: policy.npz and meta.json
    raw.reset(seed=0)
    seen = []
    for name in raw.agent_iter():
        obs, _, term, trunc, _ = raw.last()
        if term or trunc:
            raw.step(None)
            continue
        seen.append(obs["observation"])
        raw.step(checked_act(agent, raw.agent_name_mapping[name], obs, raw.game))  # raises on an illegal move
    torch_q = q_values(ckpt / "model.zip", env.obs_size, env.num_actions, [16], "relu", seen)
    np.testing.assert_allclose(agent.logits(np.array(seen)), torch_q, rtol=1e-5, atol=1e-5)


def test_interrupted_run_resumes(tmp_path, monkeypatch):
    config = dqn_tiny(tmp_path, **{"training.total_timesteps": 2048})
    stopped_at = interrupt_training(config, monkeypatch)  # the 350th step: mid-round (8 steps of 2 games)
    ckpt = config.run_dir / "checkpoint"
    assert stopped_at == 349 // 8 * 8 * 2  # the last round trained on
    updates = torch.load(ckpt / "model.zip", weights_only=True)["n_updates"]
    train_module.main(["--resume", str(config.run_dir)])
    meta = json.loads((ckpt / "meta.json").read_text())
    assert meta["timesteps"] >= 2048 and meta["algorithm"]["name"] == "DoubleDQN"
    resumed = torch.load(ckpt / "model.zip", weights_only=True)
    assert resumed["n_updates"] > updates  # the counters and optimizer carried on, the buffer refilled
    segments = sorted(p.name for p in (config.run_dir / "logs").iterdir())
    assert len(segments) == 2 and int(segments[1][5:]) == stopped_at


def test_a_learning_rate_schedule_sets_the_rate_and_a_resume_may_change_only_its_future(tmp_path, monkeypatch):
    config = dqn_tiny(tmp_path, algorithm={"learning_rate_steps": {512: 1e-5}}, **{"training.total_timesteps": 2048})
    stopped_at = interrupt_training(config, monkeypatch)
    run, ckpt = config.run_dir, config.run_dir / "checkpoint"

    def rate():
        return torch.load(ckpt / "model.zip", weights_only=True)["optimizer"]["param_groups"][0]["lr"]

    assert 512 < stopped_at and rate() == 1e-5
    for past in ("{512: 2.0e-5}", f"{{512: 1.0e-5, {stopped_at - 16}: 3.0e-6}}", "{}"):
        with pytest.raises(SystemExit, match="can't change algorithm.learning_rate_steps at timestep"):
            train_module.main(["--resume", str(run), "--set", f"algorithm.learning_rate_steps={past}"])
    future = {512: 1e-5, stopped_at: 3e-6}  # from the first timestep it has not trained
    train_module.main(["--resume", str(run), "--set", f"algorithm.learning_rate_steps={future}"])
    assert rate() == 3e-6  # the schedule's rate, not the one the resumed optimizer saved
    assert load_config(run / "config.yaml").algorithm.learning_rate_steps == future


def test_batch_larger_than_the_buffer_is_refused():
    from training.learning.config import ConfigError

    with pytest.raises(ConfigError, match="'algorithm.batch_size' must be at most algorithm.buffer_size"):
        load_config("configs/craits_dqn_quick.yaml", ["algorithm.batch_size=100001"])


# ---------------------------------------------------------------- a game to test the pieces on
class ChainEnv:
    """N games of a two-step MDP, duck-typed as the VecEnv the learner uses. A first state
    (0-2, drawn at random) and the action lead to a second state 3 + (s + a) % 3; any action
    there ends the episode, with observation 6 (every ``truncate_every``-th episode of a
    game as a truncation). Rewards ``R[s, a]``; ``MASKS[s]`` the legal actions; an illegal
    action raises."""

    MASKS = np.array([[1, 1, 0, 1], [0, 1, 1, 1], [1, 0, 1, 0], [1, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]], bool)
    R = np.array(
        [
            [0.0, 0.2, 9, 0.1],
            [9, 0.0, 0.3, 0.1],
            [0.1, 9, 0.0, 9],
            [0.2, 0.5, 0.1, 9],
            [9, 9, 1.0, 0.0],
            [0.3, 9, 9, 0.5],
        ]
    )

    def __init__(self, n, seed=0, truncate_every=0):
        self.num_envs, self.truncate_every = n, truncate_every
        self.observation_space = gymnasium.spaces.Box(0, 1, (7,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(4)
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros(n, int)
        self.episodes = np.zeros(n, int)

    @staticmethod
    def one_hot(states):
        return np.eye(7, dtype=np.float32)[states]

    def reset(self):
        self.state = self.rng.integers(3, size=self.num_envs)
        return self.one_hot(self.state)

    def env_method(self, name):
        assert name == "action_masks"
        return list(self.MASKS[self.state])

    def step(self, actions):
        assert self.MASKS[self.state, actions].all(), "an illegal action"
        rewards = self.R[self.state, actions].astype(np.float32)
        dones, infos = self.state >= 3, [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            self.episodes[i] += 1
            truncated = bool(self.truncate_every) and self.episodes[i] % self.truncate_every == 0
            infos[i] = {"terminal_observation": self.one_hot(6), "TimeLimit.truncated": truncated}
        self.state = np.where(dones, self.rng.integers(3, size=self.num_envs), 3 + (self.state + actions) % 3)
        return self.one_hot(self.state), rewards, dones, infos

    def optimal_q(self, gamma):
        second = np.where(self.MASKS[3:], self.R[3:], -np.inf).max(1)
        first = self.R[:3] + gamma * second[(np.arange(3)[:, None] + np.arange(4)) % 3]
        return np.where(self.MASKS, np.concatenate([first, self.R[3:]]), np.nan)


def chain_model(n=4, truncate_every=0, **algorithm):
    config = load_config(data={"algorithm": {"name": "DoubleDQN", **algorithm}})
    return dqn.new(config, ChainEnv(n, truncate_every=truncate_every))


# ---------------------------------------------------------------- the pieces
def test_masked_double_dqn_target():
    """The online network picks the best *legal* next action, the target network values it."""
    model = chain_model(gamma=0.5)
    online = torch.tensor([[1.0, 5.0, 1e9, 0.0], [3.0, 2.0, 1e9, 1e9], [0.0, 0.0, 0.0, 7.0]])
    target = torch.tensor([[30.0, 20.0, 1e9, 40.0], [10.0, 99.0, 1e9, 1e9], [1.0, 2.0, 3.0, 4.0]])
    model.q_net, model.q_target = (lambda x: online), (lambda x: target)
    masks = torch.tensor([[1, 1, 0, 1], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    rewards, dones = torch.tensor([1.0, 2.0, -1.0]), torch.tensor([0.0, 0.0, 1.0])
    y = model.targets(rewards, torch.zeros(3, 7), masks, dones)
    # row 0: online's best legal is 1 (not the illegal 2); target values it 20 (not its own best 40)
    # row 1: online's best legal is 0, valued 10; row 2: terminal, the reward alone
    np.testing.assert_allclose(y.numpy(), [1 + 0.5 * 20, 2 + 0.5 * 10, -1.0])


def test_epsilon_greedy_never_picks_a_masked_action():
    model = chain_model()
    with torch.no_grad():  # illegal actions valued far above the rest
        model.q_net[-1].weight.zero_()
        model.q_net[-1].bias.copy_(torch.tensor([1.0, 2.0, 1e6, 1e6]))
    rng = np.random.default_rng(0)
    masks = rng.random((5000, 4)) < 0.5
    masks[np.arange(5000), rng.integers(4, size=5000)] = True
    obs = np.zeros((5000, 7), np.float32)
    for epsilon in (0.0, 0.3, 1.0):
        moves = model.act(obs, masks, epsilon)
        assert masks[np.arange(5000), moves].all()
    greedy = model.act(obs, masks, 0.0)
    np.testing.assert_array_equal(greedy, np.where(masks, [1.0, 2.0, 1e6, 1e6], -np.inf).argmax(1))
    drawn = model.act(obs[:4000], np.ones((4000, 4), bool), 1.0)  # uniform over the legal actions
    np.testing.assert_allclose(np.bincount(drawn, minlength=4) / 4000, 0.25, atol=0.03)
    assert model.epsilon == 1.0
    model.num_timesteps = model.config.epsilon_decay_steps // 2
    assert model.epsilon == pytest.approx((1.0 + model.config.epsilon_end) / 2)
    model.num_timesteps = 10 * model.config.epsilon_decay_steps
    assert model.epsilon == pytest.approx(model.config.epsilon_end)


def test_replay_keeps_terminal_observations_and_next_masks():
    model = chain_model(n=3, truncate_every=3, learning_starts=10_000, buffer_size=50, batch_size=8)
    model.learn(60, reset_num_timesteps=True)  # 20 vectorised steps of 3 games; no training yet
    b = model.buffer
    assert model.num_timesteps == 60 and b.size == 50 and model.n_updates == 0  # a ring of 50: the oldest dropped
    states, next_states = b.obs.argmax(1), b.next_obs.argmax(1)
    first = states < 3
    assert first.any() and (~first).any()
    np.testing.assert_array_equal(next_states[first], 3 + (states[first] + b.actions[first]) % 3)
    np.testing.assert_array_equal(b.next_masks[first], ChainEnv.MASKS[next_states[first]])
    assert (b.dones[first] == 0).all()
    assert (next_states[~first] == 6).all()  # the terminal observation, not the next episode's first
    assert b.next_masks[~first].all()
    np.testing.assert_allclose(b.rewards, ChainEnv.R[states, b.actions])
    # every third episode of a game is truncated: bootstrapped (done 0), the others terminal
    assert set(b.dones[~first]) == {0.0, 1.0} and b.dones[~first].mean() > 0.5


def test_n_step_replay_sums_the_rewards_to_the_bootstrap():
    """n_step 2 on the two-step chain: a first move's transition carries both rewards and
    bootstraps from the terminal observation, discounted twice; the second move's once. An
    episode's end stores every pending turn (n_step 3 stores the same)."""
    gamma = 0.5
    for n_step in (2, 3):
        model = chain_model(
            n=3, truncate_every=3, gamma=gamma, n_step=n_step, train_freq=1, learning_starts=10_000, buffer_size=200
        )
        model.learn(60, reset_num_timesteps=True)
        b = model.buffer
        rows = np.arange(b.size)
        states, next_states = b.obs[rows].argmax(1), b.next_obs[rows].argmax(1)
        first = np.flatnonzero(states < 3)
        assert len(first) >= 20 and (next_states == 6).all()  # every transition bootstraps from the end
        # an env's two turns are stored together, the first move first
        following = first + 1
        np.testing.assert_array_equal(states[following], 3 + (states[first] + b.actions[first]) % 3)
        np.testing.assert_allclose(
            b.rewards[first], ChainEnv.R[states[first], b.actions[first]] + gamma * b.rewards[following], rtol=1e-6
        )
        np.testing.assert_allclose(b.rewards[following], ChainEnv.R[states[following], b.actions[following]])
        np.testing.assert_allclose(b.discounts[first], gamma**2)
        np.testing.assert_allclose(b.discounts[following], gamma)
        np.testing.assert_array_equal(b.dones[first], b.dones[following])  # the same ending: terminal or truncated
        assert set(b.dones[first]) == {0.0, 1.0}
        assert [len(p) for p in model._pending] == [0, 0, 0]  # 20 steps: every episode ended
        model.learn(3, reset_num_timesteps=False)  # one more step: each env holds its first turn
        assert [len(p) for p in model._pending] == [1, 1, 1] and model.buffer.size == b.size
    assert chain_model(n=2).buffer.discounts is None  # one-step returns keep no discounts


@pytest.mark.parametrize("n_step", [1, 2])
def test_double_dqn_learns_the_chain(n_step):
    """A sanity check of the whole learner: the optimal values of a two-step game with masks
    (the best first move gives up reward now for more later), with one-step and two-step returns."""
    gamma = 0.9
    model = chain_model(
        n=4,
        n_step=n_step,
        gamma=gamma,
        net_arch=[32],
        learning_rate=3e-3,
        buffer_size=4000,
        batch_size=64,
        learning_starts=200,
        train_freq=1,
        target_update=50,
        epsilon_decay_steps=3000,
        epsilon_end=0.1,
    )
    model.learn(6000)
    q = model.q_net(torch.eye(7)[:6]).detach().numpy()
    best = model.env.optimal_q(gamma)
    legal = ChainEnv.MASKS
    np.testing.assert_allclose(q[legal], best[legal], atol=0.15)
    np.testing.assert_array_equal(np.where(legal, q, -np.inf).argmax(1), np.nan_to_num(best, nan=-np.inf).argmax(1))


def test_an_action_value_checkpoint_plays_its_best_move_even_when_asked_to_sample(tmp_path):
    """A softmax over Q-values is no policy: a DQN snapshot in a sampling opponent pool still
    plays the masked argmax, while a PPO checkpoint samples."""
    from training.agents import PolicyAgent

    folder = tmp_path / "q"
    shutil.copytree("checkpoints/craits_dqn", folder)
    meta = json.loads((folder / "meta.json").read_text())
    rng = np.random.default_rng(0)
    obs, mask = rng.random(meta["observation_size"]).astype(np.float32), np.ones(meta["action_size"], np.int8)
    (folder / "meta.json").write_text(json.dumps({**meta, "action_selection": "masked_sampling"}))
    sampled = {PolicyAgent(folder, deterministic=False, seed=s).act(obs, mask) for s in range(20)}
    (folder / "meta.json").write_text(json.dumps({**meta, "action_selection": "masked_argmax"}))
    greedy = {PolicyAgent(folder, deterministic=False, seed=s).act(obs, mask) for s in range(20)}
    assert len(sampled) > 1 and greedy == {PolicyAgent(folder).act(obs, mask)}
