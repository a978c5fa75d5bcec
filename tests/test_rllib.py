"""The RLlib path (training.learning.rllib_env, training.algorithms.rllib_ppo): the multi-agent adapter
pays each seat only its own rewards, the masked module never picks an illegal action, the
seating follows the pool, and a tiny run trains, checkpoints (numpy logits = the RLModule's),
evaluates and resumes."""

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (pip install 'ray[rllib]')")
torch = pytest.importorskip("torch")

from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.models.torch.torch_distributions import TorchCategorical  # noqa: E402

from training.common.games import EnvHandle  # noqa: E402
from training.learning.rllib_env import (  # noqa: E402
    LEARNER,
    AECMultiAgentEnv,
    AgentModule,
    MaskedPPOModule,
    SeatMapping,
    snapshot_id,
)

ROOT = Path(__file__).parent.parent
CRAITS = {"num_players": 4, "episode": "deal", "reward": "deal", "illegal_action": "raise"}
GAMES = [  # one deal per episode; several deals per episode (rewards mid-episode); partners; Pairs Draft
    ("craits_v0", CRAITS),
    ("craits_v0", {**CRAITS, "episode": "game", "deals": [3, 2]}),
    ("craits_v0", {**CRAITS, "preset": "create", "partnership": True}),
    ("pairs_draft_v0", {"reward": "points", "illegal_action": "raise"}),
]


@pytest.mark.parametrize("env_id,args", GAMES)
def test_the_adapter_pays_each_seat_its_own_rewards_when_it_next_observes(env_id, args):
    for seed in range(3):
        env = AECMultiAgentEnv({"env_id": env_id, "env_args": args})
        aec = EnvHandle(env_id, args).new_raw()  # the same game alongside, stepped with the same moves
        obs, _ = env.reset(seed=seed)
        aec.reset(seed=seed)
        rng = np.random.default_rng(seed)
        owed = {a: 0.0 for a in aec.possible_agents}  # AEC rewards since each seat's last payment
        total = dict(owed)
        received = dict(owed)
        acted, paid_midway = set(), 0
        while True:
            acting = aec.agent_selection
            assert list(obs) == [acting], "only the seat to act observes"
            mask = obs[acting]["action_mask"]
            np.testing.assert_array_equal(mask, aec.observe(acting)["action_mask"])
            np.testing.assert_array_equal(obs[acting]["observation"], aec.observe(acting)["observation"])
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, rewards, terminated, truncated, _ = env.step({acting: action})
            aec.step(action)
            acted.add(acting)
            for a in aec.possible_agents:
                owed[a] += aec.rewards[a]
                total[a] += aec.rewards[a]
            assert set(rewards) <= set(obs), "a reward goes only with that seat's own observation"
            for a, r in rewards.items():
                assert a in acted, "paid only after it has moved"
                assert r == pytest.approx(owed[a]), f"{a} is paid exactly what it earned since its last payment"
                received[a] += r
                owed[a] = 0.0
                paid_midway += r != 0 and not terminated["__all__"]
            if terminated["__all__"] or truncated["__all__"]:
                assert set(obs) == acted and all(terminated[a] for a in acted)
                break
            assert not any(aec.terminations.values())
        for a in acted:
            assert received[a] == pytest.approx(total[a]), f"{a} receives its whole AEC total"
        if args.get("episode") == "game":
            assert paid_midway, "deal rewards are paid during the episode, not only at its end"


def test_the_adapter_refuses_a_move_out_of_turn():
    env = AECMultiAgentEnv({"env_id": "craits_v0", "env_args": CRAITS})
    obs, _ = env.reset(seed=0)
    other = next(a for a in env.possible_agents if a not in obs)
    with pytest.raises(ValueError, match="only player_. may act"):
        env.step({other: 0})
    with pytest.raises(ValueError, match="env_id"):
        AECMultiAgentEnv({})


def _batch(env, n, rng):
    """``n`` observations with masks of 1 to 3 legal actions."""
    space = env.observation_spaces[env.possible_agents[0]]
    obs = rng.normal(size=(n, space["observation"].shape[0])).astype(np.float32)
    masks = np.zeros((n, space["action_mask"].shape[0]), np.float32)
    for row in masks:
        row[rng.choice(len(row), rng.integers(1, 4), replace=False)] = 1
    return space, obs, masks


