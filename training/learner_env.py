"""One learner against a pool of opponents, as a gymnasium env for single-agent algorithms.

The learner takes a seat (a random one each episode by default); opponents drawn from the
pool take the others and move inside ``step()`` until the learner must act again.
``action_masks()`` serves MaskablePPO.

The reward returned by ``step()`` is exactly the learner's own AEC reward summed over every
AEC step since its last action: its own move, the opponents' moves and the end of the
episode. (Pairing the *acting* seat's observation with *another* seat's reward, as some
wrappers do, teaches the wrong thing; this env never does.)

In partnership play, ``partner="learner"`` lets the learner play both seats of its side
(partners share their rewards, so the side's reward is counted once), while
``partner="pool"`` draws the partner from the pool like an opponent.
"""
from __future__ import annotations

import os
from pathlib import Path

import gymnasium
import numpy as np

from .agents import checked_act, make_agent


class OpponentPool:
    """Weighted mix of ``random``, ``heuristic``, checkpoint folders and ``self_play``.

    ``self_play`` draws from the learner's snapshots (checkpoint folders under
    ``snapshot_dir``): the latest with probability ``latest_weight``, otherwise one of the
    ``window`` snapshots before it, uniformly — like ML-Agents' ghost trainer. The folder is
    re-listed when it changes, so envs in subprocesses see new snapshots too.
    """

    def __init__(self, entries, env, snapshot_dir=None, latest_weight=0.5, window=10, deterministic=False,
                 seed=None):
        self.entries = [(e.agent, e.weight) for e in entries if e.weight > 0]
        self.env = env
        self.snapshot_dir = Path(snapshot_dir) if snapshot_dir else None
        self.latest_weight, self.window = latest_weight, window
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self._agents = {}  # spec -> agent, loaded once
        self._snapshots, self._snapshot_mtime = [], None
        weights = np.array([w for _, w in self.entries], float)
        self.probabilities = weights / weights.sum()
        for spec, _ in self.entries:  # fail now, not mid-training, on a bad spec
            if spec != "self_play":
                self._agent(spec)

    def _agent(self, spec: str, name: str | None = None):
        agent = self._agents.get(spec)
        if agent is None:
            agent = self._agents[spec] = make_agent(spec, self.env, seed=int(self.rng.integers(2**32)),
                                                    deterministic=self.deterministic)
            if name:  # what errors call it
                agent.name = name
        return agent

    def snapshots(self) -> list[str]:
        if self.snapshot_dir is None or not self.snapshot_dir.is_dir():
            return []
        mtime = os.stat(self.snapshot_dir).st_mtime_ns
        if mtime != self._snapshot_mtime:
            self._snapshot_mtime = mtime
            self._snapshots = sorted(str(p) for p in self.snapshot_dir.iterdir()
                                     if p.name.startswith("step_") and (p / "meta.json").is_file())
            drawable = set(self._snapshots[-1 - self.window:])
            for path in [p for p in self._agents if p in self._snapshots and p not in drawable]:
                del self._agents[path]  # out of the window for good: free it
        return self._snapshots

    def draw(self):
        spec = self.entries[self.rng.choice(len(self.entries), p=self.probabilities)][0]
        if spec != "self_play":
            return self._agent(spec)
        snaps = self.snapshots()
        if not snaps:
            raise RuntimeError(f"self_play opponent drawn but no snapshot in {self.snapshot_dir} yet")
        older = snaps[-1 - self.window:-1]
        pick = snaps[-1] if not older or self.rng.random() < self.latest_weight else older[self.rng.integers(len(older))]
        return self._agent(pick, name=f"self_play snapshot {pick}")  # an ordinary checkpoint, checked like any other


class LearnerEnv(gymnasium.Env):
    metadata = {"render_modes": []}

    def __init__(self, env, pool, learner_seat="random", partner="learner", seed=None):
        """``env``: an ``EnvHandle`` (this env plays its own copy); ``pool``: what ``draw()``s
        the opponents (an ``OpponentPool``)."""
        self.raw = env.new_raw()
        self.pool = pool
        agents = self.raw.possible_agents
        space = self.raw.observation_space(agents[0])
        self.observation_space = space["observation"]
        self.action_space = self.raw.action_space(agents[0])
        self.learner_seat = learner_seat
        self.partnership = env.rule_args.get("partnership", False)
        self.partner = partner
        self.rng = np.random.default_rng(seed)
        self._seated = {}
        self._pending = 0.0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        raw = self.raw
        n = len(raw.possible_agents)
        while True:
            raw.reset(seed=seed)
            seed = None
            seat = int(self.rng.integers(n)) if self.learner_seat == "random" else self.learner_seat
            self.learner = raw.possible_agents[seat]
            controlled = {seat}
            if self.partnership and self.partner == "learner":
                controlled.add((seat + 2) % n)
            self._seated = {a: None if s in controlled else self.pool.draw() for s, a in enumerate(raw.possible_agents)}
            for agent in self._seated.values():
                if agent is not None:
                    agent.reset()
            # Rewards paid before the learner's first move (a one-card deal won by an earlier
            # seat, say) are added to its first step's reward, so none is lost; an episode
            # that ends before the learner moves at all holds no decision: deal another.
            self._pending = self._advance()
            if not self._done():
                return self._obs(), {"learner_seat": seat}

    def step(self, action):
        raw = self.raw
        raw.step(int(action))
        reward = self._pending + raw.rewards[self.learner] + self._advance()
        self._pending = 0.0
        done = self._done()
        truncated = done and raw.truncations[self.learner]
        return self._obs(), float(reward), done and not truncated, truncated, {}

    def _done(self) -> bool:
        return self.raw.terminations[self.learner] or self.raw.truncations[self.learner]

    def _advance(self) -> float:
        """Let opponents move until a learner-controlled seat must act or the episode ends;
        returns the learner's reward collected on the way."""
        raw = self.raw
        reward = 0.0
        while not (raw.terminations[raw.agent_selection] or raw.truncations[raw.agent_selection]):
            opponent = self._seated[raw.agent_selection]
            if opponent is None:
                break
            seat = raw.agent_name_mapping[raw.agent_selection]
            raw.step(checked_act(opponent, seat, raw.observe(raw.agent_selection), raw.game, role="opponent "))
            reward += raw.rewards[self.learner]
        return reward

    def _obs(self) -> np.ndarray:
        """The acting learner-controlled seat's observation; the learner's own at the end."""
        agent = self.learner if self._done() else self.raw.agent_selection
        return self.raw.observe(agent)["observation"]

    def action_masks(self) -> np.ndarray:
        return self.raw.observe(self.raw.agent_selection)["action_mask"].astype(bool)
