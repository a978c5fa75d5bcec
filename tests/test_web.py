"""The web app's API (training/frontends/web.py) through Starlette's TestClient: whole games, what the
person's seat is shown (and not), the game record, request validation, sessions; and its
limits (Host and Origin, bot specs, search budget, bots thinking in their own thread, the
server started and stopped as a person runs it)."""

from __future__ import annotations

import json
import queue
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 and warns about httpx; both work
    warnings.filterwarnings("ignore", message=".*httpx", category=UserWarning)
    from starlette.testclient import TestClient

from envs.engine import shown
from envs.search import GUIDED_SIMULATIONS
from training import shipped as shipping
from training.common.games import EnvHandle
from training.frontends import web
from training.frontends.web import create_app
from training.matches.records import RECORD_FORMAT, parse_record, replay

CRAITS = {
    "env": "craits_v0",
    "args": {"deals": [3, 2]},
    "agents": ["human", "heuristic", "checkpoints/craits", "random"],
}
PAIRS = {"env": "pairs_draft_v0", "agents": ["heuristic", "checkpoints/pairs_draft", "human", "random"]}
# Pairs Draft seeded so that seat 0 picks first: the person (FIRST) or the three bots (LAST).
FIRST = {"env": "pairs_draft_v0", "agents": ["human", "random", "random", "random"], "seed": 1}
LAST = {"env": "pairs_draft_v0", "agents": ["random", "random", "random", "human"], "seed": 1}
BASE = "http://127.0.0.1:8000"  # a Host the app answers to (TestClient's own "testserver" is not)
LONG = 60  # seconds: a generous bound on anything that should take a moment
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def app():
    return create_app()


@pytest.fixture
def client(app):
    with TestClient(app, base_url=BASE) as client:
        yield client


