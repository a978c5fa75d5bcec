"""Expert iteration: a network taught by the search it guides, round after round.

    python -m training.expert --env pairs_draft_v0 --prior pairs_draft --out runs/exit_pairs \\
        --rounds 2 --games 400 --simulations 200 --processes 2

Round r (its folder ``OUT/round_<r>/``):

1. **Games.** The search guided by the round's network (``ismcts:prior=NET``; round 0: the
   ``--prior`` bot, round r: round r-1's network) takes one seat (moved round the table from
   game to game), both seats of a side in partnership play; every other seat is drawn from
   the pool: ``--pool`` (the heuristic and a plain search by default) and every earlier
   round's network. At each of the search's
   decisions with a choice, the seat's observation, its action mask and the search's
   *visit distribution* at the root are kept, and after the game the seat's env reward
   over the game (the search's result: kept, not yet a training target: the checkpoint
   format holds no value head). Games are written in chunks (``games/chunk_<k>.npz``), each
   atomically: a stopped round goes on with the next missing chunk.
2. **Training.** The round's network starts as a copy of the guiding one, its output
   scaled so that its softmax is the prior the search used (a Q-network's values over
   ``VALUE_TEMPERATURE``), and is fitted to the visit distributions (cross-entropy over the
   legal moves, Adam; 10% of the decisions held out, the epoch with the lowest held-out loss
   kept). It is saved as an ordinary checkpoint (``checkpoint/``: policy logits,
   ``masked_sampling``; deterministic agents play their best move), so it loads wherever a
   bot does, as an opponent, a prior, or a shipped bot.
3. **Evaluation.** The new network against heuristic bots (a side of two against a side of
   two in partnership play, one against three otherwise), in duplicate format
   (``--eval-sets`` sets from ``--eval-seed``), appended to ``OUT/rounds.jsonl``.

Each step is skipped when its files exist, so the same command resumes where a run stopped
(another session, another machine with the folder). ``docs/strength.md`` has what it gained.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from envs.search import VALUE_TEMPERATURE
from training.agents import checked_act, make_agent, prior_network
from training.agents.checkpoint import FORMAT_VERSION, load_policy
from training.common.commands import command_parser
from training.common.files import write_atomically
from training.common.games import EnvHandle, parse_env_args
from training.common.version import deckgym_version
from training.matches.evaluate import bot_layout, evaluate
from training.running.executor import LocalExecutor, limit_threads

CHUNK_GAMES = 20  # games per data file: what a stop may lose


# ------------------------------------------------------------------------------ games
def _play_chunk(task) -> dict[str, np.ndarray]:
    """One chunk of games (see the module docstring, step 1): the arrays of its decisions."""
    env_id, env_args, guide, pool, simulations, seed, first_game, games = task
    limit_threads(1)
    env = EnvHandle(env_id, env_args)
    raw = env.raw
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    owners: list[int] = []
    deciders: list[int] = []
    results: list[float] = []
    for game in range(first_game, first_game + games):
        rng = random.Random(seed * 1_000_003 + game)
        learner = game % env.seats
        side = env.side(learner)
        spec = f"ismcts:prior={guide},simulations={simulations}"
        seats = [
            make_agent(spec, env, seed=[seed, game] if s == learner else [seed, game, s])  # the learner's as before
            if s in side
            else make_agent(rng.choice(pool), env, seed=[seed, game, s])
            for s in range(env.seats)
        ]
        for agent in seats:
            agent.reset()
        raw.reset(seed=seed * 1_000_003 + game)
        total, start = 0.0, len(observations)
        while True:
            for agent_id in raw.agent_iter():
                obs, reward, termination, truncation, _ = raw.last()
                seat = raw.agent_name_mapping[agent_id]
                if seat == learner:  # partners share their side's reward: counted once
                    total += reward
                if termination or truncation:
                    raw.step(None)
                    continue
                mask = obs["action_mask"]
                if seat in side and mask.sum() > 1:
                    action = seats[seat].act_on(raw.game, seat)
                    visits = np.zeros(len(mask), np.float32)
                    for a, (n, _) in seats[seat].root_stats().items():
                        visits[a] = n
                    observations.append(np.array(obs["observation"], np.float32))
                    masks.append(np.array(mask, np.int8))
                    targets.append(visits / visits.sum())
                    owners.append(game)
                    deciders.append(seat)
                else:
                    action = checked_act(seats[seat], seat, obs, raw.game)
                raw.step(action)
            if raw.game.is_over or any(raw.truncations.values()):
                break
            raw.reset()  # an env whose episode is a deal: the game goes on
        results += [total] * (len(observations) - start)
    return {
        "observations": np.array(observations, np.float32).reshape(-1, env.obs_size),
        "masks": np.array(masks, np.int8).reshape(-1, env.num_actions),
        "visits": np.array(targets, np.float32).reshape(-1, env.num_actions),
        "games": np.array(owners, np.int64),
        "seats": np.array(deciders, np.int64),
        "results": np.array(results, np.float32),
    }


def play_round(folder: Path, env: EnvHandle, guide: str, pool: list[str], args) -> dict[str, np.ndarray]:
    """Every chunk of the round's games (playing the missing ones), concatenated."""
    chunks = range((args.games + CHUNK_GAMES - 1) // CHUNK_GAMES)
    missing = [k for k in chunks if not (folder / "games" / f"chunk_{k}").is_dir()]
    seed = args.seed * 1000 + int(folder.name.split("_")[1])
    tasks = [
        (
            env.id,
            dict(env.args),
            guide,
            pool,
            args.simulations,
            seed,
            k * CHUNK_GAMES,
            min(CHUNK_GAMES, args.games - k * CHUNK_GAMES),
        )
        for k in missing
    ]
    for index, data in LocalExecutor(args.processes).imap(_play_chunk, tasks):
        k = missing[index]
        write_atomically(folder / "games" / f"chunk_{k}", lambda tmp, data=data: np.savez(tmp / "data.npz", **data))
        print(f"{folder.name}: games chunk {k + 1} of {len(chunks)} ({len(data['games'])} decisions)", flush=True)
    parts = [np.load(folder / "games" / f"chunk_{k}" / "data.npz") for k in chunks]
    names = set.intersection(*(set(p.files) for p in parts))  # chunks written before "seats" lack it
    return {name: np.concatenate([p[name] for p in parts]) for name in sorted(names)}


# --------------------------------------------------------------------------- training
def fit(guide: str, env: EnvHandle, data: dict[str, np.ndarray], args) -> tuple[dict[str, np.ndarray], dict]:
    """The guiding network fitted to the visit distributions (step 2): its arrays and the
    training's record."""
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, args.processes))
    network = prior_network(guide, env)
    scale = 1.0 / VALUE_TEMPERATURE if network.meta.get("action_selection") == "masked_argmax" else 1.0
    act = torch.relu if network.meta["activation"] == "relu" else torch.tanh
    layers = [(torch.tensor(w), torch.tensor(b)) for w, b in network.hidden]
    layers.append((torch.tensor(network.head_w * scale), torch.tensor(network.head_b * scale)))
    parameters = [p.requires_grad_() for layer in layers for p in layer]

    def logits(x):
        for weight, bias in layers[:-1]:
            x = act(x @ weight.T + bias)
        return x @ layers[-1][0].T + layers[-1][1]

    def loss_of(index):  # cross-entropy of the visit distribution over the legal moves
        out = logits(obs[index]).masked_fill(~legal[index], -1e9)
        return -(visits[index] * torch.log_softmax(out, dim=1)).sum(dim=1).mean()

    obs = torch.tensor(data["observations"])
    legal = torch.tensor(data["masks"]).bool()
    visits = torch.tensor(data["visits"])
    games = np.unique(data["games"])  # held out by game: a game's decisions are alike
    held = set(np.random.default_rng(args.seed).choice(games, max(1, len(games) // 10), replace=False).tolist())
    is_held = np.isin(data["games"], list(held))
    train, valid = torch.tensor(np.flatnonzero(~is_held)), torch.tensor(np.flatnonzero(is_held))
    optimizer = torch.optim.Adam(parameters, lr=args.learning_rate)
    with torch.no_grad():
        best = (float(loss_of(valid)), 0, [p.detach().clone() for p in parameters])
    history = [best[0]]
    for epoch in range(1, args.epochs + 1):
        order = train[torch.randperm(len(train))]
        for start in range(0, len(order), args.batch_size):
            optimizer.zero_grad()
            loss_of(order[start : start + args.batch_size]).backward()
            optimizer.step()
        with torch.no_grad():
            history.append(float(loss_of(valid)))
        if history[-1] < best[0]:
            best = (history[-1], epoch, [p.detach().clone() for p in parameters])
    kept = [p.numpy() for p in best[2]]
    names = [f"layer_{i}" for i in range(len(layers) - 1)] + ["action"]
    arrays = {}
    for i, name in enumerate(names):
        arrays[f"{name}_weight"], arrays[f"{name}_bias"] = kept[2 * i], kept[2 * i + 1]
    record = {
        "decisions": int(len(obs)),
        "held_out": int(len(valid)),
        "held_out_loss": [round(v, 5) for v in history],
        "epoch_kept": best[1],
    }
    return arrays, record


def save_network(folder: Path, guide: str, env: EnvHandle, arrays, record: dict, args, round_index: int) -> None:
    base = prior_network(guide, env).meta
    hidden = [int(arrays[f"layer_{i}_bias"].shape[0]) for i in range(len(arrays) // 2 - 1)]
    meta = {
        "format_version": FORMAT_VERSION,
        **{k: base[k] for k in ("env_id", "env_args", "rules", "observation_size", "action_size", "activation")},
        "hidden_sizes": hidden,
        "action_selection": "masked_sampling",
        "algorithm": {
            "name": "ExpertIteration",
            "net_arch": hidden,
            "round": round_index,
            "guide": guide,
            "simulations": args.simulations,
            "games": args.games,
            "pool": args.pool,
            "epochs": args.epochs,
            "learning_rate": args.learning_rate,
            "batch_size": args.batch_size,
            **record,
        },
        "run": folder.parent.name,
        "seed": args.seed,
        "deckgym_version": deckgym_version(),
    }

    def fill(tmp: Path):
        np.savez(tmp / "policy.npz", **arrays)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")

    write_atomically(folder / "checkpoint", fill)
    load_policy(folder / "checkpoint")  # it reads back as a checkpoint


# --------------------------------------------------------------------------- the run
def run(args) -> list[dict]:
    out = Path(args.out)
    env = EnvHandle(args.env, parse_env_args(args.arg))
    prior_network(args.prior, env)  # the first guide fits this game: say so before any game
    log = out / "rounds.jsonl"
    done = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    guide, pool = args.prior, args.pool.split(",")
    for r in range(args.rounds):
        folder = out / f"round_{r}"
        if r < len(done):
            guide = (folder / "checkpoint").as_posix()
            pool.append(guide)
            continue
        if not (folder / "checkpoint").is_dir():
            data = play_round(folder, env, guide, pool, args)
            arrays, record = fit(guide, env, data, args)
            save_network(folder, guide, env, arrays, record, args, r)
        network = (folder / "checkpoint").as_posix()
        layout = bot_layout(env, network, "heuristic", own_partner=True)
        result = evaluate(env, layout, args.eval_sets, seed=args.eval_seed, processes=args.processes)["agents"][network]
        line = {
            "round": r,
            "guide": guide,
            "network": network,
            **{k: result[k] for k in ("win_share", "win_share_ci95")},
        }
        print(json.dumps(line), flush=True)
        with open(log, "a") as f:
            f.write(json.dumps(line) + "\n")
        done.append(line)
        guide = network
        pool.append(network)
    return done


def main(argv=None) -> list[dict]:
    parser = command_parser("expert", __doc__)
    parser.add_argument("--env", required=True, help="the env id of the game")
    parser.add_argument("--arg", action="append", default=[], help="env argument KEY=VALUE (e.g. preset=create)")
    parser.add_argument(
        "--prior", required=True, help="the first round's guiding network (a checkpoint or shipped bot)"
    )
    parser.add_argument("--out", required=True, help="the run's folder (created; run again to resume)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--games", type=int, default=200, help="games per round")
    parser.add_argument("--simulations", type=int, default=200, help="the guided search's budget a move")
    parser.add_argument(
        "--pool",
        default="heuristic,ismcts:simulations=200",
        help="the other seats' agents (with earlier rounds' networks)",
    )
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--eval-sets", type=int, default=200, help="duplicate sets of each round's evaluation")
    parser.add_argument("--eval-seed", type=int, default=850_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args(argv)
    for name in ("rounds", "games", "simulations", "epochs", "batch_size", "eval_sets", "processes"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return run(args)


if __name__ == "__main__":
    main()
