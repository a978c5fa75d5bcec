"""A third game from outside (``tests/plugin_game``: Little Tricks) plugs into every tool by
its spec alone: nothing in ``envs/`` or ``training/`` names it. It runs through PettingZoo's
api and seed tests, a tiny training run, evaluation, a league, ONNX export with parity, a
protocol game (in process and through ``serve_bot``), the search bot, a web-app game over
HTTP, terminal play and record replay."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import plugin_game
import pytest
from pettingzoo.test import api_test, seed_test

from training.common.games import GAMES, EnvHandle
from training.matches.evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent
GAME = plugin_game.SPEC.id
# A process that should know the game: tests/ on the path, the game's module named.
PLUGIN_ENV = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), "DECKGYM_GAME_MODULES": "plugin_game.spec"}


def test_the_game_is_named_nowhere_in_the_library():
    names = {GAME, "little_tricks", "plugin_game", "Little Tricks", "LittleTricks"}
    for folder in ("envs", "training"):
        for file in sorted((ROOT / folder).rglob("*.py")):
            source = file.read_text()
            assert not any(name in source for name in names), file


def test_registered_from_its_own_folder():
    assert GAMES[GAME] is plugin_game.SPEC
    import pettingzoo

    if hasattr(pettingzoo, "make"):  # the registry is PettingZoo >= 1.27's
        made = pettingzoo.make("aec", "deckgym/little_tricks-v0", num_players=3)
        made.reset(seed=0)
        assert made.possible_agents == ["player_0", "player_1", "player_2"]


@pytest.mark.parametrize("players", [2, 3])
def test_pettingzoo_api_and_seed_tests(players):
    api_test(plugin_game.env(num_players=players), num_cycles=300)
    seed_test(lambda **kw: plugin_game.env(num_players=players, **kw), num_cycles=100)


def test_evaluation_heuristic_beats_random():
    result = evaluate(EnvHandle(GAME, {"num_players": 3}), ["heuristic", "random"], games=60, seed=0)
    heuristic = result["agents"]["heuristic"]
    assert result["env_id"] == GAME and result["lower_score_wins"] is False
    assert heuristic["win_share_ci95"][0] > heuristic["even_share"]


def test_search_bot_plays_it_and_sees_only_its_seat():
    from envs.search import ISMCTSBot

    result = evaluate(EnvHandle(GAME, {}), ["ismcts:simulations=50", "random"], games=20, seed=1)
    assert result["agents"]["ismcts:simulations=50"]["win_share"] > 0.5
    # the same move whatever the hidden cards: swap the other hand with the set-aside cards
    rng = random.Random(3)
    for _ in range(20):
        game = plugin_game.LittleTricksGame(2, seed=rng.randrange(1 << 30))
        other = game.copy()
        unseen = [c for c in range(1, 13) if c not in game.hand(0) + game.hand(1)]
        other.hands[1] = sum(1 << (c - 1) for c in unseen[:3])
        moves = [ISMCTSBot(GAME, simulations=60, seed=5).act_on(g, 0) for g in (game, other)]
        assert moves[0] == moves[1]


def referee(seed: int, players: int) -> int:
    """A game on the real env with a protocol session per seat: the rebuilt observations are
    the env's, exactly. Returns the moves played."""
    from training.frontends.protocol import BotServer, SeatReporter

    raw = EnvHandle(GAME, {"num_players": players}).new_raw()
    raw.reset(seed=seed)
    servers = [BotServer("heuristic") for _ in range(players)]
    reporters = [SeatReporter(s) for s in range(players)]
    for s, server in enumerate(servers):
        reply = server.handle({"type": "start", "protocol": 1, "game": GAME, "seat": s, "players": players})
        assert reply["type"] == "ready", reply
        assert server.handle({"type": "update", "events": reporters[s].opening(raw.game)})["type"] == "ok"
    moves = 0
    while not raw.game.is_over:
        seat = raw.game.current_player
        expected = raw.observe(raw.agents[seat])
        legal = [raw.game.action_to_text(a) for a in raw.game.legal_actions()]
        reply = servers[seat].handle({"type": "act", "legal": legal})
        assert reply["type"] == "move" and reply["action"] in legal, reply
        rebuilt = servers[seat].session.last_observation
        assert np.array_equal(rebuilt["observation"], expected["observation"])
        assert np.array_equal(rebuilt["action_mask"], expected["action_mask"])
        action = raw.game.text_to_action(reply["action"])
        tokens = [r.before(raw.game, action) for r in reporters]
        raw.step(action)
        moves += 1
        for s in range(players):
            reply = servers[s].handle({"type": "update", "events": reporters[s].after(raw.game, seat, tokens[s])})
            assert reply["type"] == "ok", reply
    assert all(server.handle({"type": "update", "events": []})["expect"] == "over" for server in servers)
    return moves