def new_game(client, spec, **extra):
    response = client.post("/api/games", json={**spec, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def play_out(client, state, rng, check=None):
    """Random legal moves through the API until the game is over; ``check(state)`` before each."""
    moves = 0
    while not state["over"]:
        assert state["your_turn"] and state["legal"]
        if check is not None:
            check(state)
        move = rng.choice(state["legal"])["text"]
        response = client.post(f"/api/games/{state['id']}/move", json={"action": move, "since": state["log_size"]})
        assert response.status_code == 200, response.text
        state = response.json()
        moves += 1
        assert moves < 2000
    return state


def error_of(response, status):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()["error"]


# ------------------------------------------------------------------ whole games
def test_options_list_games_rules_and_bots(client):
    options = client.get("/api/options").json()
    games = {g["id"]: g for g in options["games"]}
    assert set(games) >= {"craits_v0", "pairs_draft_v0"}  # every registered game (a plugin's too)
    assert [games[g]["name"] for g in ("craits_v0", "pairs_draft_v0")] == ["Craits", "Pairs Draft"]
    assert games["craits_v0"]["players"] == {"min": 2, "max": 5, "default": 4} and games["craits_v0"]["lower_wins"]
    assert games["craits_v0"]["deals"] == {
        "presets": {"full": [8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8], "short": [8, 7, 6, 5, 4, 3, 2, 1]},
        "default": "full",
    }
    assert {r["name"] for r in games["craits_v0"]["rules"]} >= {"preset", "crank_count", "announce", "partnership"}
    assert games["pairs_draft_v0"]["players"] == {"min": 4, "max": 4, "default": 4}
    bots = {b["spec"]: b for b in options["bots"]}
    assert bots["random"]["env"] is None and bots["heuristic"]["env"] is None
    assert bots["checkpoints/craits"]["env"] == "craits_v0" and bots["checkpoints/craits"]["kind"] == "checkpoint"
    assert bots["checkpoints/pairs_draft"]["env"] == "pairs_draft_v0"


def test_index_and_static_files(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert page.text.index("/games.js") < page.text.index("/static/app.js")  # the games register first


def test_each_game_s_web_page_comes_from_its_folder(client):
    scripts = client.get("/games.js")
    assert scripts.status_code == 200 and scripts.headers["content-type"].startswith("text/javascript")
    for game in ("craits", "pairs_draft"):
        assert (ROOT / "envs" / game / "web.js").read_text() in scripts.text
        assert f"deckgymGames = window.deckgymGames || {{}}).{game}_v0 = " in scripts.text
    for spec in (CRAITS, PAIRS):  # a game drawn by its web.js gets no text lines
        assert "text" not in new_game(client, spec, seed=1)


def test_craits_game_to_the_end_matches_its_record(client, app):
    state = new_game(client, CRAITS, seed=11)
    assert state["seat"] == 0 and state["agents"] == CRAITS["agents"]
    log = list(state["log"])

    def check(state):
        view = state["view"]
        session = app.state.sessions.get(state["id"])
        assert view["hand"] == session.game.hand(0)  # its own hand, as the engine has it
        public = {"seat", "cards", "announced", "loses_turn", "score", "pressure"}
        assert all(set(info) == public for info in view["seats"])
        game = session.game
        assert [m["text"] for m in state["legal"]] == [game.action_to_text(a) for a in game.legal_actions()]
        assert state["record"] is None and state["seed"] is None  # the seed would tell every hand

    rng = random.Random(3)
    while not state["over"]:
        check(state)
        state = client.post(
            f"/api/games/{state['id']}/move",
            json={"action": rng.choice(state["legal"])["text"], "since": state["log_size"]},
        ).json()
        log += state["log"]  # the entries since the last answer, in order, none twice
        assert len(log) == state["log_size"]
    assert log == client.get(f"/api/games/{state['id']}").json()["log"]
    assert [e["kind"] for e in log].count("deal") == 2 and log[-1]["kind"] == "result"
    assert len(state["deals"]) == 2 and all(len(d["hands"]) == 4 for d in state["deals"])
    session = app.state.sessions.get(state["id"])
    assert state["seed"] == 11
    assert state["result"]["scores"] == session.game.scores() == state["view"]["scores"]
    assert state["result"]["winners"] == session.game.winners()
    assert [sum(d["points"][s] for d in state["deals"]) for s in range(4)] == state["result"]["scores"]

    response = client.get(state["record"])
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    assert "attachment" in response.headers["content-disposition"]
    lines = [json.loads(line) for line in response.text.splitlines()]
    header, moves, result = lines[0], lines[1:-1], lines[-1]
    assert header["record"] == RECORD_FORMAT and header["env"] == "craits_v0" and header["seed"] == 11
    assert header["env_args"] == {"deals": [3, 2]} and header["agents"] == CRAITS["agents"]
    assert header["human_seat"] == 0
    assert header["rule_args"] == EnvHandle("craits_v0", {"deals": [3, 2]}).rule_args
    assert all(set(m) == {"seat", "action"} for m in moves)
    assert result == {"result": state["result"]}
    assert replay(*parse_record(response.text)) == state["result"]


def test_pairs_draft_game_hides_the_others_picks_and_discards(client, app):
    state = new_game(client, PAIRS, seed=4)
    assert state["seat"] == 2

    def check(state):
        view = state["view"]
        session = app.state.sessions.get(state["id"])
        game = session.game
        assert view["hand"] == game.hand(2)
        assert view["pack"] == (game.pack(2) if game.phase == "draft" else [])
        assert all("hand" not in info and "pack" not in info for info in view["seats"])
        if game.phase == "draft":  # the table's counts: completed picks, not what a seat holds mid-step
            assert all(info["cards"] == game.pick_index for info in view["seats"] if info["seat"] != 2)

    state = play_out(client, state, random.Random(5), check)
    log = client.get(f"/api/games/{state['id']}").json()["log"]
    others = [e for e in log if e["kind"] == "move" and e["seat"] != 2]
    picks = [e for e in others if "picks" in e["text"] or "discards" in e["text"]]
    assert len(picks) == 3 * 12 and all(e["action"] is None for e in picks)
    assert all(e["text"].endswith("picks a card") for e in picks if "picks" in e["text"])
    assert all(e["text"].endswith("discards a card face down") for e in picks if "discards" in e["text"])
    assert sum(e["kind"] == "round" for e in log) == 10
    record = client.get(state["record"]).text
    assert replay(*parse_record(record)) == state["result"] == app.state.sessions.get(state["id"]).result()
    assert len(record.splitlines()) == 1 + 4 * 22 + 1  # header, 4 seats x (11 picks, 1 discard, 10 rounds), result


def test_dealer_names_the_upcard_suit_without_seeing_the_hand(client):
    seed = next(s for s in range(500) if _blind_start(s))
    spec = {"env": "craits_v0", "args": {"deals": [3]}, "agents": ["human"] + ["random"] * 3}
    state = new_game(client, spec, seed=seed)
    assert state["view"]["phase"] == "blind_suit" and state["view"]["hand"] is None
    assert [m["text"] for m in state["legal"]][0].startswith("suit ")
    assert "without seeing" in state["prompt"]
    state = client.post(f"/api/games/{state['id']}/move", json={"action": state["legal"][0]["text"]}).json()
    assert state["view"]["hand"] is not None  # once the suit is named, the hand shows again


def _blind_start(seed):
    raw = EnvHandle("craits_v0", {"deals": [3]}).raw
    raw.reset(seed=seed)
    return raw.game.phase == "blind_suit"


def test_chained_deal_episodes_and_a_later_seat(client, app):
    spec = {
        "env": "craits_v0",
        "args": {"deals": [1, 2], "episode": "deal", "num_players": 3},
        "agents": ["random", "heuristic", "human"],
    }
    state = play_out(client, new_game(client, spec, seed=2), random.Random(1))
    assert len(state["deals"]) == 2 and state["result"]["winners"]
    assert replay(*parse_record(client.get(state["record"]).text)) == state["result"]


def test_two_games_do_not_interfere(client, app):
    first = new_game(client, CRAITS, seed=1)
    second = new_game(client, CRAITS, seed=1)
    assert first["id"] != second["id"]
    assert first["view"] == second["view"]  # the same seed deals the same cards
    moved = client.post(f"/api/games/{second['id']}/move", json={"action": second["legal"][0]["text"]}).json()
    again = client.get(f"/api/games/{first['id']}").json()
    assert again["view"] == first["view"] and again["log_size"] == first["log_size"]
    assert moved["log_size"] > second["log_size"]


# ------------------------------------------------------------------- validation
def test_unknown_game_route_and_method(client):
    assert "no game" in error_of(client.get("/api/games/nope"), 404)
    assert "no game" in error_of(client.post("/api/games/nope/move", json={"action": "draw"}), 404)
    assert "no game" in error_of(client.get("/api/games/nope/record"), 404)
    error_of(client.get("/api/nothing"), 404)
    error_of(client.put("/api/games"), 405)


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"env": "chess", "agents": ["human"]}, 400, "not a game here"),
        ({"env": "craits_v0", "agents": ["human", "heuristic"], "args": {"num_players": 9}}, 400, "num_players"),
        ({"env": "craits_v0", "agents": ["human"] * 4}, 400, "exactly one seat"),
        ({"env": "craits_v0", "agents": ["human", "heuristic"]}, 400, "2 given for 4 seats"),
        ({"env": "craits_v0", "agents": ["human", "nobody", "random", "random"]}, 400, "seat 1 ('nobody')"),
        (
            {"env": "craits_v0", "agents": ["human", "checkpoints/pairs_draft", "random", "random"]},
            400,
            "pairs_draft_v0",
        ),
        ({"env": "craits_v0", "agents": ["human", 3, "random", "random"]}, 400, "agents"),
        ({"env": "craits_v0", "agents": "human"}, 400, "agents"),
        ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "args": [1]}, 400, "args"),
        ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "args": {"colour": "red"}}, 400, "colour"),
        (
            {"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "args": {"render_mode": "human"}},
            400,
            "render_mode",
        ),
        ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "seed": -1}, 400, "seed"),
        ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "seed": True}, 400, "seed"),
        ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "seed": 1.5}, 400, "seed"),
        ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "colour": 1}, 400, "unknown field 'colour'"),
        ({"agents": ["human"]}, 400, "missing field env"),
    ],
)
def test_bad_new_game_requests(client, body, status, words):
    assert words in error_of(client.post("/api/games", json=body), status)