def test_the_masked_module_never_picks_an_illegal_action():
    env = AECMultiAgentEnv({"env_id": "craits_v0", "env_args": CRAITS})
    space, obs, masks = _batch(env, 256, np.random.default_rng(0))
    module = MaskedPPOModule(
        observation_space=space,
        action_space=env.action_spaces["player_0"],
        model_config={"net_arch": [32, 32], "activation": "relu"},
    )
    with torch.no_grad():
        for p in module.parameters():  # large weights: the illegal logits are far the biggest unmasked
            p.mul_(20)
    batch = {Columns.OBS: {"observation": torch.as_tensor(obs), "action_mask": torch.as_tensor(masks)}}
    for forward in (module.forward_exploration, module.forward_inference, module.forward_train):
        logits = forward(batch)[Columns.ACTION_DIST_INPUTS]
        assert torch.isfinite(logits).all()
        for _ in range(20):
            actions = TorchCategorical(logits=logits).sample().numpy()
            assert masks[np.arange(len(masks)), actions].all()
        assert masks[np.arange(len(masks)), logits.argmax(1).numpy()].all()
    assert module.compute_values(batch).shape == (256,)


def test_an_agent_module_plays_the_agents_legal_choice():
    env = AECMultiAgentEnv({"env_id": "craits_v0", "env_args": CRAITS})
    obs, _ = env.reset(seed=3)
    ((seat, o),) = obs.items()
    module = AgentModule(
        observation_space=env.observation_spaces[seat],
        action_space=env.action_spaces[seat],
        model_config={"env_id": "craits_v0", "env_args": CRAITS, "agent": "heuristic"},
    )
    batch = {Columns.OBS: {k: torch.as_tensor(v[None]) for k, v in o.items()}}
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS][0]
    chosen = int(TorchCategorical(logits=logits).sample())
    assert chosen == module.agent.act(o["observation"], o["action_mask"].astype(np.int8))
    assert o["action_mask"][chosen] == 1


def test_seating_follows_the_pool():
    agents = [f"player_{i}" for i in range(4)]
    mapping = SeatMapping(agents, [("heuristic", 3.0), ("self_play", 1.0)], window=2, latest_weight=0.5)
    with pytest.raises(RuntimeError, match="before the first snapshot"):
        [mapping.seating(i) for i in range(50)]
    mapping.snapshots_taken = 5  # snapshots 0-4: the latest (4) and the window before it (2, 3)
    counts = {}
    for episode in range(2000):
        seating = mapping.seating(f"episode-{episode}")
        assert seating == mapping.seating(f"episode-{episode}"), "one episode, one seating"
        assert list(seating.values()).count(LEARNER) == 1
        for module in seating.values():
            counts[module] = counts.get(module, 0) + 1
    snapshots = {snapshot_id(k, 2): counts.get(snapshot_id(k, 2), 0) for k in (2, 3, 4)}
    assert set(counts) == {LEARNER, "heuristic", *snapshots}
    assert counts["heuristic"] / (3 * 2000) == pytest.approx(0.75, abs=0.03)
    assert snapshots[snapshot_id(4, 2)] / sum(snapshots.values()) == pytest.approx(0.5, abs=0.05)
    partners = SeatMapping(agents, [("random", 1.0)], learner_seat=1, own_partner=True)
    assert [m == LEARNER for m in partners.seating("x").values()] == [False, True, False, True]


def test_an_rllib_config_section_is_checked():
    from training.learning.config import ConfigError, load_config

    config = load_config(ROOT / "configs" / "craits_rllib_quick.yaml")
    assert config.algorithm.name == "rllib_ppo"
    with pytest.raises(ConfigError, match="minibatch_size .* at most train_batch_size"):
        load_config(ROOT / "configs" / "craits_rllib_quick.yaml", ["algorithm.minibatch_size=8192"])
    with pytest.raises(ConfigError, match="algorithm.num_env_runners"):
        load_config(ROOT / "configs" / "craits_rllib_quick.yaml", ["algorithm.num_env_runners=-1"])


