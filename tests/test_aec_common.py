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
        env.agent_selection
    with pytest.raises(AttributeError, match="before reset"):
        env.last()
