"""An ensemble of trained bots as one checkpoint: the mean of its members' action scores.

    python -m training.ensemble --out runs/craits_ensemble checkpoints/craits runs/a/checkpoint runs/b/checkpoint

The members (checkpoint folders of the same game and rules, with networks of the same depth
and activation, picking moves the same way) become one wider MLP that computes exactly the
mean of their scores: their first layers stacked, each further hidden layer block-diagonal
(a member's units only see that member's units), and the output layer side by side, divided
by the number of members. So the ensemble is an ordinary checkpoint (``meta.json``,
``policy.npz``): it loads as an agent, an opponent or a shipped bot, and exports to every
frontend (``training.agents.export``) with no code of its own. deckgym's numpy agent
(``training.agents.PolicyAgent``) evaluates it member by member, skipping the zeros between
the blocks; other frontends multiply the whole matrices, at the wider network's cost.

Averaging Q-values of independently trained Double DQN agents (different seeds) cancels
part of each one's estimation noise; ``checkpoints/README.md`` has what it gained here. Only
members of one kind make sense together: masked-argmax scores (Q-values) with Q-values,
sampled logits with logits (their mean is a product of the members' policies, renormalised).
``meta.json`` records every member with the SHA-256 of its ``policy.npz``.

An ensemble given as a member counts as its own members, so an ensemble grows from a shipped
one whose members' folders are gone: ``python -m training.ensemble --out runs/bigger
checkpoints/craits_ensemble runs/d/checkpoint`` is the mean of all four networks, each weighted
alike, and records the shipped one's members (with ``via``: the folder they came from).

``--symmetries`` adds every member once per symmetry of the game (its spec's ``symmetries``:
Craits' 8 suit relabellings that keep the colours paired), its first layer reading the
relabelled observation and its scores read back through the relabelled moves. The ensemble's
scores are then the mean over the relabellings of the game, the same for a position and its
relabelled twin, at 8 times the cost a move. One member is enough
(``python -m training.ensemble --symmetries --out runs/sym checkpoints/craits_ensemble``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

from envs.spec import game_spec
from training.agents.checkpoint import FORMAT_VERSION, CheckpointError, load_policy, read_json, write_atomically
from training.agents.policy import block_spans, ensemble_members
from training.common.commands import command_parser
from training.common.files import check_replaceable
from training.common.version import deckgym_version

# Fields every member must share: what the game is and how the network's scores are read.
SHARED = ("env_id", "rules", "observation_size", "action_size", "activation", "action_selection")


def ensemble_arrays(layers: list[tuple[list, tuple]]) -> dict[str, np.ndarray]:
    """policy.npz arrays of the MLP whose scores are the mean of the members' scores;
    ``layers``: per member, (hidden layers [(W, b), ...], action layer (W, b))."""
    k, depth = len(layers), len(layers[0][0])
    spans = block_spans([[bias.shape[0] for _, bias in hidden] for hidden, _ in layers])
    total = [span.stop for span in spans[-1]]
    # every member reads the same observation: the first layers stacked
    arrays = {"layer_0_weight": np.vstack([hidden[0][0] for hidden, _ in layers])}
    for i in range(1, depth):  # a member's units read only its own previous layer
        block = np.zeros((total[i], total[i - 1]), np.float32)
        for (hidden, _), span in zip(layers, spans):
            block[span[i], span[i - 1]] = hidden[i][0]
        arrays[f"layer_{i}_weight"] = block
    for i in range(depth):
        arrays[f"layer_{i}_bias"] = np.concatenate([hidden[i][1] for hidden, _ in layers])
    arrays["action_weight"] = np.hstack([action[0] for _, action in layers]) / k
    arrays["action_bias"] = np.mean([action[1] for _, action in layers], axis=0)
    return {name: array.astype(np.float32) for name, array in arrays.items()}


def _check_out(out: Path, members: list) -> None:
    """``ValueError`` unless ``out`` may be replaced: it holds nothing, or an earlier ensemble
    (not one of its members, nor another checkpoint: a shipped bot has the same two files)."""
    check_replaceable(out, {"meta.json", "policy.npz"}, "an ensemble", {m: f"the member {m}" for m in members})
    if os.path.lexists(out / "meta.json"):
        try:
            algorithm = read_json(out / "meta.json").get("algorithm", {})
        except (CheckpointError, AttributeError):  # AttributeError: JSON, but no object
            algorithm = None
        if not isinstance(algorithm, dict) or algorithm.get("name") != "ensemble":
            raise CheckpointError(
                f"--out {out} holds a checkpoint that is not an ensemble, so it is not replaced; choose another folder"
            )


def _unpack(path: Path, meta: dict, hidden: list, action: tuple) -> list[tuple[list, tuple]]:
    """An ensemble member's own members as (hidden layers, action layer), cut from its blocks.
    Their output biases are gone (only their mean was kept), so each gets the mean: the
    members' mean of scores, all that an ensemble is, comes out exactly the same."""
    blocks = ensemble_members(meta, hidden, action[0])
    if blocks is None:
        raise CheckpointError(
            f"{path}: an ensemble whose weights are not the blocks of the members its meta.json lists"
        )
    k = len(blocks)
    return [
        ([(hidden[0][0][first], hidden[0][1][first]), *rest], (k * head, action[1])) for first, rest, head in blocks
    ]


