"""Broken agents and bad output paths end evaluation, play and training with a named error.

Each test runs under a deadline: the failure these guard against is a loop that never
ends (an illegal move ends the episode under the env's penalty rule, and evaluation
replays the game for ever), so a regression must fail, not hang the suite.
"""

import json
import os
import re
import signal

import numpy as np
import pytest

import training.frontends.play as play_module
import training.learning.learner_env as learner_env_module
import training.matches.evaluate as evaluate_module
from training.agents import IllegalMoveError
from training.common.games import EnvHandle
from training.learning.config import PoolEntry
from training.learning.learner_env import LearnerEnv, OpponentPool

SHORT = {"deals": [3, 2]}


@pytest.fixture(autouse=True)
def deadline():
    def hung(signum, frame):
        pytest.fail("still running after 30 s: an illegal move is being replayed instead of reported")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


class Cheater:
    """Always plays the first action its mask forbids."""

    def __init__(self, name):
        self.name, self.moves = name, []

    def reset(self):
        pass

    def act(self, observation, action_mask):
        self.moves.append(int(np.flatnonzero(np.asarray(action_mask) == 0)[0]))
        return self.moves[-1]


def seat_cheaters(monkeypatch, module, spec="cheater"):
    """``module.make_agent`` gives a ``Cheater`` for ``spec`` (any spec if None); the list
    collects the cheaters it made."""
    made, real = [], module.make_agent

    def make_agent(s, *args, **kwargs):
        if spec is not None and s != spec:
            return real(s, *args, **kwargs)
        made.append(Cheater(s))
        return made[-1]

    monkeypatch.setattr(module, "make_agent", make_agent)
    return made


def expected_move(cheaters) -> str:
    """The text of the move the cheaters tried (a Craits action's text doesn't depend on the state)."""
    move = next(c.moves[0] for c in cheaters if c.moves)
    raw = EnvHandle("craits_v0").raw
    raw.reset(seed=0)
    return raw.game.action_to_text(move)


def nan_checkpoint(folder):
    """A checkpoint whose meta.json is valid for default Craits but whose weights are all NaN."""
    env = EnvHandle("craits_v0")
    obs_size, actions = env.obs_size, env.num_actions
    folder.mkdir()
    np.savez(
        folder / "policy.npz",
        layer_0_weight=np.full((8, obs_size), np.nan),
        layer_0_bias=np.zeros(8),
        action_weight=np.full((actions, 8), np.nan),
        action_bias=np.zeros(actions),
    )
    (folder / "meta.json").write_text(
        json.dumps(
            {
                "format_version": 1,
                "env_id": "craits_v0",
                "env_args": {},
                "rules": env.rule_args,
                "observation_size": obs_size,
                "action_size": actions,
                "activation": "tanh",
                "hidden_sizes": [8],
            }
        )
    )
    return str(folder)


# ---------------------------------------------------------------- 1. illegal moves
def test_illegal_move_ends_evaluation_naming_agent_seat_move_and_legal_ones(monkeypatch, capsys):
    cheaters = seat_cheaters(monkeypatch, evaluate_module)
    with pytest.raises(IllegalMoveError) as caught:
        evaluate_module.evaluate(EnvHandle("craits_v0", SHORT), ["random", "random", "random", "cheater"], games=2)
    message = str(caught.value)
    assert message.startswith("cheater (seat 3) chose an illegal action ")
    assert repr(expected_move(cheaters)) in message and re.search(r"legal: \S", message)

    with pytest.raises(SystemExit) as exited:  # the CLI: one line, no traceback
        evaluate_module.main(["--agents", "random,cheater", "--games", "1", "--processes", "1", "--arg", "deals=[3]"])
    assert exited.value.code != 0
    assert re.match(r"error: cheater \(seat [13]\) chose an illegal action", capsys.readouterr().err)


def test_illegal_move_ends_play_with_a_message(monkeypatch, capsys):
    seat_cheaters(monkeypatch, play_module)
    with pytest.raises(SystemExit):
        play_module.main(["--agents", "heuristic,cheater", "--arg", "deals=[3]"])
    err = capsys.readouterr().err
    assert re.match(r"error: cheater \(seat [13]\) chose an illegal action .*; legal: ", err), err


