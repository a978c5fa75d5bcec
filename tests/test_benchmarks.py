"""The benchmark scripts still run (with tiny budgets; their figures are not checked here:
speed is measured by running them, never in tests)."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from training.common.games import EnvHandle
from training.matches.evaluate import evaluate
from training.shipped import bot_folder

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_shipped_partnership_network_is_the_one_its_strength_rows_measured():
    """docs/strength.md's rows of create_dqn's strongest search name the full benchmark's
    folder (their logs do): the shipped bot must hold that network, byte for byte."""
    strength = _load("strength")
    measured = BENCHMARKS.parent / strength.CREATE_DQN / "policy.npz"
    assert (bot_folder("create_dqn") / "policy.npz").read_bytes() == measured.read_bytes()
    assert strength.CREATE_VALUE_LEAF.startswith(f"ismcts:prior={strength.CREATE_DQN},leaf=value,")
    # its spec is built from STRONGEST_SEARCH: changing that entry must not orphan the rows' logs
    rows = [m for m in strength.matches() if strength.CREATE_VALUE_LEAF in (m.agent, m.opponent)]
    assert rows and all((strength.LOGS / m.name / strength.LOG_FILE).is_file() for m in rows)


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


def test_strength_plays_into_its_logs_resumes_and_writes_its_table(tmp_path, monkeypatch, capsys):
    strength = _load("strength")
    setting = strength.Setting("pairs_draft", "pairs_draft_v0", {}, "pairs_draft")
    monkeypatch.setattr(strength, "matches", lambda: [strength.Match(setting, "random", "heuristic", 3)])
    monkeypatch.setattr(strength, "LOGS", tmp_path / "logs")
    doc = tmp_path / "strength.md"
    doc.write_text(f"before\n{strength.BEGIN}\nold\n{strength.END}\nafter\n")
    monkeypatch.setattr(strength, "DOC", doc)
    strength.main(["--minutes", "5", "--write"])
    text = doc.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text
    row = next(line for line in text.splitlines() if line.startswith("| pairs_draft"))
    assert "| 3 of 3 |" in row and "`random`" in row
    log = tmp_path / "logs" / "pairs_draft-random-vs-heuristic" / "sets.jsonl"
    lines = log.read_text().splitlines()
    assert len(lines) == 1 + 3 * 4  # a header, then one line per game
    log.write_text("\n".join(lines[:-2]) + "\n")  # stopped two games before the end
    strength.main(["--minutes", "5", "--write"])
    assert doc.read_text() == text  # the same games again, the same table
    assert len(log.read_text().splitlines()) == 1 + 3 * 4
    strength.main([])  # --minutes 0: only the report
    assert "| 3 of 3 |" in capsys.readouterr().out


def test_a_confirmation_row_plays_its_own_seeds_into_its_own_log(tmp_path, monkeypatch):
    """The same agents on CONFIRM_SEED: a separate log and table row, never the first row's games."""
    strength = _load("strength")
    table = strength.matches()  # the real rows: none reaches the confirmation seeds
    assert strength.CONFIRM_SEED > max(m.seed + m.sets for m in table if not m.confirm)
    setting = strength.Setting("pairs_draft", "pairs_draft_v0", {}, "pairs_draft")
    first = strength.Match(setting, "random", "heuristic", 2)
    confirm = strength.Match(setting, "random", "heuristic", 2, confirm=True)
    monkeypatch.setattr(strength, "matches", lambda: [first, confirm])
    monkeypatch.setattr(strength, "LOGS", tmp_path)
    strength.main(["--minutes", "5"])
    assert confirm.name == first.name + "-confirm"
    headers = [json.loads((tmp_path / m.name / "sets.jsonl").read_text().splitlines()[0]) for m in (first, confirm)]
    assert [h["seed"] for h in headers] == [strength.SEED, strength.CONFIRM_SEED]
    rows = strength.report([first, confirm]).splitlines()[2:]
    assert "on seeds from" not in rows[0] and f"on seeds from {strength.CONFIRM_SEED:,}" in rows[1]
    assert all("| 2 of 2 |" in row for row in rows)


