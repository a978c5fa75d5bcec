"""The web app's API (training/web.py) through Starlette's TestClient: whole games, what the
person's seat is shown (and not), the game record, request validation, sessions."""
from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 and warns about httpx; both work
    warnings.filterwarnings("ignore", message=".*httpx", category=UserWarning)
    from starlette.testclient import TestClient

from training import web
from training.games import EnvHandle
from training.records import RECORD_FORMAT, parse_record, replay
from training.web import create_app

CRAITS = {"env": "craits_v0", "args": {"deals": [3, 2]},
          "agents": ["human", "heuristic", "checkpoints/craits", "random"]}
PAIRS = {"env": "pairs_draft_v0", "agents": ["heuristic", "checkpoints/pairs_draft", "human", "random"]}


@pytest.fixture
def app():
    return create_app()


@pytest.fixture
def client(app):
    with TestClient(app) as client:
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
    assert set(games) == {"craits_v0", "pairs_draft_v0"}
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
        state = client.post(f"/api/games/{state['id']}/move",
                            json={"action": rng.choice(state["legal"])["text"], "since": state["log_size"]}).json()
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
    spec = {"env": "craits_v0", "args": {"deals": [1, 2], "episode": "deal", "num_players": 3},
            "agents": ["random", "heuristic", "human"]}
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


@pytest.mark.parametrize("body, status, words", [
    ({"env": "chess", "agents": ["human"]}, 400, "not a game here"),
    ({"env": "craits_v0", "agents": ["human", "heuristic"], "args": {"num_players": 9}}, 400, "num_players"),
    ({"env": "craits_v0", "agents": ["human"] * 4}, 400, "exactly one seat"),
    ({"env": "craits_v0", "agents": ["human", "heuristic"]}, 400, "2 given for 4 seats"),
    ({"env": "craits_v0", "agents": ["human", "nobody", "random", "random"]}, 400, "seat 1 ('nobody')"),
    ({"env": "craits_v0", "agents": ["human", "checkpoints/pairs_draft", "random", "random"]}, 400, "pairs_draft_v0"),
    ({"env": "craits_v0", "agents": ["human", 3, "random", "random"]}, 400, "agents"),
    ({"env": "craits_v0", "agents": "human"}, 400, "agents"),
    ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "args": [1]}, 400, "args"),
    ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "args": {"colour": "red"}}, 400, "colour"),
    ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "args": {"render_mode": "human"}}, 400, "render_mode"),
    ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "seed": -1}, 400, "seed"),
    ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "seed": True}, 400, "seed"),
    ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "seed": 1.5}, 400, "seed"),
    ({"env": "craits_v0", "agents": ["human"] + ["random"] * 3, "colour": 1}, 400, "unknown field 'colour'"),
    ({"agents": ["human"]}, 400, "missing field env"),
])
def test_bad_new_game_requests(client, body, status, words):
    assert words in error_of(client.post("/api/games", json=body), status)


def test_bad_bodies(client):
    assert "malformed JSON" in error_of(client.post("/api/games", content=b"{nope",
                                                    headers={"Content-Type": "application/json"}), 400)
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
    assert set(found) == {f"{root}/craits", f"onnx:{root}/export"}
    assert found[f"onnx:{root}/export"]["env"] == "pairs_draft_v0" and found[f"{root}/craits"]["kind"] == "checkpoint"


def test_the_number_of_games_is_capped():
    app = create_app(max_games=2, idle_minutes=60)
    with TestClient(app) as client:
        first, _ = new_game(client, CRAITS), new_game(client, CRAITS)
        assert "2 games are in progress" in error_of(client.post("/api/games", json=CRAITS), 503)
        client.delete(f"/api/games/{first['id']}")
        new_game(client, CRAITS)
    app = create_app(max_games=1, idle_minutes=0)  # an idle game makes room
    with TestClient(app) as client:
        first = new_game(client, CRAITS)
        new_game(client, CRAITS)
        error_of(client.get(f"/api/games/{first['id']}"), 404)
