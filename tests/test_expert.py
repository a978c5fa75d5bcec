"""Expert iteration (``training.expert``): rounds of games by the guided search, a network
fitted to its visit distributions, saved as a checkpoint that loads wherever a bot does;
a run stopped part-way resumes without replaying what it kept."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from envs.search import VALUE_TEMPERATURE
from training.agents import make_agent, prior_network
from training.common.games import EnvHandle
from training.learning import expert

TINY = ["--games", "3", "--simulations", "8", "--epochs", "2", "--eval-sets", "1", "--pool", "heuristic,random"]


def run(out, *extra):
    return expert.main(["--env", "pairs_draft_v0", "--prior", "pairs_draft", "--out", str(out), *TINY, *extra])


def test_rounds_make_checkpoints_that_guide_the_next_round_and_resume(tmp_path, monkeypatch):
    rounds = run(tmp_path / "exit", "--rounds", "2")
    assert [r["round"] for r in rounds] == [0, 1]
    first = tmp_path / "exit" / "round_0" / "checkpoint"
    assert rounds[1]["guide"] == first.as_posix()  # round 1 is guided by round 0's network
    meta = json.loads((first / "meta.json").read_text())
    assert meta["algorithm"]["name"] == "ExpertIteration" and meta["action_selection"] == "masked_sampling"
    assert meta["algorithm"]["decisions"] > 20 and meta["env_id"] == "pairs_draft_v0"
    data = np.load(tmp_path / "exit" / "round_0" / "games" / "chunk_0" / "data.npz")
    assert data["observations"].shape == (meta["algorithm"]["decisions"], 206)
    np.testing.assert_allclose(data["visits"].sum(axis=1), 1.0, rtol=1e-5)
    assert (data["visits"][data["masks"] == 0] == 0).all()  # visits only on legal moves
    env = EnvHandle("pairs_draft_v0")
    assert make_agent(first.as_posix(), env).meta == meta  # an ordinary checkpoint
    assert make_agent(f"ismcts:prior={first.as_posix()},simulations=5", env).temperature == 1.0  # logits now
    # run again: nothing is played again, the rounds are the same
    monkeypatch.setattr(expert, "_play_chunk", lambda task: pytest.fail("a kept chunk was played again"))
    assert run(tmp_path / "exit", "--rounds", "2") == rounds


def test_a_stopped_round_plays_only_its_missing_games(tmp_path, monkeypatch):
    played = []
    real = expert._play_chunk

    def counted(task):
        played.append(task[6])  # the chunk's first game
        return real(task)

    monkeypatch.setattr(expert, "CHUNK_GAMES", 2)
    monkeypatch.setattr(expert, "_play_chunk", counted)
    args = ["--games", "4", "--simulations", "5", "--epochs", "1", "--eval-sets", "1", "--pool", "random"]
    out = tmp_path / "exit"

    def go():
        return expert.main(["--env", "pairs_draft_v0", "--prior", "pairs_draft", "--out", str(out), *args])

    go()
    assert played == [0, 2]
    # as if stopped after its first chunk: the second chunk, the network and the evaluation lost
    shutil.rmtree(out / "round_0" / "games" / "chunk_1")
    shutil.rmtree(out / "round_0" / "checkpoint")
    (out / "rounds.jsonl").unlink()
    played.clear()
    go()
    assert played == [2]


def test_the_fitted_network_starts_from_the_guides_priors(tmp_path):
    """With a learning rate of 0 the round's network is the guide's, its output scaled: as a
    prior (logits, temperature 1) it gives the guide's priors (Q-values at VALUE_TEMPERATURE)."""
    env = EnvHandle("pairs_draft_v0")
    guide = prior_network("pairs_draft", env)
    rng = np.random.default_rng(0)
    observations = rng.random((40, 206)).astype(np.float32)
    masks = (rng.random((40, 10)) < 0.6).astype(np.int8)
    masks[:, 0] = 1
    visits = masks / masks.sum(axis=1, keepdims=True)
    data = {"observations": observations, "masks": masks, "visits": visits.astype(np.float32), "games": np.arange(40)}

    class Args:
        seed, processes, learning_rate, epochs, batch_size = 0, 1, 0.0, 1, 16
        simulations, games, pool = 8, 1, "random"

    arrays, record = expert.fit("pairs_draft", env, data, Args)
    assert record["epoch_kept"] == 0 and record["held_out"] >= 4
    expert.save_network(tmp_path / "round_0", "pairs_draft", env, arrays, record, Args, 0)
    fitted = make_agent((tmp_path / "round_0" / "checkpoint").as_posix(), env)
    np.testing.assert_allclose(
        fitted.logits(observations), guide.logits(observations) / VALUE_TEMPERATURE, rtol=1e-4, atol=1e-3
    )


def test_a_guide_for_another_game_is_refused_before_any_game(tmp_path):
    with pytest.raises(ValueError, match="trained for craits_v0"):
        run(tmp_path / "exit", "--prior", "craits")
    assert not (tmp_path / "exit" / "round_0").exists()


@pytest.mark.parametrize(
    "env_id, env_args, prior, side",
    [
        ("pairs_draft_v0", {}, "pairs_draft", {1}),
        ("craits_v0", {"preset": "create", "partnership": True, "deals": [5, 5]}, "create", {1, 3}),
    ],
)
def test_the_search_plays_its_whole_side_and_every_decision_is_kept(env_id, env_args, prior, side):
    # game 1: the search sits in seat 1 (and, in partnership play, in its partner's seat 3)
    data = expert._play_chunk((env_id, env_args, prior, ["random"], 8, 0, 1, 1))
    assert set(data["seats"]) == side and set(data["games"]) == {1}
    assert len(data["observations"]) == len(data["seats"]) == len(data["results"])
    assert len(set(data["results"])) == 1  # the side's result, the same for both partners