def test_bad_bodies(client):
    assert "malformed JSON" in error_of(
        client.post("/api/games", content=b"{nope", headers={"Content-Type": "application/json"}), 400
    )
    assert "JSON object" in error_of(client.post("/api/games", json=[1, 2]), 400)
    assert "Content-Type" in error_of(client.post("/api/games", content=b"{}"), 415)
    big = {"env": "craits_v0", "agents": ["human"], "args": {"x": "y" * (web.MAX_BODY + 1)}}
    assert "bytes" in error_of(client.post("/api/games", json=big), 413)


def test_bad_moves(client, app):
    state = new_game(client, CRAITS, seed=11)
    url = f"/api/games/{state['id']}/move"
    assert "unknown Craits action text" in error_of(client.post(url, json={"action": "dance"}), 400)
    legal = {m["text"] for m in state["legal"]}
    illegal = next(t for t in ("play AC", "play 2D", "play KS", "draw", "suit S") if t not in legal)
    message = error_of(client.post(url, json={"action": illegal}), 400)
    assert "not a legal move" in message and all(t in message for t in legal)
    assert "not int" in error_of(client.post(url, json={"action": 5}), 400)
    assert "missing field action" in error_of(client.post(url, json={}), 400)
    assert "since" in error_of(client.post(url, json={"action": state["legal"][0]["text"], "since": "x"}), 400)
    assert "since" in error_of(client.get(f"/api/games/{state['id']}?since=-1"), 400)
    assert "since" in error_of(client.get(f"/api/games/{state['id']}?since=99999"), 400)
    assert "once the game is over" in error_of(client.get(f"/api/games/{state['id']}/record"), 409)
    assert client.get(f"/api/games/{state['id']}").json()["log_size"] == state["log_size"]  # nothing moved
    done = play_out(client, state, random.Random(0))
    assert "game is over" in error_of(client.post(url, json={"action": "draw"}), 409)
    assert client.delete(f"/api/games/{done['id']}").status_code == 200
    error_of(client.get(f"/api/games/{done['id']}"), 404)