@pytest.mark.parametrize("players", [2, 3])
def test_protocol_sessions_rebuild_the_envs_observations(players):
    for seed in range(10):
        assert referee(seed, players) == 3 * players


def test_serve_bot_plays_a_whole_game_over_stdio():
    game = plugin_game.LittleTricksGame(2, seed=11)
    lines = [
        {"type": "start", "protocol": 1, "game": GAME, "seat": 0, "players": 2},
        {"type": "update", "events": [{"event": "deal", "hand": game.hand(0)}]},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "training.serve_bot", "heuristic"],
        cwd=ROOT,
        env=PLUGIN_ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def ask(message: dict) -> dict:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    assert [ask(m)["type"] for m in lines] == ["ready", "ok"]
    while not game.is_over:
        seat = game.current_player
        if seat == 0:
            reply = ask({"type": "act", "legal": [game.action_to_text(a) for a in game.legal_actions()]})
            assert reply["type"] == "move", reply
            action = game.text_to_action(reply["action"])
        else:
            action = game.legal_actions()[0]
        game.apply(action)
        assert (
            ask({"type": "update", "events": [{"event": "move", "seat": seat, "move": game.action_to_text(action)}]})[
                "type"
            ]
            == "ok"
        )
    assert ask({"type": "update", "events": []})["totals"] == game.scores()
    assert ask({"type": "stop"}) == {"type": "bye"}
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from test_training import tiny

    from training.learning import train as train_module

    folder = tmp_path_factory.mktemp("plugin")
    config = tiny(folder, env_id=GAME, **{"opponents.pool": "[{agent: heuristic, weight: 1}]"})
    return train_module.train(config, config.run_dir) / "checkpoint"


def test_a_tiny_training_run_gives_a_bot_that_plays_it(checkpoint):
    meta = json.loads((checkpoint / "meta.json").read_text())
    assert meta["env_id"] == GAME and meta["action_size"] == 12 and meta["timesteps"] >= 1024
    result = evaluate(EnvHandle(GAME, {}), [str(checkpoint), "random"], games=10, seed=0)
    assert result["agents"][str(checkpoint)]["seats"] == 1


def test_onnx_export_with_parity(checkpoint, tmp_path):
    from training.agents import export as ex

    exported = ex.export(checkpoint, tmp_path / "bot")
    observations, masks = ex.record_observations(EnvHandle(GAME, {}), 500, seed=2)
    result = ex.parity(checkpoint, exported, observations, masks)
    assert result["samples"] == 500 and ex.parity_ok(result)


def test_a_league(tmp_path, checkpoint):
    from training.matches.league import run_league

    run_league(
        tmp_path / "league", ["heuristic", "random", str(checkpoint)], GAME, {"num_players": 2}, 4, verbose=False
    )
    league = json.loads((tmp_path / "league" / "league.json").read_text())
    assert league["env_id"] == GAME and league["lower_score_wins"] is False
    ratings = (tmp_path / "league" / "ratings.csv").read_text().splitlines()
    assert len(ratings) == 4 and all(
        any(line.split(",")[1] == spec for line in ratings[1:]) for spec in ("heuristic", "random")
    )


# ------------------------------------------------------------- people at the table
HAND_LINE = "your hand: "


