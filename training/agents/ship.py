"""Ship a trained bot: its policy copied into a checkpoint folder of its own, with duplicate
evaluations against the heuristic and random play recorded in its meta.json.

    python -m training.ship runs/create_full/checkpoint --to checkpoints/create --games 400

Copies ``meta.json`` and ``policy.npz`` (never ``model.zip``: it only serves to resume a run,
and it holds pickled objects), then plays the bot in duplicate format against three heuristic
bots and against three random players (seated as it trained: in partnership Craits, when it
played its own partner, in both seats of its side), on the env's rules as a game is played
(whole games, not training episodes), from deal seed ``--seed``. meta.json's ``evaluation``
gets each result with the ``python -m training.evaluate`` command that reproduces it; the
training-time evaluation is kept beside them. The folder is written beside ``--to`` and
renamed into place (``training.running.executor.replace_folder``), so it is never half written; an
existing ``--to`` is replaced only with ``--replace``.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from training.agents.checkpoint import read_meta
from training.common.commands import command_parser
from training.common.games import EnvHandle
from training.matches.evaluate import bot_layout, evaluate
from training.running.executor import replace_folder


def game_args(meta: dict) -> dict:
    """The env arguments of the bot's rules as ``training.matches.evaluate`` takes them: the preset
    (unless it is the env's default) and every rule that differs from it."""
    preset = meta["env_args"].get("preset")
    args = {"preset": preset} if preset is not None else {}
    base = EnvHandle(meta["env_id"], args).rule_args
    if args and base == EnvHandle(meta["env_id"], {}).rule_args:
        args = {}  # the default preset: saying it changes nothing
    args.update({k: v for k, v in meta["rules"].items() if base.get(k) != v})
    return args


def command(env_id: str, args: dict, layout: list[str], games: int, seed: int) -> str:
    parts = ["python", "-m", "training.evaluate", "--env", env_id]
    for key, value in args.items():
        parts += ["--arg", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]
    parts += ["--agents", ",".join(layout), "--games", str(games), "--seed", str(seed)]
    return shlex.join(parts)


def ship(
    source: Path, to: Path, games: int, seed: int = 0, processes: int = 1, replace: bool = False, say=print
) -> dict:
    meta = read_meta(source)
    if to.exists() and not replace:
        raise ValueError(f"{to} exists: pass --replace to replace it")
    args = game_args(meta)
    env = EnvHandle(meta["env_id"], args)
    own_partner = env.rule_args.get("partnership", False)  # as the shipped configs train (opponents.partner: learner)
    shipped = str(to)  # the bot is named by where it will live, in the results and the commands
    evaluation: dict[str, Any] = {"format": "duplicate"}
    for opponent in ("heuristic", "random"):
        layout = bot_layout(env, shipped, opponent, own_partner)
        say(f"{shipped} vs {opponent}: {games} duplicate sets ...")
        # played from the source folder: the same policy the shipped folder will hold
        result = evaluate(
            env, [str(source) if a == shipped else a for a in layout], games, seed=seed, processes=processes
        )
        mine = result["agents"][str(source)]
        evaluation[opponent] = {
            "command": command(env.id, args, layout, games, seed),
            **{k: mine[k] for k in ("win_share", "win_share_ci95", "even_share", "mean_score", "mean_score_ci95")},
            **(
                {"mean_score_per_deal": mine["mean_score"] / result["deals_per_game"]}
                if result["deals_per_game"]
                else {}
            ),
            "games": result["games"],
            "duplicate_sets": games,
        }
        ci = mine["win_share_ci95"]  # None from a single set
        say(
            f"  win share {mine['win_share']:.3f} (95% CI {'n/a' if ci is None else f'{ci[0]:.3f}-{ci[1]:.3f}'}, "
            f"even {mine['even_share']:.3f}), points/game {mine['mean_score']:.2f}"
        )
    if "evaluation" in meta:
        evaluation["training_time_evaluation"] = meta["evaluation"]
    meta["evaluation"] = evaluation
    replace_folder(
        to,
        {
            "meta.json": (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode(),
            "policy.npz": (source / "policy.npz").read_bytes(),
        },
    )
    return evaluation


def main(argv=None) -> None:
    parser = command_parser("ship", __doc__)
    parser.add_argument("checkpoint", help="a checkpoint folder (runs/NAME/checkpoint)")
    parser.add_argument("--to", required=True, help="the shipped bot's folder, e.g. checkpoints/create")
    parser.add_argument("--games", type=int, default=400, help="duplicate sets per evaluation")
    parser.add_argument("--seed", type=int, default=0, help="first deal seed")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--replace", action="store_true", help="replace an existing --to folder")
    args = parser.parse_args(argv)
    try:
        ship(Path(args.checkpoint), Path(args.to), args.games, args.seed, args.processes, args.replace)
    except (ValueError, OSError) as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
