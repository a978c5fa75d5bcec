"""training.matches.evaluate: duplicate format, statistics, processes, CLI and errors."""

import json
import re
from collections import defaultdict

import numpy as np
import pytest

from training.common.games import EnvHandle
from training.matches.evaluate import evaluate, format_table, main, rotated

SHORT = {"deals": [3, 2]}  # a two-deal Craits game keeps these tests fast


GAMES = [("craits_v0", SHORT), ("pairs_draft_v0", {})]


def recording(env, record):
    """``env`` (an EnvHandle) whose raw env writes (seed, table) at each seeded reset: the
    table shows every hand."""
    raw = env.raw
    reset = raw.reset

    def seeded_reset(seed=None, options=None):
        reset(seed, options)
        if seed is not None:
            record.append((seed, raw.game.render()))

    raw.reset = seeded_reset
    return env


@pytest.mark.parametrize("env_id,env_args", GAMES)
def test_duplicate_sets_replay_the_same_deal_in_every_rotation(env_id, env_args):
    record = []
    result = evaluate(recording(EnvHandle(env_id, env_args), record), ["random"], games=3, seed=10)
    tables = defaultdict(list)
    for seed, table in record:
        tables[seed].append(table)
    assert sorted(tables) == [10, 11, 12]
    for seed, seen in tables.items():
        assert len(seen) == 4 and len(set(seen)) == 1, f"seed {seed}: rotations saw different deals"
    assert len({seen[0] for seen in tables.values()}) == 3  # and different sets different deals
    assert result["games"] == 12 and result["duplicate_sets"] == 3


def test_rotation_moves_every_agent_one_seat_on():
    layout = ["a", "b", "c", "d"]
    assert [rotated(layout, r) for r in range(4)] == [
        ["a", "b", "c", "d"],
        ["d", "a", "b", "c"],
        ["c", "d", "a", "b"],
        ["b", "c", "d", "a"],
    ]


def test_heuristic_beats_random_in_duplicate_craits():
    result = evaluate(EnvHandle("craits_v0", {}), ["heuristic", "random", "random", "random"], games=10, seed=3)
    heuristic, random_ = result["agents"]["heuristic"], result["agents"]["random"]
    assert heuristic["win_share_ci95"][0] > heuristic["even_share"] == 0.25
    assert heuristic["mean_score"] < random_["mean_score"]  # Craits counts penalty points
    assert heuristic["win_share"] + random_["win_share"] == pytest.approx(1.0)


def test_result_structure_and_intervals():
    result = evaluate(EnvHandle("craits_v0", SHORT), ["heuristic", "random"], games=6, seed=1)
    json.dumps(result)  # JSON-ready
    assert result["layout"] == ["heuristic", "random", "heuristic", "random"]
    assert result["games"] == 24 and result["duplicate_sets"] == 6
    assert result["lower_score_wins"] is True and result["truncated_games"] == 0
    assert list(result["agents"]) == ["heuristic", "random"]
    for stats in result["agents"].values():
        assert stats["seats"] == 2 and stats["even_share"] == 0.5
        lo, hi = stats["win_share_ci95"]
        assert 0.0 <= lo <= stats["win_share"] <= hi <= 1.0
        lo, hi = stats["mean_score_ci95"]
        assert lo <= stats["mean_score"] <= hi
        assert stats["mean_score_per_deal"] == pytest.approx(stats["mean_score"] / 2)
    table = format_table(result)
    assert "heuristic" in table and "even share" in table and "24 games" in table


def test_one_duplicate_set_has_no_interval():
    result = evaluate(EnvHandle("craits_v0", SHORT), ["heuristic", "random"], games=1)
    assert result["agents"]["heuristic"]["win_share_ci95"] is None and "n/a" in format_table(result)


def test_processes_do_not_change_the_result():
    args = (EnvHandle("craits_v0", SHORT), ["heuristic", "random", "random", "random"], 6)
    assert evaluate(*args, seed=5, processes=2) == evaluate(*args, seed=5, processes=1)


def test_episode_deal_plays_whole_games():
    by_game = evaluate(EnvHandle("craits_v0", {**SHORT, "episode": "game"}), ["heuristic", "random"], 3)
    by_deal = evaluate(EnvHandle("craits_v0", {**SHORT, "episode": "deal"}), ["heuristic", "random"], 3)
    assert by_deal["agents"] == by_game["agents"]


def test_checkpoint_agent(tmp_path):
    from envs import craits_v0

    raw = craits_v0.raw_env()
    space = raw.observation_space("player_0")
    obs_size, actions = space["observation"].shape[0], space["action_mask"].shape[0]
    rng = np.random.default_rng(0)
    folder = tmp_path / "tiny"
    folder.mkdir()
    np.savez(
        folder / "policy.npz",
        layer_0_weight=rng.normal(size=(8, obs_size)),
        layer_0_bias=np.zeros(8),
        action_weight=rng.normal(size=(actions, 8)),
        action_bias=np.zeros(actions),
    )
    (folder / "meta.json").write_text(
        json.dumps(
            {
                "format_version": 1,
                "env_id": "craits_v0",
                "env_args": {},
                "rules": raw.rule_args(),
                "observation_size": obs_size,
                "action_size": actions,
                "activation": "tanh",
                "hidden_sizes": [8],
            }
        )
    )
    result = evaluate(EnvHandle("craits_v0", SHORT), [str(folder), "random"], games=2, deterministic=False)
    assert result["agents"][str(folder)]["seats"] == 2


