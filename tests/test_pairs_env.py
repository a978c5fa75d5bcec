"""The Pairs Draft PettingZoo env: API conformance, seeding, invariants, secrecy of the
simultaneous steps, perfect-memory draft inference, rewards, golden games, the heuristic."""

import functools
import random
from collections import Counter

import numpy as np
import pettingzoo
import pytest
from helpers import all_cards, check_golden, observation_playthrough, playthrough, random_legal, run_env_episode
from pettingzoo.test import api_test, seed_test

import envs
from envs import pairs_draft_v0
from envs.pairs_draft import PairsDraftGame
from envs.pairs_draft.bot import PairsDraftHeuristic
from envs.pairs_draft.env import (
    _SCALE,
    COUNT_SCALE,
    DISCARD,
    HAND,
    HAND_SIZE,
    INSTANT_WIN_BONUS,
    OBS_SIZE,
    OTHERS_PICKS,
    PACK,
    PASSED_PACKS,
    PHASE,
    POINTS,
    POINTS_SCALE,
    REWARD_SCALE,
    SEAT_SIZE,
    SEATS,
)
from envs.pairs_draft.game import DECK

REWARD_MODES = ["points", "win"]


def counts(obs, start, size=10):
    """Raw counts of an observation field."""
    return np.rint(obs["observation"][start : start + size] * COUNT_SCALE).astype(int).tolist()


def observations(env):
    return {agent: env.observe(agent)["observation"].copy() for agent in env.possible_agents}


@pytest.mark.parametrize("reward", REWARD_MODES)
def test_api(reward):
    api_test(pairs_draft_v0.env(reward=reward), num_cycles=1000)


@pytest.mark.parametrize("reward", REWARD_MODES)
def test_seed(reward):
    seed_test(functools.partial(pairs_draft_v0.env, reward=reward), num_cycles=300)


def test_imports_and_registry():
    from envs.pairs_draft import env, raw_env

    if not hasattr(pettingzoo, "make"):  # the lowest PettingZoo supported has no registry
        pytest.skip("PettingZoo < 1.27 has no env registry: the envs work, unnamed there")

    assert env is pairs_draft_v0.env and raw_env is pairs_draft_v0.raw_env
    made = pettingzoo.make("aec", "deckgym/pairs_draft-v0", reward="win")
    made.reset(seed=1)
    assert made.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    assert made.action_space("player_0").n == 10
    assert made.observation_space("player_0")["observation"].shape == (OBS_SIZE,)
    assert envs.GAMES["pairs_draft_v0"].package == "envs.pairs_draft"


