"""The benchmark scripts still run (with tiny budgets; their figures are not checked here:
speed is measured by running them, never in tests)."""

import importlib.util
import json
from pathlib import Path

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_speed_runs_and_writes_json(tmp_path, capsys):
    out = tmp_path / "speed.json"
    _load("env_speed").main(["--seconds", "0.05", "--warmup", "0.01", "--json", str(out)])
    names = {row["name"] for row in json.loads(out.read_text())["results"]}
    assert {"craits engine", "craits env()", "pairs_draft engine", "pairs_draft env()"} <= names
    assert "agent steps/s" in capsys.readouterr().out


def test_training_profile_runs(capsys):
    _load("training_profile").main(
        ["--steps", "256", "--set", "algorithm.n_steps=64", "--set", "algorithm.batch_size=64", "--set", "vec.n_envs=2"]
    )
    assert "opponent act" in capsys.readouterr().out


def test_training_speed_runs(capsys):
    rows = _load("training_speed").main(
        ["--games", "pairs_draft_v0", "--opponents", "policy", "--n", "4", "--rollout", "64", "--steps", "64"]
    )
    assert [(row[0], row[3]) for row in rows] == [("pairs_draft_v0", "batched"), ("pairs_draft_v0", "dummy")]
    assert all(row[4] > 0 and row[5] > 0 for row in rows)  # steps/s, PPO update seconds per step
    assert "learner steps/s" in capsys.readouterr().out
