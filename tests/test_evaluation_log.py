"""A resumable evaluation (``training.evaluate --log DIR``): a run stopped part-way and run
again plays only the missing duplicate sets and gives the uninterrupted run's result."""

from __future__ import annotations

import json

import pytest

from training.common.games import EnvHandle
from training.matches import evaluate as evaluate_module
from training.matches.evaluate import evaluate
from training.matches.evaluation_log import LOG_FILE, EvaluationLogError

SHORT = {"deals": [3]}
AGENTS = ["heuristic", "random"]


@pytest.fixture
def counted(monkeypatch):
    """The sets each call plays, once per set however many of its games (the evaluation runs
    in this process with processes=1); ``counted.games`` the games themselves."""
    played = Played()
    real = evaluate_module.play_games

    def play_games(env, layout, seed, deterministic, games, record_dir=None):
        for index, rotation in games:
            if index not in played:
                played.append(index)
            played.games.append((index, rotation))
        return real(env, layout, seed, deterministic, games, record_dir)

    monkeypatch.setattr(evaluate_module, "play_games", play_games)
    return played


class Played(list):
    def __init__(self):
        super().__init__()
        self.games: list[tuple[int, int]] = []

    def clear(self):
        super().clear()
        self.games.clear()


def run(games, log=None, seed=3):
    return evaluate(EnvHandle("craits_v0", SHORT), AGENTS, games, seed=seed, processes=1, log_dir=log)


def test_a_resumed_run_plays_only_the_missing_sets_and_gives_the_same_result(tmp_path, counted):
    whole = run(6)
    assert sorted(counted) == list(range(6))
    counted.clear()
    part = run(3, tmp_path / "log")  # stopped after 3 sets
    assert sorted(counted) == [0, 1, 2]
    counted.clear()
    resumed = run(6, tmp_path / "log")
    assert sorted(counted) == [3, 4, 5] and resumed == whole and part["duplicate_sets"] == 3
    counted.clear()
    assert run(6, tmp_path / "log") == whole and counted == []  # all there: nothing played
    lines = (tmp_path / "log" / LOG_FILE).read_text().splitlines()
    assert json.loads(lines[0])["layout"] == AGENTS * 2 and len(lines) == 1 + 6 * 4  # a line per game


def test_a_set_stopped_part_way_plays_only_its_missing_games(tmp_path, counted):
    whole = run(2)
    run(2, tmp_path / "log")
    path = tmp_path / "log" / LOG_FILE
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-3]) + "\n")  # stopped after set 1's first game
    counted.clear()
    assert run(2, tmp_path / "log") == whole and counted.games == [(1, 1), (1, 2), (1, 3)]


def test_a_log_of_whole_sets_per_line_is_read_too(tmp_path, counted):
    whole = run(2, tmp_path / "log")
    path = tmp_path / "log" / LOG_FILE
    header, *games = [json.loads(line) for line in path.read_text().splitlines()]
    sets = [{"set": i, "games": [g["games"][0] for g in games if g["set"] == i]} for i in range(2)]
    path.write_text("\n".join(json.dumps(line) for line in [header, *sets]) + "\n")  # as earlier versions wrote
    counted.clear()
    assert run(2, tmp_path / "log") == whole and counted == []


def test_a_cut_off_last_line_is_played_again(tmp_path, counted):
    whole = run(4, tmp_path / "log")
    path = tmp_path / "log" / LOG_FILE
    text = path.read_text()
    path.write_text(text[: len(text) - 20])  # killed while writing set 3's last game
    counted.clear()
    assert run(4, tmp_path / "log") == whole and counted.games == [(3, 3)]


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda lines: lines.__setitem__(1, '{"set": 0}'), "line 2: not a set"),
        (lambda lines: lines.__setitem__(2, lines[2].replace('"rotation": 1', '"rotation": 5')), "line 3: set 0"),
        (lambda lines: lines.__setitem__(1, lines[1].replace('"scores": [', '"scores": [1e999, ')), "line 2"),
        (lambda lines: lines.insert(2, "garbage"), "line 3: not JSON"),
    ],
)
def test_a_damaged_line_is_refused_with_its_number(tmp_path, change, words):
    run(3, tmp_path / "log")
    path = tmp_path / "log" / LOG_FILE
    lines = path.read_text().splitlines()
    change(lines)
    path.write_text("\n".join(lines) + "\n")
    before = path.read_bytes()
    with pytest.raises(EvaluationLogError, match=words):
        run(3, tmp_path / "log")
    assert path.read_bytes() == before  # nothing rewritten


def test_a_log_of_another_match_is_refused(tmp_path):
    run(2, tmp_path / "log")
    with pytest.raises(EvaluationLogError, match="another match.*seed"):
        run(2, tmp_path / "log", seed=4)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / LOG_FILE).write_text("hello\n")
    with pytest.raises(EvaluationLogError, match="is not an evaluation log"):
        run(2, tmp_path / "other")


def test_the_cli_takes_a_log(tmp_path, capsys):
    args = ["--agents", "heuristic,random", "--games", "2", "--arg", "deals=[3]", "--processes", "1"]
    first = evaluate_module.main([*args, "--log", str(tmp_path / "log")])
    again = evaluate_module.main([*args, "--log", str(tmp_path / "log")])
    assert first["agents"] == again["agents"]
    with pytest.raises(SystemExit):
        evaluate_module.main([*args, "--seed", "9", "--log", str(tmp_path / "log")])
    assert "another match" in capsys.readouterr().err
