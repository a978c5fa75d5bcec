"""IS-MCTS guided by a trained network (``ismcts:prior=BOT``): the priors come from each
player's env observation of the sampled world, so the encoder must give the searcher
exactly its real observation and must never see a card the seat can't; the options and the
agent spec refuse what can't work, naming it."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from test_search import craits_positions, craits_swapped, pairs_positions, pairs_swapped

from envs.craits.game import CraitsGame, Rules
from envs.search import ISMCTSBot, parse_options, search_game
from training.agents import make_agent, prior_network
from training.agents.checkpoint import read_meta
from training.common.games import EnvHandle
from training.shipped import STRONGEST_SEARCH, bot_folder

SIMS = 30


@pytest.fixture(scope="module")
def craits():
    return EnvHandle("craits_v0")


@pytest.fixture(scope="module")
def pairs():
    return EnvHandle("pairs_draft_v0")


def guided(handle, bot: str, **options) -> ISMCTSBot:
    network = prior_network(bot, handle)
    values = network.meta.get("action_selection") == "masked_argmax"
    return ISMCTSBot(handle.id, network=network, action_values=values, prior=bot, **options)


@pytest.mark.parametrize("env_id", ["craits_v0", "pairs_draft_v0"])
def test_the_searchers_world_observation_is_its_env_observation(env_id):
    """In every world sampled from a seat's view, the encoder gives the seat the very
    observation the env gives it (the Pairs Draft draft memory included)."""
    handle = EnvHandle(env_id)
    env, game = handle.raw, search_game(env_id)
    checked = 0
    for seed in range(2):
        env.reset(seed=seed)
        rng = random.Random(seed)
        memory = {}
        for agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation or checked > 600:
                break
            seat = env.agent_name_mapping[agent]
            view = game.view(env.game, seat, memory.setdefault(seat, game.new_memory()))
            encode = game.encoder(view)
            for _ in range(2):
                world = game.determinize(view, rng, game.heuristic_action)
                np.testing.assert_array_equal(encode(world, seat), obs["observation"])
            checked += 1
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
    assert checked > 100


@pytest.mark.parametrize("options", [{"leaf": "rollout"}, {"leaf": "value"}, {"leaf": "value", "others": "rollout"}])
@pytest.mark.parametrize("index", range(4))
def test_craits_guided_search_is_blind_to_hidden_cards(craits, index, options):
    game = craits_positions()[index]
    seat = game.current_player
    rng = random.Random(index)
    moves, stats = set(), set()
    for g in (game, craits_swapped(game, seat, rng), craits_swapped(game, seat, rng)):
        bot = guided(craits, "craits_dqn", simulations=SIMS, seed=7, **options)
        moves.add(bot.act_on(g, seat))
        stats.add(tuple(sorted(bot.root_stats().items())))
    assert len(moves) == 1 and len(stats) == 1


@pytest.mark.parametrize("bot", sorted(STRONGEST_SEARCH))
def test_the_shipped_strongest_searches_are_blind_to_hidden_cards(bot):
    """The strongest searches the web app lists, built from their specs (at a small budget)
    in their network's own rules (partnership Craits for ``create``), choose and value
    alike in positions that differ only in the cards their seat can't see."""
    meta = read_meta(bot_folder(bot))
    handle = EnvHandle(meta["env_id"], meta["env_args"])
    options = {**parse_options(f"prior={bot},{STRONGEST_SEARCH[bot]}"), "simulations": SIMS, "seed": 7}
    spec = "ismcts:" + ",".join(f"{k}={v}" for k, v in options.items())
    env = handle.raw
    env.reset(seed=6)
    game = env.game  # played on directly: the env's own bookkeeping is not used
    rng = random.Random(6)
    searched = 0
    while searched < 3:
        legal = game.legal_actions()
        if len(legal) > 1 and rng.random() < 0.1:
            seat = game.current_player
            results = set()
            for g in (game, craits_swapped(game, seat, rng), craits_swapped(game, seat, rng)):
                agent = make_agent(spec, handle)
                results.add((agent.act_on(g, seat), tuple(sorted(agent.root_stats().items()))))
            assert len(results) == 1, (bot, game.deal_index, game.phase_id)
            searched += 1
        game.apply(rng.choice(legal))