def test_a_failing_bot_is_an_error_not_a_crash(client, monkeypatch):
    class Broken:
        name = "broken"

        def reset(self):
            pass

        def act(self, observation, action_mask):
            raise RuntimeError("out of cheese")

    monkeypatch.setattr(web, "make_agent", lambda spec, env, seed=None: Broken())
    body = {"env": "pairs_draft_v0", "agents": ["random", "random", "random", "human"], "seed": 1}
    message = error_of(client.post("/api/games", json=body), 500)
    assert "seat" in message and "out of cheese" in message
    assert client.get("/api/options").status_code == 200


def test_a_bot_s_illegal_move_does_not_show_its_cards(client, monkeypatch):
    class Cheat:
        name = "cheat"

        def reset(self):
            pass

        def act(self, observation, action_mask):
            return int(np.flatnonzero(np.asarray(action_mask) == 0)[0])

    monkeypatch.setattr(web, "make_agent", lambda spec, env, seed=None: Cheat())
    body = {"env": "craits_v0", "args": {"deals": [3]}, "agents": ["random", "human", "random", "random"], "seed": 1}
    message = error_of(client.post("/api/games", json=body), 500)
    assert "illegal move" in message and "play" not in message


def test_bots_are_listed_from_the_folders_given(tmp_path):
    (tmp_path / "mine" / "craits").mkdir(parents=True)
    (tmp_path / "mine" / "craits" / "meta.json").write_text(json.dumps({"env_id": "craits_v0"}))
    (tmp_path / "mine" / "craits" / "policy.npz").write_bytes(b"")
    (tmp_path / "mine" / "export").mkdir()
    (tmp_path / "mine" / "export" / "bot.json").write_text(json.dumps({"env_id": "pairs_draft_v0"}))
    (tmp_path / "mine" / "export" / "model.onnx").write_bytes(b"")
    (tmp_path / "mine" / "junk").mkdir()
    (tmp_path / "mine" / "junk" / "meta.json").write_text("{not json")
    (tmp_path / "mine" / "junk" / "policy.npz").write_bytes(b"")
    found = {b["spec"]: b for b in web.find_bots([tmp_path / "mine", tmp_path / "missing"])}
    root = (tmp_path / "mine").as_posix()
    shipped = {b: found.pop(b) for b in shipping.bot_names()}  # listed first, by name, wherever the app runs
    assert all(bot["kind"] == "shipped" for bot in shipped.values()) and shipped["craits"]["env"] == "craits_v0"
    guided = {b: found.pop(f"ismcts:prior={b}") for b in shipping.bot_names()}  # each with its guided search
    assert all(bot["kind"] == "search" for bot in guided.values()) and guided["pairs_draft"]["env"] == "pairs_draft_v0"
    for name in ("create", "create_dqn", "craits_ensemble"):  # and their strongest searches
        deep = found.pop(f"ismcts:prior={name},{shipping.STRONGEST_SEARCH[name]}")
        assert deep["kind"] == "search" and deep["env"] == "craits_v0"
    assert set(found) == {f"{root}/craits", f"onnx:{root}/export"}
    assert found[f"onnx:{root}/export"]["env"] == "pairs_draft_v0" and found[f"{root}/craits"]["kind"] == "checkpoint"


