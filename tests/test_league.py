"""training.matches.league: schedule, ratings (OpenSkill, Bradley–Terry Elo), the league folder (resume,
added agents, refusals, lock), processes, outputs and the CLI. Short Craits games keep it fast."""

import csv
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import training.matches.league
from training.common.files import FolderInUse, hold_folder
from training.matches.league import (
    LeagueError,
    bradley_terry,
    distinct_rotations,
    elo_from_wins,
    head_to_head,
    main,
    openskill_ratings,
    pair_layouts,
    rate,
    run_league,
    schedule,
    side_ranks,
)

CHECKPOINT = str(Path(__file__).parent.parent / "checkpoints" / "craits")
SHORT = {"deals": [3]}
LOG_FIELDS = {
    "match",
    "game",
    "set",
    "rotation",
    "match_games",
    "agents",
    "seats",
    "seed",
    "env",
    "env_args",
    "rules",
    "sides",
    "scores",
    "winners",
}


def league(out, agents=("heuristic",), env_args=SHORT, games=2, **kw):
    return run_league(
        out, list(agents), "craits_v0" if env_args is not None else None, env_args, games, verbose=False, **kw
    )


def log_lines(out):
    return [json.loads(line) for line in (Path(out) / "matches.jsonl").read_text().splitlines()]


def outputs(out):
    return {name: (Path(out) / name).read_bytes() for name in ("ratings.md", "ratings.csv", "win_share.csv")}


def folder(out):
    return {p.name: p.read_bytes() for p in Path(out).iterdir()}


# ---------------------------------------------------------------- schedule
def test_pairs_alternate_and_odd_tables_are_mirrored():
    assert pair_layouts("a", "b", 2) == [("a", "b")]
    assert pair_layouts("a", "b", 4) == [("a", "b", "a", "b")]
    assert pair_layouts("a", "b", 3) == [("a", "b", "a"), ("b", "a", "b")]
    assert distinct_rotations(("a", "b", "a", "b")) == (0, 1)  # A B A B, then B A B A
    assert distinct_rotations(("a", "b")) == (0, 1)
    assert distinct_rotations(("a", "b", "a")) == (0, 1, 2)
    assert distinct_rotations(("a", "b", "a", "b", "a")) == (0, 1, 2, 3, 4)
    # every agent plays every seat's cards equally often over a 5-seat pairing's two tables
    for seats in (2, 3, 4, 5):
        held = {"a": [0] * seats, "b": [0] * seats}
        for layout in pair_layouts("a", "b", seats):
            for r in distinct_rotations(layout):
                for seat, spec in enumerate(layout[-r:] + layout[:-r] if r else layout):
                    held[spec][seat] += 1
        assert held["a"] == held["b"] and len(set(held["a"])) == 1, seats


def test_match_ids_are_deterministic_and_an_added_agent_only_adds_matches():
    before = schedule(["random", "heuristic"], 4, 3, seed=5)
    after = schedule(["heuristic", "random", "x"], 4, 3, seed=5)
    assert [m.id for m in before] == [m.id for m in schedule(["heuristic", "random"], 4, 3, seed=5)]
    assert {m.id for m in before} < {m.id for m in after}
    assert all("x" in m.agents for m in after if m.id not in {b.id for b in before})
    assert len({m.id for m in after}) == len(after) == 3 * 3
    assert {m.seed for m in after} == {5, 6, 7}


