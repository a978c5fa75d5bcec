"""The bot protocol (``training/frontends/protocol.py``, ``python -m training.serve_bot``;
``docs/bot-protocol.md``).

A referee plays games on the real env and tells each seat's server session, through the
same message handler the CLI uses, what that seat sees (``SeatReporter``); at each of the
seat's turns the observation the server rebuilt from the messages must equal the env's own,
exactly. Then: bad input gets an error naming it and the session goes on; the CLI in a
subprocess; the docs' example exchange; the Node.js client of ``examples/node``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from training.common.games import make_raw_env
from training.frontends.protocol import MAX_LINE, BotServer, SeatReporter

ROOT = Path(__file__).resolve().parent.parent


def start(server: BotServer, game="craits_v0", rules=None, seat=0, players=2, **extra) -> dict:
    message = {
        "type": "start",
        "protocol": 1,
        "game": game,
        "rules": rules or {},
        "seat": seat,
        "players": players,
        **extra,
    }
    return server.handle(message)


def public_facts(game) -> dict:
    """What a check event may assert, read off the real engine."""
    if hasattr(game, "hand_bits"):
        return {
            "to_act": game.current_player,
            "deal": game.deal_index + 1,
            "top": game.top,
            "suit": game.suit,
            "crank": game.crank,
            "direction": game.direction,
            "stock": len(game.stock),
            "hand_sizes": [game.hand_size(s) for s in range(game.num_players)],
            "totals": game.scores(),
            "pressures": list(game.pressures),
            "announced": list(game.announced),
        }
    return {
        "to_act": game.current_player,
        "phase": game.phase,
        "start_player": game.start_player,
        "picks_done": game.pick_index,
        "rounds_done": game.round_index,
        "face_up": [game.face_up(s) for s in range(4)],
        "face_down": [game.face_down(s) for s in range(4)],
        "totals": game.scores(),
    }


def referee(env_id: str, args: dict, seed: int, agent="random", chooser=None) -> dict:
    """Play a game on the real env with one server session per seat; at every turn the
    rebuilt observation and mask must equal the env's. The seat to act plays the served
    move, or ``chooser(game, rng)``'s when it gives one (a client may override its bot).
    Returns what was sent to seat 0, by event kind (and deal ends by reason)."""
    raw = make_raw_env(env_id, **args)
    raw.reset(seed=seed)
    n = len(raw.possible_agents)
    rng = random.Random(seed)
    servers = [BotServer(agent) for _ in range(n)]
    reporters = [SeatReporter(s) for s in range(n)]
    pending = [reporters[s].opening(raw.game) for s in range(n)]
    sent = {}
    for s in range(n):
        reply = start(servers[s], env_id, args, seat=s, players=n, options={"seed": seed})
        assert reply["type"] == "ready", reply

    def flush(seat):
        for event in pending[seat] if seat == 0 else ():
            sent[event["event"]] = sent.get(event["event"], 0) + 1
            if event["event"] == "deal_end":
                sent[event["reason"]] = sent.get(event["reason"], 0) + 1
        reply = servers[seat].handle({"type": "update", "events": pending[seat]})
        assert reply["type"] == "ok", (reply, pending[seat])
        pending[seat] = []
        return reply

    while True:
        if any(raw.terminations.values()) or any(raw.truncations.values()):
            if raw.game.is_over or getattr(raw, "episode", "game") != "deal":
                break
            raw.reset()  # episode="deal": the same game goes on with its next deal
        game = raw.game
        seat = game.current_player
        expected = raw.observe(raw.agents[seat])
        assert flush(seat)["to_act"] == seat
        legal = [game.action_to_text(a) for a in game.legal_actions()]
        rng.shuffle(legal)  # any order
        reply = servers[seat].handle({"type": "act", "legal": legal, "id": len(sent)})
        assert reply["type"] == "move" and reply["id"] == len(sent), reply
        assert reply["action"] in legal
        rebuilt = servers[seat].session.last_observation
        differ = np.flatnonzero(rebuilt["observation"] != expected["observation"])
        assert not differ.size, f"seat {seat}: the rebuilt observation differs at {differ}"
        assert np.array_equal(rebuilt["action_mask"], expected["action_mask"])
        action = game.text_to_action(reply["action"])
        if chooser is not None:
            choice = chooser(game, rng)
            action = action if choice is None else choice
        tokens = [reporter.before(game, action) for reporter in reporters]
        raw.step(action)
        for s in range(n):
            pending[s] += reporters[s].after(raw.game, seat, tokens[s])
            if rng.random() < 0.1 and not raw.game.is_over:
                pending[s].append({"event": "check", **public_facts(raw.game)})
            if rng.random() < 0.2:  # some clients tell at once, others when the seat is to act
                flush(s)
    for s in range(n):
        reply = flush(s)
        assert reply["expect"] == "over" and reply["to_act"] is None
        assert reply["totals"] == raw.game.scores()
        assert servers[s].handle({"type": "stop"}) == {"type": "bye"}
    return sent


CRAITS_CASES = [
    ({"num_players": 2, "deals": [6, 3, 8]}, 0, "random"),
    ({"num_players": 2, "deals": [6, 3, 8]}, 1, "heuristic"),
    ({"num_players": 3, "preset": "create", "deals": [8, 7, 6]}, 2, "random"),
    ({"num_players": 4, "partnership": True, "deals": [8, 5]}, 3, "heuristic"),
    ({"num_players": 4, "announce": "action", "deals": [3, 2, 4]}, 4, "random"),
    ({"num_players": 5, "announce": "action", "preset": "create", "deals": [4, 3]}, 5, "random"),
    ({"num_players": 2, "empty_stock": "pressure", "deals": [20, 22]}, 6, "random"),  # pressure, stalemates
    ({"num_players": 3, "deals": [15, 16]}, 7, "random"),  # reshuffles
    ({"num_players": 4, "nine": "own_suit", "seven_target": "next_but_one", "episode": "deal"}, 8, "random"),
    ({}, 9, "heuristic"),  # a whole game: 4 players, 15 deals
]


@pytest.mark.parametrize("args,seed,agent", CRAITS_CASES)
def test_craits_observations_rebuilt_from_messages_equal_the_envs(args, seed, agent):
    for game_seed in (seed, seed + 100):
        sent = referee(
            "craits_v0",
            args,
            game_seed,
            agent,
            chooser=lambda game, rng: None if rng.random() < 0.8 else rng.choice(game.legal_actions()),
        )
        assert sent["deal"] == len(make_raw_env("craits_v0", **args).rules.deals) and sent["check"]


@pytest.mark.parametrize("seed", range(6))
def test_pairs_observations_rebuilt_from_messages_equal_the_envs(seed):
    sent = referee("pairs_draft_v0", {}, seed, "heuristic" if seed % 2 else "random")
    assert sent["pack"] == 10 and sent["move"] == 88


def hoarder(forced: list):
    """Draft copies of the numbers held, pair what is on the table, else shed the rarest: hands
    of few numbers, so that a number paired this round is sometimes all a seat has (forced)."""

    def choose(game, rng):
        legal, own = game.legal_actions(), game.hand_counts(game.current_player)
        if game.phase == "draft":
            return max(legal, key=lambda a: (own[a], a))
        if game.phase == "discard":
            return min(legal, key=lambda a: (own[a], a))
        on_table = {play.number - 1 for play in game.current_trick()}
        action = next((a for a in legal if a in on_table), None)
        action = min(legal, key=lambda a: (own[a], rng.random())) if action is None else action
        forced.append(action + 1 in game.paired_numbers())
        return action

    return choose


def test_pairs_forced_plays_through_the_protocol():
    forced = []
    for seed in (1, 6):
        referee("pairs_draft_v0", {}, seed, chooser=hoarder(forced))
    assert sum(forced) >= 4


def fives(game, rng):
    """Play a 5 whenever one fits: two players trading 5s over a reshuffled pile repeat positions."""
    legal = game.legal_actions()
    return next((a for a in legal if a < 52 and a >> 2 == 4), rng.choice(legal))


def test_a_deal_ended_by_repetition_is_told_by_the_client():
    sent = {}
    for seed in (1, 2):
        for key, count in referee("craits_v0", {"num_players": 2, "deals": [25]}, seed, chooser=fives).items():
            sent[key] = sent.get(key, 0) + count
    assert sent.get("repetition")


def test_served_scores_by_agent():
    server = BotServer("checkpoints/craits")
    ready = start(server, rules={"deals": [5]}, players=4, seat=1)
    assert ready["agent"] == "checkpoints/craits" and ready["rules"]["deals"] == [5]
    update = {
        "type": "update",
        "events": [{"event": "deal", "deal": 1, "dealer": 0, "hand": ["7H", "2C", "KD", "7S", "9D"], "upcard": "QH"}],
    }
    assert server.handle(update)["to_act"] == 1
    move = server.handle({"type": "act", "legal": ["play 7H", "play 9D"]})
    assert move["type"] == "move" and move["score_kind"] == "logits"
    assert set(move["scores"]) == {"play 7H", "play 9D"}
    assert move["scores"][move["action"]] == max(move["scores"].values())
    search = BotServer("ismcts:simulations=40")
    start(search, "pairs_draft_v0", players=4, seat=2, options={"seed": 3})
    events = [
        {"event": "deal", "start_player": 0, "pack": [1, 2, 3, 3, 5, 6, 7, 8, 9, 10, 10]},
        {"event": "move", "seat": 0, "move": "pick"},
        {"event": "move", "seat": 1, "move": "pick"},
    ]
    assert search.handle({"type": "update", "events": events})["to_act"] == 2
    move = search.handle({"type": "act", "legal": [f"pick {n}" for n in (1, 2, 3, 5, 6, 7, 8, 9, 10)]})
    assert move["score_kind"] == "visits" and sum(move["scores"].values()) == 40
    plain = BotServer("heuristic")
    start(plain, "pairs_draft_v0", players=4, seat=0, options={"scores": True})
    plain.handle({"type": "update", "events": events[:1]})
    assert "scores" not in plain.handle({"type": "act", "legal": [f"pick {n}" for n in (1, 2, 3, 5, 6, 7, 8, 9, 10)]})


def test_an_exported_bot_serves_its_logits(tmp_path):
    pytest.importorskip("onnxruntime")
    from training.agents.export import export

    export(ROOT / "checkpoints" / "pairs_draft", tmp_path / "bot")
    server = BotServer(f"onnx:{tmp_path / 'bot'}")
    assert start(server, "pairs_draft_v0", players=4, seat=3)["type"] == "ready"
    server.handle(update({"event": "deal", "start_player": 3, "pack": PAIRS_PACK}))
    legal = [f"pick {n}" for n in sorted(set(PAIRS_PACK))]
    move = server.handle({"type": "act", "legal": legal})
    assert move["score_kind"] == "logits" and set(move["scores"]) == set(legal)
    assert move["scores"][move["action"]] == max(move["scores"].values())


# ---------------------------------------------------------------------- bad input
CRAITS_DEAL = {"event": "deal", "deal": 1, "dealer": 0, "hand": ["7H", "2C", "KD"], "upcard": "KH"}


def craits_session(agent="heuristic") -> BotServer:
    """Seat 0 of a 2-player game (deals of 3 and 2), dealt 7H 2C KD under the upcard KH: seat 1 to play."""
    server = BotServer(agent)
    assert start(server, rules={"deals": [3, 2]})["type"] == "ready"
    assert server.handle({"type": "update", "events": [CRAITS_DEAL]})["to_act"] == 1
    return server


def update(*events) -> dict:
    return {"type": "update", "events": list(events)}


def move(seat, text, **extra) -> dict:
    return {"event": "move", "seat": seat, "move": text, **extra}


CRAITS_ERRORS = [  # (request, words the error names)
    (update(move(1, "play 7H")), ["7H", "in your hand"]),
    (update(move(1, "play KH")), ["KH", "played already"]),
    (update(move(1, "play 7X")), ["unknown", "7X"]),
    (update(move(1, "play 3C")), ["seat 1 can't play 3C", "KH"]),
    (update(move(0, "play KD")), ["out of turn", "seat 1 is to play"]),
    (update(move(1, "draw", drew=["AS"])), ["draw nothing", "drew"]),
    (update(move(1, "draw"), move(0, "play 2C")), ["not legal", "legal moves: play 7H, play KD"]),
    (update(move(1, "play 5H")), ["makes you draw 1 card", '"drew" lists 0']),
    (update(move(1, "play 5H", drew=["KD"])), ["KD", "in your hand already"]),
    (update(move(1, "play 5H", drew=["KH"])), ["KH", "discard pile"]),
    (update(move(1, "fold")), ["unknown Craits action", "fold"]),
    (update(CRAITS_DEAL), ["deal", "can't come now", "under way"]),
    (update({"event": "deal_end", "hands": [["7H", "2C", "KD"], ["AS", "AD", "AH"]]}), ["not over", "repetition"]),
    (
        update({"event": "deal_end", "hands": [["7H", "2C", "KD"], ["AS", "AD", "AH"]], "reason": "repetition"}),
        ["never reshuffled"],
    ),
    (update({"event": "check", "stock": 40}), ["check failed", "stock", "45"]),
    (update({"event": "check", "colour": "red"}), ["unknown field", "colour"]),
    (update({"event": "shuffle"}), ["unknown Craits event", "shuffle"]),
    (update(move(1, "draw", extra=1)), ["unknown field", "extra"]),
    (update("draw"), ["must be a JSON object"]),
    ({"type": "update", "events": {"event": "move"}}, ["events must be a list"]),
    ({"type": "act", "legal": ["draw"]}, ["act can't come now", "seat 1 is to move"]),
    ({"type": "start", "protocol": 1, "game": "craits_v0", "seat": 0, "players": 2}, ["under way", "stop"]),
]


@pytest.mark.parametrize("request_,words", CRAITS_ERRORS, ids=[w[0] for _, w in CRAITS_ERRORS])
def test_bad_craits_input_is_named_and_the_session_goes_on(request_, words):
    server = craits_session()
    reply = server.handle({**request_, "id": "x"})
    assert reply["type"] == "error" and reply["id"] == "x", reply
    for word in words:
        assert word in reply["error"], (word, reply["error"])
    # nothing changed: seat 1 is still to play on KH, and the game goes on
    assert server.handle(update({"event": "check", "to_act": 1, "top": "KH", "hand_sizes": [3, 3]}))["type"] == "ok"
    assert server.handle(update(move(1, "draw"))) == {"type": "ok", "expect": "move", "to_act": 0, "totals": [0, 0]}
    reply = server.handle({"type": "act", "legal": ["play 7H", "play KD"]})
    assert reply["type"] == "move" and reply["action"] in ("play 7H", "play KD")


def test_act_legal_moves_must_be_the_servers():
    server = craits_session()
    server.handle(update(move(1, "draw")))
    for legal, words in (
        (["draw"], ['"draw"', "not legal here", "legal moves: play 7H, play KD"]),
        (["play 7H", "play KD", "play 9H"], ["play 9H", "you don't hold 9H"]),
        (["play 7H"], ["lacks", "play KD"]),
        (["play 7H", "play KD", "pass"], ["unknown Craits action", "pass"]),
    ):
        reply = server.handle({"type": "act", "legal": legal})
        assert reply["type"] == "error" and all(w in reply["error"] for w in words), reply
    assert server.handle({"type": "act", "legal": ["play KD", "play 7h"]})["type"] == "move"


def test_an_update_is_all_or_nothing():
    server = craits_session()
    reply = server.handle(update(move(1, "draw"), {"event": "check", "to_act": 0}, move(1, "draw")))
    assert reply["type"] == "error" and reply["event"] == 2 and "out of turn" in reply["error"]
    assert server.handle(update(move(1, "draw")))["to_act"] == 0  # the first draw was undone


def test_a_whole_deal_end_and_a_hand_size_that_cannot_go_below_zero():
    """Deals of one card: the upcard 2C starts a crank, seat 1 adds its only card, seat 0 its
    only card; seat 1, out of cards, must take the crank (count 5)."""
    server = BotServer("heuristic")
    start(server, rules={"deals": [1, 1]})
    deal = {"event": "deal", "deal": 1, "hand": ["AS"], "upcard": "2C"}
    assert server.handle(update(deal, move(1, "play 2D")))["to_act"] == 0
    assert server.handle({"type": "act", "legal": ["play AS"]})["action"] == "play AS"
    reply = server.handle(update(move(0, "play AS"), move(1, "play 2H")))
    assert reply["type"] == "error" and "seat 1 has no cards left" in reply["error"]
    reply = server.handle(
        update(move(0, "play AS"), {"event": "check", "crank": 5, "hand_sizes": [0, 0]}, move(1, "draw"))
    )
    assert reply == {"type": "ok", "expect": "deal_end", "to_act": None, "totals": [0, 0]}
    for bad, words in (
        ({"hands": [["AS"], ["3C", "4C", "5C", "6C", "7C"]]}, ["your hand", "nothing"]),
        ({"hands": [[], ["3C", "4C", "5C", "6C"]]}, ["holds 5 cards", "lists 4"]),
        ({"hands": [[], ["3C", "4C", "5C", "6C", "2D"]]}, ["2D", "discard pile"]),
        ({"hands": [[], ["3C", "4C", "5C", "6C", "7C"]], "points": [0, 95]}, ["score [0, 65]"]),
        ({"hands": [[], ["3C", "4C", "5C", "6C", "7C"]], "reason": "stalemate"}, ["'out'"]),
    ):
        reply = server.handle(update({"event": "deal_end", **bad}))
        assert reply["type"] == "error" and all(w in reply["error"] for w in words), reply
    end = {"event": "deal_end", "hands": [[], ["3C", "4C", "5C", "6C", "7C"]], "points": [0, 65], "reason": "out"}
    assert server.handle(update(end)) == {"type": "ok", "expect": "deal", "to_act": None, "totals": [0, 65]}
    for bad, words in (
        ({"deal": 2, "dealer": 0, "hand": ["KH"], "upcard": "QH"}, "dealt by seat 1"),
        ({"deal": 3, "hand": ["KH"], "upcard": "QH"}, "deal must be an integer 1 to 2"),
        ({"deal": 2, "hand": ["KH", "KC", "KS"], "upcard": "QH"}, "1 card a hand, your hand lists 3"),
        # an upcard 5 makes seat 0 (not the dealer) draw: the hand lists the card drawn too
        ({"deal": 2, "hand": ["KH"], "upcard": "5H"}, "makes you draw 1 card"),
    ):
        reply = server.handle(update({"event": "deal", **bad}))
        assert reply["type"] == "error" and words in reply["error"], reply
    assert server.handle(update({"event": "deal", "deal": 2, "hand": ["KH", "2S"], "upcard": "5H"}))["to_act"] == 0


def test_an_impossible_draw_and_out_of_order_deals_are_refused():
    server = BotServer("random")
    start(server, rules={"deals": [25, 1]})
    plain = [r + s for s in "CDS" for r in "A234567TJQ"][:25]  # none follows the upcard KH, none wild
    reply = server.handle(update({"event": "deal", "deal": 2, "hand": plain, "upcard": "KH"}))
    assert reply["type"] == "error" and "the next deal is deal 1, not 2" in reply["error"]
    reply = server.handle(update({"event": "deal", "deal": 1, "hand": plain[:24] + ["KH"], "upcard": "KH"}))
    assert reply["type"] == "error" and "KH is also in your hand" in reply["error"]
    assert server.handle(update({"event": "deal", "deal": 1, "hand": plain, "upcard": "KH"}))["to_act"] == 1
    # 26 cards unseen, 21 of them playable on KH: seat 1's 25 cards can't all be unplayable
    reply = server.handle(update(move(1, "draw")))
    assert reply["type"] == "error" and "can't have had nothing to play" in reply["error"], reply
    reply = server.handle(update(move(1, "play 8H"), move(1, "suit C")))
    assert reply["to_act"] == 0


def test_after_the_last_deal_the_game_is_over():
    server = BotServer("random")
    start(server, rules={"deals": [1]})
    reply = server.handle(update({"event": "deal", "deal": 1, "hand": ["AS"], "upcard": "AH"}, move(1, "play 2H")))
    assert reply["to_act"] == 0  # a crank: seat 0 answers with its only card and goes out
    hands = [[], ["5D", "5C", "5S"]]  # seat 1 took the crank: 2 + 1
    reply = server.handle(update(move(0, "play AS"), move(1, "draw")))
    assert reply["expect"] == "deal_end"
    for bad, words in (
        ([[], ["5D", "5D", "5C"]], "5D is listed twice"),
        ([[]], "2 hands, one per seat"),
        ([["5D"], ["5C", "5S"]], "your hand"),
    ):
        reply = server.handle(update({"event": "deal_end", "hands": bad}))
        assert reply["type"] == "error" and words in reply["error"], reply
    assert server.handle(update({"event": "deal_end", "hands": hands, "points": [0, 90]}))["expect"] == "over"
    for request_ in (update(move(1, "draw")), {"type": "act", "legal": ["draw"]}):
        reply = server.handle(request_)
        assert reply["type"] == "error" and "the game is over" in reply["error"], reply
    assert server.handle({"type": "stop"}) == {"type": "bye"}
    assert start(server, "pairs_draft_v0", players=4)["type"] == "ready"  # the next game


PAIRS_PACK = [1, 2, 3, 3, 5, 6, 7, 8, 9, 10, 10]


def pairs_session() -> BotServer:
    """Seat 0 of Pairs Draft, start player 1; seats 1, 2, 3 pick before seat 0."""
    server = BotServer("heuristic")
    assert start(server, "pairs_draft_v0", players=4)["type"] == "ready"
    reply = server.handle(
        update({"event": "deal", "start_player": 1, "pack": PAIRS_PACK}, *(move(s, "pick") for s in (1, 2, 3)))
    )
    assert reply["to_act"] == 0
    return server


def test_bad_pairs_input_is_named_and_the_session_goes_on():
    fresh = BotServer("random")
    start(fresh, "pairs_draft_v0", players=4)
    for pack, words in (
        ([1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], ["2 cards 1: the deck has 1"]),
        (["1"], ["a number 1 to 10", '"1"']),
        ([2, 3], ["holds 11 cards, this one 2"]),
    ):
        reply = fresh.handle(update({"event": "deal", "start_player": 1, "pack": pack}))
        assert reply["type"] == "error" and all(w in reply["error"] for w in words), (words, reply)
    server = pairs_session()
    for request_, words in (
        (update(move(0, "pick 4")), ["not legal", "your pack holds 1 2 3 3 5"]),
        (update(move(0, "pick")), ["pick <number>"]),
        (update(move(0, "play 1")), ["no move of seat 0 in the draft"]),
        (update(move(1, "pick 3")), ["secret", "'pick'"]),
        (update(move(0, "pick 1"), move(1, "pick"), move(2, "pick")), ["packs have passed", "pick 2"]),
        (
            update(move(0, "pick 1"), {"event": "pack", "pack": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}),
            ["can't hold 1 × 1", "not in your hand"],
        ),
        (
            update(move(0, "pick 1"), {"event": "pack", "pack": [2, 3, 4, 5, 6, 7, 8, 9, 10]}),
            ["holds 10 cards, this one 9"],
        ),
        (update({"event": "pack", "pack": [2]}), ["a pack can't come now", "seat 0 is to pick"]),
        (update({"event": "deal", "start_player": 1, "pack": PAIRS_PACK}), ["the deal can't come now"]),
        (update(move(2, "pick")), ["out of turn", "seat 0 is to pick"]),
    ):
        reply = server.handle(request_)
        assert reply["type"] == "error" and all(w in reply["error"] for w in words), (words, reply)
    reply = server.handle(update(move(0, "pick 1"), {"event": "pack", "pack": [4, 4, 4, 4, 5, 6, 7, 8, 9, 9]}))
    assert reply == {"type": "ok", "expect": "move", "to_act": 1, "totals": [0, 0, 0, 0]}


def test_a_pack_coming_back_must_be_the_one_passed_less_three_picks():
    server = pairs_session()
    events = [move(0, "pick 1")]  # passes 2 3 3 5 6 7 8 9 10 10
    for pack, n in (
        ([4, 4, 5, 6, 7, 8, 9, 9, 10, 10], 4),
        ([5, 6, 7, 8, 8, 9, 10, 10, 10], 5),
        ([6, 7, 7, 8, 9, 9, 10, 10], 6),
    ):
        events += [{"event": "pack", "pack": pack}, *(move(s, "pick") for s in (1, 2, 3)), move(0, f"pick {n}")]
    assert server.handle(update(*events))["expect"] == "pack"
    # pick 5: back comes the first pack as passed, less three picks
    wrong = server.handle(update({"event": "pack", "pack": [1, 3, 5, 6, 7, 8, 9]}))
    assert wrong["type"] == "error" and "can't hold 1 × 1" in wrong["error"]
    wrong = server.handle(update({"event": "pack", "pack": [3, 3, 3, 6, 7, 8, 9]}))
    assert wrong["type"] == "error" and "you passed at pick 1" in wrong["error"]
    assert server.handle(update({"event": "pack", "pack": [3, 3, 5, 6, 7, 9, 10]}))["to_act"] == 1


def start_line(**fields) -> str:
    return json.dumps({"type": "start", "protocol": 1, "game": "craits_v0", "seat": 0, "players": 2, **fields})


GENERIC_ERRORS = [  # (request line, words the error names): no game under way
    ('{"type": "update"', ["malformed JSON"]),
    ("[1, 2]", ["a request must be a JSON object", "a list"]),
    ('{"events": []}', ["unknown request type", "null"]),
    ('{"type": "deal"}', ["unknown request type", "deal"]),
    ('{"type": "update", "events": []}', ["no game is under way", "start"]),
    ('{"type": "act", "legal": []}', ["no game is under way"]),
    ('{"type": "stop"}', ["no game is under way"]),
    (start_line(protocol=2), ["version 2"]),
    (start_line(game="uno"), ["unknown game", "uno"]),
    (start_line(players=6), ["players", "2 to 5"]),
    (start_line(players=3, rules={"partnership": True}), ["partnership", "4 players"]),
    (start_line(seat=2), ["seat", "0 to 1"]),
    (start_line(rules={"jokers": 2}), ["rules", "jokers"]),
    (start_line(rules=[1]), ["rules must be a JSON object"]),
    (start_line(table=1), ["unknown field", "table"]),
    (start_line(options={"seed": "x"}), ["options.seed"]),
    (start_line(options={"colour": "red"}), ["options has unknown field", "colour"]),
    (start_line(game="pairs_draft_v0", players=3), ["4 to 4"]),
    (start_line(game=["craits_v0"]), ["game must be a string", "a list"]),
    (start_line(game={"id": "craits_v0"}), ["game must be a string", "an object"]),
    (start_line(options=[]), ["options must be a JSON object", "a list"]),
    (start_line(options=0), ["options must be a JSON object", "a number"]),
    (start_line(options=""), ["options must be a JSON object", "a string"]),
    (start_line(options=None), ["options must be a JSON object", "null"]),
    # strict JSON only: no NaN/Infinity, no number that overflows to one, no endless digits or nesting
    ('{"type": "stop", "id": NaN}', ["NaN", "finite"]),
    ('{"type": "stop", "id": -Infinity}', ["-Infinity", "finite"]),
    ('{"type": "stop", "id": 1e400}', ["1e400", "finite"]),
    ('{"type": "stop", "id": ' + "9" * 5000 + "}", ["5000 digits"]),
    ("[" * 100_000, ["nested too deeply"]),
    (b'{"type": "st\xffop"}', ["not UTF-8", "0xff", "offset 12"]),
    ("x" * (MAX_LINE + 1), ["longer than 1048576 bytes"]),
]


@pytest.mark.parametrize("line,words", GENERIC_ERRORS)
def test_bad_requests_are_named_and_the_server_goes_on(line, words):
    server = BotServer("random")
    reply = server.handle_line(line)
    assert reply["type"] == "error" and all(w in reply["error"] for w in words), reply
    assert start(server)["type"] == "ready"


def test_an_event_of_the_wrong_type_is_named():
    server = BotServer("random")
    assert start(server, rules={"deals": [3]})["type"] == "ready"
    for kind in ([], {}, ["deal"], 3):
        reply = server.handle(update({**CRAITS_DEAL, "event": kind}))
        assert reply["type"] == "error" and "unknown Craits event" in reply["error"], reply
        assert "internal error" not in reply["error"]
    assert server.handle(update(CRAITS_DEAL))["type"] == "ok"


def test_a_checkpoint_for_other_rules_is_refused_at_start():
    server = BotServer("checkpoints/craits")
    reply = start(server, players=3)
    assert reply["type"] == "error" and "num_players" in reply["error"]
    assert start(server, players=4)["type"] == "ready"


def test_a_guided_search_serves_its_visits_and_checks_its_network():
    server = BotServer("ismcts:prior=pairs_draft,simulations=30")
    assert start(server, "pairs_draft_v0", players=4, seat=0, options={"seed": 3})["type"] == "ready"
    server.handle(
        {"type": "update", "events": [{"event": "deal", "start_player": 0, "pack": list(range(1, 11)) + [5]}]}
    )
    move = server.handle({"type": "act", "legal": [f"pick {n}" for n in range(1, 11)]})
    assert move["score_kind"] == "visits" and sum(move["scores"].values()) == 30
    server.handle({"type": "stop"})
    reply = start(server, "craits_v0", players=4, seat=0)  # a Pairs Draft network can't guide Craits
    assert reply["type"] == "error" and "trained for pairs_draft_v0" in reply["error"]


def test_bad_agents_and_games_are_refused_at_once():
    for spec, words in (
        ("human", "terminal"),
        ("nobody", "unknown agent"),
        ("ismcts:simulations=-1", "simulations"),
        ("ismcts:prior=nobody", "prior='nobody': no such checkpoint"),
    ):
        with pytest.raises(ValueError, match=words):
            BotServer(spec)
    server = BotServer("random", env_id="pairs_draft_v0")
    reply = start(server)
    assert reply["type"] == "error" and "pairs_draft_v0 only" in reply["error"]


# -------------------------------------------------------------------- the CLI, docs
def serve_bot(*args, input_text: str, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "training.serve_bot", *args],
        input=input_text,
        text=True,
        capture_output=True,
        cwd=ROOT,
        timeout=timeout,
    )


def test_cli_serves_json_lines_until_end_of_input():
    lines = [
        json.dumps(
            {"type": "start", "protocol": 1, "game": "craits_v0", "rules": {"deals": [3]}, "seat": 0, "players": 2}
        ),
        "not json",
        "",
        json.dumps(update(CRAITS_DEAL, move(1, "draw"))),
        json.dumps({"type": "act", "legal": ["play 7H", "play KD"], "id": 7}),
        json.dumps({"type": "stop"}),
    ]
    done = serve_bot("heuristic", "--env", "craits_v0", input_text="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["type"] for r in replies] == ["ready", "error", "ok", "move", "bye"]
    assert "malformed JSON" in replies[1]["error"] and replies[3]["id"] == 7
    assert replies[3]["action"] in ("play 7H", "play KD")
    refused = serve_bot("human", input_text="")
    assert refused.returncode == 1 and "terminal" in refused.stderr and not refused.stdout


def test_cli_outlives_every_bad_line_and_keeps_the_game():
    """Each hostile line gets an error reply, in strict JSON, and the game in progress goes on."""
    opening = [
        json.dumps(
            {"type": "start", "protocol": 1, "game": "craits_v0", "rules": {"deals": [3]}, "seat": 0, "players": 2}
        ).encode(),
        json.dumps(update(CRAITS_DEAL, move(1, "draw"))).encode(),
    ]
    bad = [
        b"[" * 100_000,
        b'{"id": ' + b"7" * 5000 + b"}",
        b'{"type": "act", "legal": ["\xff"]}',
        b'{"type": "stop", "id": NaN}',
        b'{"type": "stop", "id": 1e400}',
        b"{" * (MAX_LINE + 10),
    ]
    act = json.dumps({"type": "act", "legal": ["play 7H", "play KD"], "id": 7}).encode()
    done = subprocess.run(
        [sys.executable, "-m", "training.serve_bot", "heuristic"],
        cwd=ROOT,
        capture_output=True,
        input=b"\n".join([*opening, *bad, act]) + b"\n",
        timeout=120,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]
    lines = done.stdout.decode().splitlines()
    replies = [json.loads(line, parse_constant=lambda name: pytest.fail(f"non-strict JSON: {name}")) for line in lines]
    assert [r["type"] for r in replies] == ["ready", "ok", *["error"] * len(bad), "move"], replies
    assert all("id" not in r for r in replies[2:-1]) and replies[-1]["id"] == 7


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak memory from /proc")
def test_cli_refuses_a_huge_line_in_bounded_memory():
    with subprocess.Popen(
        [sys.executable, "-m", "training.serve_bot", "random"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as proc:

        def ask(line: bytes) -> dict:
            proc.stdin.write(line + b"\n")
            proc.stdin.flush()
            return json.loads(proc.stdout.readline())

        assert ask(b'{"type": "stop"}')["type"] == "error"  # the server is up, its imports done
        before = _peak_rss_kib(proc.pid)
        chunk = b"[1," * (1 << 20)
        for _ in range(64):  # a 200 MB line, written in pieces
            proc.stdin.write(chunk)
        reply = ask(b"1]")
        assert reply["type"] == "error" and "longer than" in reply["error"]
        grown_mib = (_peak_rss_kib(proc.pid) - before) / 1024
        assert ask(b'{"type": "stop", "id": 1}') == {
            "type": "error",
            "id": 1,
            "error": 'stop can\'t come now: no game is under way (send "start" first)',
        }
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    assert grown_mib < 32, f"reading a 200 MB line grew the server by {grown_mib:.0f} MiB"


def test_cli_exits_quietly_when_the_client_closes_the_pipe():
    with subprocess.Popen(
        [sys.executable, "-m", "training.serve_bot", "random"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        proc.stdout.close()  # the client stops reading before the first reply
        _, err = proc.communicate(b'{"type": "stop"}\n' * 1000, timeout=120)
    assert proc.returncode == 0 and err == b"", err.decode()[-2000:]


def doc_exchange() -> list[tuple[dict, dict]]:
    """The example exchange of docs/bot-protocol.md: ``>`` lines sent, ``<`` lines answered."""
    text = (ROOT / "docs" / "bot-protocol.md").read_text()
    block = re.search(r"<!-- example-exchange -->\n```text\n(.*?)```", text, re.S).group(1)
    pairs, request = [], None
    for line in block.splitlines():
        if line.startswith("> "):
            request = json.loads(line[2:])
        elif line.startswith("< "):
            pairs.append((request, json.loads(line[2:])))
    return pairs


def test_the_docs_example_exchange_is_what_the_server_answers():
    exchange = doc_exchange()
    assert len(exchange) >= 6 and exchange[0][0]["type"] == "start" and exchange[-1][1] == {"type": "bye"}
    server = BotServer("heuristic")
    for request_, expected in exchange:
        assert server.handle(request_) == expected, request_


def test_node_client_plays_a_game_against_the_served_bot():
    node = shutil.which("node")
    if node is None:
        if os.environ.get("DECKGYM_REQUIRE_NODE") == "1":
            pytest.fail("node is not installed, and DECKGYM_REQUIRE_NODE=1")
        pytest.skip("node (Node.js) is not installed: the example client can't run")
    done = subprocess.run(
        [node, str(ROOT / "examples" / "node" / "play_craits.js"), "heuristic", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "deal 2 over" in done.stdout and "game over:" in done.stdout
