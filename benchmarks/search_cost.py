"""IS-MCTS (``envs.search``): the cost of a move, and a quick check of strength.

Cost (the default): the IS-MCTS bot plays seat 0 against the heuristic bot (``envs/*/bot.py``)
in seeded games, and the time of each of its searched moves (moves with one legal action
are not searched and not counted) is averaged, per game, rollout rule and number of
simulations. Craits plays its default rules (positions from the first deals, 8 cards and
down); Pairs Draft whole games (the draft, the discard and the rounds alike); ``create``
partnership Craits (the create preset), the heuristic in the other three seats, partner
included. ``--options`` adds IS-MCTS options to the timed spec.

Strength (``--strength``): duplicate matches, IS-MCTS in one seat against the heuristic
bot in the others. Every deal seed is played once per seat with IS-MCTS moved round the
table, so every seat's cards are played by IS-MCTS once: the luck of the deal cancels.
Reports IS-MCTS's win share (ties split; 0.25 is no better than the heuristic) and its
mean env reward (Craits: deal reward; Pairs Draft: points reward), with 95% intervals
over the duplicate sets.

Run from the repository root::

    python benchmarks/search_cost.py                         # 100 and 1,000 simulations
    python benchmarks/search_cost.py --simulations 100,1000,10000 --moves 3
    python benchmarks/search_cost.py --games create --prior create_dqn --leaf value --options reward_transform=symlog
    python benchmarks/search_cost.py --strength craits --sets 10 --deals 8
    python benchmarks/search_cost.py --strength pairs_draft --sets 6 --spec ismcts:simulations=300
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from envs.search import ISMCTSBot  # noqa: E402

GAMES = ("craits", "pairs_draft")
SETTINGS = {
    "craits": ("craits_v0", {}),
    "pairs_draft": ("pairs_draft_v0", {}),
    # cost only: partnership Craits, the search in seat 0, the heuristic in the others (its partner too)
    "create": ("craits_v0", {"preset": "create", "partnership": True}),
}


def make_env(game: str, deals=None):
    if game in ("craits", "create"):
        from envs.craits.bot import CraitsHeuristic
        from envs.craits.env import raw_env

        env = raw_env(**SETTINGS[game][1], **({"deals": deals} if deals else {}))
        return env, CraitsHeuristic(env.rules)
    from envs.pairs_draft.bot import PairsDraftHeuristic
    from envs.pairs_draft.env import raw_env

    return raw_env(), PairsDraftHeuristic()


def play(env, heuristic, bot, bot_seat: int, seed: int, on_search=None, max_searches=None) -> bool:
    """One game from ``reset(seed)``, ``bot`` in ``bot_seat``; ``on_search(seconds)`` after each
    searched move. Returns False if stopped early by ``max_searches``."""
    env.reset(seed=seed)
    bot.reset()
    searches = 0
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seat = env.agent_name_mapping[agent]
        if seat == bot_seat:
            game = env.game
            searched = len(game.legal_actions()) > 1
            start = time.perf_counter()
            action = bot.act_on(game, seat)
            if searched and on_search is not None:
                on_search(time.perf_counter() - start)
                searches += 1
                if max_searches is not None and searches >= max_searches:
                    return False
        else:
            action = heuristic.act(obs["observation"], obs["action_mask"])
        env.step(action)
    return True


def search_bot(game: str, spec: str, seed):
    """The bot of an ``ismcts`` spec; one naming a ``prior`` network, or playing other rules
    than its game's default, is built through ``training.agents.make_agent`` (which reads the
    checkpoint and the env's rules)."""
    if "prior=" not in spec and game in GAMES:
        return ISMCTSBot.from_spec(spec, game, seed=seed)
    from training.agents import make_agent
    from training.common.games import EnvHandle

    return make_agent(spec, EnvHandle(*SETTINGS[game]), seed=seed)


def cost(
    games,
    simulations,
    rollouts,
    moves: int,
    seed: int,
    guided: bool = False,
    leaf: str = "rollout",
    prior=None,
    options: str = "",
) -> None:
    print(
        f"{'game':<12} {'leaf':<8} {'rollout':<10} {'simulations':>11} {'moves':>6} {'ms/move':>9} {'us/simulation':>14}"
    )
    for game in games:
        env, heuristic = make_env(game)
        for rollout in rollouts:
            for sims in simulations:
                # guided: the network named by prior, else the game's shipped bot (named as the game)
                guide = f",prior={prior or game},leaf={leaf}" if guided else ""
                extra = f",{options}" if options else ""
                bot = search_bot(game, f"ismcts:simulations={sims},rollout={rollout}{guide}{extra}", seed)
                times = []
                want = max(1, moves if sims < 10_000 else min(moves, 3))
                game_seed = seed
                while len(times) < want:
                    play(env, heuristic, bot, 0, game_seed, times.append, want - len(times))
                    game_seed += 1
                ms = 1000 * sum(times) / len(times)
                print(
                    f"{game:<12} {leaf:<8} {rollout:<10} {sims:>11,} {len(times):>6} {ms:>9.1f} {1000 * ms / sims:>14.1f}",
                    flush=True,
                )