def test_a_guided_search_plays_and_its_network_must_be_offered(tmp_path):
    handle = EnvHandle("craits_v0")
    bot = web.seat_bot("ismcts:prior=craits", handle, seed=1, offered={"craits"})
    assert bot.network is not None and bot.simulations == GUIDED_SIMULATIONS and bot.max_time_ms == web.MOVE_TIME_MS
    # a network that is not offered loads if it can, else one message whatever the reason
    copy = tmp_path / "copy"
    shutil.copytree(shipping.bot_folder("craits_dqn"), copy)
    assert web.seat_bot(f"ismcts:prior={copy.as_posix()}", handle, seed=1).network is not None
    for prior in ("/etc", "/nonexistent", "pairs_draft"):
        with pytest.raises(ValueError) as error:
            web.seat_bot(f"ismcts:prior={prior}", handle, seed=1, offered={"pairs_draft"} - {prior})
        assert str(error.value) == web.NOT_OFFERED
    with pytest.raises(ValueError, match="simulations=200000 is over"):
        web.seat_bot("ismcts:prior=craits,simulations=200000", handle, seed=1, offered={"craits"})
    # the strongest search listed for a shipped network plays with its options, under the move limit
    partnership = EnvHandle("craits_v0", {"preset": "create", "partnership": True})
    deep = web.seat_bot(
        f"ismcts:prior=create,{shipping.STRONGEST_SEARCH['create']}", partnership, seed=1, offered={"create"}
    )
    assert deep.simulations == 1000 and deep.symlog and deep.max_time_ms == web.MOVE_TIME_MS
    deep = web.seat_bot(
        f"ismcts:prior=create_dqn,{shipping.STRONGEST_SEARCH['create_dqn']}",
        partnership,
        seed=1,
        offered={"create_dqn"},
    )
    assert deep.simulations == 1000 and deep.symlog and deep.value_leaves and deep.temperature == 1
    assert deep.max_time_ms == web.MOVE_TIME_MS
    deep = web.seat_bot(
        f"ismcts:prior=craits_ensemble,{shipping.STRONGEST_SEARCH['craits_ensemble']}",
        handle,
        seed=1,
        offered={"craits_ensemble"},
    )
    assert deep.simulations == 1000 and deep.value_leaves and deep.max_time_ms == web.MOVE_TIME_MS


def test_the_number_of_games_is_capped():
    app = create_app(max_games=2, idle_minutes=60)
    with TestClient(app, base_url=BASE) as client:
        first, _ = new_game(client, CRAITS), new_game(client, CRAITS)
        assert "2 games are in progress" in error_of(client.post("/api/games", json=CRAITS), 503)
        client.delete(f"/api/games/{first['id']}")
        new_game(client, CRAITS)
    app = create_app(max_games=1, idle_minutes=0)  # an idle game makes room
    with TestClient(app, base_url=BASE) as client:
        first = new_game(client, CRAITS)
        new_game(client, CRAITS)
        error_of(client.get(f"/api/games/{first['id']}"), 404)


# ------------------------------------------------------------ Host and Origin
@pytest.mark.parametrize(
    "host", ["evil.example:8000", "evil.example", "127.0.0.1:9999", "localhost.evil.example:8000", "10.0.0.1:8000"]
)
def test_other_hosts_are_refused(client, host):
    """A page whose domain rebinds to 127.0.0.1 sends its own name as Host: nothing answers it."""
    for response in (
        client.get("/", headers={"Host": host}),
        client.get("/api/options", headers={"Host": host}),
        client.post("/api/games", json=PAIRS, headers={"Host": host}),
    ):
        message = error_of(response, 421)
        assert "answers to Host" in message and "127.0.0.1:8000" in message and "localhost:8000" in message
    assert len(client.app.state.sessions) == 0


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "LocalHost:8000", "[::1]:8000"])
def test_the_loopback_names_are_served(client, host):
    assert client.get("/api/options", headers={"Host": host}).status_code == 200
    assert client.post("/api/games", json=PAIRS, headers={"Host": host}).status_code == 201