def test_a_web_app_game_over_http(tmp_path, capsys):
    from starlette.testclient import TestClient

    from training.frontends.web import create_app
    from training.matches.records import parse_record, replay
    from training.matches.replay import main as replay_main

    app = create_app(bot_roots=())
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:  # a Host the app serves
        games = {g["id"]: g for g in client.get("/api/options").json()["games"]}
        assert games[GAME] == {
            "id": GAME,
            "name": "Little Tricks",
            "players": {"min": 2, "max": 3, "default": 2},
            "lower_wins": False,
            "rules": [],
            "presets": {},
            "deals": None,
        }
        assert GAME not in client.get("/games.js").text  # no web.js: the page shows the text
        response = client.post(
            "/api/games",
            json={"env": GAME, "args": {"num_players": 3}, "seed": 5, "agents": ["heuristic", "human", "random"]},
        )
        assert response.status_code == 201, response.text
        state = response.json()
        assert state["name"] == "Little Tricks" and state["seat"] == 1
        moves = 0
        while not state["over"]:
            game = app.state.sessions.get(state["id"]).game
            view = state["view"]
            assert view["hand"] == game.hand(1) and all("hand" not in info for info in view["seats"])
            assert HAND_LINE + " ".join(map(str, game.hand(1))) in state["text"]
            assert state["your_turn"] and state["prompt"]
            assert [m["text"] for m in state["legal"]] == [game.action_to_text(a) for a in game.legal_actions()]
            response = client.post(
                f"/api/games/{state['id']}/move", json={"action": state["legal"][0]["text"], "since": state["log_size"]}
            )
            assert response.status_code == 200, response.text
            state = response.json()
            moves += 1
        assert moves == 3 and state["text"][-1] == HAND_LINE + "(empty)"
        log = client.get(f"/api/games/{state['id']}").json()["log"]
        assert sum(e["kind"] == "move" for e in log) == 9 and sum(e["kind"] == "round" for e in log) == 3
        record = client.get(state["record"]).text
    assert replay(*parse_record(record)) == state["result"]
    (tmp_path / "web.jsonl").write_text(record)
    replay_main([str(tmp_path / "web.jsonl")])
    assert "9 moves replayed, every one legal" in capsys.readouterr().out


def test_terminal_play_and_its_record_replayed(tmp_path, monkeypatch, capsys):
    import io

    from training.frontends.play import play
    from training.matches.replay import main as replay_main

    # A person's answers: a wrong word, help, then every card in turn (the illegal ones are refused).
    numbers = "\n".join(str(n) for n in range(1, 13))
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(["bogus", "?", numbers, numbers, numbers]) + "\n"))
    scores = play(EnvHandle(GAME, {}), ["human", "heuristic"], seed=3, record_dir=tmp_path)
    out = capsys.readouterr().out
    assert "'bogus' is not a legal move here" in out and "Type a move as listed" in out
    assert out.count(HAND_LINE) == 3 and "final scores (higher is better)" in out
    assert "seat 1: hand" not in out  # the table with every hand is never shown to the person
    assert out.count("seat 0 (you) plays") == 3 and out.count("wins it with") == 3
    path = tmp_path / f"{GAME}-seed3.jsonl"
    replay_main([str(path)])
    shown = capsys.readouterr().out
    assert "Little Tricks: trick 1/3, seat 0 leads" in shown and "seat 1: hand" in shown  # the replay shows all
    assert f"6 moves replayed, every one legal; scores {scores}" in shown


def test_the_env_renders_through_its_presentation():
    env = plugin_game.env(render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    game = env.unwrapped.game
    assert text.splitlines()[0] == "Little Tricks: trick 1/3, seat 0 leads"
    assert all(f"seat {s}: hand {' '.join(map(str, game.hand(s)))}" in text for s in range(2))


def test_an_installed_package_registers_through_the_entry_point(tmp_path):
    """A distribution that names its spec under ``deckgym.games`` is found without importing it by
    hand: here a bare dist-info folder on the path stands for an installed package."""
    info = tmp_path / "little_tricks_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: little-tricks-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[deckgym.games]\nlittle_tricks = plugin_game.spec:SPEC\n")
    code = (
        "from envs.spec import discover, game_spec; print(sorted(discover())); print(game_spec('little_tricks').name)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT / 'tests'}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    games, name = done.stdout.splitlines()
    assert GAME in games and name == "Little Tricks"
