"""The batched learner env plays exactly the games the per-env path plays: the same seeds,
opponents and learner actions give the same observations, masks, rewards and episode ends."""

import numpy as np
import pytest
from stable_baselines3.common.vec_env import DummyVecEnv

from training.common.games import EnvHandle
from training.learning.config import PoolEntry
from training.learning.learner_env import BatchedLearnerEnv, LearnerEnv, LearnerTable, OpponentPool

SETTINGS = [
    (
        "craits_v0",
        {"deals": [3, 2]},
        [PoolEntry("heuristic", 1.0), PoolEntry("random", 1.0), PoolEntry("checkpoints/craits", 2.0)],
        "pool",
    ),
    ("craits_v0", {"partnership": True, "deals": [2, 1]}, [PoolEntry("heuristic", 1.0)], "learner"),
    ("craits_v0", {"num_players": 3, "episode": "deal", "deals": [1, 4]}, [PoolEntry("random", 1.0)], "pool"),
    ("pairs_draft_v0", {}, [PoolEntry("heuristic", 1.0), PoolEntry("checkpoints/pairs_draft", 1.0)], "pool"),
]


def _pool(env, entries, rank, deterministic):
    return OpponentPool(entries, env, deterministic=deterministic, seed=rank)


@pytest.mark.parametrize("env_id, args, entries, partner", SETTINGS, ids=lambda v: v if isinstance(v, str) else None)
@pytest.mark.parametrize("deterministic", [True, False], ids=["argmax", "sampled"])
def test_batched_env_matches_the_per_env_path_step_by_step(env_id, args, entries, partner, deterministic):
    env, n = EnvHandle(env_id, args), 5
    single = DummyVecEnv(
        [lambda r=r: LearnerEnv(env, _pool(env, entries, r, deterministic), partner=partner, seed=r) for r in range(n)]
    )
    batched = BatchedLearnerEnv(
        env, [LearnerTable(env, _pool(env, entries, r, deterministic), partner=partner, seed=r) for r in range(n)]
    )
    single.seed(11)
    batched.seed(11)
    obs_a, obs_b = single.reset(), batched.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for step in range(300):
        np.testing.assert_array_equal(obs_a, obs_b, err_msg=f"step {step}")
        masks_a, masks_b = np.stack(single.env_method("action_masks")), np.stack(batched.env_method("action_masks"))
        np.testing.assert_array_equal(masks_a, masks_b, err_msg=f"step {step}")
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks_a])
        single.step_async(actions)
        batched.step_async(actions)
        obs_a, rewards_a, dones_a, infos_a = single.step_wait()
        obs_b, rewards_b, dones_b, infos_b = batched.step_wait()
        np.testing.assert_array_equal(rewards_a, rewards_b, err_msg=f"step {step}")
        np.testing.assert_array_equal(dones_a, dones_b, err_msg=f"step {step}")
        for a, b in zip(infos_a, infos_b):
            assert a.get("TimeLimit.truncated") == b.get("TimeLimit.truncated")
            if "terminal_observation" in a:
                np.testing.assert_array_equal(a["terminal_observation"], b["terminal_observation"])
        ends += dones_a.sum()
    assert ends > 0  # episodes ended and were dealt again in place


def test_games_split_over_worker_processes_play_the_same(tmp_path):
    import functools

    from test_training import tiny

    from training.learning.learner_env import ShardedLearnerEnv
    from training.learning.train import learner_table

    config = tiny(
        tmp_path, **{"opponents.pool": "[{agent: heuristic, weight: 1}, {agent: checkpoints/craits, weight: 1}]"}
    )
    env = EnvHandle(config.env.id, config.env.args)
    make_table = functools.partial(learner_table, config, env, tmp_path)
    one = BatchedLearnerEnv(env, [make_table(rank) for rank in range(5)])
    split = ShardedLearnerEnv(env, make_table, 5, workers=2)
    try:
        one.seed(3)
        split.seed(3)
        obs_a, obs_b = one.reset(), split.reset()
        rng = np.random.default_rng(0)
        for step in range(120):
            np.testing.assert_array_equal(obs_a, obs_b, err_msg=f"step {step}")
            masks = np.stack(one.env_method("action_masks"))
            np.testing.assert_array_equal(masks, np.stack(split.env_method("action_masks")))
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            one.step_async(actions)
            split.step_async(actions)
            obs_a, rewards_a, dones_a, _ = one.step_wait()
            obs_b, rewards_b, dones_b, _ = split.step_wait()
            np.testing.assert_array_equal(rewards_a, rewards_b)
            np.testing.assert_array_equal(dones_a, dones_b)
        assert split.get_attr("learner_seat") == one.get_attr("learner_seat")
    finally:
        split.close()


def test_limit_threads_caps_numpy_blas():
    """Training, env workers and pool workers run numpy's BLAS on one thread each (policy
    opponents: small matrices, a process per core)."""
    from threadpoolctl import threadpool_info

    from training.running.executor import limit_threads

    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas, "numpy links a BLAS that threadpoolctl sees"
    limit_threads(1)
    assert {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"} == {1}
