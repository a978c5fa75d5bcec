"""Watch agents play one seeded game, move by move.

    python -m training.play --env craits_v0 --agents heuristic,random,random,random --seed 7
    python -m training.play --env pairs_draft_v0 --agents checkpoints/pairs_draft,heuristic,heuristic,heuristic --seed 1

``--agents`` lists one agent per seat (random, heuristic or a checkpoint folder); a shorter
list is repeated around the table. ``--arg key=value`` sets an env argument.
"""
from __future__ import annotations

import argparse

from .agents import make_agent, seat_layout
from .evaluate import play_game
from .games import game_spec, make_raw_env, parse_env_args


def play(env_id: str, env_args: dict, agent_specs: list[str], seed: int, verbose: bool = True) -> list[int]:
    env = make_raw_env(env_id, **env_args)
    specs = seat_layout(agent_specs, len(env.possible_agents))
    agents = [make_agent(s, env, env_id, env_args, seed=seed + i) for i, s in enumerate(specs)]
    if verbose:
        args = ", ".join(f"{k}={v}" for k, v in env_args.items()) or "default arguments"
        print(f"{env_id} ({args}), seed {seed}")
        print("\n".join(f"seat {seat}: {spec}" for seat, spec in enumerate(specs)))
    moves = 0

    def show(env, seat, action):
        nonlocal moves
        game = env.game
        if moves == 0 or getattr(game, "deal_over", False):  # the table as the next deal starts
            print("\n" + game.render() + "\n")
        moves += 1
        print(f"seat {seat} ({specs[seat]}): {game.action_to_text(action)}")

    scores, winners = play_game(env, agents, seed, on_move=show if verbose else None)
    if verbose:
        print("\n" + env.game.render() + "\n")
        better = "lower" if game_spec(env_id).lower_score_wins else "higher"
        print(f"final scores ({better} is better):")
        print("\n".join(f"  seat {seat} ({spec}): {score}{'  wins' if winners and seat in winners else ''}"
                        for seat, (spec, score) in enumerate(zip(specs, scores))))
    return scores


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m training.play", description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="craits_v0", help="craits_v0 or pairs_draft_v0")
    parser.add_argument("--agents", default="heuristic,random", help="comma-separated, one per seat in seat order; a shorter list repeats around the table (a,b at 4 seats: a b a b)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arg", action="append", metavar="KEY=VALUE", help="env argument, e.g. --arg num_players=3")
    args = parser.parse_args(argv)
    try:
        play(args.env, parse_env_args(args.arg), args.agents.split(","), args.seed)
    except ValueError as error:  # a bad agent, checkpoint, env argument or value, an illegal move
        parser.exit(1, f"error: {error}\n")  # a message, not a traceback


if __name__ == "__main__":
    main()
