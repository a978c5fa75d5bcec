"""IS-MCTS (``envs.search``) and the seat views it searches from (``envs/*/view.py``).

The leak tests swap cards the searching seat can't see (between other hands, the stock,
packs, the cards set aside) in copies of a position: the views must be equal and the move
(fixed seed) the same. Simulation counts are small: these tests check behaviour, not
strength (``benchmarks/search_cost.py --strength`` does that)."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from helpers import live_turns

from envs.cards import bits_to_cards
from envs.craits import view as craits_view
from envs.craits.env import raw_env as craits_raw_env
from envs.craits.game import BLIND_SUIT, CRANK, CraitsGame
from envs.craits.rules import Rules
from envs.pairs_draft import view as pairs_view
from envs.pairs_draft.env import OTHERS_PICKS
from envs.pairs_draft.env import raw_env as pairs_raw_env
from envs.pairs_draft.game import DECK, NUM_PLAYERS, PairsDraftGame
from envs.search import ISMCTSBot, check_options, parse_options, random_action

SIMS = 40
DECK_COUNTS = [DECK.count(n) for n in range(1, 11)]


# ------------------------------------------------------------------------ positions
def craits_positions(count: int = 6, seed: int = 0) -> list[CraitsGame]:
    """Seeded positions with a choice to make: the first deal's upcard 8 (blind suit), a
    crank, a reshuffled stock and ordinary turns."""
    positions = [CraitsGame(Rules(), 4, seed=0)]  # seed 0: upcard 8 or 9, the dealer names blind
    assert positions[0].phase_id == BLIND_SUIT
    rng = random.Random(seed)
    kinds = set()
    for game_seed in range(60):
        game = CraitsGame(Rules(deals=[8]), 4, seed=game_seed)
        while not game.game_over and len(positions) < count:
            legal = game.legal_actions()
            if len(legal) > 1:
                kind = "crank" if game.phase_id == CRANK else "reshuffled" if game.positions is not None else "play"
                if kind not in kinds or rng.random() < 0.03:
                    kinds.add(kind)
                    positions.append(game.copy())
            game.apply(rng.choice(legal))
        if len(positions) >= count and {"crank", "reshuffled"} <= kinds:
            break
    assert {"crank", "reshuffled"} <= kinds
    return positions


def craits_swapped(game: CraitsGame, seat: int, rng: random.Random) -> CraitsGame:
    """A copy with the cards ``seat`` can't see dealt afresh: other hands (at their sizes)
    and the stock reshuffled together, and the engine's generator reseeded."""
    other = game.copy()
    blind = game.phase_id == BLIND_SUIT and game.current_player == seat
    hidden = [s for s in range(game.num_players) if s != seat or blind]
    cards = [c for s in hidden for c in bits_to_cards(game.hand_bits[s])] + list(game.stock)
    rng.shuffle(cards)
    for s in hidden:
        size = game.hand_size(s)
        other.hand_bits[s] = sum(1 << c for c in cards[:size])
        cards = cards[size:]
    other.stock = cards
    other.rng = random.Random(rng.random())
    other._seed_base = rng.getrandbits(64)
    other._legal = None
    if other.positions is not None:
        other.positions = {}
    assert other.hand_bits != game.hand_bits or other.stock != game.stock
    return other


def pairs_positions(seed: int = 0):
    """(game, seat, bot) at decisions of every phase, the bot having watched its seat since
    the start so that its draft memory is complete."""
    rng = random.Random(seed)
    out = []
    wanted = {("draft", 1), ("draft", 5), ("draft", 9), ("discard", 11), ("play", 11)}
    game = PairsDraftGame(seed=seed)
    seat = (game.start_player + 2) % NUM_PLAYERS  # not the first to act in a step
    bot = ISMCTSBot("pairs_draft", simulations=SIMS, seed=1)
    while not game.is_over:
        if game.current_player == seat:
            bot.view(game, seat)  # the bot sees every decision of its seat
            key = (game.phase, game.pick_index)
            if key in wanted or (game.phase == "play" and game.round_index in (3, 7)):
                wanted.discard(key)
                out.append((game.copy(), seat, copy.deepcopy(bot)))
        game.apply(pairs_view.heuristic_action(game, rng))
    assert not wanted
    return out