def test_the_host_it_was_started_for_and_the_address_reached_are_served():
    app = create_app(host="MyBox.lan")
    with TestClient(app, base_url=BASE) as client:
        assert client.get("/api/options", headers={"Host": "mybox.lan:8000"}).status_code == 200
        error_of(client.get("/api/options", headers={"Host": "mybox.lan:8001"}), 421)
    with TestClient(create_app(host="0.0.0.0"), base_url="http://192.168.1.5:8000") as client:
        assert client.get("/api/options").status_code == 200  # an IP literal the request arrived at
        assert client.get("/api/options", headers={"Host": "0.0.0.0:8000"}).status_code == 200
        error_of(client.get("/api/options", headers={"Host": "192.168.1.6:8000"}), 421)


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://evil.example:8000",
        "http://127.0.0.1:9999",
        "https://127.0.0.1:8000",
        "null",
        "http://127.0.0.1:8000/x",
    ],
)
def test_changes_from_other_origins_are_refused(client, app, origin):
    state = new_game(client, PAIRS, seed=1)
    bad = {"Origin": origin}
    assert "refused" in error_of(client.post("/api/games", json=PAIRS, headers=bad), 403)
    move = {"action": state["legal"][0]["text"]}
    assert "own pages" in error_of(client.post(f"/api/games/{state['id']}/move", json=move, headers=bad), 403)
    assert "own pages" in error_of(client.delete(f"/api/games/{state['id']}", headers=bad), 403)
    assert len(app.state.sessions) == 1
    after = client.get(f"/api/games/{state['id']}", headers=bad).json()  # reading changes nothing
    assert after["log_size"] == state["log_size"]


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"])
def test_changes_from_the_app_s_own_page_are_taken(client, origin):
    response = client.post("/api/games", json={**PAIRS, "seed": 1}, headers={"Origin": origin})
    assert response.status_code == 201, response.text
    state = response.json()
    moved = client.post(
        f"/api/games/{state['id']}/move", json={"action": state["legal"][0]["text"]}, headers={"Origin": origin}
    )
    assert moved.status_code == 200, moved.text
    assert client.delete(f"/api/games/{state['id']}", headers={"Origin": origin}).status_code == 200


# ------------------------------------------------------------------- bot specs
def _specs_error(client, spec):
    body = {"env": "craits_v0", "agents": ["human", spec, "random", "random"]}
    return error_of(client.post("/api/games", json=body), 400).replace(shown(spec), "SPEC")


