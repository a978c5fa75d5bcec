"""The Craits PettingZoo env: API conformance, seeding, invariants, rewards, golden games."""

import functools
import random

import numpy as np
import pettingzoo
import pytest
from helpers import check_golden, observation_playthrough, playthrough, run_env_episode
from pettingzoo.test import api_test, seed_test

from envs import craits_v0
from envs.craits import CraitsGame, Rules
from envs.craits.env import HAND, OBS_SIZE, PHASE
from envs.craits.game import BLIND_SUIT, SUIT_ACTION

CONFIGS = [
    dict(num_players=2),
    dict(num_players=3, preset="create"),
    dict(num_players=4),
    dict(num_players=5, episode="deal"),
    dict(num_players=4, partnership=True, announce="action"),
    dict(num_players=4, preset="create", empty_stock="pressure", reward="win", deals="short"),
    dict(num_players=3, episode="deal", announce="action", missed_announce_penalty="draw_2"),
]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_api(kwargs):
    api_test(craits_v0.env(**kwargs), num_cycles=1000)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_seed(kwargs):
    seed_test(functools.partial(craits_v0.env, **kwargs), num_cycles=300)


def test_imports_and_registry():
    from envs.craits import env, raw_env

    if not hasattr(pettingzoo, "make"):  # the lowest PettingZoo supported has no registry
        pytest.skip("PettingZoo < 1.27 has no env registry: the envs work, unnamed there")

    assert env is craits_v0.env and raw_env is craits_v0.raw_env
    made = pettingzoo.make("aec", "deckgym/craits-v0", num_players=3)
    made.reset(seed=1)
    assert made.possible_agents == ["player_0", "player_1", "player_2"]
    assert "deckgym/craits-v0" in pettingzoo.aec_registry


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(bogus=1),
        dict(nine="any"),
        dict(preset="uno"),
        dict(episode="set"),
        dict(reward="points"),
        dict(num_players=6),
        dict(partnership=True, num_players=3),
        dict(illegal_action="ignore"),
    ],
    ids=str,
)
def test_bad_arguments_name_the_problem(kwargs):
    key = next(k for k in kwargs if k != "num_players") if len(kwargs) > 1 else next(iter(kwargs))
    with pytest.raises(ValueError, match=key):
        craits_v0.raw_env(**kwargs)


def _card_places(game):
    places = [game.hand_bits[s] for s in range(game.num_players)]
    places.append(sum(1 << c for c in game.stock))
    places.append(sum(1 << c for c in game.discard))
    return places


@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_random_games_keep_invariants(kwargs):
    """Every card in exactly one place, mask == legal actions, zero-sum rewards, games end."""
    env = craits_v0.raw_env(**kwargs)
    rng = random.Random(0)
    for game_seed in range(4):
        env.reset(seed=game_seed)
        steps = 0

        def check(env, agent, action):
            nonlocal steps
            steps += 1
            game = env.game
            places = _card_places(game)
            union = 0
            for bits in places:
                assert union & bits == 0, "a card is in two places"
                union |= bits
            count = sum(b.bit_count() for b in places)
            assert (
                union.bit_count()
                == count
                == len(game.stock) + len(game.discard) + sum(game.hand_size(s) for s in range(game.num_players))
            )
            assert count == 52 or game.game_over
            assert abs(sum(env.rewards.values())) < 1e-9
            if not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
                mask = env.observe(env.agent_selection)["action_mask"]
                assert np.flatnonzero(mask).tolist() == game.legal_actions()
            assert steps < 60_000, "game did not end"

        totals = run_env_episode(env, rng, check)
        assert all(env.terminations.values()) or all(env.truncations.values())
        assert abs(sum(totals.values())) < 1e-9


def test_deal_rewards_match_deal_points():
    env = craits_v0.raw_env(num_players=3, episode="deal")
    env.reset(seed=3)
    totals = run_env_episode(env, random.Random(3))
    points = env.game.last_deal_points
    for seat, agent in enumerate(env.possible_agents):
        others = [points[s] for s in range(3) if s != seat]
        assert totals[agent] == pytest.approx((sum(others) / 2 - points[seat]) / 100)