def strength(game: str, sets: int, spec: str, seed: int, deals) -> None:
    env, heuristic = make_env(game, deals)
    seats = len(env.possible_agents)
    set_wins, set_rewards = [], []
    start = time.perf_counter()
    for index in range(sets):
        wins = rewards = 0.0
        for seat in range(seats):
            bot = search_bot(game, spec, [seed, index, seat])
            total = {"r": 0.0}
            env.reset(seed=seed + index)
            bot.reset()
            for agent in env.agent_iter():
                obs, reward, termination, truncation, _ = env.last()
                s = env.agent_name_mapping[agent]
                if s == seat:
                    total["r"] += reward
                if termination or truncation:
                    env.step(None)
                    continue
                action = bot.act_on(env.game, s) if s == seat else heuristic.act(obs["observation"], obs["action_mask"])
                env.step(action)
            winners = env.game.winners()
            wins += (seat in winners) / len(winners)
            rewards += total["r"]
        set_wins.append(wins / seats)
        set_rewards.append(rewards / seats)
        print(
            f"set {index}: win share {set_wins[-1]:.3f}, mean reward {set_rewards[-1]:+.3f} "
            f"({time.perf_counter() - start:.0f} s)",
            flush=True,
        )

    def mean_ci(values):
        m = sum(values) / len(values)
        if len(values) < 2:
            return m, float("nan")
        sd = math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))
        return m, 1.96 * sd / math.sqrt(len(values))

    (w, wci), (r, rci) = mean_ci(set_wins), mean_ci(set_rewards)
    print(
        f"\n{game}{' deals ' + ','.join(map(str, deals)) if deals else ''}: {spec} in one seat vs "
        f"{seats - 1} heuristic, {sets} duplicate sets x {seats} seats = {sets * seats} games"
    )
    print(f"win share {w:.3f} ± {wci:.3f} (even share {1 / seats:.3f}); mean reward per game {r:+.3f} ± {rci:.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--games",
        default=",".join(GAMES),
        help="cost: games, comma-separated (and create: partnership Craits, the create preset)",
    )
    parser.add_argument("--simulations", default="100,1000", help="cost: simulation counts, comma-separated")
    parser.add_argument("--rollouts", default="random,heuristic", help="cost: rollout rules, comma-separated")
    parser.add_argument(
        "--moves",
        type=int,
        default=20,
        help="cost: searched moves timed per row (at most 3 for 10,000 simulations or more)",
    )
    parser.add_argument(
        "--guided", action="store_true", help="cost: the search guided by the game's shipped bot (prior=GAME)"
    )
    parser.add_argument(
        "--prior", help="cost: the search guided by this bot instead (a shipped bot's name or a checkpoint folder)"
    )
    parser.add_argument(
        "--leaf",
        default="rollout",
        choices=("rollout", "value"),
        help="cost, guided: how leaves are valued (value: by the network, after a rollout to the searcher's turn)",
    )
    parser.add_argument(
        "--options", default="", help="cost: more IS-MCTS options, e.g. reward_transform=symlog,prior_temperature=1"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strength", choices=GAMES, help="play duplicate matches against the heuristic instead")
    parser.add_argument("--sets", type=int, default=10, help="strength: duplicate sets (deal seeds)")
    parser.add_argument(
        "--spec",
        default="ismcts:simulations=1000",
        help="strength: the IS-MCTS bot, e.g. ismcts:simulations=1000,uct_c=1.4",
    )
    parser.add_argument(
        "--deals",
        default=None,
        help="strength, Craits: hand sizes of the deals, e.g. 8 or 8,7 (default: the full game)",
    )
    args = parser.parse_args(argv)
    if args.strength:
        deals = [int(x) for x in args.deals.split(",")] if args.deals else None
        strength(args.strength, args.sets, args.spec, args.seed, deals)
        return
    games = [g for g in args.games.split(",") if g]
    for g in games:
        if g not in SETTINGS:
            parser.error(f"unknown game {g!r}: choose from {', '.join(SETTINGS)}")
    simulations = [int(s) for s in args.simulations.split(",")]
    guided = args.guided or args.prior is not None
    if args.leaf != "rollout" and not guided:
        parser.error("--leaf value values leaves by a network: add --guided or --prior")
    if args.prior is not None and len(games) != 1:
        parser.error("--prior names one game's bot: give that game alone with --games")
    cost(
        games, simulations, args.rollouts.split(","), args.moves, args.seed, guided, args.leaf, args.prior, args.options
    )


if __name__ == "__main__":
    main()