@pytest.mark.parametrize("mode", ["--deterministic", "--stochastic"])
def test_nan_checkpoint_stops_evaluation_naming_it(tmp_path, capsys, mode):
    # Deterministic NaN logits used to play the first legal move as if nothing were wrong;
    # sampled ones gave an out-of-range action and an endless replay.
    path = nan_checkpoint(tmp_path / "diverged")
    with pytest.raises(SystemExit):
        evaluate_module.main(["--agents", f"{path},random", "--games", "1", "--processes", "1", mode])
    err = capsys.readouterr().err
    assert err.startswith("error: ") and path in err and "NaN" in err, err


def pool_env(monkeypatch, entries, snapshot_dir=None):
    seat_cheaters(monkeypatch, learner_env_module, spec=None)
    env = EnvHandle("craits_v0", SHORT)
    return LearnerEnv(env, OpponentPool(entries, env, snapshot_dir=snapshot_dir, seed=0), learner_seat=0, seed=0)


def test_pool_opponent_illegal_move_names_its_spec_and_seat(monkeypatch):
    env = pool_env(monkeypatch, [PoolEntry("cheater", 1.0)])
    with pytest.raises(IllegalMoveError, match=r"^opponent cheater \(seat [123]\) chose an illegal action "):
        env.reset(seed=0)  # the opponents move here or after the learner's first move
        env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_self_play_opponent_illegal_move_names_the_snapshot(monkeypatch, tmp_path):
    snapshot = tmp_path / "step_000000100"
    snapshot.mkdir()
    (snapshot / "meta.json").write_text("{}")  # only listed: make_agent is replaced
    env = pool_env(monkeypatch, [PoolEntry("self_play", 1.0)], snapshot_dir=tmp_path)
    with pytest.raises(IllegalMoveError, match=re.escape(f"opponent self_play snapshot {snapshot} (seat ")):
        env.reset(seed=0)
        env.step(int(np.flatnonzero(env.action_masks())[0]))


# ---------------------------------------------------------------- 2. --json
def not_called(*args, **kwargs):
    raise AssertionError("games were played before the --json path was checked")


@pytest.mark.parametrize(
    "where, reason",
    [
        (lambda tmp: tmp, "Is a directory"),
        (lambda tmp: tmp / "missing" / "out.json", "No such file or directory"),
        (lambda tmp: tmp / "a_file" / "out.json", "Not a directory"),
    ],
)
def test_unwritable_json_path_fails_before_playing(monkeypatch, tmp_path, capsys, where, reason):
    (tmp_path / "a_file").write_text("")
    path = where(tmp_path)
    monkeypatch.setattr(evaluate_module, "evaluate", not_called)
    with pytest.raises(SystemExit):
        evaluate_module.main(["--games", "1", "--processes", "1", "--json", str(path)])
    err = capsys.readouterr().err
    assert f"--json {path}: can't write it ({reason})" in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_json_path_in_a_read_only_folder_fails_before_playing(monkeypatch, tmp_path, capsys):
    folder = tmp_path / "read_only"
    folder.mkdir(mode=0o500)
    monkeypatch.setattr(evaluate_module, "evaluate", not_called)
    with pytest.raises(SystemExit):
        evaluate_module.main(["--games", "1", "--processes", "1", "--json", str(folder / "out.json")])
    assert "(Permission denied)" in capsys.readouterr().err


def test_json_check_leaves_no_file_behind_and_keeps_an_old_one(tmp_path):
    new, old = tmp_path / "new.json", tmp_path / "old.json"
    old.write_text("previous result\n")
    for path in (new, old):
        with pytest.raises(SystemExit):  # the evaluation fails after the path was checked
            evaluate_module.main(["--agents", "nonsense", "--games", "1", "--processes", "1", "--json", str(path)])
    assert not new.exists() and old.read_text() == "previous result\n"
