"""training.agents.ship: a shipped bot holds its policy only, and the evaluation it records is what
the command it records gives."""

import json
import shlex
import shutil

import pytest

from training.agents.ship import main, ship
from training.common.games import EnvHandle, parse_env_args
from training.matches.evaluate import evaluate


def source(tmp_path, name="craits"):
    """A checkpoint folder as training leaves it (model.zip included)."""
    folder = tmp_path / "run" / "checkpoint"
    shutil.copytree(f"checkpoints/{name}", folder)
    (folder / "model.zip").write_bytes(b"resume-only archive")
    return folder


def rerun(command: str) -> dict:
    """The result of a recorded ``python -m training.evaluate`` command, played here."""
    words = shlex.split(command)
    opt = {words[i]: [] for i in range(len(words)) if words[i].startswith("--")}
    for i, word in enumerate(words):
        if word.startswith("--"):
            opt[word].append(words[i + 1])
    env = EnvHandle(opt["--env"][0], parse_env_args(opt.get("--arg")))
    return evaluate(env, opt["--agents"][0].split(","), int(opt["--games"][0]), seed=int(opt["--seed"][0]))


@pytest.mark.parametrize("name", ["craits", "create"])
def test_shipped_folder_holds_the_policy_and_reproducible_evaluations(tmp_path, name):
    src = source(tmp_path, name)
    evaluation = ship(src, tmp_path / "bots" / "mine", games=2, seed=5, say=lambda *_: None)
    shipped = tmp_path / "bots" / "mine"
    assert sorted(p.name for p in shipped.iterdir()) == ["meta.json", "policy.npz"]  # never the pickled archive
    meta = json.loads((shipped / "meta.json").read_text())
    assert meta["evaluation"] == evaluation and "training_time_evaluation" in evaluation
    for opponent in ("heuristic", "random"):
        recorded = evaluation[opponent]
        assert f"{shipped},{opponent}" in recorded["command"]
        again = rerun(recorded["command"])["agents"][str(shipped)]
        assert again["win_share"] == recorded["win_share"] and again["mean_score"] == recorded["mean_score"]
    if name == "create":  # its rules travel in the command; the bot holds both seats of its side
        assert "--arg preset=create --arg partnership=true" in evaluation["heuristic"]["command"]
        assert f"--agents {shipped},heuristic,{shipped},heuristic " in evaluation["heuristic"]["command"]


def test_an_existing_folder_is_replaced_only_when_asked(tmp_path, capsys):
    src, to = source(tmp_path), tmp_path / "bot"
    to.mkdir()
    (to / "keep").write_text("x")
    with pytest.raises(SystemExit, match="exists: pass --replace"):
        main([str(src), "--to", str(to), "--games", "1", "--processes", "1"])
    assert (to / "keep").exists()
    main([str(src), "--to", str(to), "--games", "1", "--processes", "1", "--replace"])
    assert sorted(p.name for p in to.iterdir()) == ["meta.json", "policy.npz"]
    assert not list(tmp_path.glob(".bot.*"))  # nothing left beside it
