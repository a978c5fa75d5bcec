"""training.running.executor: leagues, evaluations and benchmark trials as Ray tasks give the same
results as the local process pool; agents' files travel through the object store; a worker
that dies is retried and its matches counted once; a missing Ray names the extra to install.
One local Ray (2 CPUs, the ``ray_local`` fixture in conftest.py) serves the whole session."""

import csv
import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason='Ray is not installed (the scale extra: pip install -e ".[scale]")')

from training.agents import folders as copies  # noqa: E402
from training.common.games import EnvHandle  # noqa: E402
from training.learning import benchmark as bm  # noqa: E402
from training.matches.evaluate import evaluate  # noqa: E402
from training.matches.evaluate import main as evaluate_main  # noqa: E402
from training.matches.league import main as league_main  # noqa: E402
from training.matches.league import run_league  # noqa: E402
from training.running import executor as ex  # noqa: E402

ROOT = Path(__file__).parent.parent
SHORT = {"deals": [3]}


@pytest.fixture
def checkpoint(tmp_path):
    """A checkpoint in a folder of its own (the workers must get it from the driver, not find it
    where the repository's code is)."""
    return str(shutil.copytree(ROOT / "checkpoints" / "craits", tmp_path / "ck"))


@pytest.fixture(scope="module")
def pickled_by_value(ray_local):
    """Functions of this module reach the workers by value (the module is not on their path)."""
    ray_local.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def sorted_log(folder) -> list[str]:
    return sorted((Path(folder) / "matches.jsonl").read_text().splitlines())


def league_outputs(folder) -> dict:
    return {name: (Path(folder) / name).read_text() for name in ("ratings.md", "ratings.csv", "win_share.csv")}


def league(out, agents, executor=None, games=2):
    return run_league(out, agents, "craits_v0", SHORT, games, verbose=False, processes=1, executor=executor)


def test_league_on_ray_equals_the_local_one_and_adding_an_agent_plays_only_its_matches(ray_local, tmp_path, checkpoint):
    agents = ["heuristic", checkpoint]
    local = league(tmp_path / "local", agents)
    # the command line, run as a script (its functions are __main__'s), joining the session's Ray
    address = ray_local.get_runtime_context().gcs_address
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "training.league",
            "--out",
            str(tmp_path / "ray"),
            "--agents",
            ",".join(agents),
            "--arg",
            "deals=[3]",
            "--games",
            "2",
            "--ray-address",
            address,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "6 matches played" in done.stdout and f"with Ray (2 CPUs at {address})" in done.stdout
    assert local["played"] == 6  # random, heuristic, checkpoint: 3 pairs x 2 sets
    assert sorted_log(tmp_path / "ray") == sorted_log(tmp_path / "local")
    assert league_outputs(tmp_path / "ray") == league_outputs(tmp_path / "local")

    other = str(shutil.copytree(checkpoint, tmp_path / "ck2"))  # a fourth agent, added later
    added_ray = league(tmp_path / "ray", [other], ex.RayExecutor())
    added_local = league(tmp_path / "local", [other])
    assert added_ray["played"] == added_local["played"] == 6  # its 3 pairs x 2 sets, nothing else
    log = sorted_log(tmp_path / "ray")
    assert log == sorted_log(tmp_path / "local") and len(log) == 12 * 2  # 12 matches of 2 rotations
    assert len({json.loads(line)["game"] for line in log}) == len(log)
    assert league_outputs(tmp_path / "ray") == league_outputs(tmp_path / "local")
    assert league(tmp_path / "ray", [], ex.RayExecutor())["played"] == 0  # a rerun plays nothing


def _agent_on_worker(spec):
    from training.agents import make_agent

    agent = make_agent(spec, EnvHandle("craits_v0", SHORT), seed=0)
    return agent.name, agent.path, os.environ.get(copies.AGENT_COPIES)