def test_strength_rows_give_student_t_intervals_over_few_sets(tmp_path, monkeypatch):
    """Over 3 sets the normal interval is too narrow: the row's Student's t interval (2 degrees
    of freedom) is wider by their quantiles' ratio, both clipped to [0, 1]."""
    strength = _load("strength")
    setting = strength.Setting("pairs_draft", "pairs_draft_v0", {}, "pairs_draft")
    monkeypatch.setattr(strength, "matches", lambda: [strength.Match(setting, "pairs_draft", "heuristic", 3)])
    monkeypatch.setattr(strength, "LOGS", tmp_path)
    strength.main(["--minutes", "5"])
    row = strength.report(strength.matches()).splitlines()[-1]
    share, normal, student = (cell.strip() for cell in row.split("|")[5:8])
    s = float(share)
    (low, high), (t_low, t_high) = (map(float, cell.strip("[]").split(", ")) for cell in (normal, student))
    assert t_low < low < s < high < t_high
    halves = [(s - low, s - t_low)] if t_low > 0 else []
    halves += [(high - s, t_high - s)] if t_high < 1 else []  # the sides neither interval clips
    assert halves and all(
        wide / narrow == pytest.approx(strength.student_t95(2) / 1.96, abs=0.02) for narrow, wide in halves
    )


def test_student_t_quantile_matches_the_published_tables():
    strength = _load("strength")
    # two-sided 95% quantiles (Abramowitz and Stegun, table 26.10), odd and even degrees of freedom
    for df, quantile in [(1, 12.7062), (2, 4.3027), (5, 2.5706), (12, 2.1788), (19, 2.0930), (120, 1.9799)]:
        assert strength.student_t95(df) == pytest.approx(quantile, abs=1e-4)
    assert strength._within(strength.student_t95(7), 7) == pytest.approx(0.95, abs=1e-12)


def test_paired_compares_two_agents_set_by_set(tmp_path, capsys):
    """``benchmarks/paired.py``: the difference of two logs' agents on the sets both finished,
    each set's share and points as ``training.evaluate`` counts them (the lead: the agent's
    points minus its opponents', higher wins in Pairs Draft); logs of different matches refused."""
    paired = _load("paired")
    env = EnvHandle("pairs_draft_v0")
    first, second = ["heuristic", "random", "random", "random"], ["pairs_draft", "random", "random", "random"]
    evaluate(env, first, 4, seed=70, log_dir=tmp_path / "a")
    evaluate(env, second, 3, seed=70, log_dir=tmp_path / "b")
    result = paired.main([str(tmp_path / "a"), str(tmp_path / "b")])
    assert result["sets"] == 3
    for key, layout, folder, leads in zip(("first", "second"), (first, second), "ab", result["leads"]):
        agent, shares = result[key]
        assert agent == layout[0] and len(shares) == 3
        again = evaluate(env, layout, 3, seed=70, log_dir=tmp_path / folder)  # read back, the first three sets
        assert np.mean(shares) == pytest.approx(again["agents"][agent]["win_share"])
        points = again["agents"]
        assert np.mean(leads) == pytest.approx(points[agent]["mean_score"] - points["random"]["mean_score"])
    np.testing.assert_allclose(result["difference"], result["first"][1] - result["second"][1])
    np.testing.assert_allclose(result["lead_difference"], result["leads"][0] - result["leads"][1])
    out = capsys.readouterr().out
    assert "3 sets finished in both logs" in out and "difference, heuristic − pairs_draft" in out
    assert "difference in lead, heuristic − pairs_draft" in out
    evaluate(env, ["random", "heuristic", "heuristic", "heuristic"], 2, seed=71, log_dir=tmp_path / "c")
    with pytest.raises(SystemExit, match="differ in seed"):
        paired.main([str(tmp_path / "a"), str(tmp_path / "c")])