# ---------------------------------------------------------------- ratings
def test_bradley_terry_elo_matches_hand_computed_cases():
    # Wins exactly proportional to strengths 4 : 2 : 1 make those strengths the maximum-likelihood fit.
    wins = np.array([[0, 20, 40], [10, 0, 20], [10, 10, 0]])
    elo = elo_from_wins(wins, ref_index=2, smoothing=0.0)
    assert elo == pytest.approx([400 * math.log10(4), 400 * math.log10(2), 0.0], abs=1e-6)
    # Two agents, 3 wins to 1 plus OpenSpiel's 0.1 pseudo-win each way: 400 log10(3.1 / 1.1).
    elo = elo_from_wins(np.array([[0, 3], [1, 0]]), ref_index=1)
    assert elo == pytest.approx([400 * math.log10(3.1 / 1.1), 0.0], abs=1e-6)
    # a batch (bootstrap resamples) fits each matrix on its own
    batch = bradley_terry(np.stack([wins, wins.T]), smoothing=0.0)
    assert batch[0] == pytest.approx(-batch[1], abs=1e-9)
    assert batch[0] == pytest.approx(np.log([4, 2, 1]) - np.log([4, 2, 1]).mean(), abs=1e-9)


def test_head_to_head_and_ranks_of_one_game():
    seats = ["a", "b", "a", "b"]
    assert head_to_head(seats, [2]) == {("a", "b"): 1.0, ("b", "a"): 0.0}
    assert head_to_head(seats, [0, 1]) == {("a", "b"): 0.5, ("b", "a"): 0.5}
    assert head_to_head(seats, None) == {("a", "b"): 0.5, ("b", "a"): 0.5}  # truncated: a draw
    assert side_ranks([[0], [1], [2], [3]], [5, 0, 9, 0], [1, 3], lower_score_wins=True) == [1, 0, 2, 0]
    assert side_ranks([[0, 2], [1, 3]], [5, 0, 9, 0], [1, 3], lower_score_wins=True) == [1, 0]
    assert side_ranks([[0], [1]], [5, 9], [0], lower_score_wins=False) == [0, 1]  # an instant win beats points


def test_openskill_partnerships_are_teams_and_the_reference_is_pinned():
    def game(i, seats, winners):
        return {
            "set": i,
            "match": "m",
            "rotation": 0,
            "seats": seats,
            "sides": [[0, 2], [1, 3]],
            "scores": [0, 1, 0, 1] if winners == [0, 2] else [1, 0, 1, 0],
            "winners": winners,
        }

    games = [game(i, ["a", "random", "a", "random"], [0, 2]) for i in range(5)]
    ratings = openskill_ratings(games, ["random", "a"], lower_score_wins=True, reference="random")
    assert ratings["random"][0] == 25.0 and ratings["a"][0] > 27
    result = rate(games, ["random", "a"], True, "random", bootstrap=0)
    assert [row["agent"] for row in result["rows"]] == ["a", "random"]
    assert result["rows"][1]["elo"] == 0.0 and result["rows"][0]["elo"] > 100


def test_heuristic_is_rated_above_random(tmp_path):
    result = league(tmp_path / "l", env_args={"deals": [8]}, games=8)
    rows = {row["agent"]: row for row in result["rows"]}
    assert [row["agent"] for row in result["rows"]] == ["heuristic", "random"]
    assert rows["heuristic"]["mu"] > rows["random"]["mu"] == 25.0
    assert rows["heuristic"]["elo"] > rows["random"]["elo"] == 0.0
    assert rows["heuristic"]["win_share"] > 0.5
    assert rows["heuristic"]["elo_ci95"][0] <= rows["heuristic"]["elo"] <= rows["heuristic"]["elo_ci95"][1]


# ---------------------------------------------------------------- the league folder
def test_rerun_plays_nothing_and_a_cut_log_resumes_without_double_counting(tmp_path):
    out = tmp_path / "l"
    first = league(out, games=3)
    assert first["played"] == first["matches"] == 3
    done = outputs(out)
    log = (out / "matches.jsonl").read_bytes()
    assert league(out, games=3)["played"] == 0
    assert outputs(out) == done and (out / "matches.jsonl").read_bytes() == log
    # killed mid-write: the last line cut in the middle; the match it belonged to is played again
    (out / "matches.jsonl").write_bytes(log[:-40])
    assert league(out, games=3)["played"] == 1
    assert (out / "matches.jsonl").read_bytes() == log and outputs(out) == done
    # a match with only some of its games in the log is unfinished: dropped and played again
    lines = log.splitlines(keepends=True)
    (out / "matches.jsonl").write_bytes(b"".join(lines[:-1]))
    assert league(out, games=3)["played"] == 1
    assert outputs(out) == done
    # a repeated game is counted once
    (out / "matches.jsonl").write_bytes(log + lines[0])
    assert league(out, games=3)["played"] == 0
    assert outputs(out) == done and len(log_lines(out)) == len(lines)
    # resuming needs neither --env nor --arg nor --agents
    assert run_league(out, verbose=False)["played"] == 0 and outputs(out) == done


