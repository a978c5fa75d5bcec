"""Watch agents play one seeded game, move by move.

    python -m training.play --env craits_v0 --agents heuristic,random,random,random --seed 7
    python -m training.play --env pairs_draft_v0 --agents checkpoints/pairs_draft,heuristic,heuristic,heuristic --seed 1

``--agents`` lists one agent per seat (random, heuristic or a checkpoint folder); a shorter
list is repeated around the table. ``--arg key=value`` sets an env argument.
"""

from __future__ import annotations

from pathlib import Path

from envs.present import presentation
from training.agents import make_agent, seat_layout, split_agents
from training.agents.human import HumanAgent, narrating_agent
from training.common.commands import command_parser
from training.common.games import EnvHandle, add_table_arguments, parse_env_args
from training.matches.evaluate import play_game
from training.matches.records import Recorder, check_record_folder, header_of, result_of, write_record


def play(env, agent_specs: list[str], seed: int, verbose: bool = True, record_dir=None) -> list[int]:
    """One seeded game in ``env`` (an ``EnvHandle``) with one agent per seat, move by move;
    with ``record_dir``, its record is written there."""
    if record_dir:
        check_record_folder(record_dir)
    specs = seat_layout(agent_specs, env.seats)
    if specs.count("human") > 1:
        raise ValueError("at most one 'human' seat: the others would see its cards")
    agents = [
        HumanAgent().bind(env.raw, i, names=specs) if s == "human" else make_agent(s, env, seed=seed + i)
        for i, s in enumerate(specs)
    ]
    human = narrating_agent(agents)
    if verbose:
        args = ", ".join(f"{k}={v}" for k, v in env.args.items()) or "default arguments"
        print(f"{env.id} ({args}), seed {seed}")
        print("\n".join(f"seat {seat}: {spec}" for seat, spec in enumerate(specs)))
    recorder = Recorder()

    def finish(scores, winners):
        if record_dir:
            path = write_record(
                Path(record_dir) / f"{env.id}-seed{seed}.jsonl",
                header_of(env, seed, specs),
                recorder.moves,
                result_of(env.raw.game, winners is None and not env.raw.game.is_over),
            )
            print(f"record: {path}")
        return scores

    if human is not None:  # the game as the person's seat sees it: never every hand

        def tell(raw, seat, action):
            recorder(raw, seat, action)
            human.on_move(raw, seat, action)

        scores, winners = play_game(env.raw, agents, seed, on_move=tell)
        human.finish()
        return finish(scores, winners)
    moves = 0

    def show(raw, seat, action):
        nonlocal moves
        game = raw.game
        if moves == 0 or env.spec.deal_over(game):  # the table as the next deal starts
            print("\n" + presentation(game).render(game) + "\n")
        moves += 1
        print(f"seat {seat} ({specs[seat]}): {game.action_to_text(action)}")

    def on_move(raw, seat, action):
        recorder(raw, seat, action)
        if verbose:
            show(raw, seat, action)

    scores, winners = play_game(env.raw, agents, seed, on_move=on_move)
    if verbose:
        print("\n" + presentation(env.raw.game).render(env.raw.game) + "\n")
        better = "lower" if env.spec.lower_score_wins else "higher"
        print(f"final scores ({better} is better):")
        print(
            "\n".join(
                f"  seat {seat} ({spec}): {score}{'  wins' if winners and seat in winners else ''}"
                for seat, (spec, score) in enumerate(zip(specs, scores))
            )
        )
    return finish(scores, winners)


def main(argv=None):
    parser = command_parser("play", __doc__)
    add_table_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record",
        metavar="DIR",
        help="write the game's record (JSON lines) into DIR (python -m training.replay shows it)",
    )
    args = parser.parse_args(argv)
    try:
        play(
            EnvHandle(args.env, parse_env_args(args.arg)), split_agents(args.agents), args.seed, record_dir=args.record
        )
    except ValueError as error:  # a bad agent, checkpoint, env argument or value, an illegal move
        parser.exit(1, f"error: {error}\n")  # a message, not a traceback


if __name__ == "__main__":
    main()
