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
from envs.search import ISMCTSBot, parse_options
from training.agents.checkpoint import check_compatible
from training.agents.exported import load_exported
from training.agents.folders import agent_folder, is_exported
from training.agents.human import HumanAgent
from training.agents.policy import ACTIVATIONS, PolicyAgent, choose_batch

__all__ = [
    "ACTIVATIONS",
    "AGENT_SPECS",
    "IllegalMoveError",
    "PolicyAgent",
    "RandomAgent",
    "check_move",
    "checked_act",
    "choose_batch",
    "make_agent",
    "seat_layout",
    "split_agents",
]


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
    if (
        isinstance(action, (int, np.integer))
        and not isinstance(action, bool)
        and 0 <= action < len(mask)
        and mask[action]
    ):
        # A numpy integer (an agent's own) passes too, and goes on as the int it stands for.
        return action  # type: ignore[return-value]
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


AGENT_SPECS = (
    "'random', 'heuristic', 'human', 'ismcts[:simulations=1000,...]', a checkpoint folder or an exported bot (onnx:DIR)"
)


def load_network(spec: str, env, missing: str, where: str) -> PolicyAgent:
    """The network ``spec`` names, a checkpoint folder or a shipped bot's name, loaded as
    weights (``policy.npz``) for a tool that reads its scores, checked against ``env``'s game
    and rules. ``ValueError``: ``missing`` when ``spec`` names no checkpoint folder (an exported
    bot has no weights to read), else what does not fit, ``where`` naming the network."""
    folder = agent_folder(spec)
    if spec.startswith("onnx:") or is_exported(folder) or not Path(folder).is_dir():
        raise ValueError(missing)
    network = PolicyAgent(folder, name=spec)
    check_compatible(network.meta, env, where=where)
    return network


def prior_network(spec: str, env) -> PolicyAgent:
    """The network a search's ``prior=`` names (``load_network``)."""
    missing = f"IS-MCTS option prior={shown(spec)}: name a checkpoint folder or a shipped bot (e.g. prior=craits)"
    return load_network(spec, env, missing, where=f"{Path(spec)} (the IS-MCTS prior)")


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
        options: dict = {} if "seed=" in spec else {"seed": seed}  # a seed in the spec wins
        prior = parse_options(spec.partition(":")[2]).get("prior")
        if prior:  # a search guided by a trained network: the checkpoint it names, checked
            network = prior_network(prior, env)
            options.update(network=network, action_values=network.meta.get("action_selection") == "masked_argmax")
        return ISMCTSBot.from_spec(spec, env.id, **options)
    if spec == "human":  # a person at the terminal; it takes the seat that first asks it to move
        return HumanAgent(env.raw)
    folder = agent_folder(spec)  # the spec's folder, or the copy a Ray worker received of it
    if spec.startswith("onnx:") or is_exported(folder):
        return load_exported(folder, env, seed=seed, deterministic=deterministic, name=spec)
    if not Path(folder).is_dir():
        raise ValueError(f"unknown agent {shown(spec)}: use {AGENT_SPECS}")
    agent = PolicyAgent(folder, deterministic, seed, name=spec)  # named as given, as in the reports
    check_compatible(agent.meta, env, where=str(Path(spec)))
    return agent
