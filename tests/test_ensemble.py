"""training.agents.ensemble: several checkpoints as one wider MLP whose scores are exactly the mean
of theirs; members that don't fit together are refused, naming the member and the field."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from training.agents import PolicyAgent
from training.agents.checkpoint import CheckpointError
from training.agents.ensemble import main, make_ensemble
from training.common.games import EnvHandle
from training.matches.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]


def member(folder, widths=(3, 2), activation="relu", seed=0, **meta_changes):
    """A random 5 -> widths... -> 4 policy checkpoint for craits_v0."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    sizes = [5, *widths, 4]
    arrays = {}
    for i, (inputs, outputs) in enumerate(zip(sizes, sizes[1:])):
        name = "action" if i == len(widths) else f"layer_{i}"
        arrays[f"{name}_weight"] = rng.normal(size=(outputs, inputs)).astype(np.float32)
        arrays[f"{name}_bias"] = rng.normal(size=outputs).astype(np.float32)
    np.savez(folder / "policy.npz", **arrays)
    meta = {
        "format_version": 1,
        "env_id": "craits_v0",
        "env_args": {"preset": "craits"},
        "rules": {"nine": "same_colour"},
        "observation_size": 5,
        "action_size": 4,
        "activation": activation,
        "action_selection": "masked_argmax",
        "hidden_sizes": list(widths),
        "algorithm": {"name": "DoubleDQN", "net_arch": list(widths)},
        "timesteps": 1000 + seed,
        **meta_changes,
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_scores_are_the_members_mean(tmp_path, activation):
    members = [
        member(tmp_path / f"m{i}", widths=w, activation=activation, seed=i)
        for i, w in enumerate([(3, 2), (4, 5), (2, 2)])
    ]
    meta = make_ensemble(members, tmp_path / "ens")
    assert meta["hidden_sizes"] == [9, 9] and meta["algorithm"]["name"] == "ensemble"
    assert meta["timesteps"] == 1000 + 1001 + 1002 and meta["activation"] == activation
    assert [m["path"] for m in meta["algorithm"]["members"]] == [m.as_posix() for m in members]
    observations = np.random.default_rng(9).normal(size=(50, 5)).astype(np.float32)
    mean = np.mean([PolicyAgent(m).logits(observations) for m in members], axis=0)
    ensemble = PolicyAgent(tmp_path / "ens")
    assert np.abs(ensemble.logits(observations) - mean).max() < 1e-5
    assert ensemble.deterministic  # masked argmax, as its members


def test_an_ensemble_member_counts_as_its_members(tmp_path):
    members = [member(tmp_path / f"m{i}", widths=w, seed=i) for i, w in enumerate([(3, 2), (4, 5), (2, 2)])]
    make_ensemble(members[:2], tmp_path / "inner")
    meta = make_ensemble([tmp_path / "inner", members[2]], tmp_path / "outer")
    # the mean of three networks, each weighted alike: not the mean of the inner mean and m2
    observations = np.random.default_rng(3).normal(size=(50, 5)).astype(np.float32)
    mean = np.mean([PolicyAgent(m).logits(observations) for m in members], axis=0)
    outer = PolicyAgent(tmp_path / "outer")
    assert np.abs(outer.logits(observations) - mean).max() < 1e-5
    assert outer.members is not None and len(outer.members) == 3  # still evaluated block by block
    recorded = meta["algorithm"]["members"]
    assert [m["path"] for m in recorded] == [m.as_posix() for m in members]
    assert [m.get("via") for m in recorded] == [(tmp_path / "inner").as_posix()] * 2 + [None]
    assert meta["hidden_sizes"] == [9, 9] and meta["timesteps"] == 1000 + 1001 + 1002
    # an ensemble whose weights are not the blocks its meta.json lists is refused, not misweighted
    inner_meta = json.loads((tmp_path / "inner" / "meta.json").read_text())
    inner_meta["algorithm"]["members"][0]["hidden_sizes"] = [4, 2]
    inner_meta["algorithm"]["members"][1]["hidden_sizes"] = [3, 5]
    (tmp_path / "inner" / "meta.json").write_text(json.dumps(inner_meta))
    with pytest.raises(CheckpointError, match="not the blocks"):
        make_ensemble([tmp_path / "inner", members[2]], tmp_path / "other")


def dense_logits(agent, observations):
    x = observations
    for weight, bias in agent.hidden:
        x = agent.activation(x @ weight.T + bias)
    return x @ agent.head_w.T + agent.head_b


def test_members_are_evaluated_block_by_block_unless_the_weights_disagree(tmp_path):
    """PolicyAgent skips the zeros between the members' blocks; an ensemble whose weights are
    not block-diagonal as its meta.json says is run as the whole MLP, like any frontend."""
    members = [member(tmp_path / f"m{i}", widths=(3, 4), seed=i) for i in range(3)]
    make_ensemble(members, tmp_path / "ens")
    observations = np.random.default_rng(1).normal(size=(20, 5)).astype(np.float32)
    ensemble = PolicyAgent(tmp_path / "ens")
    assert ensemble.members is not None and len(ensemble.members) == 3
    assert np.abs(ensemble.logits(observations) - dense_logits(ensemble, observations)).max() < 1e-5
    arrays = dict(np.load(tmp_path / "ens" / "policy.npz"))
    arrays["layer_1_weight"][0, -1] = 0.5  # a weight between two members' blocks
    np.savez(tmp_path / "ens" / "policy.npz", **arrays)
    doctored = PolicyAgent(tmp_path / "ens")
    assert doctored.members is None
    assert np.abs(doctored.logits(observations) - dense_logits(doctored, observations)).max() < 1e-6
    assert PolicyAgent(members[0]).members is None


def test_an_ensemble_of_copies_plays_as_its_member(tmp_path):
    """In real games: the ensemble of a shipped bot with itself makes the same moves."""
    ens = tmp_path / "twice"
    make_ensemble(["checkpoints/craits_dqn", "checkpoints/craits_dqn"], ens)
    env = EnvHandle("craits_v0", {"deals": [3]})
    results = [
        evaluate(env, [bot, "heuristic", "heuristic", "heuristic"], 2, seed=5)["agents"][bot]
        for bot in ("checkpoints/craits_dqn", str(ens))
    ]
    assert results[0]["mean_score"] == results[1]["mean_score"]
    assert results[0]["win_share"] == results[1]["win_share"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"rules": {"nine": "any"}}, "rules .* differs from"),
        ({"env_id": "pairs_draft_v0"}, "env_id 'pairs_draft_v0' differs"),
        ({"activation": "tanh"}, "activation 'tanh' differs"),
        ({"action_selection": "sample"}, "action_selection 'sample' differs"),
    ],
)
def test_members_that_do_not_fit_are_refused(tmp_path, change, message):
    first = member(tmp_path / "a")
    other = member(tmp_path / "b", seed=1, **change)
    with pytest.raises(CheckpointError, match=f"{other}: {message}"):
        make_ensemble([first, other], tmp_path / "ens")
    assert not (tmp_path / "ens").exists()


