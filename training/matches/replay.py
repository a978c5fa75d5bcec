"""Replay a game record through the engine, check it, and show it move by move.

    python -m training.replay records/craits_v0-seed7.jsonl
    python -m training.replay FILE --quiet        # only check it

Every move must be the acting seat's and legal, the rules the record was made under must
be those its env arguments give here, and the replayed result must match the record's
(``training.matches.records``). A record that fails is refused with the line number.
"""

from __future__ import annotations

from envs.present import presentation
from training.common.commands import command_parser
from training.matches.records import RecordError, read_record, replay


def show_replay(path, verbose: bool = True) -> dict:
    header, moves, result = read_record(path)
    agents = header["agents"]
    if verbose:
        args = ", ".join(f"{k}={v}" for k, v in header["env_args"].items()) or "default arguments"
        print(f"{header['env']} ({args}), seed {header['seed']}")
        print("\n".join(f"seat {seat}: {agent}" for seat, agent in enumerate(agents)))
    shown_table: list[bool] = []

    def on_move(game, seat, text):
        if not shown_table:
            print("\n" + presentation(game).render(game) + "\n")
            shown_table.append(True)
        print(f"seat {seat} ({agents[seat]}): {text}")

    def on_deal_end(game):
        print("\n" + presentation(game).render(game) + "\n")
        shown_table.clear()

    replayed = replay(header, moves, result, str(path), on_move if verbose else None, on_deal_end if verbose else None)
    winners = replayed["winners"]
    print(
        f"{path}: {len(moves)} moves replayed, every one legal; scores {replayed['scores']}, "
        f"{'truncated' if winners is None else f'winners {winners}'}: as recorded"
    )
    return replayed


def main(argv=None):
    parser = command_parser("replay", __doc__)
    parser.add_argument("record", help="a game record (JSON lines)")
    parser.add_argument("--quiet", action="store_true", help="only check the record")
    args = parser.parse_args(argv)
    try:
        show_replay(args.record, verbose=not args.quiet)
    except RecordError as error:
        parser.exit(1, f"error: {error}\n")


if __name__ == "__main__":
    main()
