"""The benchmark runner (training.learning.benchmark): a micro benchmark end to end, reruns that skip
finished trials, interrupted trials that resume, config errors that name the key path."""

import csv
import json
from pathlib import Path

import pytest

from training.algorithms import MODULES
from training.learning import benchmark as bm

# Whatever is registered (MaskablePPO at least), but rllib_ppo: it starts a Ray per trial and
# its iterations overshoot a 256-step budget; tests/test_rllib.py plans a benchmark trial of it.
ALGORITHMS = [name for name in MODULES if name != "rllib_ppo"]
# Small values for whichever of these keys an algorithm has (its own defaults for the rest).
TINY = {
    "net_arch": [16],
    "n_steps": 64,
    "batch_size": 32,
    "n_epochs": 1,
    "train_every": 16,
    "buffer_size": 1000,
    "learning_starts": 64,
    "target_update": 10,
    "epsilon_decay_steps": 200,
}
CREATE_SHORT = {"preset": "create", "partnership": True, "episode": "deal", "deals": [3], "illegal_action": "raise"}


def tiny_algorithm(name: str) -> dict:
    fields = bm.ALGORITHMS[name].model_fields
    return {key: value for key, value in TINY.items() if key in fields}


def micro(out, settings=None, algorithms=None, seeds=(0, 1), **extra) -> dict:
    data = {
        "out": str(out),
        "settings": settings or {"create": {"env": "craits_v0", "args": CREATE_SHORT}},
        "algorithms": {name: tiny_algorithm(name) for name in (algorithms or ALGORITHMS)},
        "seeds": list(seeds),
        "budget": {"total_timesteps": 256, "max_seconds": 120},
        "base": {
            "opponents": {"pool": [{"agent": "heuristic", "weight": 1.0}]},
            "vec": {"n_envs": 2},
            "checkpoints": {"every": 128, "eval_every": 128, "eval_games": 1},
        },
        "references": ["heuristic", "random"],
        "eval_games": 1,
        "league_games": 1,
        "processes": 2,
    }
    data.update(extra)
    return data