def test_adding_an_agent_plays_only_its_matches(tmp_path):
    out = tmp_path / "l"
    league(out, games=2)
    before = (out / "matches.jsonl").read_bytes()
    result = run_league(out, [CHECKPOINT], verbose=False)
    assert result["played"] == 2 * 2  # (checkpoint, heuristic) and (checkpoint, random), two sets each
    after = (out / "matches.jsonl").read_bytes()
    assert after.startswith(before)
    new = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert new and all(CHECKPOINT in line["agents"] and CHECKPOINT in line["seats"] for line in new)
    assert json.loads((out / "league.json").read_text())["agents"] == ["random", "heuristic", CHECKPOINT]
    assert {row["agent"] for row in result["rows"]} == {"random", "heuristic", CHECKPOINT}
    # more sets play only the new sets
    assert run_league(out, games=3, verbose=False)["played"] == 3


def test_a_folder_for_another_game_or_other_rules_is_refused(tmp_path):
    out = tmp_path / "l"
    league(out, games=1)
    made = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(LeagueError, match="plays craits_v0, not pairs_draft_v0"):
        run_league(out, env_id="pairs_draft_v0", env_args={}, verbose=False)
    with pytest.raises(LeagueError, match="rule partnership=False there but True here"):
        league(out, env_args={**SHORT, "partnership": True}, games=1)
    with pytest.raises(LeagueError, match=r"argument deals: \[3\] there but \[2\] here"):
        league(out, env_args={"deals": [2]}, games=1)
    with pytest.raises(LeagueError, match="keeps its seed"):
        league(out, games=1, seed=4)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == made  # nothing touched
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(LeagueError, match="not a league folder"):
        league(other, games=1)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]  # not even a lock file put in it
    with hold_folder(out, "league"), pytest.raises(ValueError, match="in use by another league"):
        league(out, games=1)


def test_the_lock_is_taken_before_league_json_is_read(tmp_path, monkeypatch):
    out = tmp_path / "l"
    out.mkdir()
    # A first league holds the empty folder and has written its league.json (other rules): a
    # second one stops at the lock, not at league.json, and changes nothing.
    partnership = {**SHORT, "partnership": True}
    with hold_folder(out, "league"):
        league(tmp_path / "first", env_args=partnership, games=1)
        shutil.copy(tmp_path / "first" / "league.json", out / "league.json")
        before = folder(out)
        with pytest.raises(FolderInUse, match="in use by another league"):
            league(out, games=1)
        assert folder(out) == before
    # A first league that runs from start to end while the second is starting: the second reads
    # its league.json under the lock and refuses, instead of writing its own over the first's games.
    real_hold_folder, first = training.matches.league.hold_folder, {}

    def first_league_runs_meanwhile(*args):
        monkeypatch.setattr(training.matches.league, "hold_folder", real_hold_folder)
        league(out, env_args=partnership, games=1)
        first.update(folder(out))
        return real_hold_folder(*args)

    shutil.rmtree(out)
    monkeypatch.setattr(training.matches.league, "hold_folder", first_league_runs_meanwhile)
    with pytest.raises(LeagueError, match="rule partnership=True there but False here"):
        league(out, games=1)
    assert "matches.jsonl" in first and folder(out) == first