@pytest.mark.parametrize("leaf", ["rollout", "value"])
def test_pairs_guided_search_is_blind_to_hidden_cards(pairs, leaf):
    rng = random.Random(5)
    network = prior_network("pairs_draft", pairs)
    for game, seat, watcher in pairs_positions(seed=2):
        results = set()
        for g in (game, pairs_swapped(game, seat, rng), pairs_swapped(game, seat, rng)):
            bot = ISMCTSBot(
                "pairs_draft", network=network, action_values=True, prior="pairs_draft", simulations=SIMS, leaf=leaf
            )
            bot._memory = copy.deepcopy(watcher._memory)  # what the seat remembers of the draft
            bot._rng = random.Random(11)
            move = bot.act_on(g, seat)
            results.add((move, tuple(sorted(bot.root_stats().items()))))
        assert len(results) == 1, (game.phase, game.pick_index, game.round_index)


class Favourite:
    """A network that scores one action far above the rest, wherever it is legal."""

    def __init__(self, action: int, size: int):
        self.action, self.size, self.seen = action, size, []

    def logits(self, observation):
        self.seen.append(np.array(observation))
        scores = np.zeros(self.size, np.float32)
        scores[self.action] = 10.0
        return scores


def test_the_priors_steer_the_search_and_see_only_worlds(craits):
    game = craits_positions()[3]
    seat = game.current_player
    legal = game.legal_actions()
    assert len(legal) > 1
    for favourite in legal[:2]:
        network = Favourite(favourite, 109)
        bot = ISMCTSBot("craits", network=network, prior="test", simulations=8, seed=0)
        assert bot.act_on(game, seat) == favourite  # a strong prior wins at a small budget
        visits = bot.root_stats()
        assert visits[favourite][0] == max(v for v, _ in visits.values())
        # every observation the network saw: the seat's own hand is the real one, and the
        # other seats' observations (their hands) differ between worlds, as sampled
        own = [o for o in network.seen if np.array_equal(o[:52], _bits(game.hand_bits[seat]))]
        assert own, "the searcher's own observation was asked"


def _bits(hand: int) -> np.ndarray:
    return np.array([(hand >> c) & 1 for c in range(52)], np.float32)