def pairs_swapped(game: PairsDraftGame, seat: int, rng: random.Random) -> PairsDraftGame:
    """A copy with the hidden cards moved: the other seats' own cards (picks or hand),
    their packs, the set-aside cards and their discards pooled and dealt again at the same
    sizes, and the picks already made this step by others moved too."""
    other = game.copy()
    places = [other._hands[s] for s in range(NUM_PLAYERS) if s != seat]
    if game.phase == "draft":
        places += [other.pack_counts(s) for s in range(NUM_PLAYERS) if s != seat]
    places.append(other._set_aside)
    sizes = [sum(p) for p in places]
    cards = [a for p in places for a in range(10) for _ in range(p[a])]
    discards = [s for s in range(NUM_PLAYERS) if s != seat and game.discarded(s) is not None]
    cards += [game.discarded(s) - 1 for s in discards]
    rng.shuffle(cards)
    for p, size in zip(places, sizes):
        p[:] = [0] * 10
        for a in cards[:size]:
            p[a] += 1
        cards = cards[size:]
    for s, a in zip(discards, cards):
        other._discards[s] = a + 1
    other._legal = None
    return other


# ------------------------------------------------------------------------ leak tests
@pytest.mark.parametrize("index", range(6))
def test_craits_hidden_cards_do_not_change_the_view_or_the_move(index):
    game = craits_positions()[index]
    seat = game.current_player
    rng = random.Random(index)
    moves = set()
    base = craits_view.view(game, seat)
    for _ in range(2):
        other = craits_swapped(game, seat, rng)
        assert craits_view.view(other, seat) == base
        for g in (game, other):
            moves.add(ISMCTSBot("craits", simulations=SIMS, seed=7).act_on(g, seat))
    assert len(moves) == 1
    # and the view does show what the seat may know: its own hand
    if base.own_hand is not None:
        assert base.own_hand == game.hand_bits[seat]


def test_craits_blind_dealer_does_not_see_its_hand():
    game = CraitsGame(Rules(), 4, seed=0)
    assert game.phase_id == BLIND_SUIT
    dealer = game.current_player
    v = craits_view.view(game, dealer)
    assert v.own_hand is None
    assert craits_view.view(game, (dealer + 1) % 4).own_hand == game.hand_bits[(dealer + 1) % 4]
    other = game.copy()
    mine, theirs = other.hand_bits[dealer], other.hand_bits[(dealer + 1) % 4]
    other.hand_bits[dealer], other.hand_bits[(dealer + 1) % 4] = theirs, mine  # equal sizes at the deal
    assert craits_view.view(other, dealer) == v


def test_pairs_hidden_cards_do_not_change_the_view_or_the_move():
    rng = random.Random(3)
    positions = pairs_positions()
    assert {g.phase for g, _, _ in positions} == {"draft", "discard", "play"}
    for game, seat, bot in positions:
        base = copy.deepcopy(bot).view(game, seat)
        moves = {copy.deepcopy(bot).act_on(game, seat)}
        for _ in range(2):
            other = pairs_swapped(game, seat, rng)
            assert copy.deepcopy(bot).view(other, seat) == base, game.phase
            moves.add(copy.deepcopy(bot).act_on(other, seat))
        assert len(moves) == 1, (game.phase, game.pick_index, game.round_index)


def test_pairs_view_without_memory_is_also_blind_to_hidden_cards():
    rng = random.Random(4)
    for game, seat, _ in pairs_positions(seed=5):
        v = pairs_view.view(game, seat, None)
        assert v.known_picks == (0,) * 10 and v.passed == () and v.own_picks is None
        assert pairs_view.view(pairs_swapped(game, seat, rng), seat, None) == v