def test_paired_compares_partnerships(tmp_path):
    """A partnership's agent holds two seats: two logs pair when the seats it doesn't hold
    agree, and logs with other opponents are refused."""
    paired = _load("paired")
    env = EnvHandle("craits_v0", {"preset": "create", "partnership": True, "deals": [2]})
    layouts = {
        "a": ["heuristic", "random", "heuristic", "random"],
        "b": ["create", "random", "create", "random"],
        "c": ["random", "heuristic", "random", "heuristic"],
    }
    for folder, layout in layouts.items():
        evaluate(env, layout, 3, seed=72, log_dir=tmp_path / folder)
    result = paired.main([str(tmp_path / "a"), str(tmp_path / "b")])
    assert result["sets"] == 3 and result["first"][0] == "heuristic" and result["second"][0] == "create"
    again = evaluate(env, layouts["a"], 3, seed=72, log_dir=tmp_path / "a")["agents"]
    assert np.mean(result["first"][1]) == pytest.approx(again["heuristic"]["win_share"])
    # Craits' points hurt: the lead is the opponents' points minus the agent's
    lead = again["random"]["mean_score"] - again["heuristic"]["mean_score"]
    assert np.mean(result["leads"][0]) == pytest.approx(lead) and lead > 0
    with pytest.raises(SystemExit, match="differ in the opponents"):
        paired.main([str(tmp_path / "a"), str(tmp_path / "c")])


def test_phases_splits_the_draft_from_the_rounds(tmp_path):
    """``benchmarks/phases.py``: one agent picks and discards, the other plays the rounds."""
    phases = _load("phases")
    env = EnvHandle("pairs_draft_v0")
    seen = {"draft": [], "play": []}

    aec = env.raw

    class Recorder:
        def __init__(self, part):
            self.part, self.name = part, part

        def reset(self):
            pass

        def act(self, observation, action_mask):
            seen[self.part].append(aec.game.phase)
            return int(np.flatnonzero(action_mask)[0])

    halves = phases.Halves("both", Recorder("draft"), Recorder("play"))
    aec.reset(seed=3)
    for name in aec.agent_iter():
        observation, _, termination, truncation, _ = aec.last()
        if termination or truncation:
            aec.step(None)
        elif name == aec.agents[0]:
            aec.step(phases._checked(halves, 0, observation, aec.game))
        else:
            aec.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert seen["draft"] == ["draft"] * 11 + ["discard"] and seen["play"] == ["play"] * 10
    # the same rule in both halves is the heuristic itself: every seat alike, the even share
    result = phases.main(["--draft", "heuristic", "--play", "heuristic", "--sets", "2", "--log", str(tmp_path / "log")])
    assert result["agents"]["heuristic + heuristic"]["win_share"] == 0.25
    assert phases.match.make_agent is phases.make_agent  # the match's factory is given back


def test_the_search_cost_benchmark_times_the_guided_search(capsys):
    """``search_cost.py --guided --leaf value`` runs (tiny budgets) and names the leaves it
    timed (not in test_search.py: it loads a checkpoint, which the envs' lowest-versions run
    can't)."""
    search_cost = _load("search_cost")
    search_cost.main(["--simulations", "4", "--moves", "1", "--guided", "--leaf", "value", "--rollouts", "heuristic"])
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert {row[0] for row in rows} == {"craits", "pairs_draft"} and all(row[1] == "value" for row in rows)
    with pytest.raises(SystemExit):
        search_cost.main(["--leaf", "value"])  # value leaves need the network: --guided


def test_the_search_cost_benchmark_times_the_search_guided_by_another_bot(monkeypatch, capsys):
    """``--prior`` names the guiding bot (one game's), in place of the game's shipped bot."""
    search_cost = _load("search_cost")
    specs = []
    real = search_cost.search_bot
    monkeypatch.setattr(
        search_cost, "search_bot", lambda game, spec, seed: specs.append(spec) or real(game, spec, seed)
    )
    argv = ["--games", "craits", "--simulations", "4", "--moves", "1", "--prior", "craits_ensemble"]
    search_cost.main(argv + ["--leaf", "value", "--rollouts", "heuristic"])
    assert specs == ["ismcts:simulations=4,rollout=heuristic,prior=craits_ensemble,leaf=value"]
    assert capsys.readouterr().out.splitlines()[1].split()[:2] == ["craits", "value"]
    with pytest.raises(SystemExit):
        search_cost.main(["--prior", "craits_ensemble"])  # both games: one bot can't guide both