def test_a_checkpoint_reaches_the_worker_through_the_object_store(ray_local, pickled_by_value, checkpoint):
    [(index, (name, path, made))] = list(ex.RayExecutor().imap(_agent_on_worker, [checkpoint], agents=[checkpoint]))
    assert name == checkpoint  # named as the user gave it
    assert path != checkpoint and Path(path).name != "ck" and json.loads(made) == {checkpoint: path}
    assert os.environ.get(copies.AGENT_COPIES) is None  # the driver's own make_agent is untouched
    packed = copies.pack_agents(["random", "heuristic", checkpoint, "ismcts:simulations=5"])
    assert list(packed) == [checkpoint] and set(packed[checkpoint]) == {"meta.json", "policy.npz"}


def test_evaluation_on_ray_equals_the_local_one(ray_local, tmp_path, checkpoint):
    env = EnvHandle("craits_v0", SHORT)
    local = evaluate(env, [checkpoint, "heuristic"], 4, seed=3, processes=1, record_dir=tmp_path / "local")
    out = tmp_path / "ray.json"
    on_ray = evaluate_main(
        [
            "--env",
            "craits_v0",
            "--arg",
            "deals=[3]",
            "--agents",
            f"{checkpoint},heuristic",
            "--games",
            "4",
            "--seed",
            "3",
            "--record",
            str(tmp_path / "ray"),
            "--json",
            str(out),
            "--ray",
        ]
    )
    assert on_ray == local and json.loads(out.read_text()) == json.loads(json.dumps(local))
    records = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert len(records) == 16 and records == sorted(p.name for p in (tmp_path / "ray").iterdir())
    for name in records:  # the workers' records, written by the driver
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def test_a_task_error_arrives_as_itself_naming_the_spec(ray_local, tmp_path, capsys):
    import numpy as np
    from test_eval_robustness import nan_checkpoint

    path = nan_checkpoint(tmp_path / "overflows")
    with np.load(Path(path) / "policy.npz") as arrays:  # finite weights (they load) whose logits overflow in play
        values = {"layer_0_bias": 1.0, "action_weight": 3e38}  # tanh(1) x 8 x 3e38: beyond float32
        np.savez(
            Path(path) / "policy.npz",
            **{name: np.full_like(a, values.get(name, 0.0), dtype=np.float32) for name, a in arrays.items()},
        )
    with pytest.raises(SystemExit):
        evaluate_main(["--agents", f"{path},random", "--games", "2", "--ray"])
    err = capsys.readouterr().err
    assert err.startswith(f"error: checkpoint {path}: its policy gives infinite logits"), err  # not the worker's copy


def _die_once(marker: str, fn, task):
    """``fn(task)``, except that the first call anywhere kills its worker process."""
    if not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return fn(task)


class DyingOnce(ex.RayExecutor):
    def __init__(self, marker):
        super().__init__()
        self.marker = str(marker)

    def imap(self, fn, tasks, **kw):
        return super().imap(functools.partial(_die_once, self.marker, fn), tasks, **kw)


def test_a_dead_worker_is_retried_and_its_matches_counted_once(ray_local, pickled_by_value, tmp_path, checkpoint):
    marker = tmp_path / "died"
    result = league(tmp_path / "ray", ["heuristic", checkpoint], DyingOnce(marker))
    assert marker.exists()  # a worker did die
    league(tmp_path / "local", ["heuristic", checkpoint])
    log = sorted_log(tmp_path / "ray")
    assert result["played"] == 6 and log == sorted_log(tmp_path / "local")
    assert len({json.loads(line)["game"] for line in log}) == len(log) == 12