def test_partners_share_their_side_reward():
    env = craits_v0.raw_env(partnership=True, episode="deal")
    env.reset(seed=5)
    totals = run_env_episode(env, random.Random(5))
    p = env.game.last_deal_points
    side0, side1 = p[0] + p[2], p[1] + p[3]
    assert totals["player_0"] == totals["player_2"] == pytest.approx((side1 - side0) / 100)
    assert totals["player_1"] == totals["player_3"] == pytest.approx((side0 - side1) / 100)


def test_win_reward_pays_winners_at_game_end_only():
    env = craits_v0.raw_env(num_players=4, reward="win", deals="short")
    env.reset(seed=2)
    paid_before_end = []

    def watch(env, agent, action):
        if not env.game.game_over:
            paid_before_end.append(any(env.rewards.values()))

    totals = run_env_episode(env, random.Random(2), watch)
    assert not any(paid_before_end)
    winners = env.game.winners()
    for seat, agent in enumerate(env.possible_agents):
        assert totals[agent] == pytest.approx(1 / len(winners) if seat in winners else -1 / (4 - len(winners)))


def test_deal_episodes_continue_the_game():
    env = craits_v0.raw_env(num_players=2, episode="deal", deals=[3, 2])
    env.reset(seed=9)
    run_env_episode(env, random.Random(9))
    assert env.game.deal_index == 1 and not env.game.game_over
    env.reset()
    assert env.game.deal_index == 1 and not any(env.terminations.values())
    run_env_episode(env, random.Random(9))
    assert env.game.game_over
    env.reset()
    assert env.game.deal_index == 0 and not env.game.game_over


def test_blind_suit_naming_hides_the_hand():
    seed = next(s for s in range(500) if CraitsGame(seed=s).phase_id == BLIND_SUIT)
    env = craits_v0.raw_env()
    env.reset(seed=0)
    env.game = CraitsGame(seed=seed)
    env._start_episode()
    obs = env.observe(env.agent_selection)["observation"]
    assert env.agent_selection == "player_0"  # the dealer of the first deal
    assert obs.shape == (OBS_SIZE,) and not obs[HAND : HAND + 52].any() and obs[PHASE + BLIND_SUIT] == 1
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[0]))
    nxt = env.agent_selection  # the next player sees its own hand again
    assert env.observe(nxt)["observation"][HAND : HAND + 52].sum() == env.game.hand_size(env.agent_name_mapping[nxt])


def test_observation_shows_only_own_hand():
    env = craits_v0.raw_env(num_players=3)
    env.reset(seed=4)
    for seat, agent in enumerate(env.possible_agents):
        hand = np.flatnonzero(env.observe(agent)["observation"][HAND : HAND + 52]).tolist()
        assert hand == sorted(b for b in range(52) if env.game.hand_bits[seat] >> b & 1)