# -------------------------------------------------------------- determinizations
@pytest.mark.parametrize("index", range(6))
def test_craits_determinizations_fit_the_view(index):
    game = craits_positions()[index]
    seat = game.current_player
    v = craits_view.view(game, seat)
    rng = random.Random(index)
    for _ in range(20):
        world = craits_view.determinize(v, rng)
        assert world.current_player == seat and world.phase_id == game.phase_id
        assert world.discard == game.discard and world.suit_id == game.suit_id and world.crank == game.crank
        assert [world.hand_size(s) for s in range(4)] == [game.hand_size(s) for s in range(4)]
        assert len(world.stock) == len(game.stock)
        cards = [c for h in world.hand_bits for c in bits_to_cards(h)] + world.stock + world.discard
        assert sorted(cards) == list(range(52))  # every card once: no duplicates, none lost
        if v.own_hand is not None:
            assert world.hand_bits[seat] == game.hand_bits[seat]
        assert world.legal_actions() == game.legal_actions()
        assert set(world.__dict__) >= set(game.__dict__) - {"_legal"}  # a whole engine
        for action in world.legal_actions()[:2]:
            world.copy().apply(action)


def pairs_totals(world: PairsDraftGame) -> list[int]:
    total = [0] * 10
    for s in range(NUM_PLAYERS):
        for counts in (world._hands[s], world._face_up[s], world._face_down[s]):
            total = [t + c for t, c in zip(total, counts)]
        if world.phase == "draft":
            total = [t + c for t, c in zip(total, world._packs[s])]
        if world.discarded(s) is not None:
            total[world.discarded(s) - 1] += 1
    for play in world.current_trick():
        total[play.number - 1] += 1
    return [t + c for t, c in zip(total, world._set_aside)]


def test_pairs_determinizations_fit_the_view():
    rng = random.Random(6)
    for game, seat, bot in pairs_positions(seed=2):
        v = bot.view(game, seat)
        known = list(v.known_picks)
        if game.phase != "draft" or game.pick_index >= 4:
            assert sum(known) > 0  # the memory knows some of the others' picks
        for _ in range(10):
            world = pairs_view.determinize(v, rng, pairs_view.heuristic_action)
            assert world.current_player == seat and world.phase == game.phase
            assert world.hand_counts(seat) == game.hand_counts(seat)
            assert world.legal_actions() == game.legal_actions()
            assert world.discarded(seat) == game.discarded(seat)
            assert world.current_trick() == game.current_trick()
            assert [world.face_up_counts(s) for s in range(4)] == [game.face_up_counts(s) for s in range(4)]
            for s in range(NUM_PLAYERS):
                assert sum(world.hand_counts(s)) == sum(game.hand_counts(s))
            if game.phase == "draft":
                assert world.pack_counts(seat) == game.pack_counts(seat)
                assert [sum(world.pack_counts(s)) for s in range(4)] == [sum(game.pack_counts(s)) for s in range(4)]
                assert pairs_totals(world) == DECK_COUNTS  # every card once
                for k, passed in v.passed:  # a passed pack lost one card per seat it went through
                    pack = world.pack_counts((seat + k) % 4)
                    assert all(p <= q for p, q in zip(pack, passed)) and sum(passed) - sum(pack) in (k - 1, k)
            if game.phase != "play":
                others = [0] * 10
                for s in range(NUM_PLAYERS):
                    if s != seat:
                        others = [o + c for o, c in zip(others, world.hand_counts(s))]
                        if world.discarded(s) is not None:
                            others[world.discarded(s) - 1] += 1
                assert all(o >= k for o, k in zip(others, known))  # the known picks are among the others'
                assert pairs_totals(world) == DECK_COUNTS
            else:
                assert all(t <= d for t, d in zip(pairs_totals(world), DECK_COUNTS))


def test_pairs_memory_matches_the_env_observation():
    """The bot's memory of the draft knows exactly the others' picks the env shows the seat."""
    env = pairs_raw_env()
    env.reset(seed=11)
    rng = random.Random(0)
    memories = [pairs_view.new_memory() for _ in range(NUM_PLAYERS)]
    checked = 0
    for _, obs in live_turns(env):
        seat = env.game.current_player
        v = pairs_view.view(env.game, seat, memories[seat])
        shown = np.rint(obs["observation"][OTHERS_PICKS : OTHERS_PICKS + 10] * 10).astype(int).tolist()
        assert list(v.known_picks) == shown
        checked += sum(shown) > 0
        env.step(pairs_view.heuristic_action(env.game, rng))
    assert checked > 20


