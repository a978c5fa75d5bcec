"""Everything that can take a seat: ``act(observation, action_mask) -> action``.

An agent sees only its own seat's observation (the env's observation vector and mask),
never another seat's hidden cards. ``make_agent("random" | "heuristic" | <checkpoint>)``
builds one for a given env; its ``name`` (the spec) is what reports and errors call it.
``checked_act`` asks an agent for its move and refuses an illegal one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from envs.agent import SearchAgent
from envs.engine import shown

from .checkpoint import CheckpointError, check_compatible, load_policy
from .ensemble import ensemble_members
from .executor import agent_folder

ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])


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
            raise CheckpointError(f"checkpoint {self.name}: its policy gives {'NaN' if np.isnan(top) else 'infinite'} "
                                  "logits for the legal moves (policy.npz holds NaN/inf weights, or they overflow), "
                                  "so it can't choose a move")
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


class IllegalMoveError(ValueError):
    """An agent chose a move its action mask forbids: a bug in a bot or a broken policy."""


def checked_act(agent, seat: int, observation: dict, game, role: str = "") -> int:
    """``agent``'s move for ``seat``, checked against the mask before the env sees it: under
    the env's ``illegal_action="penalty"`` rule an illegal move would quietly end the episode
    (evaluation then replays the game for ever, training learns from a bogus result), so it
    raises ``IllegalMoveError`` naming the agent (``role`` and its name), the seat, the move
    and the legal moves instead."""
    mask = observation["action_mask"]
    if isinstance(agent, SearchAgent):  # a search bot reads its seat's view of the engine itself
        return check_move(agent, seat, agent.act_on(game, seat), mask, game, role)
    return check_move(agent, seat, agent.act(observation["observation"], mask), mask, game, role)


def check_move(agent, seat: int, action, mask, game, role: str = "") -> int:
    """``action`` if ``mask`` allows it, else ``IllegalMoveError`` (see ``checked_act``)."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < len(mask) \
            and mask[action]:
        return action
    raise IllegalMoveError(f"{role}{agent.name} (seat {seat}) chose an {game.illegal_message(action)}")


def split_agents(text: str) -> list[str]:
    """``"ismcts:simulations=100,uct_c=1.4,heuristic"`` -> ``["ismcts:simulations=100,uct_c=1.4",
    "heuristic"]``: a comma-separated agent list whose specs may hold options, themselves
    separated by commas (a piece ``key=value`` without a ``:`` continues the spec before)."""
    specs: list[str] = []
    for piece in text.split(","):
        if specs and ":" in specs[-1] and "=" in piece and ":" not in piece and "/" not in piece:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def seat_layout(agent_specs: list[str], seats: int) -> list[str]:
    """One agent spec per seat: the list repeated around the table."""
    if not agent_specs or not all(agent_specs):
        raise ValueError(f"agents {agent_specs!r}: give at least one agent, none empty")
    if len(agent_specs) > seats:
        raise ValueError(f"{len(agent_specs)} agents for {seats} seats: give at most one per seat")
    return [agent_specs[i % len(agent_specs)] for i in range(seats)]


AGENT_SPECS = ("'random', 'heuristic', 'human', 'ismcts[:simulations=1000,...]', a checkpoint folder or an "
               "exported bot (onnx:DIR)")


def make_agent(spec: str, env, seed=None, deterministic: bool = True):
    """An agent from its spec, checked against ``env`` (an ``EnvHandle``): ``random``,
    ``heuristic``, ``human``, ``ismcts`` (with options: ``ismcts:simulations=1000,uct_c=1.4``),
    a checkpoint folder, or an exported bot (``onnx:DIR`` or its folder). Agents answer
    ``act(observation, action_mask)``; a search bot answers ``act_on(game, seat)`` from its
    seat's view of the engine instead (``checked_act`` asks it so)."""
    if spec == "random":
        return RandomAgent(seed)
    if spec == "heuristic":
        return env.spec.heuristic(env.raw)
    if spec == "ismcts" or spec.startswith("ismcts:"):  # information-set search (envs.search)
        from envs.search import ISMCTSBot
        options = {} if "seed=" in spec else {"seed": seed}  # a seed in the spec wins
        return ISMCTSBot.from_spec(spec, env.id, **options)
    if spec == "human":  # a person at the terminal; it takes the seat that first asks it to move
        from .human import HumanAgent
        return HumanAgent(env.raw)
    from .export import is_exported
    folder = agent_folder(spec)  # the spec's folder, or the copy a Ray worker received of it
    if spec.startswith("onnx:") or is_exported(folder):
        from .export import load_exported
        return load_exported(folder, env, seed=seed, deterministic=deterministic, name=spec)
    if not Path(folder).is_dir():
        raise ValueError(f"unknown agent {shown(spec)}: use {AGENT_SPECS}")
    agent = PolicyAgent(folder, deterministic, seed, name=spec)  # named as given, as in the reports
    check_compatible(agent.meta, env, where=str(Path(spec)))
    return agent