def _relabelled(layers: list, recorded: list, meta: dict) -> tuple[list, list]:
    """Every member once per symmetry of the game (``--symmetries``): the first layer reads
    ``observation[observation_index]``, the move ``a``'s score is the one of ``action_index[a]``."""
    symmetries = game_spec(meta["env_id"]).symmetries()
    if len(symmetries) < 2:
        raise CheckpointError(f"--symmetries: {meta['env_id']} has no symmetries to average over")
    if any("symmetry" in member for member in recorded):
        raise CheckpointError("--symmetries: a member is already averaged over the game's symmetries")
    sizes = tuple(len(index) for index in symmetries[0])
    if sizes != (meta["observation_size"], meta["action_size"]):
        raise CheckpointError(
            f"--symmetries: the members' sizes ({meta['observation_size']}, {meta['action_size']}) are not "
            f"{meta['env_id']}'s observation and action sizes {sizes}"
        )
    out_layers, out_recorded = [], []
    for (hidden, (head_w, head_b)), member in zip(layers, recorded):
        for k, (observation_index, action_index) in enumerate(symmetries):
            first = np.empty_like(hidden[0][0])
            first[:, observation_index] = hidden[0][0]  # W' x = W x[observation_index]
            out_layers.append(([(first, hidden[0][1]), *hidden[1:]], (head_w[action_index], head_b[action_index])))
            out_recorded.append({**member, "symmetry": k})
    return out_layers, out_recorded


def make_ensemble(members: list, out, symmetries: bool = False) -> dict:
    """Write the ensemble of the checkpoint folders ``members`` to ``out`` (atomically, replacing
    an earlier ensemble there), with ``symmetries`` each member once per symmetry of the game;
    return its meta.json. Raise ``CheckpointError`` naming the member and field that disagree,
    ``ValueError`` when ``out`` holds anything else."""
    if len(members) < (1 if symmetries else 2):
        raise CheckpointError(f"an ensemble needs at least 2 members, got {len(members)}")
    out = Path(out)
    _check_out(out, members)
    loaded = [(Path(m), *load_policy(m)) for m in members]
    first_path, first, first_hidden, _ = loaded[0]
    for path, meta, hidden, _ in loaded[1:]:
        for field in SHARED:
            if meta.get(field) != first.get(field):
                raise CheckpointError(
                    f"{path}: {field} {meta.get(field)!r} differs from {first_path}'s "
                    f"{first.get(field)!r}: the members must play the same game alike"
                )
        if len(hidden) != len(first_hidden):
            raise CheckpointError(
                f"{path}: {len(hidden)} hidden layers, {first_path} has {len(first_hidden)}: "
                "the members' networks must have the same depth"
            )
    layers, recorded = [], []
    for path, meta, hidden, action in loaded:
        if meta.get("algorithm", {}).get("name") == "ensemble":
            layers += _unpack(path, meta, hidden, action)
            recorded += [{**m, "via": path.as_posix()} for m in meta["algorithm"]["members"]]
            continue
        layers.append((hidden, action))
        recorded.append(
            {
                "path": path.as_posix(),
                "algorithm": meta.get("algorithm", {}).get("name"),
                "hidden_sizes": meta["hidden_sizes"],
                "timesteps": meta.get("timesteps"),
                "policy_sha256": hashlib.sha256((path / "policy.npz").read_bytes()).hexdigest(),
            }
        )
    relabelled = ["symmetry" in m for m in recorded]
    if any(relabelled) and not all(relabelled):  # each relabelled copy counts as a member
        raise CheckpointError(
            "a member averaged over the game's symmetries beside one that is not: its networks would weigh "
            "as many times more as there are symmetries; make the plain ensemble, then average it (--symmetries)"
        )
    if symmetries:
        layers, recorded = _relabelled(layers, recorded, first)
    arrays = ensemble_arrays(layers)
    hidden_sizes = [int(arrays[f"layer_{i}_bias"].shape[0]) for i in range(len(first_hidden))]
    meta = {
        "format_version": FORMAT_VERSION,
        **{field: first[field] for field in SHARED if field in first},
        "env_args": first.get("env_args", {}),
        "hidden_sizes": hidden_sizes,
        "algorithm": {"name": "ensemble", "net_arch": hidden_sizes, "members": recorded},
        # each network once, however many relabelled copies of it there are
        "timesteps": sum(m["timesteps"] or 0 for m in recorded if m.get("symmetry", 0) == 0),
        "run": "ensemble",
        "deckgym_version": deckgym_version(),
    }

    def fill(tmp: Path):
        # The blocks' zeros take no room. mypy matches **arrays against savez's allow_pickle (a bool)
        # too; the names are layer_* and action_*.
        np.savez_compressed(tmp / "policy.npz", **arrays)  # type: ignore[arg-type]
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")

    write_atomically(out, fill)
    return meta


def main(argv=None) -> None:
    parser = command_parser("ensemble", __doc__)
    parser.add_argument("members", nargs="+", help="checkpoint folders (2 or more; 1 with --symmetries)")
    parser.add_argument(
        "--out", required=True, help="the ensemble's checkpoint folder (replaced if it holds an earlier ensemble)"
    )
    parser.add_argument(
        "--symmetries", action="store_true", help="each member once per symmetry of the game (Craits: its suits)"
    )
    args = parser.parse_args(argv)
    try:
        meta = make_ensemble(args.members, args.out, args.symmetries)
    except (ValueError, OSError) as exc:  # CheckpointError is a ValueError
        sys.exit(f"error: {exc}")
    print(
        f"{args.out}: ensemble of {len(meta['algorithm']['members'])} members, hidden sizes {meta['hidden_sizes']}, "
        f"{meta['timesteps']} env steps trained in all"
    )


if __name__ == "__main__":
    main()