TRAIN = """
import gc, json, sys
import numpy as np, torch
from pathlib import Path
from ray.rllib.core.columns import Columns
from training.learning import train as train_module
from training.agents import PolicyAgent
from training.algorithms import rllib_ppo
from training.learning.config import load_config
from training.common.games import EnvHandle
from training.learning.rllib_env import LEARNER, AECMultiAgentEnv
out = Path(sys.argv[1])
config = load_config("configs/craits_rllib_quick.yaml", [
    "algorithm.net_arch=[32]", "algorithm.train_batch_size=512", "algorithm.minibatch_size=128",
    "algorithm.num_epochs=1", "algorithm.num_env_runners=1", "algorithm.num_envs_per_env_runner=2",
    "training.total_timesteps=100", "checkpoints.every=100", "checkpoints.eval_every=100000",
    "checkpoints.eval_games=1", "opponents.self_play.snapshot_every=50", f"output.dir={out}", "output.name=run"])
run = train_module.train(config, config.run_dir)
gc.collect()  # the finished model's env runner goes, freeing its CPU
checkpoint = run / "checkpoint"
meta = json.loads((checkpoint / "meta.json").read_text())
assert meta["algorithm"]["name"] == "rllib_ppo" and meta["action_selection"] == "masked_sampling", meta
assert meta["timesteps"] >= 100 and meta["hidden_sizes"] == [32], meta
# The RLModule that model.zip restores and the numpy policy of policy.npz give the same logits.
model = rllib_ppo.load(checkpoint / "model.zip", train_module.make_vec_env(config, EnvHandle(config.env.id, config.env.args), run), config)
assert model.num_timesteps == meta["timesteps"] and model.snapshots_taken >= 2, model.snapshots_taken
env = AECMultiAgentEnv({"env_id": config.env.id, "env_args": config.env.args})
rows = []
for seed in range(8):
    obs, _ = env.reset(seed=seed)
    rows += list(obs.values())
observations = np.stack([r["observation"] for r in rows])
masks = np.stack([r["action_mask"] for r in rows])
module = model.algo.learner_group._learner.module[LEARNER]
with torch.no_grad():
    torch_logits = module.forward_inference({Columns.OBS: {"observation": torch.as_tensor(observations),
                                             "action_mask": torch.as_tensor(masks)}})[Columns.ACTION_DIST_INPUTS].numpy()
numpy_logits = PolicyAgent(checkpoint).logits(observations)
legal = masks > 0
assert np.abs(torch_logits[legal] - numpy_logits[legal]).max() < 1e-5, np.abs(torch_logits[legal] - numpy_logits[legal]).max()
assert (torch_logits[~legal] < -1e30).all()
print("ok", meta["timesteps"])
"""


def test_a_tiny_run_trains_checkpoints_evaluates_and_resumes(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", TRAIN, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    run = tmp_path / "run"
    first = json.loads((run / "checkpoint" / "meta.json").read_text())["timesteps"]
    # The checkpoint plays as any bot: training.matches.evaluate, numpy only.
    from training.matches.evaluate import bot_layout, evaluate

    env = EnvHandle("craits_v0", json.loads((run / "checkpoint" / "meta.json").read_text())["env_args"])
    result = evaluate(env, bot_layout(env, str(run / "checkpoint"), "heuristic"), games=1, seed=0)
    assert result["games"] >= 1 and str(run / "checkpoint") in result["agents"]
    # --resume continues from the step count it saved; Ctrl-C stops it at the next iteration
    # with a checkpoint (raised inside RLlib's sampling, a KeyboardInterrupt would be lost).
    log = tmp_path / "resume.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "training.train",
                "--resume",
                str(run),
                "--set",
                f"training.total_timesteps={first + 100_000}",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:  # until an iteration of the resumed run is done
            if any(int(n) > first for n in re.findall(r"(\d+)/\d+ \[", log.read_text())):
                break
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=180) == 130, log.read_text()[-3000:]
    text = log.read_text()
    assert f"resuming {run} at {first} of {first + 100_000}" in text
    meta = json.loads((run / "checkpoint" / "meta.json").read_text())
    assert first < meta["timesteps"] < first + 100_000 and f"checkpoint written at step {meta['timesteps']}" in text
    assert len(list((run / "logs").iterdir())) == 2


def test_the_benchmark_plans_an_rllib_ppo_trial(tmp_path):
    from training.learning.benchmark import load_benchmark, plan_trials

    bench = load_benchmark(
        ROOT / "configs" / "benchmark_small.yaml",
        ["algorithms={rllib_ppo: {num_env_runners: 0, train_batch_size: 2048}}", "seeds=[0]"],
    )
    trials = plan_trials(bench, tmp_path)
    assert {t.config.algorithm.name for t in trials} == {"rllib_ppo"} and len(trials) == len(bench.settings)
    assert trials[0].config.algorithm.train_batch_size == 2048 and trials[0].config.algorithm.torch_threads == 1
