"""Training runs that are interrupted, killed, started twice or fail to start lose nothing and
mix nothing; and what the train command tells a newcomer."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_training import tiny

from training.learning import callback as callback_module
from training.learning import train as train_module
from training.learning.config import dump_config
from training.learning.learner_env import BatchedLearnerEnv

ROOT = Path(__file__).parent.parent


def _meta(run):
    return json.loads((run / "checkpoint" / "meta.json").read_text())


def _eval_steps(run):
    return [json.loads(line)["timesteps"] for line in (run / "evaluations.jsonl").read_text().splitlines()]


def _wait_for(path, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the training process never made {path} (exit code {proc.poll()})")
        time.sleep(0.2)


def test_a_run_folder_in_use_is_refused_and_freed_when_its_holder_is_killed(tmp_path):
    config = tiny(tmp_path, **{"training.total_timesteps": 256})
    run = train_module.train(config, config.run_dir)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-u",
            "-m",
            "training.train",
            "--resume",
            str(run),
            "--set",
            "training.total_timesteps=100000000",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(run / "logs" / "from_000000256", holder)  # it holds the folder and is about to train
        in_flight = run / ".checkpoint.in_flight"  # as if the holder were writing a checkpoint now
        in_flight.mkdir()
        busy = re.escape(f"{run} is in use by another training run (process {holder.pid})")
        with pytest.raises(SystemExit, match=busy):
            train_module.main(["--resume", str(run), "--set", "training.total_timesteps=512"])
        assert in_flight.is_dir()  # the refused run touched nothing, not even what looks like a leftover
    finally:
        holder.kill()  # SIGKILL: no chance to clean up or unlock
        holder.wait()
    train_module.main(["--resume", str(run), "--set", "training.total_timesteps=512"])  # the kill freed the lock
    assert _meta(run)["timesteps"] >= 512 and not in_flight.exists()


def test_a_fresh_run_never_takes_a_folder_that_appeared_meanwhile(tmp_path, monkeypatch):
    """Between seeing that ``run`` is free and creating it, another run may create it: mkdir
    itself is the check, so this run moves on to ``run-2`` instead of sharing ``run``."""
    config = tiny(tmp_path, **{"training.total_timesteps": 256})
    path = tmp_path / "tiny.yaml"
    path.write_text(dump_config(config))
    original_mkdir = Path.mkdir

    def another_run_gets_there_first(self, *args, **kwargs):
        if self == config.run_dir and not self.exists():
            original_mkdir(self)
            (self / "config.yaml").write_text("the other run's\n")
        return original_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", another_run_gets_there_first)
    train_module.main(["--config", str(path)])
    assert (tmp_path / "run-2" / "checkpoint" / "model.zip").is_file()
    assert (tmp_path / "run" / "config.yaml").read_text() == "the other run's\n"


CADENCE = {
    "training.total_timesteps": 1024,
    "checkpoints.every": 512,
    "checkpoints.eval_every": 300,
    "opponents.self_play.snapshot_every": 250,
    "opponents.pool": "[{agent: heuristic, weight: 1}, {agent: self_play, weight: 1}]",
}


def _record_checkpoints(monkeypatch):
    steps = []
    original = callback_module.save_checkpoint

    def recording(path, model, meta, learner, with_model=True):
        if Path(path).name == "checkpoint":
            steps.append(model.num_timesteps)
        return original(path, model, meta, learner, with_model)

    monkeypatch.setattr(callback_module, "save_checkpoint", recording)
    return steps


@pytest.mark.parametrize("cut", ["during a rollout", "during an evaluation"])
def test_an_interrupted_run_keeps_the_cadence_of_a_straight_run(tmp_path, monkeypatch, cut):
    """Evaluations, snapshots and checkpoints come at the first rollout boundary (here every
    256 steps) at or after each multiple of their ``every``, whether or not the run was
    interrupted and resumed on the way."""
    steps = _record_checkpoints(monkeypatch)
    config = tiny(tmp_path / "straight", **CADENCE)
    straight = train_module.train(config, config.run_dir)
    straight_checkpoints, steps[:] = set(steps), []
    config = tiny(tmp_path / "cut", **CADENCE)
    cut_run, cut_at = config.run_dir, 698 if cut == "during a rollout" else 768
    with monkeypatch.context() as m:
        if cut == "during a rollout":
            calls, step = [0], BatchedLearnerEnv.step_wait

            def interrupt(self):
                calls[0] += 1
                if calls[0] == 350:  # two envs a step: at step 698
                    raise KeyboardInterrupt
                return step(self)

            m.setattr(BatchedLearnerEnv, "step_wait", interrupt)
        else:
            evaluations, evaluate = [0], callback_module.evaluate_run_bot

            def interrupt(*args, **kwargs):
                evaluations[0] += 1
                if evaluations[0] == 2:  # the one at 768, after its checkpoint was written
                    raise KeyboardInterrupt
                return evaluate(*args, **kwargs)

            m.setattr(callback_module, "evaluate_run_bot", interrupt)
        with pytest.raises(SystemExit):
            train_module.train(config, cut_run)
    written_on_cut, recorded_on_cut = steps[-1], _meta(cut_run)["timesteps"]
    train_module.main(["--resume", str(cut_run)])
    assert _eval_steps(cut_run) == _eval_steps(straight)
    assert sorted(os.listdir(cut_run / "snapshots")) == sorted(os.listdir(straight / "snapshots"))
    assert set(steps) == straight_checkpoints | {cut_at}
    # The checkpoint written on Ctrl-C records the steps trained on: a rollout cut short is redone.
    assert (written_on_cut, recorded_on_cut) == ((698, 512) if cut == "during a rollout" else (768, 768))
    # The straight run's steps: the first rollout boundary at or after each multiple.
    assert _eval_steps(straight) == [512, 768, 1024]  # due at 300, 600, 900
    assert sorted(os.listdir(straight / "snapshots")) == [f"step_{s:09d}" for s in (0, 256, 512, 768, 1024)]
    assert straight_checkpoints == {512, 768, 1024}  # due at 512 and 1024, and with every evaluation


def test_resume_cleans_up_what_a_kill_left(tmp_path):
    config = tiny(tmp_path, **{"training.total_timesteps": 256, "opponents.pool": "[{agent: self_play, weight: 1}]"})
    run = train_module.train(config, config.run_dir)
    half_written = [run / ".checkpoint.k1ll3d", run / "snapshots" / ".step_000000384.k1ll3d"]
    for folder in half_written:
        folder.mkdir()
        (folder / "policy.npz").write_bytes(b"half")
    (run / "checkpoint").rename(run / ".checkpoint.old")  # killed between the two renames of a swap
    train_module.main(["--resume", str(run), "--set", "training.total_timesteps=512"])
    assert _meta(run)["timesteps"] >= 512
    entries = [*run.iterdir(), *(run / "snapshots").iterdir()]
    assert [p.name for p in entries if p.name.startswith((".checkpoint", ".step"))] == []


def test_a_failed_start_leaves_no_folder_and_a_failed_resume_loses_nothing(tmp_path, monkeypatch):
    config = tiny(tmp_path, **{"training.total_timesteps": 256})
    path = tmp_path / "tiny.yaml"
    path.write_text(dump_config(config))

    def broken(*args, **kwargs):
        raise RuntimeError("the envs could not be built")

    with monkeypatch.context() as m:
        m.setattr(train_module, "make_vec_env", broken)
        with pytest.raises(RuntimeError, match="could not be built"):
            train_module.main(["--config", str(path)])
    assert not config.run_dir.exists()  # not a folder that --resume can't continue

    run = train_module.train(config, config.run_dir)
    assert run == config.run_dir  # the name was not taken by the failed start
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    monkeypatch.setattr(train_module, "make_vec_env", broken)
    with pytest.raises(RuntimeError, match="could not be built"):
        train_module.main(["--resume", str(run), "--set", "training.total_timesteps=512"])
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_the_cli_says_what_it_will_do_reports_evaluations_and_fills_the_bar(tmp_path, capsys):
    config = tiny(tmp_path, **{"training.total_timesteps": 300, "checkpoints.eval_every": 256})
    path = tmp_path / "tiny.yaml"
    path.write_text(dump_config(config))
    train_module.main(["--config", str(path), "--show", "--compare", "--compare-games", "1"])
    out, err = capsys.readouterr()
    plan = out.split("evaluation at step")[0]
    for fact in (
        "training MaskablePPO for 300 timesteps",
        "craits_v0, 4 players",
        "opponents: heuristic 100%",
        f"results in {config.run_dir}: checkpoint/",
        f"--resume {config.run_dir}",
        "then: a game of the new bot (--show); the new bot against the heuristic and random (--compare)",
    ):
        assert fact in plan
    evaluations = [line for line in out.splitlines() if line.startswith("evaluation at step")]
    assert len(evaluations) == 2 and evaluations[0].startswith("evaluation at step 256: win share vs heuristic ")
    assert "(95% CI " in evaluations[0] and ", vs random " in evaluations[0]
    last_bar = err.replace("\r", "\n").strip().splitlines()[-1]
    assert "100%" in last_bar and "300/300" in last_bar  # training overshoots to 512 steps: whole rollouts


def test_help_names_the_command_to_type(capsys):
    with pytest.raises(SystemExit) as done:
        train_module.main(["--help"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("usage: python -m training.train ")


def test_readme_agent_lists_say_how_they_fill_the_table():
    """``--agents`` repeats a short list around the table (``seat_layout``): a README example
    that lists fewer agents than seats must say on its line how many of each sit down."""
    from training.agents import seat_layout
    from training.common.games import EnvHandle

    lines = re.findall(r"^python -m training\.(?:play|evaluate) .*--agents .*$", (ROOT / "README.md").read_text(), re.M)
    assert len(lines) >= 3
    for line in lines:
        players = re.search(r"--arg num_players=(\d+)", line)
        seats = int(players.group(1)) if players else EnvHandle(re.search(r"--env (\S+)", line).group(1)).seats
        specs = re.search(r"--agents (\S+)", line).group(1).split(",")
        if len(specs) < seats:
            comment = line.partition("#")[2]
            first = seat_layout(specs, seats).count(specs[0])
            assert f"{first} " in comment and f"vs {seats - first} " in comment, line