def test_depth_and_count_are_checked(tmp_path):
    first = member(tmp_path / "a")
    deeper = member(tmp_path / "b", widths=(3, 3, 3), seed=1)
    with pytest.raises(CheckpointError, match="3 hidden layers, .* has 2: .* same depth"):
        make_ensemble([first, deeper], tmp_path / "ens")
    with pytest.raises(CheckpointError, match="at least 2 members, got 1"):
        make_ensemble([first], tmp_path / "ens")


def test_cli_names_the_problem(tmp_path, capsys):
    first = member(tmp_path / "a")
    with pytest.raises(SystemExit, match=f"error: checkpoint folder {tmp_path / 'nope'} does not exist"):
        main([str(first), str(tmp_path / "nope"), "--out", str(tmp_path / "ens")])
    main([str(first), str(first), "--out", str(tmp_path / "ens")])
    assert "ensemble of 2 members, hidden sizes [6, 4]" in capsys.readouterr().out


def tree(folder):
    """Every entry under ``folder``: a file's bytes, a symlink's target, or "folder"."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        entries[path.relative_to(folder).as_posix()] = (
            f"-> {path.readlink()}" if path.is_symlink() else "folder" if path.is_dir() else path.read_bytes()
        )
    return entries


@pytest.mark.parametrize(
    "out, message",
    [
        ("notes", "holds a.txt, b.txt: not an ensemble, so it is not replaced"),
        ("notes/", "holds a.txt, b.txt: not an ensemble"),
        ("m0", "is the member m0 itself"),
        ("./m1/", "is the member m1 itself"),
        ("link", "is the member m1 itself"),  # a symlink to the member
        (".", "is the current folder itself: replacing it would delete it"),
        ("..", "holds the current folder"),
        ("plain.txt", "exists and is not a folder: it is not replaced"),
        ("other", "holds a checkpoint that is not an ensemble"),  # e.g. a shipped bot: the same two files
    ],
)
def test_out_holding_anything_but_an_earlier_ensemble_is_refused(tmp_path, monkeypatch, out, message):
    work = tmp_path / "work"
    member(work / "m0")
    member(work / "m1", seed=1)
    member(work / "other", seed=2)
    (work / "notes").mkdir()
    (work / "notes" / "a.txt").write_text("keep me")
    (work / "notes" / "b.txt").write_text("me too")
    (work / "plain.txt").write_text("a plain file")
    (work / "link").symlink_to("m1")
    monkeypatch.chdir(work)
    before = tree(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["m0", "m1", "--out", out])
    assert stop.value.code.startswith(f"error: --out {Path(out)} ") and message in stop.value.code  # status 1
    assert tree(tmp_path) == before  # every file byte-identical, nothing added


def test_out_dot_is_a_message_and_exit_status_not_a_traceback(tmp_path):
    member(tmp_path / "a")
    member(tmp_path / "b", seed=1)
    before = tree(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "training.ensemble", "a", "b", "--out", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1 and done.stdout == ""
    assert (
        done.stderr == "error: --out . is the current folder itself: replacing it would delete it; choose "
        "another folder\n"
    )
    assert tree(tmp_path) == before


def test_an_earlier_ensemble_is_replaced_atomically(tmp_path, monkeypatch):
    members = [member(tmp_path / f"m{i}", widths=(3, 2), seed=i) for i in range(3)]
    main([str(members[0]), str(members[1]), "--out", str(tmp_path / "ens")])
    first = tree(tmp_path / "ens")

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", fail)  # fails inside the temporary folder
    with pytest.raises(SystemExit, match="No space left on device"):
        main([str(members[0]), str(members[2]), "--out", str(tmp_path / "ens") + "/"])
    assert tree(tmp_path / "ens") == first  # the earlier ensemble is untouched
    monkeypatch.undo()
    main([str(members[0]), str(members[2]), "--out", str(tmp_path / "ens") + "/"])
    meta = json.loads((tmp_path / "ens" / "meta.json").read_text())
    assert [m["path"] for m in meta["algorithm"]["members"]] == [members[0].as_posix(), members[2].as_posix()]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ens", "m0", "m1", "m2"]  # no temporary leftovers


def test_symmetries_average_each_member_over_the_games_relabellings(tmp_path):
    """``--symmetries``: every member once per suit relabelling of Craits; the ensemble's scores
    are the mean of the members' scores of the relabelled observation, read back through the
    relabelled moves, so a position and its relabelled twin get the same scores."""
    from envs.craits.env import OBS_SIZE, suit_symmetries

    rng = np.random.default_rng(3)
    members = []
    for i in range(2):
        folder = member(tmp_path / f"m{i}", seed=i, observation_size=OBS_SIZE, action_size=109)
        arrays = dict(np.load(folder / "policy.npz"))
        arrays["layer_0_weight"] = rng.normal(size=(3, OBS_SIZE)).astype(np.float32)
        arrays["action_weight"] = rng.normal(size=(109, 2)).astype(np.float32)
        arrays["action_bias"] = rng.normal(size=109).astype(np.float32)
        np.savez(folder / "policy.npz", **arrays)
        members.append(folder)
    meta = make_ensemble(members, tmp_path / "sym", symmetries=True)
    assert len(meta["algorithm"]["members"]) == 16 and meta["timesteps"] == 1000 + 1001
    assert [m["symmetry"] for m in meta["algorithm"]["members"]] == list(range(8)) * 2
    ensemble, plain = PolicyAgent(tmp_path / "sym"), [PolicyAgent(m) for m in members]
    observations = rng.random((5, OBS_SIZE)).astype(np.float32)
    symmetries = suit_symmetries()
    expected = np.mean([p.logits(observations[:, o])[:, a] for p in plain for o, a in symmetries], axis=0)
    np.testing.assert_allclose(ensemble.logits(observations), expected, rtol=1e-4, atol=1e-4)
    for o, a in symmetries:  # the twin's scores, read back through the relabelling, are the same
        np.testing.assert_allclose(
            ensemble.logits(observations[:, o])[:, a], ensemble.logits(observations), rtol=1e-4, atol=1e-4
        )
    make_ensemble([members[0]], tmp_path / "one", symmetries=True)  # one member is enough
    with pytest.raises(CheckpointError, match="already averaged over the game's symmetries"):
        make_ensemble([tmp_path / "sym"], tmp_path / "twice", symmetries=True)
    with pytest.raises(CheckpointError, match="averaged over the game's symmetries beside one that is not"):
        make_ensemble([tmp_path / "sym", members[0]], tmp_path / "mixed")
    both = make_ensemble([tmp_path / "sym", tmp_path / "one"], tmp_path / "both")  # all relabelled: fine
    assert len(both["algorithm"]["members"]) == 24 and both["timesteps"] == 1000 + 1001 + 1000
    with pytest.raises(CheckpointError, match="at least 2 members"):
        make_ensemble([members[0]], tmp_path / "plain")
    small = member(tmp_path / "small", seed=5)  # 5 observations: not Craits' layout
    with pytest.raises(CheckpointError, match="not craits_v0's observation and action sizes"):
        make_ensemble([small], tmp_path / "bad", symmetries=True)
    pairs = member(tmp_path / "pairs", seed=6, env_id="pairs_draft_v0")
    with pytest.raises(CheckpointError, match="pairs_draft_v0 has no symmetries"):
        make_ensemble([pairs], tmp_path / "none", symmetries=True)