def test_render_modes(capsys):
    env = craits_v0.env(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "deal 1/15" in text and "seat 0" in text
    human = craits_v0.env(render_mode="human")
    human.reset(seed=0)
    obs, *_ = human.last()
    human.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert "deal 1/15" in capsys.readouterr().out


@pytest.mark.parametrize("preset", ["craits", "create"])
def test_golden_playthrough(preset):
    rules = Rules.preset(preset, announce="action", empty_stock="reshuffle" if preset == "craits" else "pressure")
    check_golden(
        f"craits_{preset}_seed7.txt",
        playthrough(CraitsGame(rules, 4, seed=7), seed=7, deal_over=lambda game: game.deal_over),
    )


def test_same_seed_same_game_and_copy_is_independent():
    a, b = CraitsGame(seed=11), CraitsGame(seed=11)
    rng = random.Random(0)
    for _ in range(200):
        action = rng.choice(a.legal_actions())
        assert a.legal_actions() == b.legal_actions()
        a.apply(action)
        b.apply(action)
    twin = a.copy()
    before = a.render()
    while twin.legal_actions() and not twin.game_over:
        twin.apply(rng.choice(twin.legal_actions()))
    assert a.render() == before and twin.game_over


def test_safety_net_cut_reports_a_truncation():
    env = craits_v0.raw_env()
    env.reset(seed=3)
    env.game.deal_actions = 9_999  # one action short of the 10,000-action safety net
    obs = env.observe(env.agent_selection)
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert abs(sum(env.rewards.values())) < 1e-9  # the deal is scored as it stands, zero-sum


@pytest.mark.parametrize("deals", [[3, 4], [3]])
def test_deal_episode_after_an_illegal_action_starts_the_next_deal(deals):
    env = craits_v0.raw_env(num_players=3, episode="deal", deals=deals)
    env.reset(seed=4)
    env.step(env.game.legal_actions()[0])
    first = env.game
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    env.reset()
    assert not any(env.terminations.values()) and env.game.deal_actions == 0
    if len(deals) == 2:  # the next deal of the same game, the cut one unscored
        assert env.game is first and env.game.deal_index == 1 and env.game.scores() == [0, 0, 0]
        assert env.game.hand_size(0) in (4, 5, 6)  # dealt 4 (the upcard may add or take one)
    else:  # after the last deal: a new game
        assert env.game is not first and env.game.deal_index == 0


def test_deal_episode_reset_before_any_move_keeps_the_deal():
    env = craits_v0.raw_env(episode="deal", deals=[3, 4])
    env.reset(seed=4)
    hands = [env.game.hand(s) for s in range(4)]
    env.reset()
    assert env.game.deal_index == 0 and [env.game.hand(s) for s in range(4)] == hands


def test_golden_observations():
    """Every observation of a seeded two-deal partnership game under pressure scoring, as
    ``index:value``: a reordered or rescaled field fails here."""
    env = craits_v0.raw_env(preset="create", partnership=True, deals=[3, 2])
    check_golden(
        "craits_observations_seed7.txt", observation_playthrough(env, 7, lambda i, v: f"{i}:{round(float(v), 4):g}")
    )


def _dealt(rules, cards):
    """Hands of six for four seats, then the upcard, then the stock, from ``cards`` in order."""
    hands = [cards[6 * s : 6 * s + 6] for s in range(4)]
    return CraitsGame.from_position(rules, hands, cards[24], cards[25:], seed=9)


@pytest.mark.parametrize("preset", ["craits", "create"])
def test_suit_symmetries_map_a_game_onto_its_relabelled_twin(preset):
    """``suit_symmetries``: a deal and the same deal with its suits relabelled play alike, move
    for move: each seat's observation of the twin is its observation re-indexed, its legal
    moves the relabelled ones, to the end of the deal (reshuffles included)."""
    from envs.cards import card_to_text
    from envs.craits.env import encode, suit_symmetries

    symmetries = suit_symmetries()
    assert len(symmetries) == 8 and all(sorted(o) == list(range(OBS_SIZE)) for o, _ in symmetries)
    assert (symmetries[0][0] == np.arange(OBS_SIZE)).all()  # the identity first
    rng = random.Random(5)
    rules = Rules.preset(preset)
    for observation_index, action_index in symmetries:
        suits = [int(action_index[SUIT_ACTION + s]) - SUIT_ACTION for s in range(4)]  # read off the suit moves
        deck = list(range(52))
        rng.shuffle(deck)

        game = _dealt(rules, [card_to_text(c) for c in deck])
        twin = _dealt(rules, [card_to_text((c >> 2) * 4 + suits[c & 3]) for c in deck])
        moves = 0
        while not game.deal_over and moves < 400:
            for seat in range(4):
                a, b = np.empty(OBS_SIZE, np.float32), np.empty(OBS_SIZE, np.float32)
                encode(game, seat, a)
                encode(twin, seat, b)
                assert (a[observation_index] == b).all(), (moves, seat)
            legal = game.legal_actions()
            assert sorted(int(action_index[m]) for m in legal) == twin.legal_actions()
            move = rng.choice(legal)
            game.apply(move)
            twin.apply(int(action_index[move]))
            moves += 1
        assert twin.deal_over == game.deal_over and twin.last_deal_points == game.last_deal_points
        assert moves > 20
