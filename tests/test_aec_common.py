"""Behaviour both envs get from the shared AEC plumbing (envs/aec.py), tested once for each."""

import numpy as np
import pytest

from envs import craits_v0, pairs_draft_v0

GAMES = [craits_v0, pairs_draft_v0]


def _first_illegal(env):
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_illegal_action_penalty_ends_the_game(module):
    env = module.raw_env()
    env.reset(seed=1)
    agent = env.agent_selection
    env.step(_first_illegal(env))
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1 and all(r == 0 for a, r in env.rewards.items() if a != agent)
    assert env.infos[agent]["illegal_action"]


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_illegal_action_can_raise_naming_it_and_the_legal_ones(module):
    env = module.raw_env(illegal_action="raise")
    env.reset(seed=1)
    illegal = _first_illegal(env)
    text = env.game.action_to_text(illegal)
    legal = [env.game.action_to_text(a) for a in env.game.legal_actions()]
    with pytest.raises(ValueError, match=f"illegal action '{text}'.*legal: {legal[0]}"):
        env.step(illegal)
    assert not any(env.terminations.values())  # nothing happened


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_out_of_range_and_none_actions_are_illegal(module):
    env = module.env(illegal_action="raise")
    env.reset(seed=2)
    for bad in (-1, 10_000, None, 0.0, 1.0, True):
        with pytest.raises(ValueError, match="illegal action"):
            env.step(bad)


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_order_is_enforced(module):
    env = module.env()
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agent_selection
    with pytest.raises(AttributeError, match="before reset"):
        env.last()


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("bad", [float("inf"), float("nan"), np.array([0]), np.array([0, 1]), "0", 2**80], ids=repr)
def test_any_malformed_action_is_penalised_like_an_illegal_one(module, bad):
    env = module.env()
    env.reset(seed=1)
    agent = env.agent_selection
    env.step(bad)
    assert all(env.terminations.values()) and env.rewards[agent] == -1
    assert env.infos[agent]["illegal_action"]


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_integer_forms_of_a_legal_action_are_accepted(module):
    for form in (int, np.int64, np.array):
        env = module.raw_env(illegal_action="raise")
        env.reset(seed=1)
        env.step(form(env.game.legal_actions()[0]))
        assert not any(env.terminations.values())


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_a_float_or_text_legal_action_is_refused_saying_why(module):
    env = module.raw_env(illegal_action="raise")
    env.reset(seed=1)
    legal = env.game.legal_actions()[0]
    for form in (float(legal), str(legal)):
        with pytest.raises(
            ValueError, match=f"illegal action {form!r} .*actions are integers, not {type(form).__name__}; legal: "
        ):
            env.step(form)


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_text_to_action_takes_only_text(module):
    env = module.raw_env()
    env.reset(seed=1)
    for bad in (None, 3, ["play", "7H"]):
        with pytest.raises(ValueError, match="action text is a string"):
            env.game.text_to_action(bad)
    with pytest.raises(ValueError) as error:
        env.game.text_to_action("x" * 10_000)
    assert len(str(error.value)) < 400  # the rejected value is cut, not echoed in full


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_unknown_env_argument_is_a_value_error_naming_it(module):
    with pytest.raises(ValueError, match="unknown .* argument 'bogus': the arguments are .*reward"):
        module.raw_env(bogus=1)


@pytest.mark.parametrize("module", GAMES, ids=lambda m: m.__name__)
def test_engine_is_over_exactly_when_no_action_is_left(module):
    env = module.raw_env()
    env.reset(seed=5)
    game, rng = env.game, np.random.default_rng(5)
    while game.legal_actions():
        assert not game.is_over
        with pytest.raises(ValueError):
            game.winners()
        game.apply(int(rng.choice(game.legal_actions())))
    assert game.is_over and game.winners()


@pytest.mark.parametrize(
    "module,args",
    [(craits_v0, {"num_players": 3, "deals": [5, 4]}), (craits_v0, {"partnership": True}), (pairs_draft_v0, {})],
    ids=["craits-3", "craits-partners", "pairs_draft"],
)
def test_state_is_every_seats_observation_at_every_step(module, args):
    env = module.env(**args)
    env.reset(seed=4)
    n, size = len(env.possible_agents), env.observation_space("player_0")["observation"].shape[0]
    assert env.state_space.shape == (n * size,) and env.state_space.dtype == np.float32
    rng = np.random.default_rng(0)
    steps = 0
    for _agent in env.agent_iter():
        obs, _, termination, truncation, info = env.last()
        assert set(info) == {"illegal_action"} and info["illegal_action"] is False  # the same keys from the reset on
        state = env.state()
        assert state.dtype == np.float32 and env.state_space.contains(state)
        for seat, other in enumerate(env.possible_agents):
            assert np.array_equal(state[seat * size : (seat + 1) * size], env.observe(other)["observation"])
        steps += 1
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert steps > 10


def test_state_holds_the_hands_the_observation_hides():
    from envs.cards import bits_to_cards
    from envs.craits.env import HAND

    env = craits_v0.env(num_players=4)
    env.reset(seed=2)
    game = env.unwrapped.game
    state = env.state().reshape(4, -1)
    for seat in range(4):  # seat k's block holds seat k's own hand, which no other observation shows
        assert np.flatnonzero(state[seat, HAND : HAND + 52]).tolist() == sorted(bits_to_cards(game.hand_bits[seat]))