def test_the_spec_loads_the_named_checkpoint(craits, pairs):
    bot = make_agent("ismcts:prior=craits_dqn,simulations=20", craits, seed=3)
    assert isinstance(bot, ISMCTSBot) and bot.network is not None
    assert bot.temperature == pytest.approx(0.05)  # a Q-network: its values at VALUE_TEMPERATURE
    assert make_agent("ismcts:prior=craits_ppo,simulations=20", craits).temperature == 1.0  # policy logits
    assert make_agent("ismcts:prior=craits_dqn,prior_temperature=0.2", craits).temperature == 0.2
    env = craits.raw
    env.reset(seed=4)
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation or env.game.deal_index > 0:
            break
        seat = env.agent_name_mapping[agent]
        env.step(bot.act_on(env.game, seat) if seat == 0 else int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.game.deal_index > 0  # a whole deal played
    with pytest.raises(
        ValueError, match=r"pairs_draft \(the IS-MCTS prior\) does not fit.*trained for pairs_draft_v0, not craits_v0"
    ):
        make_agent("ismcts:prior=pairs_draft", craits)
    with pytest.raises(ValueError, match="prior='no_such_bot'"):
        make_agent("ismcts:prior=no_such_bot", craits)
    assert make_agent("ismcts:prior=pairs_draft,simulations=5", pairs).network is not None


@pytest.mark.parametrize(
    "options, message",
    [
        ({"rollout": "prior"}, "rollout=prior: give the network too"),
        ({"prior": "craits", "child_selection_policy": "uct"}, "need child_selection_policy=puct"),
        ({"prior": "craits"}, "the network must be loaded and passed in"),
        ({"prior_temperature": -1.0}, "prior_temperature=-1.0"),
        ({"prior": 3}, "prior=3"),
    ],
)
def test_bad_guided_options(options, message):
    with pytest.raises(ValueError, match=message):
        ISMCTSBot("craits", **options)


class Constant:
    """A Q-network that values every move of every observation alike."""

    def __init__(self, value: float, size: int):
        self.value, self.size = value, size

    def logits(self, observation):
        return np.full(self.size, self.value, np.float32)


@pytest.mark.parametrize("partnership", [False, True])
def test_value_leaves_are_the_networks_values_shared_out_by_side(craits, partnership):
    """``leaf=value``: no rollout; a leaf is worth the network's value of the searcher's best
    move there to its side, and the opposite, shared equally, to the other sides."""
    rules = Rules.preset("create", partnership=True) if partnership else Rules.preset("craits")
    game = CraitsGame(rules, seed=3)
    while len(game.legal_actions()) == 1:  # on to a choice
        game.apply(game.legal_actions()[0])
    seat = game.current_player
    bot = ISMCTSBot(
        "craits", network=Constant(0.3, 109), action_values=True, prior="test", leaf="value", simulations=40
    )
    bot.act_on(game, seat)
    stats = bot.root_stats()
    assert len(stats) > 1
    for visits, mean in stats.values():  # one trick can't end the first deal: every leaf is valued
        assert visits > 0 and mean == pytest.approx(0.3)
    rewards = bot._leaf_value(game, seat)
    partner = (seat + 2) % 4
    assert rewards[seat] == pytest.approx(0.3)
    if partnership:
        assert rewards[partner] == rewards[seat]
    others = [s for s in range(4) if s != seat and not (partnership and s == partner)]
    assert all(rewards[s] == pytest.approx(-0.3 if partnership else -0.1) for s in others)
    assert sum(rewards) == pytest.approx(0.0)


def test_value_leaves_need_a_q_network():
    with pytest.raises(ValueError, match="leaf=value: give the network that values the leaves"):
        ISMCTSBot("craits", leaf="value")
    with pytest.raises(ValueError, match="leaf='leaves': choose one of rollout, value"):
        ISMCTSBot("craits", leaf="leaves")
    with pytest.raises(ValueError, match="prior=test gives policy logits, not action values"):
        ISMCTSBot("craits", network=Constant(0.0, 109), prior="test", leaf="value")


def test_a_network_without_its_prior_option_or_encoder_is_refused():
    with pytest.raises(ValueError, match="without the prior option"):
        ISMCTSBot("craits", network=Favourite(0, 109))


def test_network_rollouts_play_a_game_legally(pairs):
    bot = make_agent("ismcts:prior=pairs_draft,rollout=prior,simulations=10", pairs, seed=1)
    game = pairs.raw
    game.reset(seed=2)
    moves = 0
    for agent in game.agent_iter():
        obs, _, termination, truncation, _ = game.last()
        if termination or truncation:
            break
        seat = game.agent_name_mapping[agent]
        action = bot.act_on(game.game, seat) if seat == 1 else int(np.flatnonzero(obs["action_mask"])[-1])
        assert obs["action_mask"][action]
        game.step(action)
        moves += 1
    assert game.game.phase == "over" and moves > 40


def test_own_network_rollouts_play_the_searchers_moves_by_the_network(pairs):
    """``rollout=prior_own``: in a world, the searcher's seat plays the network's favourite
    legal move, every other seat the heuristic rule's."""
    from envs.pairs_draft import view as pairs_view

    game = pairs.raw
    game.reset(seed=6)
    seat = game.game.current_player
    legal = game.game.legal_actions()
    favourite = legal[-1] if pairs_view.heuristic_action(game.game) != legal[-1] else legal[0]
    bot = ISMCTSBot("pairs_draft", network=Favourite(favourite, 10), prior="test", rollout="prior_own", simulations=4)
    bot.act_on(game.game, seat)  # sets the searcher and the encoder
    rng = random.Random(0)
    assert bot._policy(game.game, rng) == favourite
    other = game.game.copy()
    other.apply(favourite)  # the next seat to pick
    assert other.current_player != seat
    assert bot._policy(other, rng) == pairs_view.heuristic_action(other, rng)
    with pytest.raises(ValueError, match="rollout=prior_own: give the network too"):
        ISMCTSBot("pairs_draft", rollout="prior_own")