def test_missing_ray_names_the_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ex.ExecutorError, match=r'pip install -e "\.\[scale\]"'):
        ex.make_executor(2, ray=True)
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")  # Ray's own variable: it means Ray
    with pytest.raises(ex.ExecutorError, match="scale"):
        ex.make_executor(2)
    monkeypatch.delenv("RAY_ADDRESS")
    assert isinstance(ex.make_executor(2), ex.LocalExecutor)
    with pytest.raises(SystemExit):
        league_main(["--out", str(tmp_path / "l"), "--arg", "deals=[3]", "--games", "1", "--ray"])
    assert 'pip install -e ".[scale]"' in capsys.readouterr().err


# ---------------------------------------------------------------- the benchmark
NOT_COMPARED = {
    "training_seconds",
    "periodic_evaluation_seconds",
    "learner_steps_per_s",
    "final_evaluation_seconds",
    "evaluation_seconds",
    "finished_at",
    "folder",
}  # timings, and where each benchmark's folder is


def tiny_bench(out) -> dict:
    return {
        "out": str(out),
        "settings": {"craits": {"env": "craits_v0", "args": {**SHORT, "episode": "deal", "illegal_action": "raise"}}},
        "algorithms": {"MaskablePPO": {"net_arch": [16], "n_steps": 64, "batch_size": 32, "n_epochs": 1}},
        "seeds": [0],
        "budget": {"total_timesteps": 256},
        "base": {
            "opponents": {"pool": [{"agent": "heuristic", "weight": 1.0}]},
            "vec": {"n_envs": 2},
            "checkpoints": {"every": 128, "eval_every": 128, "eval_games": 1},
        },
        "references": ["heuristic"],
        "eval_games": 1,
        "league_games": 1,
        "processes": 1,
    }


def untimed(value):
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in NOT_COMPARED}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def test_benchmark_on_ray_equals_the_local_one_and_resumes_like_it(ray_local, tmp_path):
    """Both start from a trial interrupted at step 128 of 256: the Ray one sends the partial run
    folder to its worker and gets the whole folder back."""
    from training.learning.train import train

    outs = {"local": tmp_path / "local", "ray": tmp_path / "ray"}
    bench = {name: bm.load_benchmark(data=tiny_bench(out)) for name, out in outs.items()}
    [trial] = bm.plan_trials(bench["local"], outs["local"])
    config = trial.config
    train(
        config.model_copy(update={"training": config.training.model_copy(update={"total_timesteps": 128})}), trial.dir
    )
    shutil.copytree(outs["local"], outs["ray"])
    results = {
        "local": bm.run_benchmark(bench["local"], verbose=False),
        "ray": bm.run_benchmark(bench["ray"], verbose=False, executor=ex.RayExecutor()),
    }
    assert results["ray"]["ran"] == results["local"]["ran"] == ["craits/MaskablePPO/seed0"]
    runs = {name: out / "trials" / "craits" / "MaskablePPO" / "seed0" for name, out in outs.items()}
    assert sorted(p.name for p in (runs["ray"] / "logs").iterdir()) == ["from_000000000", "from_000000128"]
    assert "resuming" in (runs["ray"].parent / "seed0.log").read_text()
    # training is deterministic for a seed (one torch thread): the same weights either way
    for name in ("checkpoint/policy.npz", "evaluations.jsonl"):
        assert (runs["ray"] / name).read_bytes() == (runs["local"] / name).read_bytes(), name
    rows = {name: [untimed(r) for r in csv.DictReader((out / "results.csv").open())] for name, out in outs.items()}
    assert rows["ray"] == rows["local"] and rows["ray"][0]["timesteps"] == "256"
    documents = {name: json.loads((out / "results.json").read_text()) for name, out in outs.items()}
    for key in ("trials", "settings"):
        assert untimed(documents["ray"][key]) == untimed(documents["local"][key])
    assert sorted_log(outs["ray"] / "leagues" / "craits") == sorted_log(outs["local"] / "leagues" / "craits")
    again = bm.run_benchmark(bench["ray"], verbose=False, executor=ex.RayExecutor())
    assert again["ran"] == [] and again["leagues"]["craits"]["played"] == 0