def test_cli_writes_json(tmp_path, capsys):
    path = tmp_path / "result.json"
    main(
        [
            "--env",
            "craits_v0",
            "--agents",
            "heuristic,random",
            "--games",
            "2",
            "--seed",
            "4",
            "--arg",
            "deals=[3, 2]",
            "--processes",
            "1",
            "--json",
            str(path),
        ]
    )
    written = json.loads(path.read_text())
    assert written["env_args"] == SHORT and written["games"] == 8 and written["seed"] == 4
    assert set(written["agents"]) == {"heuristic", "random"}
    assert "win share" in capsys.readouterr().out


@pytest.mark.parametrize(
    "agents,message",
    [
        (["heuristic", "nonsense"], "unknown agent 'nonsense'"),
        (["random"] * 5, "5 agents for 4 seats"),
        ([], "at least one agent"),
    ],
)
def test_bad_agents_raise_clear_errors(agents, message):
    with pytest.raises(ValueError, match=message):
        evaluate(EnvHandle("craits_v0", SHORT), agents, games=1)


def test_bad_counts_raise():
    with pytest.raises(ValueError, match="games=0"):
        evaluate(EnvHandle("craits_v0", SHORT), ["random"], games=0)


def test_cli_reports_bad_agents_without_traceback(capsys):
    with pytest.raises(SystemExit):
        main(["--agents", "heuristic,nonsense", "--games", "1", "--processes", "1"])
    assert "unknown agent 'nonsense'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agents", "heuristc"], "unknown agent 'heuristc'"),
        (["--env", "pairs_draft_v0", "--agents", "checkpoints/craits"], "trained for craits_v0, not pairs_draft_v0"),
        (["--arg", "colour=red"], "unknown craits_v0 argument 'colour'"),
        (["--env", "pairs_draft_v0", "--arg", "num_players=3"], "unknown pairs_draft_v0 argument 'num_players'"),
        (["--arg", "deals=[1"], "not a valid YAML value"),
        (["--agents", "random,random,random,random,random"], "5 agents for 4 seats"),
    ],
)
def test_play_and_evaluate_clis_name_bad_input(argv, message, capsys):
    from training.frontends import play as play_module

    for cli in (play_module.main, main):
        with pytest.raises(SystemExit):
            cli(argv + (["--games", "1", "--processes", "1"] if cli is main else []))
        assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "env_id,env_args,unit,better",
    [
        ("craits_v0", SHORT, "points per deal (a game is 2 deals)", "lower is better"),
        pytest.param("pairs_draft_v0", {}, "points per game", "higher is better"),
    ],
)
def test_table_says_what_the_score_is_how_many_games_and_who_sits_where(env_id, env_args, unit, better):
    result = evaluate(EnvHandle(env_id, env_args), ["heuristic", "random"], games=2, seed=7)
    table = format_table(result)
    assert "8 games: 2 duplicate sets (seeds 7-8) x 4 rotations" in table
    assert "seats: 0 heuristic, 1 random, 2 heuristic, 3 random (in a set's first game" in table
    assert f"score: final {unit}, mean over the agent's seats; {better}" in table
    heuristic_row = next(line.split() for line in table.splitlines() if line.startswith("heuristic "))
    per = 2 if env_id == "craits_v0" else 1
    assert heuristic_row[2] == f"{result['agents']['heuristic']['mean_score'] / per:.2f}"  # the score the header names


def test_play_header_says_who_sits_where_and_help_names_the_command(capsys):
    from training.frontends import play as play_module

    play_module.main(["--agents", "random,heuristic", "--seed", "5", "--arg", "deals=[3]"])
    out = capsys.readouterr().out
    assert out.startswith(
        "craits_v0 (deals=[3]), seed 5\nseat 0: random\nseat 1: heuristic\nseat 2: random\nseat 3: heuristic\n"
    )
    assert re.search(r"final scores \(lower is better\):\n  seat 0 \(random\): \d+", out)
    for cli, name in ((play_module.main, "training.play"), (main, "training.evaluate")):
        with pytest.raises(SystemExit):
            cli(["--help"])
        assert capsys.readouterr().out.startswith(f"usage: python -m {name} ")


def test_agent_lists_keep_the_options_of_a_spec_together():
    from training.agents import split_agents

    assert split_agents("ismcts:simulations=20,uct_c=1.4,heuristic,random") == [
        "ismcts:simulations=20,uct_c=1.4",
        "heuristic",
        "random",
    ]
    assert split_agents("checkpoints/craits,heuristic") == ["checkpoints/craits", "heuristic"]
    assert split_agents("onnx:bots/a,ismcts,ismcts:simulations=5") == ["onnx:bots/a", "ismcts", "ismcts:simulations=5"]


def test_a_search_bot_is_an_agent_in_evaluate_and_play(capsys):
    result = main(
        [
            "--agents",
            "ismcts:simulations=10,uct_c=1.4,seed=3,heuristic,heuristic,heuristic",
            "--games",
            "1",
            "--arg",
            "deals=[2]",
            "--processes",
            "1",
        ]
    )
    assert result["layout"][0] == "ismcts:simulations=10,uct_c=1.4,seed=3"
    from training.frontends.play import main as play_main

    play_main(["--agents", "ismcts:simulations=10,random", "--arg", "deals=[2]"])
    assert "seat 0: ismcts:simulations=10" in capsys.readouterr().out