def test_pairs_memory_starts_afresh_after_a_gap():
    game = PairsDraftGame(seed=3)
    rng = random.Random(1)
    memory = pairs_view.new_memory()
    seat = game.start_player
    while game.pick_index < 6:
        if game.current_player == seat and game.pick_index != 3:  # pick 3 not seen
            pairs_view.view(game, seat, memory)
        game.apply(pairs_view.heuristic_action(game, rng))
    assert memory.start == 4
    v = pairs_view.view(game, seat, memory)
    assert memory.start == 4 and len(memory.packs) == 3
    assert sum(v.known_picks) == 0 and len(v.passed) == 2
    pairs_view.determinize(v, rng, pairs_view.heuristic_action)


# ----------------------------------------------------------------- legality, games
def test_craits_full_game_with_the_bot_in_one_seat():
    from envs.craits.bot import CraitsHeuristic

    env = craits_raw_env(deals=[3, 1, 2], illegal_action="raise")
    env.reset(seed=4)
    bots = [ISMCTSBot("craits", simulations=15, seed=s, rollout=r) for s, r in ((1, "heuristic"), (2, "random"))]
    heuristic = CraitsHeuristic(env.rules)
    moves = 0
    for seat, obs in live_turns(env):
        if seat in (0, 2):
            action = bots[seat // 2].act_on(env.game, seat)
            assert obs["action_mask"][action]
            moves += 1
        else:
            action = heuristic.act(obs["observation"], obs["action_mask"])
        env.step(action)
    assert env.game.game_over and moves > 3


def test_pairs_full_game_with_the_bot_in_one_seat():
    env = pairs_raw_env(illegal_action="raise")
    env.reset(seed=8)
    bot = ISMCTSBot("pairs_draft", simulations=10, seed=3)
    rng = random.Random(0)
    for seat, obs in live_turns(env):
        if seat == 1:
            action = bot.act_on(env.game, seat)
            assert obs["action_mask"][action]
        else:
            action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        env.step(action)
    assert env.game.is_over


@pytest.mark.parametrize("rules", [Rules.preset("create", announce="action"), Rules(partnership=True, deals=[5])])
def test_craits_rule_variants_and_rollout_rules_stay_legal(rules):
    rng = random.Random(2)
    game = CraitsGame(rules, 4, seed=9)
    bot = ISMCTSBot("craits", simulations=8, seed=0)
    searched = 0
    while not game.game_over and searched < 12:
        if len(game.legal_actions()) > 1 and rng.random() < 0.3:
            action = bot.act_on(game, game.current_player)
            searched += 1
        else:
            action = craits_view.heuristic_action(game, rng) if rng.random() < 0.5 else random_action(game, rng)
        assert action in game.legal_actions()
        game.apply(action)


def test_rollout_rules_play_legal_moves_to_the_end():
    rng = random.Random(5)
    for policy in (craits_view.heuristic_action, random_action):
        game = CraitsGame(Rules(deals="short"), 3, seed=1)
        while not game.game_over:
            game.apply(policy(game, rng))  # apply checks legality
    for policy in (pairs_view.heuristic_action, random_action):
        game = PairsDraftGame(seed=2)
        while not game.is_over:
            game.apply(policy(game, rng))


def test_heuristic_rollouts_play_as_the_heuristic_bots():
    """The engine-level rollout rule makes the heuristic bot's move (from the mover's own
    observation) at every decision: rollouts model the heuristic players exactly."""
    from envs.craits.bot import CraitsHeuristic
    from envs.pairs_draft.bot import PairsDraftHeuristic

    rng = random.Random(1)
    envs = [
        (craits_raw_env(deals=[6, 2], partnership=True), None),
        (craits_raw_env(deals=[7], num_players=3), None),
        (pairs_raw_env(), PairsDraftHeuristic()),
    ]
    checked = 0
    for env, bot in envs:
        env.reset(seed=3)
        bot = bot or CraitsHeuristic(env.rules)
        rule = pairs_view.heuristic_action if isinstance(bot, PairsDraftHeuristic) else craits_view.heuristic_action
        for _, obs in live_turns(env):
            expected = bot.act(obs["observation"], obs["action_mask"])
            assert rule(env.game, rng) == expected
            checked += 1
            env.step(expected if rng.random() < 0.8 else rng.choice(env.game.legal_actions()))
    assert checked > 100


@pytest.mark.parametrize("selection", ["uct", "puct"])
def test_child_selection_policies_search_legally(selection):
    game = a_craits_position()
    bot = ISMCTSBot("craits", simulations=30, seed=2, child_selection_policy=selection)
    assert bot.act_on(game, game.current_player) in game.legal_actions()
    assert sum(v for v, _ in bot.root_stats().values()) == 30


def test_the_search_rewards_are_the_envs():
    env = craits_raw_env(episode="deal", deals=[4], partnership=True)
    env.reset(seed=2)
    rng = random.Random(0)
    while not env.game.deal_over:
        env.step(rng.choice(np.flatnonzero(env.last()[0]["action_mask"]).tolist()))
    assert craits_view.returns(env.game) == pytest.approx([env.rewards[a] for a in env.possible_agents])
    env = pairs_raw_env()
    env.reset(seed=2)
    while not env.game.is_over:
        env.step(pairs_view.heuristic_action(env.game, rng))
    assert pairs_view.returns(env.game) == pytest.approx([env.rewards[a] for a in env.possible_agents])


def test_positions_set_up_by_hand_are_searched_too():
    """``from_position`` games: no draft in Pairs Draft (nothing set aside, no memory), a
    Craits deal mid-way."""
    game = PairsDraftGame.from_position([[1, 5, 9], [2, 5, 10], [3, 7, 10], [4, 8, 10]], start_player=2)
    bot = ISMCTSBot("pairs_draft", simulations=20, seed=0)
    while not game.is_over:
        game.apply(bot.act_on(game, game.current_player))
    craits = CraitsGame.from_position(
        Rules(), [["7H", "2C", "9S"], ["AH", "KD"], ["3C", "8D", "TD"]], top="5H", stock=["QS", "JS", "4C"], to_play=1
    )
    action = ISMCTSBot("craits", simulations=20, seed=0).act_on(craits, 1)
    assert action in craits.legal_actions()


def test_the_bot_refuses_a_seat_not_to_act_and_a_wrong_game():
    game = CraitsGame(Rules(), 4, seed=1)
    bot = ISMCTSBot("craits", simulations=5)
    with pytest.raises(ValueError, match="not to act"):
        bot.act_on(game, (game.current_player + 1) % 4)
    with pytest.raises(ValueError, match="PairsDraftGame"):
        ISMCTSBot("pairs_draft", simulations=5).act_on(game, game.current_player)
    over = CraitsGame(Rules(deals=[1]), 2, seed=1)
    while not over.game_over:
        over.apply(over.legal_actions()[0])
    with pytest.raises(ValueError, match="game is over"):
        bot.act_on(over, 0)


# ---------------------------------------------------------------------- options
@pytest.mark.parametrize(
    "options, message",
    [
        ({"simulatons": 10}, "unknown IS-MCTS option 'simulatons'"),
        ({"simulations": 0}, "simulations=0"),
        ({"simulations": 1.5}, "simulations=1.5"),
        ({"simulations": True}, "simulations=True"),
        ({"uct_c": -1.0}, "uct_c=-1.0"),
        ({"uct_c": float("nan")}, "uct_c=nan"),
        ({"uct_c": "1.4"}, "uct_c='1.4'"),
        ({"max_world_samples": 0}, "max_world_samples=0"),
        ({"max_world_samples": -2}, "max_world_samples=-2"),
        ({"final_policy": "best"}, "final_policy='best'"),
        ({"rollout": "smart"}, "rollout='smart'"),
        ({"child_selection_policy": "ucb"}, "child_selection_policy='ucb'"),
        ({"seed": "abc"}, "seed='abc'"),
        ({"max_time_ms": -5}, "max_time_ms=-5"),
        ({"reward_transform": "log"}, "reward_transform='log'"),
        ({"others": "heuristic"}, "others='heuristic'"),
    ],
)
def test_bad_options_raise_value_errors(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        ISMCTSBot("craits", **options)


def test_unknown_game_and_spec_parsing():
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        ISMCTSBot("chess")
    assert parse_options("simulations=1000, uct_c=1.4") == {"simulations": 1000, "uct_c": 1.4}
    assert parse_options(
        "final_policy=max_value,rollout=random,max_world_samples=-1,seed=3,max_time_ms=20,child_selection_policy=uct"
    ) == {
        "final_policy": "max_value",
        "rollout": "random",
        "max_world_samples": -1,
        "seed": 3,
        "max_time_ms": 20.0,
        "child_selection_policy": "uct",
    }
    bot = ISMCTSBot.from_spec("ismcts:simulations=1000,uct_c=1.4", "pairs_draft_v0", seed=[1, 2])
    assert (bot.simulations, bot.uct_c, bot.rollout, bot.final_policy, bot.child_selection_policy) == (
        1000,
        1.4,
        "heuristic",
        "max_visit_count",
        "puct",
    )
    assert ISMCTSBot.from_spec("ismcts", "craits").simulations == 1000
    for text, message in (
        ("simulations=lots", "must be an integer"),
        ("uct_c", "write name=value"),
        ("depth=3", "unknown IS-MCTS option 'depth'"),
        ("simulations=1,simulations=2", "twice"),
        ("simulations=-4", "simulations=-4"),
    ):
        with pytest.raises(ValueError, match=message):
            parse_options(text)
    with pytest.raises(ValueError, match="not an IS-MCTS spec"):
        ISMCTSBot.from_spec("mcts:simulations=3", "craits")
    assert check_options({})["simulations"] == 1000
    assert ISMCTSBot("craits", seed=np.int64(4)).seed == 4  # numpy ints and the evaluator's seed lists
    assert ISMCTSBot("craits", seed=[0, 3, 1, 2])._rng.random() == ISMCTSBot("craits", seed=(0, 3, 1, 2))._rng.random()


# ----------------------------------------------------------- policies, determinism
def a_craits_position() -> CraitsGame:
    rng = random.Random(1)
    game = CraitsGame(Rules(deals=[8]), 4, seed=3)
    while len(game.legal_actions()) < 3:
        game.apply(rng.choice(game.legal_actions()))
    return game


def test_final_policies():
    game = a_craits_position()
    seat = game.current_player
    legal = game.legal_actions()
    bot = ISMCTSBot("craits", simulations=60, seed=5, final_policy="normalized_visit_count")
    policy = bot.policy_on(game, seat)
    stats = bot.root_stats()
    assert set(policy) == set(legal) and sum(policy.values()) == pytest.approx(1.0)
    assert policy == pytest.approx({a: stats[a][0] / 60 for a in legal})
    visits = ISMCTSBot("craits", simulations=60, seed=5)
    policy = visits.policy_on(game, seat)
    stats = visits.root_stats()
    best = max(v for v, _ in stats.values())
    assert {a for a, p in policy.items() if p > 0} == {a for a, (v, _) in stats.items() if v == best}
    value = ISMCTSBot("craits", simulations=60, seed=5, final_policy="max_value")
    policy = value.policy_on(game, seat)
    stats = value.root_stats()
    top = max(m for _, m in stats.values())
    assert {a for a, p in policy.items() if p > 0} == {a for a, (_, m) in stats.items() if m >= top - 1e-9}
    again = ISMCTSBot("craits", simulations=60, seed=5, final_policy="max_value")
    assert again.act_on(game, seat) in {a for a, p in policy.items() if p > 0}  # the same search, then a draw


def test_symlog_reward_transform_squashes_what_is_backed_up():
    """``reward_transform=symlog`` backs up sign(r)·ln(1 + |r|) of each rollout's reward: with
    returns fixed at ±500, every root edge's mean is ln(501) for a searcher who gains where it is
    500 untransformed; every mean being equal, both searches visit the same moves."""
    game = a_craits_position()
    seat = game.current_player
    fixed = [500.0 if s % 2 == seat % 2 else -500.0 for s in range(4)]
    stats = {}
    for transform in ("none", "symlog"):
        bot = ISMCTSBot("craits", simulations=30, seed=4, reward_transform=transform)
        bot.search_game.returns = lambda state: list(fixed)
        bot.act_on(game, seat)
        stats[transform] = bot.root_stats()
    assert {a: m for a, (_, m) in stats["none"].items()} == pytest.approx({a: 500.0 for a in stats["none"]})
    assert {a: m for a, (_, m) in stats["symlog"].items()} == pytest.approx({a: np.log(501.0) for a in stats["symlog"]})
    assert {a: v for a, (v, _) in stats["none"].items()} == {a: v for a, (v, _) in stats["symlog"].items()}


@pytest.mark.parametrize("others", ["search", "rollout"])
def test_others_played_by_the_rollout_rule_are_not_searched(others):
    """``others=rollout``: in one sampled world, every other player's move in the tree is the
    rule's (a single edge, the heuristic's move), and the tree reaches further into the
    searcher's own moves; ``others=search`` branches on theirs."""
    game = a_craits_position()
    seat = game.current_player
    bot = ISMCTSBot("craits", simulations=300, seed=2, max_world_samples=1, others=others)
    worlds = []
    determinize = bot.search_game.determinize
    bot.search_game.determinize = lambda *args: worlds.append(determinize(*args)) or worlds[-1]
    bot.act_on(game, seat)
    assert len(worlds) == 1
    branching, own_depth = [], []

    def walk(node, state, depth):
        legal = state.legal_actions()
        if state.current_player != seat and len(legal) > 1 and node.edges:  # not a leaf
            branching.append(len(node.edges))
            for action in node.edges:
                if others == "rollout":
                    assert action == bot.search_game.heuristic_action(state)
        elif state.current_player == seat and node.edges:
            own_depth.append(depth)
        for action, edge in node.edges.items():
            after = state.copy()
            after.apply(action)
            child = edge.children.get(bot.search_game.private(after, seat))
            if child is not None and not after.game_over and not after.deal_over:
                walk(child, after, depth + (state.current_player == seat))

    walk(bot.last_root, worlds[0].copy(), 0)
    assert branching
    if others == "rollout":
        assert set(branching) == {1}
    else:
        assert max(branching) > 1
    assert max(own_depth) >= 2


def test_a_forced_move_is_not_searched():
    game = CraitsGame(Rules(), 4, seed=3)
    rng = random.Random(0)
    while len(game.legal_actions()) != 1:
        game.apply(rng.choice(game.legal_actions()))
    bot = ISMCTSBot("craits", simulations=1000)
    assert bot.policy_on(game, game.current_player) == {game.legal_actions()[0]: 1.0}
    assert bot.last_root is None


def test_same_seed_same_search_and_move():
    game = a_craits_position()
    seat = game.current_player
    runs = []
    for seed in (11, 11, 12):
        bot = ISMCTSBot("craits", simulations=50, seed=seed, final_policy="normalized_visit_count")
        runs.append((bot.act_on(game, seat), bot.root_stats()))
    assert runs[0] == runs[1]
    assert runs[0][1] != runs[2][1]
    for game_, seat_, bot in pairs_positions(seed=1)[:3]:
        first, second = copy.deepcopy(bot), copy.deepcopy(bot)
        assert first.act_on(game_, seat_) == second.act_on(game_, seat_)
        assert first.root_stats() == second.root_stats()


def test_world_pool_and_time_limit():
    game = a_craits_position()
    seat = game.current_player
    calls = []

    class Counting:  # the Craits search game, counting the worlds sampled
        def __getattr__(self, name):
            return getattr(craits_view, name)

        def determinize(self, *args):
            calls.append(1)
            return craits_view.determinize(*args)

    bot = ISMCTSBot("craits", simulations=40, max_world_samples=3, seed=1)
    bot.search_game = Counting()
    assert bot.act_on(game, seat) in game.legal_actions()
    assert len(calls) == 3 and sum(v for v, _ in bot.root_stats().values()) == 40
    unlimited = ISMCTSBot("craits", simulations=40, seed=1)
    calls.clear()
    unlimited.search_game = Counting()
    unlimited.act_on(game, seat)
    assert len(calls) == 40
    timed = ISMCTSBot("craits", max_time_ms=30, seed=1)
    assert timed.simulations is None
    assert timed.act_on(game, seat) in game.legal_actions()
    assert sum(v for v, _ in timed.root_stats().values()) >= 1
    capped = ISMCTSBot("craits", simulations=5, max_time_ms=10_000, seed=1)
    capped.act_on(game, seat)
    assert sum(v for v, _ in capped.root_stats().values()) == 5


def test_the_search_cost_benchmark_runs(capsys):
    """``benchmarks/search_cost.py`` still runs (tiny budgets; its figures are not checked)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent.parent / "benchmarks" / "search_cost.py"
    spec = importlib.util.spec_from_file_location("search_cost", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--simulations", "4", "--moves", "1"])
    module.main(["--strength", "craits", "--sets", "1", "--deals", "2", "--spec", "ismcts:simulations=3"])
    module.main(["--strength", "pairs_draft", "--sets", "1", "--spec", "ismcts:simulations=2"])
    out = capsys.readouterr().out
    assert out.count("ms/move") == 1 and out.count("win share") >= 4


# ------------------------------------------------------- what play revealed (Craits)
def _outside(game_or_view, hand: int, seat: int) -> int:
    return (hand & ~game_or_view.voids[seat]).bit_count()


@pytest.mark.parametrize("rules", [Rules(deals=[8, 7]), Rules.preset("create", deals=[8, 7])])
def test_craits_revealed_voids_hold_throughout_play(rules):
    """A player who drew held none of the cards it could play: the engine records them
    (``voids``) and the cards drawn since (``fresh``); at every point of play at least
    (hand size - fresh) of its cards lie outside its voids, and a draw records exactly the
    cards that were legal to play."""
    rng = random.Random(3)
    seen_draws = 0
    for seed in range(4):
        game = CraitsGame(rules, 4, seed=seed)
        while not game.game_over:
            legal = game.legal_actions()
            seat, phase = game.current_player, game.phase_id
            before = game.copy()
            action = rng.choice(legal)
            game.apply(action)
            if action == 104 and not game.deal_over and game.deal_index == before.deal_index:
                seen_draws += 1
                if phase == CRANK:
                    assert game.voids[seat] == (0xF | 0xF0)  # the A and the 2 of every suit
                else:  # no card of the void was in the hand, and every card of it was playable
                    assert before.hand_bits[seat] & game.voids[seat] == 0
                    probe = before.copy()
                    for card in bits_to_cards(game.voids[seat]):
                        probe.hand_bits[seat] = 1 << card
                        probe._legal = None
                        assert card in probe.legal_actions(), card
            if game.deal_over or game.game_over:
                continue
            for s in range(4):
                size = game.hand_bits[s].bit_count()
                assert _outside(game, game.hand_bits[s], s) >= size - game.fresh[s]
    assert seen_draws > 50


def test_craits_determinizations_respect_revealed_voids():
    rng = random.Random(1)
    checked = 0
    for seed in range(3):
        game = CraitsGame(Rules(deals=[8]), 4, seed=seed)
        while not game.game_over:
            seat = game.current_player
            if any(game.voids[s] and game.hand_bits[s].bit_count() > game.fresh[s] for s in range(4) if s != seat):
                v = craits_view.view(game, seat)
                for _ in range(5):
                    world = craits_view.determinize(v, rng)
                    for s in range(4):
                        size = world.hand_bits[s].bit_count()
                        assert size == game.hand_bits[s].bit_count()
                        if s != seat:
                            assert _outside(world, world.hand_bits[s], s) >= size - world.fresh[s]
                checked += 1
            game.apply(rng.choice(game.legal_actions()))
    assert checked > 20
    # a player that drew holding one card and drew nothing since holds none of its void
    game = CraitsGame.from_position(
        Rules(), [["7H", "2C", "9S"], ["KD"], ["3C", "8D", "TD"]], top="5H", stock=["QS", "JS", "4C"], to_play=1
    )
    game.apply(104)  # seat 1 can't follow the 5 of hearts: it draws one
    assert game.voids[1] and game.fresh[1] == 1
    v = craits_view.view(game, game.current_player)
    for _ in range(20):
        world = craits_view.determinize(v, rng)
        assert _outside(world, world.hand_bits[1], 1) >= 1  # KD, or anything not playable on 5H