def test_the_search_cost_benchmark_times_the_partnership_search_with_more_options(capsys):
    """``--games create`` times a search playing partnership Craits (the create preset, whose
    network would refuse the default rules); ``--options`` adds to its spec."""
    search_cost = _load("search_cost")
    argv = ["--games", "create", "--simulations", "4", "--moves", "1", "--prior", "create_dqn", "--leaf", "value"]
    search_cost.main(argv + ["--rollouts", "heuristic", "--options", "reward_transform=symlog,prior_temperature=1"])
    assert capsys.readouterr().out.splitlines()[1].split()[:4] == ["create", "value", "heuristic", "4"]
    bot = search_cost.search_bot("create", "ismcts:simulations=4,prior=create_dqn,reward_transform=symlog", 0)
    assert bot.symlog and bot.network is not None
    with pytest.raises(SystemExit):
        search_cost.main(["--games", "bridge"])


def test_deference_plays_the_rule_only_within_the_margin():
    """``benchmarks/deference.py``: the network's move, or the heuristic's when the network
    values it within the margin of its best."""
    deference = _load("deference")

    class Network:
        def logits(self, observation):
            return np.array([0.0, 0.5, 0.47, 0.3])

        def reset(self):
            pass

    class Rule:
        def __init__(self, move):
            self.move = move

        def act(self, observation, action_mask):
            return self.move

        def reset(self):
            pass

    mask = np.array([1, 1, 1, 1], np.int8)
    counts = {"decisions": 0, "differ": 0, "deferred": 0}
    for margin, rule, move in [(0.0, 2, 1), (0.02, 2, 1), (0.05, 2, 2), (0.05, 3, 1), (1.0, 1, 1)]:
        agent = deference.Deferring("d", Network(), Rule(rule), margin, counts)
        assert agent.act(np.zeros(4), mask) == move, (margin, rule)
    assert counts == {"decisions": 5, "differ": 4, "deferred": 1}
    masked = np.array([1, 0, 0, 1], np.int8)  # the network's best among the legal moves only
    assert deference.Deferring("d", Network(), Rule(0), 0.0, counts).act(np.zeros(4), masked) == 3
    one = np.array([0, 0, 1, 0], np.int8)  # a forced move is no decision
    assert deference.Deferring("d", Network(), Rule(2), 0.0, counts).act(np.zeros(4), one) == 2
    assert counts["decisions"] == 6


def test_deference_at_margin_zero_is_the_network(tmp_path, capsys):
    deference = _load("deference")
    result = deference.main(["--env", "craits_v0", "--network", "craits_ensemble", "--margin", "0", "--sets", "2"])
    assert deference.match.make_agent is deference.make_agent  # the match's factory is given back
    env = EnvHandle("craits_v0")
    plain = evaluate(env, ["craits_ensemble"] + ["heuristic"] * 3, 2, seed=800000)
    assert result["agents"]["craits_ensemble defers 0"]["win_share"] == plain["agents"]["craits_ensemble"]["win_share"]
    assert (
        result["agents"]["craits_ensemble defers 0"]["mean_score"] == plain["agents"]["craits_ensemble"]["mean_score"]
    )
    for flag, value, message in [
        ("--network", "craits_ppo", "policy logits"),
        ("--network", "pairs_draft", "does not fit this game"),
        ("--network", str(tmp_path / "none"), "no such checkpoint"),
        ("--margin", "-1", "must be a number >= 0"),
    ]:
        argv = ["--env", "craits_v0", "--network", "craits_ensemble", "--margin", "0.01"]
        argv[argv.index(flag) + 1] = value
        with pytest.raises(SystemExit):
            deference.main(argv)
        assert message in capsys.readouterr().err