@pytest.mark.parametrize(
    "kwargs", [dict(reward="deal"), dict(illegal_action="ignore"), dict(render_mode="rgb")], ids=str
)
def test_bad_arguments_name_the_problem(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        pairs_draft_v0.raw_env(**kwargs)


@pytest.mark.parametrize("reward", REWARD_MODES)
def test_random_games_keep_invariants(reward):
    """All 55 cards accounted for, mask == legal actions, observations in range, zero-sum rewards."""
    env = pairs_draft_v0.raw_env(reward=reward)
    deck = Counter(DECK)
    rng = random.Random(0)
    for game_seed in range(100):
        env.reset(seed=game_seed)

        def check(env, agent, action):
            game = env.game
            assert all_cards(game) == deck
            assert abs(sum(env.rewards.values())) < 1e-9
            if game.phase != "over":
                obs = env.observe(env.agent_selection)
                assert np.flatnonzero(obs["action_mask"]).tolist() == game.legal_actions()
                assert obs["observation"].dtype == np.float32 and obs["observation"].shape == (OBS_SIZE,)
                assert obs["observation"][:SEATS].min() >= 0 and obs["observation"][:SEATS].max() <= 1
                seat = game.current_player
                assert counts(obs, HAND) == game.hand_counts(seat)
                table = obs["observation"][SEATS:].reshape(4, SEAT_SIZE)
                slots = [(seat + k) % 4 for k in range(4)]
                assert (table[:, :10] * COUNT_SCALE).round().tolist() == [game.face_up_counts(s) for s in slots]
                assert (table[:, POINTS] * POINTS_SCALE).round().tolist() == [game.scores()[s] for s in slots]
                in_hand = {
                    "draft": [game.pick_index] * 4,
                    "discard": [11] * 4,
                    "play": [sum(game.hand_counts(s)) for s in slots],
                }[game.phase]
                assert (table[:, HAND_SIZE] * COUNT_SCALE).round().tolist() == in_hand

        totals = run_env_episode(env, rng, check)
        assert env.game.phase == "over" and all(env.terminations.values())
        assert abs(sum(totals.values())) < 1e-9


def replay(seed, actions):
    env = pairs_draft_v0.raw_env()
    env.reset(seed=seed)
    for action in actions:
        env.step(action)
    return env


def test_simultaneous_steps_show_nothing_before_they_complete():
    """A pick or discard changes no other seat's observation until all four have acted, and
    a seat's observation at its turn does not depend on what the seats before it chose."""
    checked = 0
    for seed in range(8):
        env = pairs_draft_v0.raw_env()
        env.reset(seed=seed)
        history, rng = [], random.Random(seed)
        while env.game.phase in ("draft", "discard"):
            game = env.game
            if game.current_player == game.start_player and len(game.legal_actions()) > 1:
                # a step begins: its first seat chooses differently in two copies of the game
                first, other = game.legal_actions()[0], game.legal_actions()[-1]
                a, b = replay(seed, history + [first]), replay(seed, history + [other])
                actor = env.agent_selection
                while a.game.current_player != a.game.start_player:  # until the step completes
                    obs_a, obs_b = observations(a), observations(b)
                    for agent in env.possible_agents:
                        if agent != actor:
                            np.testing.assert_array_equal(obs_a[agent], obs_b[agent], err_msg=agent)
                    mask = a.observe(a.agent_selection)["action_mask"]
                    np.testing.assert_array_equal(mask, b.observe(b.agent_selection)["action_mask"])
                    action = random_legal(rng, mask)
                    a.step(action)
                    b.step(action)
                    checked += 1
            action = random_legal(rng, env.observe(env.agent_selection)["action_mask"])
            history.append(action)
            env.step(action)
    assert checked > 200


def test_others_cannot_count_a_pick_before_the_step_completes():
    env = pairs_draft_v0.raw_env()
    env.reset(seed=3)
    first = env.agent_selection
    before = observations(env)
    env.step(env.game.legal_actions()[0])
    assert counts(env.observe(first), HAND) != counts({"observation": before[first]}, HAND)  # own pick shows
    after = observations(env)
    for agent in env.possible_agents:
        if agent != first:
            np.testing.assert_array_equal(before[agent], after[agent])
    hand_sizes = after[env.agent_selection][SEATS + HAND_SIZE :: SEAT_SIZE] * COUNT_SCALE
    assert np.allclose(hand_sizes, 0)  # no one has completed a pick yet


def test_draft_memory_is_what_a_perfect_memory_knows():
    """Reference: each seat remembers every pack (by identity) as it passed it; seeing a
    pack again, what left it was picked by the others; at the end of the draft, so was
    everything it left in the packs."""
    for seed in range(8):
        env = pairs_draft_v0.raw_env()
        env.reset(seed=seed)
        game, rng = env.game, random.Random(seed)
        passed = [{} for _ in range(4)]  # seat -> {id(pack): counts as the seat passed it}
        known = [np.zeros(10, int) for _ in range(4)]
        while game.phase == "draft":
            seat, agent = game.current_player, env.agent_selection
            pack = game.pack_counts(seat)
            if id(pack) in passed[seat]:
                known[seat] += np.subtract(passed[seat][id(pack)], pack)
            obs = env.observe(agent)
            assert counts(obs, OTHERS_PICKS) == known[seat].tolist()
            assert counts(obs, PACK) == pack
            for k in (1, 2, 3):
                seen = passed[seat].get(id(game.pack_counts((seat + k) % 4)), [0] * 10)
                assert counts(obs, PASSED_PACKS + 10 * (k - 1)) == list(seen)
            picks_so_far = game.pick_index
            assert known[seat].sum() == 3 * max(0, picks_so_far - 3)
            true_others = np.sum([game.hand_counts(s) for s in range(4) if s != seat], axis=0)
            assert (known[seat] <= true_others).all()
            env.step(random_legal(rng, obs["action_mask"]))
            passed[seat][id(pack)] = list(pack)
        for seat, agent in enumerate(env.possible_agents):
            known[seat] += np.sum(list(passed[seat].values()), axis=0)
            obs = env.observe(agent)
            assert counts(obs, OTHERS_PICKS) == known[seat].tolist() and known[seat].sum() == 27
            assert counts(obs, PASSED_PACKS, 30) == [0] * 30


def test_discard_shows_only_to_its_owner():
    env = pairs_draft_v0.raw_env()
    env.reset(seed=5)
    rng = random.Random(5)
    while env.game.phase == "draft":
        env.step(random_legal(rng, env.observe(env.agent_selection)["action_mask"]))
    agent = env.agent_selection
    action = env.game.legal_actions()[0]
    env.step(action)
    discards = {a: env.observe(a)["observation"][DISCARD : DISCARD + 10].tolist() for a in env.possible_agents}
    assert discards[agent] == [int(i == action) for i in range(10)]
    assert all(d == [0] * 10 for a, d in discards.items() if a != agent)


def instant_win_env(reward):
    """Seat 0 keeps five 5s face up (the lowest card of five rounds without a pair); seat 3
    takes the others face down."""
    env = pairs_draft_v0.raw_env(reward=reward)
    env.reset(seed=0)
    env.game = PairsDraftGame.from_position([[5] * 5, [6] * 5, [7] * 5, [8] * 5])
    env._start_episode()
    return env


def test_instant_win_bonus_beats_any_score_and_stays_zero_sum():
    env = instant_win_env("points")
    env.step(4)  # seat 0 plays a 5
    obs = env.observe("player_1")["observation"]
    assert (obs[SEATS + HAND_SIZE :: SEAT_SIZE] * COUNT_SCALE).round().tolist() == [5, 5, 5, 4]  # cards in hand
    totals = run_env_episode(env, random.Random(0))
    assert env.game.scores() == [0, 0, 0, -15] and env.game.winners() == [0]
    results = [INSTANT_WIN_BONUS, 0, 0, -15]
    for seat, agent in enumerate(env.possible_agents):
        mean_others = (sum(results) - results[seat]) / 3
        assert totals[agent] == pytest.approx((results[seat] - mean_others) / REWARD_SCALE)
    assert totals["player_0"] == pytest.approx(5.25) and sum(totals.values()) == pytest.approx(0)


def test_win_reward_splits_plus_and_minus_one():
    env = instant_win_env("win")
    totals = run_env_episode(env, random.Random(0))
    assert totals == pytest.approx({"player_0": 1.0, "player_1": -1 / 3, "player_2": -1 / 3, "player_3": -1 / 3})


def test_points_reward_is_paid_at_the_end_only():
    env = pairs_draft_v0.raw_env()
    env.reset(seed=8)
    paid_before_end = []

    def watch(env, agent, action):
        if env.game.phase != "over":
            paid_before_end.append(any(env.rewards.values()))

    totals = run_env_episode(env, random.Random(8), watch)
    assert not any(paid_before_end)
    scores = env.game.scores()
    for seat, agent in enumerate(env.possible_agents):
        assert totals[agent] == pytest.approx((scores[seat] - (sum(scores) - scores[seat]) / 3) / REWARD_SCALE)


def test_render_modes(capsys):
    env = pairs_draft_v0.env(render_mode="ansi")
    env.reset(seed=0)
    assert "Pairs Draft: pick 1/11" in env.render() and "seat 3: pack" in env.render()
    human = pairs_draft_v0.env(render_mode="human")
    human.reset(seed=0)
    obs, *_ = human.last()
    human.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert "Pairs Draft: pick 1/11" in capsys.readouterr().out


def test_golden_playthrough():
    check_golden("pairs_draft_seed7.txt", playthrough(PairsDraftGame(seed=7), seed=7))


def test_golden_observations():
    """The acting seat's observation at every step of a seeded game, in raw units (counts,
    points, indices) as ``index:value`` for the nonzero entries: pins the layout down."""

    def raw(index, value):
        count = int(np.rint(value / _SCALE[index]))
        return f"{index}:{count}" if count else None

    check_golden("pairs_draft_observations_seed7.txt", observation_playthrough(pairs_draft_v0.raw_env(), 7, raw))


def test_observation_phase_flags():
    env = pairs_draft_v0.raw_env()
    env.reset(seed=2)
    rng = random.Random(2)
    seen = set()
    for _agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        phase = int(np.argmax(obs["observation"][PHASE : PHASE + 4]))
        seen.add(phase)
        assert ("draft", "discard", "play", "over")[phase] == env.game.phase
        env.step(None if termination else random_legal(rng, obs["action_mask"]))
    assert seen == {0, 1, 2, 3}


def test_heuristic_beats_random_play():
    """The heuristic in one seat (rotating) against three uniform-random seats: random play
    would win a quarter of the games; the heuristic wins far more."""
    env = pairs_draft_v0.raw_env(illegal_action="raise")
    bot = PairsDraftHeuristic()
    share = 0.0
    games = 200
    for game_seed in range(games):
        env.reset(seed=game_seed)
        bot.reset()
        rng, hero = random.Random(game_seed), game_seed % 4
        for agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
            elif env.agent_name_mapping[agent] == hero:
                env.step(bot.act(obs["observation"], obs["action_mask"]))
            else:
                env.step(random_legal(rng, obs["action_mask"]))
        winners = env.game.winners()
        share += (hero in winners) / len(winners)
    assert share / games > 0.5
