"""A trained policy as an agent: the MLP of a checkpoint's ``policy.npz`` run in numpy, an
ensemble's (``training.agents.ensemble`` writes one) member by member."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from training.agents.checkpoint import CheckpointError, load_policy


# ---------------------------------------------------------------- an ensemble's layout
def block_spans(sizes: list[list[int]]) -> list[list[slice]]:
    """Each member's units in every hidden layer of the ensemble (``sizes``: per member, its
    hidden sizes): the members side by side, in order. The one definition of the layout."""
    offsets, spans = [0] * len(sizes[0]), []
    for widths in sizes:
        spans.append([slice(o, o + n) for o, n in zip(offsets, widths)])
        offsets = [o + n for o, n in zip(offsets, widths)]
    return spans


def ensemble_members(meta: dict, hidden: list, head_w: np.ndarray):
    """An ensemble checkpoint's members as blocks of its network, for
    ``training.agents.PolicyAgent``: per member, its units' slice of the first hidden layer, its
    diagonal blocks of the other hidden layers and its columns of the output layer. None for
    any other checkpoint, or one whose weights are not block-diagonal as its meta.json's
    members say (then the whole matrices are used, as every other frontend does). The blocks
    give the same scores (up to float rounding) without multiplying the zeros between them."""
    algorithm = meta.get("algorithm", {})
    members = algorithm.get("members") if algorithm.get("name") == "ensemble" else None
    if not isinstance(members, list) or len(members) < 2 or len(hidden) < 2:
        return None
    sizes: list[Any] = [m.get("hidden_sizes") if isinstance(m, dict) else None for m in members]  # checked next
    if not all(
        isinstance(s, list) and len(s) == len(hidden) and all(type(n) is int and n > 0 for n in s) for s in sizes
    ):
        return None
    if [sum(column) for column in zip(*sizes)] != [bias.shape[0] for _, bias in hidden]:
        return None
    blocks = []
    for span in block_spans(sizes):
        layers = [
            (np.ascontiguousarray(hidden[i][0][span[i], span[i - 1]]), hidden[i][1][span[i]])
            for i in range(1, len(hidden))
        ]
        blocks.append((span[0], layers, np.ascontiguousarray(head_w[:, span[-1]])))
    for i in range(1, len(hidden)):  # every nonzero weight must lie in a member's block
        inside = sum(np.count_nonzero(layers[i - 1][0]) for _, layers, _ in blocks)
        if np.count_nonzero(hidden[i][0]) != inside:
            return None
    return blocks


# ---------------------------------------------------------------- the agent
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


class PolicyAgent:
    """A trained policy from a checkpoint's ``policy.npz``: a plain numpy forward pass of the
    MLP (no torch), so opponents cost little inside training and evaluation."""

    def __init__(self, path, deterministic: bool = True, seed=None, name=None):
        self.path = str(path)
        self.name = self.path if name is None else str(name)  # a copy on a Ray worker keeps its spec
        self.meta, self.hidden, (self.head_w, self.head_b) = load_policy(path)
        if self.meta["activation"] not in ACTIVATIONS:
            raise CheckpointError(f"{path}: unknown activation {self.meta['activation']!r}")
        self.activation = ACTIVATIONS[self.meta["activation"]]
        self.members = ensemble_members(self.meta, self.hidden, self.head_w)
        # Action values (a Q-network's checkpoint) pick their best move: a softmax over them
        # is no policy. Policy logits are sampled unless asked to play their most likely move.
        self.deterministic = deterministic or self.meta.get("action_selection") == "masked_argmax"
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    @property
    def network(self):
        """What decides the logits: agents sharing it (one checkpoint, loaded once per
        process) can be asked in one batched forward pass (``batched_logits``)."""
        return self.hidden

    def logits(self, observation) -> np.ndarray:
        """Logits of one observation ``[obs]`` or a batch ``[n, obs]``."""
        x = np.asarray(observation, np.float32)
        if self.members is not None:  # an ensemble: each member's blocks, not the zeros between them
            first_w, first_b = self.hidden[0]
            x = self.activation(x @ first_w.T + first_b)
            out = self.head_b
            for columns, layers, head in self.members:
                h = x[..., columns]
                for weight, bias in layers:
                    h = self.activation(h @ weight.T + bias)
                out = out + h @ head.T
            return out
        for weight, bias in self.hidden:
            x = self.activation(x @ weight.T + bias)
        return x @ self.head_w.T + self.head_b

    def act(self, observation, action_mask) -> int:
        return self.choose(self.logits(observation), action_mask)

    def choose(self, logits, action_mask) -> int:
        """The move for these logits. Non-finite logits for the legal moves (NaN weights from a
        diverged run, or an overflow) raise ``CheckpointError`` naming the checkpoint: argmax
        would quietly pick the first legal move, and sampling an action out of range."""
        logits = np.where(np.asarray(action_mask) > 0, logits, -np.inf)
        top = logits.max()  # NaN if any legal logit is NaN
        if not np.isfinite(top):
            raise CheckpointError(
                f"checkpoint {self.name}: its policy gives {'NaN' if np.isnan(top) else 'infinite'} "
                "logits for the legal moves (policy.npz holds NaN/inf weights, or they overflow), "
                "so it can't choose a move"
            )
        if self.deterministic:
            return int(np.argmax(logits))
        # Sample from the softmax with one uniform draw (illegal actions have weight 0 and
        # are never hit with side="right"); several times cheaper than rng.choice(p=...).
        weights = np.cumsum(np.exp(logits - top))
        return int(np.searchsorted(weights, self.rng.random() * weights[-1], side="right"))


def choose_batch(agents, logits: np.ndarray, masks: np.ndarray) -> list[int]:
    """``[agent.choose(l, m) for ...]`` over rows of ``logits`` and ``masks``, vectorised: the
    same moves and random draws (each agent draws from its own generator), for policy
    opponents asked in one batch."""
    masked = np.where(masks > 0, logits, -np.inf)
    top = masked.max(axis=1)
    if not np.isfinite(top).all():
        bad = int(np.flatnonzero(~np.isfinite(top))[0])
        agents[bad].choose(logits[bad], masks[bad])  # raises, naming the checkpoint
    moves = np.argmax(masked, axis=1).tolist()
    sampled = [j for j, agent in enumerate(agents) if not agent.deterministic]
    if sampled:
        weights = np.cumsum(np.exp(masked[sampled] - top[sampled, None]), axis=1)
        for row, j in enumerate(sampled):
            moves[j] = int(np.searchsorted(weights[row], agents[j].rng.random() * weights[row, -1], side="right"))
    return moves