def test_cli_refusal_is_a_message(tmp_path, capsys):
    out = str(tmp_path / "l")
    main(["--out", out, "--agents", "heuristic", "--arg", "deals=[3]", "--games", "1", "--processes", "1"])
    with pytest.raises(SystemExit) as exit_:
        main(["--out", out, "--arg", "deals=[3]", "--arg", "num_players=3", "--processes", "1"])
    assert exit_.value.code == 1
    assert "rule num_players=4 there but 3 here" in capsys.readouterr().err


def test_processes_do_not_change_the_results(tmp_path):
    agents = ["heuristic", CHECKPOINT]
    one = league(tmp_path / "one", agents, games=3, processes=1)
    two = league(tmp_path / "two", agents, games=3, processes=2)
    assert one["played"] == two["played"] == 9
    for name in ("ratings.md", "ratings.csv", "win_share.csv", "win_share.png", "matches.jsonl"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name


def test_outputs_and_log_fields(tmp_path, capsys):
    out = tmp_path / "l"
    config = tmp_path / "league.yaml"
    config.write_text(
        f"out: {out}\nenv: craits_v0\nargs: {{deals: [2], partnership: true}}\nagents: [heuristic]\ngames: 2\nseed: 7\n"
    )  # the shipped bot plays no partnerships
    main(["--config", str(config), "--processes", "1", "--bootstrap", "50"])
    printed = capsys.readouterr().out
    assert "| rank | agent | mu |" in printed and "2 matches played" in printed
    assert (out / "win_share.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader((out / "ratings.csv").open()))
    assert [r["rank"] for r in rows] == ["1", "2"] and {r["agent"] for r in rows} == {"random", "heuristic"}
    assert set(rows[0]) == {
        "rank",
        "agent",
        "mu",
        "sigma",
        "ordinal",
        "elo",
        "elo_ci95_low",
        "elo_ci95_high",
        "win_share",
        "games",
    }
    random_row = next(r for r in rows if r["agent"] == "random")
    assert float(random_row["mu"]) == 25.0 and float(random_row["elo"]) == 0.0
    matrix = list(csv.reader((out / "win_share.csv").open()))
    assert matrix[0][1:] == [r["agent"] for r in rows] and matrix[1][1] == ""
    for i in range(1, 3):
        for j in range(1, 3):
            if i != j:
                assert float(matrix[i][j]) + float(matrix[j][i]) == pytest.approx(1.0)
    assert "pinned" in (out / "ratings.md").read_text()
    lines = log_lines(out)
    assert len(lines) == 1 * 2 * 2  # 1 pair, 2 sets, 2 distinct rotations
    for line in lines:
        assert set(line) == LOG_FIELDS
        assert line["sides"] == [[0, 2], [1, 3]] and line["rules"]["partnership"] is True
        assert line["env"] == "craits_v0" and line["env_args"] == {"deals": [2], "partnership": True}
        assert line["seed"] in (7, 8) and len(line["scores"]) == 4 and line["winners"]
        assert line["seats"][0] == line["seats"][2] != line["seats"][1] == line["seats"][3]
        assert sorted(set(line["seats"])) == line["agents"]
    league_file = json.loads((out / "league.json").read_text())
    assert league_file["seed"] == 7 and league_file["games"] == 2 and league_file["reference"] == "random"


# ---------------------------------------------------------------- log lines that are not the league's games
@pytest.fixture(scope="module")
def two_sets(tmp_path_factory):
    """A league of two sets: 4 lines, set 0's match (rotations 0 and 1), then set 1's."""
    out = tmp_path_factory.mktemp("league") / "l"
    league(out, games=2)
    return out


def changed(field, value):
    return lambda line: {**line, field: value}


# Line 2 is set 0, rotation 1: seats random, heuristic, random, heuristic. A string replaces the line.
BAD_LINES = {
    "missing field": (lambda line: {k: v for k, v in line.items() if k != "scores"}, r"field\(s\) scores missing"),
    "set not a number": (changed("set", "0"), r"set is '0', not a whole number"),
    "score not a number": (changed("scores", [0, "35", 0, 1]), r"scores is .*, not a list of numbers"),
    "winners not a list": (changed("winners", True), r"winners is True, not null or a list of seat numbers"),
    "winner out of range": (changed("winners", [4]), r"seat 4 in winners is out of range \(seats 0-3\)"),
    "side seat out of range": (changed("sides", [[0], [1], [2], [-1]]), r"seat -1 in sides is out of range"),
    "a seat in two sides": (changed("sides", [[0], [1], [2], [2]]), r"sides .* do not hold every seat once"),
    "other game": (changed("env", "pairs_draft_v0"), r"a game of 'pairs_draft_v0', the league plays craits_v0"),
    "other rules": (
        lambda line: {**line, "rules": {**line["rules"], "partnership": True}},
        r"rules partnership: True, the league's False",
    ),
    "other env arguments": (changed("env_args", {}), r"env_args deals: not given, the league's \[3\]"),
    "too few scores": (lambda line: {**line, "scores": line["scores"][:3]}, r"3 scores for 4 seats"),
    "too many seats": (lambda line: {**line, "seats": line["seats"] + ["random"]}, r"5 seats, the league plays 4"),
    "unknown agent": (
        lambda line: json.loads(json.dumps(line).replace('"random"', '"stranger"')),
        r"agent 'stranger' is not in the league",
    ),
    "other deal seed": (changed("seed", 1), r"deal seed 1 is not set 0's \(0\)"),
    "not a scheduled table": (
        lambda line: {**line, "seats": line["seats"][::-1]},
        r"seats .* at rotation 1 are not a table the league plays",
    ),
    "other match id": (
        lambda line: {**line, "match": "0" * 16, "game": "0" * 16 + "/1"},
        r"match '0{16}' / game '0{16}/1': not the ids of its table and deal seed",
    ),
    "wrong match size": (changed("match_games", 3), r"match_games 3, its table has 2"),
    "not an object": ("[1, 2]", r"not a game record"),
    "not JSON": ("{oops", r"not a game record"),
}


@pytest.mark.parametrize("change, problem", BAD_LINES.values(), ids=BAD_LINES.keys())
def test_a_line_that_is_not_the_leagues_game_is_refused(two_sets, tmp_path, change, problem):
    out = tmp_path / "l"
    shutil.copytree(two_sets, out)
    log = out / "matches.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    lines[1] = (change if isinstance(change, str) else json.dumps(change(json.loads(lines[1])))) + "\n"
    log.write_text("".join(lines))
    before = folder(out)
    with pytest.raises(LeagueError, match=rf"matches.jsonl, line 2: {problem}.*; the log is damaged"):
        league(out, games=3)  # one more set: league.json would be rewritten
    assert folder(out) == before  # nothing rated, rewritten or played


def test_only_a_torn_last_line_is_dropped(two_sets, tmp_path):
    out = tmp_path / "l"
    shutil.copytree(two_sets, out)
    log = out / "matches.jsonl"
    whole = log.read_bytes()
    *first, last = whole.splitlines(keepends=True)
    wrong = {**json.loads(last), "scores": [0, 1]}
    for content, problem in (
        (json.dumps(wrong).encode() + b"\n", r"line 4: 2 scores for 4 seats"),  # JSON: not torn
        (b"{oops\n" + last[:20], r"line 4: not a game record"),
    ):  # not the file's last line
        log.write_bytes(b"".join(first) + content)
        before = folder(out)
        with pytest.raises(LeagueError, match=problem):
            league(out, games=2)
        assert folder(out) == before
    for torn in (last[:20], last[:20] + b"\n"):  # a kill mid-write: dropped, its match played again
        log.write_bytes(b"".join(first) + torn)
        assert league(out, games=2)["played"] == 1
        assert log.read_bytes() == whole