def mtimes(folder: Path) -> dict:
    return {str(p): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def micro_run(tmp_path_factory):
    """One micro benchmark (1 setting: partnership Craits, short games; every registered
    algorithm; 2 seeds), started with one trial interrupted at step 128 of 256 and one killed
    before its first checkpoint, as a crash would leave them."""
    from training.learning.train import train

    out = tmp_path_factory.mktemp("bench") / "micro"
    bench = bm.load_benchmark(data=micro(out))
    trials = {t.name: t for t in bm.plan_trials(bench, out)}
    interrupted, stale = trials["create/MaskablePPO/seed0"], trials["create/MaskablePPO/seed1"]
    config = interrupted.config
    train(
        config.model_copy(update={"training": config.training.model_copy(update={"total_timesteps": 128})}),
        interrupted.dir,
    )
    stale.dir.mkdir(parents=True)
    (stale.dir / "config.yaml").write_text("half written")
    states = {name: bm.trial_state(t, bench) for name, t in trials.items()}
    result = bm.run_benchmark(bench, verbose=False)
    return out, result, states


def test_micro_benchmark_writes_every_output(micro_run):
    out, result, _ = micro_run
    assert len(result["ran"]) == len(ALGORITHMS) * 2 and not result["skipped"]
    for name in (
        "results.md",
        "results.csv",
        "results.json",
        "curves.csv",
        "benchmark.yaml",
        "curves/create.png",
        "leagues/create/ratings.md",
    ):
        assert (out / name).is_file(), name
    assert (out / "curves" / "create.png").read_bytes().startswith(b"\x89PNG")
    markdown = (out / "results.md").read_text()
    assert "## create" in markdown and "| win share vs heuristic | points vs heuristic |" in markdown
    assert "rating (mu)" in markdown and "learner steps/s" in markdown and "curves/create.png" in markdown
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == len(ALGORITHMS) * 2
    for row in rows:
        assert 0.0 <= float(row["win_share_vs_heuristic"]) <= 1.0
        assert float(row["even_share_vs_heuristic"]) == 0.5  # both seats of its side: partnership
        assert row["rating_mu"] and int(row["timesteps"]) == 256
    document = json.loads((out / "results.json").read_text())
    assert document["benchmark"]["seeds"] == [0, 1] and len(document["trials"]) == len(ALGORITHMS) * 2
    league = document["settings"]["create"]["league"]
    assert {r["agent"] for r in league["rows"]} >= {"heuristic", "random"}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_micro_benchmark_each_algorithm(micro_run, algorithm):
    out, result, _ = micro_run
    assert f"| {algorithm} | 2 |" in result["markdown"]
    mine = [r for r in result["trials"] if r["algorithm"] == algorithm]
    assert sorted(r["seed"] for r in mine) == [0, 1]
    for r in mine:
        trial = out / "trials" / "create" / algorithm / f"seed{r['seed']}"
        assert (trial / "result.json").is_file() and (trial / "checkpoint" / "policy.npz").is_file()
        assert r["algorithm_name"] == algorithm and r["learner_steps_per_s"] > 0
        assert set(r["final"]) == {"heuristic", "random"} and r["final"]["heuristic"]["games"] == 4
        steps = [p["timesteps"] for p in r["curve"]]
        assert steps == [128, 256], steps  # the periodic evaluations: the curve's points
        assert all(p["win_share_vs_heuristic"] is not None for p in r["curve"])
        assert r["curve"][-1]["training_seconds"] is not None  # recorded by the trial's process
    summary = json.loads((out / "results.json").read_text())["settings"]["create"]["summary"][algorithm]
    assert summary["win_share_vs_heuristic"]["n"] == 2 and summary["win_share_vs_heuristic"]["ci95"] is not None


def test_rerun_skips_finished_trials(micro_run):
    out, first, _ = micro_run
    before = mtimes(out / "trials")
    again = bm.run_benchmark(bm.load_benchmark(data=micro(out)), verbose=False)
    assert again["ran"] == [] and len(again["skipped"]) == len(first["ran"])
    assert mtimes(out / "trials") == before  # nothing retrained, re-evaluated or rewritten
    assert again["leagues"]["create"]["played"] == 0
    assert again["markdown"] == first["markdown"]


def test_finished_trials_kept_as_their_files_only_are_skipped(micro_run, tmp_path):
    """A long benchmark is carried on elsewhere from the finished trials' FINISHED_FILES alone
    (what gets committed): they are skipped, play in the league and give the same table."""
    import shutil

    out, first, _ = micro_run
    kept = tmp_path / "micro"
    for result in first["trials"]:
        trial = Path("trials") / result["setting"] / result["algorithm"] / f"seed{result['seed']}"
        for name in bm.FINISHED_FILES:
            (kept / trial / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(out / trial / name, kept / trial / name)
    again = bm.run_benchmark(bm.load_benchmark(data=micro(kept)), verbose=False)
    assert again["ran"] == [] and len(again["skipped"]) == len(first["ran"])
    assert again["leagues"]["create"]["played"] == first["leagues"]["create"]["played"] > 0
    assert again["markdown"] == first["markdown"]
    # the kept files of a trial whose evaluation changed can't be resumed: it trains anew
    one = kept / "trials" / "create" / ALGORITHMS[0] / "seed0"
    bench = bm.load_benchmark(data=micro(kept, eval_games=2))
    trial = next(t for t in bm.plan_trials(bench, kept) if t.dir == one)
    assert bm.trial_state(trial, bench) == "stale"


def test_interrupted_trial_resumes_and_stale_one_restarts(micro_run):
    out, result, states = micro_run
    assert states["create/MaskablePPO/seed0"] == "resume" and states["create/MaskablePPO/seed1"] == "stale"
    assert set(states.values()) == {"resume", "stale", "new"}
    trials = out / "trials" / "create" / "MaskablePPO"
    resumed = json.loads((trials / "seed0" / "result.json").read_text())
    assert resumed["timesteps"] == 256
    # one stretch of training before the interruption, one after: resumed from its checkpoint
    assert sorted(p.name for p in (trials / "seed0" / "logs").iterdir()) == ["from_000000000", "from_000000128"]
    assert [p["timesteps"] for p in resumed["curve"]] == [128, 256]
    assert "resuming" in (trials / "seed0.log").read_text()
    restarted = json.loads((trials / "seed1" / "result.json").read_text())
    assert restarted["timesteps"] == 256
    assert [p.name for p in (trials / "seed1" / "logs").iterdir()] == ["from_000000000"]


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "budget.total_timestep=3",
            "unknown benchmark config key 'budget.total_timestep': allowed keys here are total_timesteps, max_seconds",
        ),
        (
            "base.opponents.pool=[{agent: heuristic, wieght: 1}]",
            "unknown benchmark config key 'base.opponents.pool\\[0\\].wieght'",
        ),
        ("settings.create.arg={}", "unknown benchmark config key 'settings.create.arg'"),
        ("bogus=1", "unknown benchmark config key 'bogus'"),
        ("seeds=[1, 1]", "'seeds' lists 1 more than once"),
        ("eval_games=0", "'eval_games' must be greater than 0"),
        ("base.vec.n_envs=0", "'base.vec.n_envs' must be greater than 0"),
        ("settings={'a/b': {env: craits_v0}}", "'settings'.*not a usable name"),
    ],
)
def test_bad_config_keys_name_the_path(tmp_path, override, message):
    with pytest.raises(bm.BenchmarkError, match=message):
        bm.load_benchmark(data=micro(tmp_path / "b"), overrides=[override])


