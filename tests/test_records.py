"""Game records: written by play and evaluate, replayed and checked line by line."""

import importlib.metadata
import json

import pytest

from training.common.games import EnvHandle
from training.frontends import play as play_module
from training.frontends.play import play
from training.matches import evaluate as evaluate_module
from training.matches.evaluate import evaluate
from training.matches.records import RecordError, check_record_folder, parse_record, read_record, replay
from training.matches.replay import main as replay_main


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize(
    "env_id, args",
    [
        ("craits_v0", {"deals": [3, 2]}),
        ("craits_v0", {"episode": "deal", "deals": [2, 1], "num_players": 3}),
        ("pairs_draft_v0", {}),
    ],
)
def test_a_played_game_replays_to_its_result(tmp_path, env_id, args):
    env = EnvHandle(env_id, args)
    scores = play(env, ["heuristic", "random"], seed=5, verbose=False, record_dir=tmp_path)
    path = tmp_path / f"{env_id}-seed5.jsonl"
    header, moves, result = read_record(path)
    assert header["agents"] == ["heuristic", "random"] * (env.seats // 2) + ["heuristic"] * (env.seats % 2)
    assert header["rule_args"] == env.rule_args and header["seed"] == 5
    assert header["deckgym_version"] == importlib.metadata.version("deckgym")  # what made it
    assert replay(header, moves, result) == result and result["scores"] == scores
    assert all(set(move) == {"seat", "action", "line"} for move in moves)


def test_evaluate_records_every_game(tmp_path):
    env = EnvHandle("craits_v0", {"deals": [2]})
    evaluate(env, ["heuristic", "random"], games=2, seed=3, processes=1, record_dir=tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [f"craits_v0-seed{s}-rotation{r}.jsonl" for s in (3, 4) for r in range(4)]
    for path in tmp_path.iterdir():
        replay(*read_record(path))


@pytest.fixture
def record(tmp_path):
    play(EnvHandle("craits_v0", {"deals": [3]}), ["heuristic", "random"], seed=2, verbose=False, record_dir=tmp_path)
    return tmp_path / "craits_v0-seed2.jsonl"


def _refused(path, match):
    with pytest.raises(RecordError, match=match):
        replay(*read_record(path))


def test_an_illegal_move_is_refused_with_its_line(record):
    lines = _lines(record)
    lines[3]["action"] = "play 8D" if lines[3]["action"] != "play 8D" else "play 8C"
    _write(record, lines)
    _refused(record, r"line 4: illegal action")


def test_a_move_by_the_wrong_seat_is_refused_with_its_line(record):
    lines = _lines(record)
    lines[2]["seat"] = (lines[2]["seat"] + 1) % 4
    _write(record, lines)
    _refused(record, r"line 3: seat \d moves, but seat \d is to act")


def test_a_record_made_under_other_rules_is_refused(record):
    lines = _lines(record)
    lines[0]["rule_args"]["nine"] = "own_suit"
    _write(record, lines)
    _refused(record, r"line 1: made under other rules .*nine='own_suit' there, 'same_colour' here")
    lines[0]["env_args"]["nine"] = "own_suit"  # now the arguments agree with the rules: the moves don't
    _write(record, lines)
    with pytest.raises(RecordError):
        replay(*read_record(record))


def test_a_changed_result_or_a_cut_record_is_refused(record):
    lines = _lines(record)
    lines[-1]["result"]["scores"][0] += 1
    _write(record, lines)
    _refused(record, "the result line says")
    _write(record, lines[:-3] + lines[-1:])
    _refused(record, "ends before the game does")
    _write(record, lines[:-1])
    _refused(record, "the last line must be the result")


def test_malformed_lines_name_their_line(tmp_path, record):
    text = record.read_text().splitlines()
    for bad, match in (
        ("{not json", "line 2: not JSON"),
        ("[1, 2]", "line 2: expected a JSON object"),
        ('{"seat": "0", "action": "draw"}', r"line 2: a move line is"),
    ):
        with pytest.raises(RecordError, match=match):
            parse_record("\n".join([text[0], bad, *text[1:]]))
    with pytest.raises(RecordError, match="line 1: not a deckgym game record header"):
        parse_record('{"record": "other"}\n{"result": {}}')


def test_replay_cli_shows_the_game_and_fails_with_a_message(record, capsys):
    replay_main([str(record)])
    out = capsys.readouterr().out
    assert "seat 0 (heuristic):" in out and "every one legal" in out and "game over" in out
    lines = _lines(record)
    lines[2]["action"] = "suit Q"
    _write(record, lines)
    with pytest.raises(SystemExit) as exit:
        replay_main([str(record), "--quiet"])
    assert exit.value.code == 1 and "line 3:" in capsys.readouterr().err


def _no_games(monkeypatch):
    """Count the games played through ``play_game`` by play and evaluate (processes=1)."""
    games = []

    def counting(*args, **kwargs):
        games.append(args)
        raise AssertionError("a game was played")

    monkeypatch.setattr(play_module, "play_game", counting)
    monkeypatch.setattr(evaluate_module, "play_game", counting)
    return games


@pytest.mark.parametrize("cli", ["play", "evaluate"])
@pytest.mark.parametrize(
    "target, message",
    [
        ("file", "exists and is not a folder (records are written into a folder)"),
        ("file/records", "can't write records into it (Not a directory)"),
    ],
)
def test_a_record_target_that_cannot_be_written_is_refused_before_any_game(
    tmp_path, monkeypatch, capsys, cli, target, message
):
    (tmp_path / "file").write_bytes(b"an earlier file\n")
    games = _no_games(monkeypatch)
    main = {"play": play_module.main, "evaluate": evaluate_module.main}[cli]
    argv = ["--agents", "heuristic,random", "--arg", "deals=[2]", "--record", str(tmp_path / target)]
    with pytest.raises(SystemExit) as stop:
        main(argv + (["--games", "2", "--processes", "1"] if cli == "evaluate" else []))
    assert stop.value.code == 1 and games == []
    assert capsys.readouterr().err == f"error: --record {tmp_path / target}: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    assert (tmp_path / "file").read_bytes() == b"an earlier file\n"


def test_the_record_check_leaves_nothing_behind(tmp_path):
    check_record_folder(tmp_path / "new" / "records")  # made by the first record, not by the check
    (tmp_path / "old").mkdir()
    check_record_folder(tmp_path / "old")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["old"]