def test_a_spec_not_offered_does_not_tell_what_exists(client, tmp_path):
    """Whatever is at the path (nothing, a file, a folder, half a checkpoint, a broken one,
    a checkpoint for the other game), the answer is the same."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "meta.json").write_text(json.dumps({"env_id": "craits_v0"}))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "meta.json").write_text("{nope")
    (tmp_path / "broken" / "policy.npz").write_bytes(b"nope")
    shutil.copytree(ROOT / "checkpoints" / "pairs_draft", tmp_path / "pairs")
    specs = [
        tmp_path / "missing",
        tmp_path / "file",
        tmp_path / "empty",
        tmp_path / "half",
        tmp_path / "broken",
        tmp_path / "pairs",
        "/etc",
        "/root",
        "/proc/self",
    ]
    specs = [str(p) for p in specs] + [f"onnx:{tmp_path / 'empty'}", f"onnx:{tmp_path / 'missing'}", "nobody"]
    messages = {_specs_error(client, spec) for spec in specs}
    assert messages == {f"agents: seat 1 (SPEC): {web.NOT_OFFERED}"}


def test_a_valid_checkpoint_not_offered_still_sits(client, tmp_path):
    shutil.copytree(ROOT / "checkpoints" / "craits", tmp_path / "mine")
    state = new_game(client, {"env": "craits_v0", "agents": ["human", str(tmp_path / "mine"), "random", "random"]})
    assert state["agents"][1] == str(tmp_path / "mine")


def test_an_offered_bot_s_error_names_the_reason(client):
    body = {"env": "craits_v0", "agents": ["human", "checkpoints/pairs_draft", "random", "random"]}
    assert "pairs_draft_v0" in error_of(client.post("/api/games", json=body), 400)


# --------------------------------------------------------------- search budget
def test_search_specs_get_the_move_time_limit():
    assert web.search_spec("ismcts", 800) == "ismcts:simulations=1000,max_time_ms=800"
    assert web.search_spec("ismcts:simulations=50,seed=3", 800) == "ismcts:simulations=50,seed=3,max_time_ms=800"
    assert web.search_spec("ismcts:max_time_ms=0,uct_c=2", 800) == "ismcts:simulations=1000,max_time_ms=800,uct_c=2.0"
    assert web.search_spec("ismcts:max_time_ms=300", 800) == "ismcts:max_time_ms=300.0"  # a time alone stays so
    with pytest.raises(ValueError, match="over this server's cap of 100000"):
        web.search_spec(f"ismcts:simulations={web.MAX_SIMULATIONS + 1}", 800)
    with pytest.raises(ValueError, match="max_time_ms=801 is over this server's limit of 800 ms"):
        web.search_spec("ismcts:max_time_ms=801", 800)
    with pytest.raises(ValueError, match="unknown IS-MCTS option"):
        web.search_spec("ismcts:speed=9", 800)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("ismcts:simulations=100000000", "simulations=100000000 is over this server's cap of 100000 a move"),
        ("ismcts:max_time_ms=60000", "max_time_ms=60000 is over this server's limit of 700 ms a move"),
    ],
)
def test_a_search_over_the_budget_is_refused(spec, words):
    with TestClient(create_app(move_time_ms=700), base_url=BASE) as client:
        body = {"env": "pairs_draft_v0", "agents": ["human", spec, "random", "random"]}
        message = error_of(client.post("/api/games", json=body), 400)
        assert words in message and "seat 1" in message


def test_every_search_move_stops_at_the_move_time():
    """The most simulations allowed would take a minute or more a move here; the time limit
    cuts each short."""
    app = create_app(move_time_ms=300)
    search = f"ismcts:simulations={web.MAX_SIMULATIONS}"
    spec = {**LAST, "agents": [search, "ismcts", "ismcts:max_time_ms=100", "human"]}
    with TestClient(app, base_url=BASE) as client:
        started = time.monotonic()
        state = new_game(client, spec)
        assert time.monotonic() - started < 60
        bots = app.state.sessions.get(state["id"]).agents
        assert [(b.simulations, b.max_time_ms) for b in bots[:3]] == [
            (web.MAX_SIMULATIONS, 300),
            (1000, 300),
            (None, 100),
        ]
        assert state["agents"] == spec["agents"]  # the record keeps the specs as given
        assert state["your_turn"] and state["log_size"] > 1


# ------------------------------------------------------- bots in their own thread
class Gate:
    """Bots that, once ``hold`` is set, each wait in ``act`` until the test releases them: a
    bot thinking as long as the test likes."""

    def __init__(self):
        self.hold, self.asked, self.release = threading.Event(), threading.Event(), threading.Event()
        self.calls = 0

    def bot(self, spec, env, seed=None):
        return GatedBot(self)


class GatedBot:
    name = "gated"

    def __init__(self, gate):
        self.gate = gate

    def reset(self):
        pass

    def act(self, observation, action_mask):
        if self.gate.hold.is_set():
            self.gate.calls += 1
            self.gate.asked.set()
            self.gate.release.wait(LONG)
        return int(np.flatnonzero(action_mask)[0])


@pytest.fixture
def gate(monkeypatch):
    gate = Gate()
    monkeypatch.setattr(web, "make_agent", gate.bot)
    yield gate
    gate.release.set()


@pytest.fixture
def background():
    with ThreadPoolExecutor(2) as pool:
        yield pool


def bot_threads():
    return [t for t in threading.enumerate() if t.name == "deckgym-web-bots"]


def test_a_thinking_bot_holds_up_no_request(client, gate, background):
    state = new_game(client, FIRST)
    gate.hold.set()
    url = f"/api/games/{state['id']}"
    moving = background.submit(client.post, f"{url}/move", json={"action": state["legal"][0]["text"]})
    assert gate.asked.wait(LONG)
    now = client.get(f"{url}?since={state['log_size']}")  # the bot of seat 1 is thinking
    assert now.status_code == 200, now.text
    now = now.json()
    assert now["thinking"] == 1 and not now["your_turn"] and now["legal"] == []
    assert [e["seat"] for e in now["log"] if e["kind"] == "move"] == [0]  # the person's pick shows
    assert "still moving" in error_of(client.post(f"{url}/move", json={"action": "pick 1"}), 409)
    assert error_of(client.get(f"{url}/record"), 409)
    assert client.get("/api/options").status_code == 200
    assert new_game(client, FIRST)["your_turn"]  # another game goes on meanwhile
    gate.hold.clear()
    gate.release.set()
    moved = moving.result(LONG)
    assert moved.status_code == 200 and moved.json()["your_turn"] and moved.json()["thinking"] is None
    assert client.get(url).json()["log_size"] == moved.json()["log_size"]


def test_delete_stops_the_bots(client, app, gate, background):
    state = new_game(client, FIRST)
    gate.hold.set()
    url = f"/api/games/{state['id']}"
    moving = background.submit(client.post, f"{url}/move", json={"action": state["legal"][0]["text"]})
    assert gate.asked.wait(LONG)
    assert client.delete(url).status_code == 200
    error_of(client.get(url), 404)
    gate.release.set()
    assert "closed" in error_of(moving.result(LONG), 410)
    assert gate.calls == 1  # seats 2 and 3 were never asked
    deadline = time.monotonic() + LONG
    while bot_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not bot_threads()


def test_delete_ends_a_search_in_progress(background):
    """A search allowed ten minutes a move stops soon after its game is deleted, well short of
    its budget: the work ends with the game, not with the move."""
    app = create_app(move_time_ms=600_000)
    spec = {**FIRST, "agents": ["human", f"ismcts:simulations={web.MAX_SIMULATIONS}", "random", "random"]}
    with TestClient(app, base_url=BASE) as client:
        state = new_game(client, spec)
        url = f"/api/games/{state['id']}"
        search = app.state.sessions.get(state["id"]).agents[1]
        moving = background.submit(client.post, f"{url}/move", json={"action": state["legal"][0]["text"]})
        deadline = time.monotonic() + LONG
        while client.get(url).json()["thinking"] != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the search is under way
        assert client.delete(url).status_code == 200
        assert "closed" in error_of(moving.result(LONG), 410)
        while bot_threads() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not bot_threads()
        visits = sum(edge.visits for edge in search.last_root.edges.values())
        assert 0 < visits < web.MAX_SIMULATIONS  # stopped part-way


def test_games_being_created_count_toward_the_cap(gate, background):
    app = create_app(max_games=1, idle_minutes=0)
    with TestClient(app, base_url=BASE) as client:
        gate.hold.set()
        creating = background.submit(client.post, "/api/games", json=LAST)
        assert gate.asked.wait(LONG)
        assert "1 games are in progress" in error_of(client.post("/api/games", json=FIRST), 503)
        gate.hold.clear()
        gate.release.set()
        assert creating.result(LONG).status_code == 201


def test_a_game_whose_bots_are_moving_is_not_dropped_for_room(gate, background):
    app = create_app(max_games=1, idle_minutes=0)
    with TestClient(app, base_url=BASE) as client:
        state = new_game(client, FIRST)
        gate.hold.set()
        moving = background.submit(
            client.post, f"/api/games/{state['id']}/move", json={"action": state["legal"][0]["text"]}
        )
        assert gate.asked.wait(LONG)
        error_of(client.post("/api/games", json=FIRST), 503)
        gate.hold.clear()
        gate.release.set()
        assert moving.result(LONG).status_code == 200
        new_game(client, FIRST)  # now idle: it makes room
        error_of(client.get(f"/api/games/{state['id']}"), 404)


# ------------------------------------------------------- the server as people run it
def test_the_socket_listens_before_the_address_is_printed():
    sock = web.bind_socket("127.0.0.1", 0)
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
        with socket.create_connection(sock.getsockname()[:2], timeout=LONG):
            pass  # queued in the backlog though nothing serves yet
    finally:
        sock.close()


@pytest.fixture
def server_process(tmp_path):
    """``start(*args)`` runs ``python -m training.web --port 0 ...`` and gives its address
    once printed; the processes are killed at the end."""
    processes = []

    def start(*args):
        process = subprocess.Popen(
            [sys.executable, "-m", "training.web", "--port", "0", "--bots", str(tmp_path), *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
        line = lines.get(timeout=LONG)
        match = re.search(r"open (http://\S+/)", line)
        assert match, (line, process.stderr.read() if process.poll() is not None else "")
        return process, match.group(1)

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(LONG)


def test_the_printed_address_answers_at_once(server_process):
    _, url = server_process()
    with urllib.request.urlopen(url + "api/options", timeout=LONG) as response:
        assert response.status == 200 and json.load(response)["games"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_one_signal_stops_the_server_while_a_bot_thinks(server_process, background, sig):
    """Three searches of ten minutes a move are thinking when the signal comes."""
    process, url = server_process("--move-time-ms", "600000")
    search = "ismcts:max_time_ms=600000"
    body = json.dumps({**LAST, "agents": [search, search, search, "human"]}).encode()
    request = urllib.request.Request(url + "api/games", data=body, headers={"Content-Type": "application/json"})

    def create():
        try:
            with urllib.request.urlopen(request, timeout=LONG) as response:
                return response.status
        except (urllib.error.URLError, ConnectionError) as exc:
            return exc

    creating = background.submit(create)
    time.sleep(1)
    assert not creating.done()  # the first bot is thinking
    process.send_signal(sig)
    process.wait(LONG)
    assert not isinstance(creating.result(LONG), int)  # dropped, not answered
