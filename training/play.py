"""Watch agents play one seeded game, move by move.

    python -m training.play --env craits_v0 --agents heuristic,random,random,random --seed 7
    python -m training.play --env pairs_draft_v0 --agents checkpoints/pairs_draft,heuristic --seed 1

``--agents`` lists one agent per seat (random, heuristic or a checkpoint folder); a shorter
list is repeated around the table. ``--arg key=value`` sets an env argument.
"""
from __future__ import annotations

import argparse

import yaml

from .agents import make_agent, seat_layout
from .games import make_raw_env


def parse_assignments(pairs) -> dict:
    """``["num_players=3", "deals=[5]"]`` -> ``{"num_players": 3, "deals": [5]}`` (YAML values)."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"expected key=value, got {pair!r}")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ValueError(f"{pair}: not a valid YAML value ({exc.problem})") from None
    return out


def play(env_id: str, env_args: dict, agent_specs: list[str], seed: int, verbose: bool = True) -> list[int]:
    env = make_raw_env(env_id, **env_args)
    env.reset(seed=seed)
    specs = seat_layout(agent_specs, len(env.possible_agents))
    agents = [make_agent(s, env, env_id, env_args, seed=seed + i) for i, s in enumerate(specs)]
    game = env.game
    if verbose:
        print("\n".join(f"seat {i}: {s}" for i, s in enumerate(specs)) + "\n\n" + game.render() + "\n")
    for agent_id in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seat = env.agent_name_mapping[agent_id]
        action = agents[seat].act(obs["observation"], obs["action_mask"])
        if verbose:
            print(f"seat {seat} ({specs[seat]}): {game.action_to_text(action)}")
        env.step(action)
        if verbose and (getattr(game, "deal_over", False) or env.terminations[agent_id] or env.truncations[agent_id]):
            print("\n" + game.render() + "\n")
    return game.scores()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="craits_v0", help="craits_v0 or pairs_draft_v0")
    parser.add_argument("--agents", default="heuristic,random", help="comma-separated, one per seat (repeated)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arg", action="append", metavar="KEY=VALUE", help="env argument, e.g. --arg num_players=3")
    args = parser.parse_args(argv)
    try:
        scores = play(args.env, parse_assignments(args.arg), args.agents.split(","), args.seed)
    except ValueError as error:  # a bad agent, env or argument: a message, not a traceback
        parser.error(str(error))
    print("final scores:", scores)


if __name__ == "__main__":
    main()