def test_one_setting_of_a_longer_benchmark(micro_run, tmp_path):
    """--settings: a setting whose trials are done is tabled while another's are not even
    started; nothing of the other is trained, and benchmark.yaml stays the whole config."""
    import shutil

    out, first, _ = micro_run
    shutil.copytree(out, tmp_path / "micro")
    settings = {
        "create": {"env": "craits_v0", "args": CREATE_SHORT},
        "pairs_draft": {"env": "pairs_draft_v0", "args": {}},
    }
    bench = bm.load_benchmark(data=micro(tmp_path / "micro", settings=settings))
    again = bm.run_benchmark(bench, verbose=False, settings=["create"])
    assert again["ran"] == [] and len(again["skipped"]) == len(first["ran"]) and set(again["leagues"]) == {"create"}
    assert again["markdown"] == first["markdown"]
    assert not (tmp_path / "micro" / "trials" / "pairs_draft").exists()
    assert set(bm.yaml.safe_load((tmp_path / "micro" / "benchmark.yaml").read_text())["settings"]) == set(settings)
    with pytest.raises(bm.BenchmarkError, match="settings: 'pairs'; the config has create, pairs_draft"):
        bm.run_benchmark(bench, verbose=False, settings=["create", "pairs"])
    with pytest.raises(SystemExit, match="settings: 'craits'"):
        config = tmp_path / "bench.yaml"
        config.write_text(json.dumps(micro(tmp_path / "micro", settings=settings)))
        bm.main(["--config", str(config), "--settings", "craits"])


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "algorithms.MaskablePPO.lerning_rate=0.1",
            "trial create/MaskablePPO: unknown config key 'algorithms.MaskablePPO.lerning_rate'",
        ),
        (
            "algorithms={PPO: {name: NoSuchAlgorithm}}",
            "trial create/PPO: config key 'algorithms.PPO.name' must be one of",
        ),
        ("settings.create.args.nine=sideways", "'settings.create.args'.*nine"),
        ("references=[heuristic, no_such_bot]", "'references\\[1\\]': 'no_such_bot' can't play setting create"),
    ],
)
def test_bad_trials_and_references_fail_before_anything_runs(tmp_path, override, message):
    bench = bm.load_benchmark(data=micro(tmp_path / "b", algorithms=["MaskablePPO"]), overrides=[override])
    with pytest.raises(bm.BenchmarkError, match=message):
        bm.run_benchmark(bench, verbose=False)
    assert not (tmp_path / "b").exists()


def test_cli_reports_errors_without_traceback(tmp_path, capsys):
    config = tmp_path / "bench.yaml"
    config.write_text(json.dumps(micro(tmp_path / "b", algorithms=["MaskablePPO"], budgt={})))
    with pytest.raises(SystemExit, match="unknown benchmark config key 'budgt'"):
        bm.main(["--config", str(config)])


@pytest.mark.parametrize("path", ["configs/benchmark_small.yaml", "configs/benchmark_full.yaml"])
def test_shipped_benchmark_configs(tmp_path, path):
    bench = bm.load_benchmark(path)
    assert {"craits", "create", "pairs_draft"} <= set(bench.settings)
    assert bench.settings["create"].args.get("partnership") is True
    assert bench.references[0] == "heuristic" and any(r.startswith("ismcts") for r in bench.references)
    for setting in bench.settings:
        for algorithm, section in bench.algorithms.items():
            if section.get("name", algorithm) in MODULES:  # the others may not be registered yet
                config = bm.trial_config(bench, setting, algorithm, bench.seeds[0], tmp_path)
                assert config.training.total_timesteps == bench.budget.total_timesteps


def test_t_interval():
    assert bm.t_interval([0.5])["ci95"] is None
    stat = bm.t_interval([0.0, 1.0])
    assert stat["mean"] == 0.5 and stat["ci95"] == pytest.approx([0.5 - 12.706 * 0.5, 0.5 + 12.706 * 0.5])
    assert bm.t_interval([])["mean"] is None


def test_docs_show_the_small_config_as_shipped():
    import re

    import yaml

    text = Path("docs/benchmark.md").read_text()
    block = re.search(r"The small config in full.*?```yaml\n(.*?)```", text, re.S).group(1)
    shown = bm.load_benchmark(data=yaml.safe_load(block))
    assert shown.model_dump() == bm.load_benchmark("configs/benchmark_small.yaml").model_dump()


def test_docs_show_the_published_full_benchmark_as_written():
    """docs/benchmark.md copies the full benchmark's tables: every table row and reference
    line of each published setting in benchmarks/results/full/results.md is there verbatim."""
    results = Path("benchmarks/results/full/results.md").read_text()
    text = Path("docs/benchmark.md").read_text()
    lines = [line for line in results.splitlines() if line.startswith(("| ", "References in the league"))]
    assert any(line.startswith("| MaskablePPO |") for line in lines)
    for line in lines:
        shown = line.split(" Full ratings")[0]  # the docs link the league's ratings differently
        assert shown in text, f"docs/benchmark.md lacks: {shown}"
