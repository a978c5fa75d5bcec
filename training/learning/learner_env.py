"""One learner against a pool of opponents, for single-agent algorithms: ``BatchedLearnerEnv``
(an SB3 ``VecEnv`` of N games in lockstep, what training uses) and ``LearnerEnv`` (one game, a
gymnasium env).

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

import multiprocessing
import os
import signal
from pathlib import Path

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from training.agents import PolicyAgent, check_move, checked_act, choose_batch, make_agent
from training.running.executor import limit_threads


class OpponentPool:
    """Weighted mix of ``random``, ``heuristic``, checkpoint folders and ``self_play``.

    ``self_play`` draws from the learner's snapshots (checkpoint folders under
    ``snapshot_dir``): the latest with probability ``latest_weight``, otherwise one of the
    ``window`` snapshots before it, uniformly — like ML-Agents' ghost trainer. The folder is
    re-listed when it changes, so envs in subprocesses see new snapshots too.
    """

    def __init__(self, entries, env, snapshot_dir=None, latest_weight=0.5, window=10, deterministic=False, seed=None):
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
            agent = self._agents[spec] = make_agent(
                spec, self.env, seed=int(self.rng.integers(2**32)), deterministic=self.deterministic
            )
            if name:  # what errors call it
                agent.name = name
        return agent

    def snapshots(self) -> list[str]:
        if self.snapshot_dir is None or not self.snapshot_dir.is_dir():
            return []
        mtime = os.stat(self.snapshot_dir).st_mtime_ns
        if mtime != self._snapshot_mtime:
            self._snapshot_mtime = mtime
            self._snapshots = sorted(
                str(p)
                for p in self.snapshot_dir.iterdir()
                if p.name.startswith("step_") and (p / "meta.json").is_file()
            )
            drawable = set(self._snapshots[-1 - self.window :])
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
        older = snaps[-1 - self.window : -1]
        pick = (
            snaps[-1] if not older or self.rng.random() < self.latest_weight else older[self.rng.integers(len(older))]
        )
        return self._agent(pick, name=f"self_play snapshot {pick}")  # an ordinary checkpoint, checked like any other


class LearnerTable:
    """One game of the learner against opponents drawn from ``pool``: the state both learner
    envs step. Seats the learner controls (its own, and its partner's when it plays both
    seats of its side) act through the learning algorithm; the others through their agents."""

    render_mode = None  # what SB3 asks every env of a VecEnv

    def __init__(self, env, pool, learner_seat="random", partner="learner", seed=None):
        self.raw = env.new_raw()
        self.pool = pool
        self.learner_seat = learner_seat
        self.env, self.own_partner = env, partner == "learner"
        self.rng = np.random.default_rng(seed)
        self.seated: dict = {}
        self.learner = None
        self.pending = 0.0  # learner reward paid before its first move of the episode

    def deal(self, seed=None) -> None:
        """A new episode: the env reset (seeded once), the learner's seat, the opponents."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        raw = self.raw
        raw.reset(seed=seed)
        n = len(raw.possible_agents)
        seat = int(self.rng.integers(n)) if self.learner_seat == "random" else self.learner_seat
        self.learner = raw.possible_agents[seat]
        controlled = self.env.side(seat) if self.own_partner else {seat}
        self.seated = {a: None if s in controlled else self.pool.draw() for s, a in enumerate(raw.possible_agents)}
        for agent in self.seated.values():
            if agent is not None:
                agent.reset()
        self.pending = 0.0

    @property
    def done(self) -> bool:
        return self.raw.terminations[self.learner] or self.raw.truncations[self.learner]

    def opponent_to_act(self):
        """The opponent agent whose move is next, or None when a learner-controlled seat must
        act or the episode is over."""
        raw = self.raw
        selected = raw.agent_selection
        if raw.terminations[selected] or raw.truncations[selected]:
            return None
        return self.seated[selected]

    def play(self, action: int) -> float:
        """Make the current seat's move; the learner's reward from it."""
        self.raw.step(action)
        return self.raw.rewards[self.learner]

    def advance(self) -> float:
        """Let opponents move until a learner-controlled seat must act or the episode ends;
        returns the learner's reward collected on the way."""
        raw, reward = self.raw, 0.0
        while (opponent := self.opponent_to_act()) is not None:
            seat = raw.agent_name_mapping[raw.agent_selection]
            reward += self.play(
                checked_act(opponent, seat, raw.observe(raw.agent_selection), raw.game, role="opponent ")
            )
        return reward

    def acting(self) -> str:
        """The agent whose observation the learner sees: the acting learner-controlled seat,
        or the learner itself once the episode is over."""
        return self.learner if self.done else self.raw.agent_selection

    def observation(self) -> np.ndarray:
        return self.raw.observe(self.acting())["observation"]

    def action_masks(self) -> np.ndarray:
        return self.raw.observe(self.raw.agent_selection)["action_mask"].astype(bool)


class LearnerEnv(gymnasium.Env):
    """One ``LearnerTable`` as a gymnasium env (SB3's per-env path; tests and tools)."""

    metadata = {"render_modes": []}

    def __init__(self, env, pool, learner_seat="random", partner="learner", seed=None):
        """``env``: an ``EnvHandle`` (this env plays its own copy); ``pool``: what ``draw()``s
        the opponents (an ``OpponentPool``)."""
        self.table = LearnerTable(env, pool, learner_seat, partner, seed)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (env.obs_size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(env.num_actions)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        table = self.table
        while True:
            table.deal(seed)
            seed = None
            # Rewards paid before the learner's first move (a one-card deal won by an earlier
            # seat, say) are added to its first step's reward, so none is lost; an episode
            # that ends before the learner moves at all holds no decision: deal another.
            table.pending = table.advance()
            if not table.done:
                return table.observation(), {"learner_seat": table.raw.agent_name_mapping[table.learner]}

    def step(self, action):
        table = self.table
        reward = table.pending + table.play(int(action)) + table.advance()
        table.pending = 0.0
        done = table.done
        truncated = done and table.raw.truncations[table.learner]
        return table.observation(), float(reward), done and not truncated, truncated, {}

    def action_masks(self) -> np.ndarray:
        return self.table.action_masks()


class BatchedLearnerEnv(VecEnv):
    """N ``LearnerTable`` games in lockstep, as an SB3 ``VecEnv``: observations and masks in
    preallocated ``[N, ...]`` arrays, and the opponents' pending moves gathered across all
    games so that policy opponents sharing a network decide in one batched forward pass.

    Each game keeps its own pool, agents and random streams, so a game's trajectory is the
    one ``LearnerEnv`` would play with the same seed (``DummyVecEnv`` semantics: automatic
    reset, ``terminal_observation``, ``TimeLimit.truncated``)."""

    def __init__(self, env, tables: list[LearnerTable]):
        self.tables = tables  # before VecEnv's __init__, which asks them their render_mode
        super().__init__(
            len(tables),
            gymnasium.spaces.Box(-np.inf, np.inf, (env.obs_size,), np.float32),
            gymnasium.spaces.Discrete(env.num_actions),
        )
        self.obs = np.zeros((len(tables), env.obs_size), np.float32)
        self.masks = np.zeros((len(tables), env.num_actions), np.int8)
        self._opponent_obs = np.zeros((len(tables), env.obs_size), np.float32)
        self._opponent_masks = np.zeros((len(tables), env.num_actions), np.int8)
        self.actions = None

    # ------------------------------------------------------------------ VecEnv
    def reset(self):
        for i in range(self.num_envs):
            self._deal(i, self._seeds[i])
        self._settle(range(self.num_envs))
        self._reset_seeds()
        self._reset_options()
        return self.obs.copy()

    def step_async(self, actions) -> None:
        self.actions = actions

    def step_wait(self):
        n = self.num_envs
        rewards = np.zeros(n)  # summed in float64 in LearnerEnv's order, then float32 as SB3 keeps them
        for i, table in enumerate(self.tables):
            rewards[i] = table.pending + table.play(int(self.actions[i]))
            table.pending = 0.0
        rewards += self._advance(range(n))
        rewards = rewards.astype(np.float32)
        dones = np.zeros(n, bool)
        infos = [{"TimeLimit.truncated": False} for _ in range(n)]
        ended = []
        for i, table in enumerate(self.tables):
            if table.done:
                dones[i] = True
                truncated = table.raw.truncations[table.learner]
                infos[i]["TimeLimit.truncated"] = truncated and not table.raw.terminations[table.learner]
                infos[i]["terminal_observation"] = table.observation().copy()
                ended.append(i)
                self._deal(i)
        self._settle(range(n), ended)
        return self.obs.copy(), rewards, dones, infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name, indices=None):
        return [getattr(self.tables[i], attr_name) for i in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None) -> None:
        for i in self._indices(indices):
            setattr(self.tables[i], attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks" and indices is None:  # MaskablePPO asks at every step
            return list(self.masks.astype(bool))
        return [getattr(self.tables[i], method_name)(*method_args, **method_kwargs) for i in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else indices

    # ------------------------------------------------------------------ games
    def _deal(self, i: int, seed=None) -> None:
        self.tables[i].deal(seed)

    def _settle(self, indices, fresh=None) -> None:
        """After deals (all of ``indices`` at reset, ``fresh`` after a step): advance the new
        episodes to the learner's first move, dealing again any that ends before it (as
        ``LearnerEnv.reset``), then write every game's observation and mask."""
        waiting = list(indices if fresh is None else fresh)
        while waiting:
            paid = self._advance(waiting)
            for j, i in enumerate(waiting):
                self.tables[i].pending = float(paid[j])
            waiting = [i for i in waiting if self.tables[i].done]
            for i in waiting:
                self._deal(i)
        for i in indices:
            table = self.tables[i]
            table.raw.observe_into(table.acting(), self.obs[i], self.masks[i])

    def _advance(self, indices) -> np.ndarray:
        """``LearnerTable.advance`` for several games at once: each round, every game whose
        opponent must move gets that move; policy opponents sharing a network decide in one
        forward pass. Returns the learner reward each game collected on the way."""
        indices = list(indices)
        paid = np.zeros(len(indices))
        position = {i: j for j, i in enumerate(indices)}
        waiting = indices
        while waiting:
            turns = [(i, self.tables[i].opponent_to_act()) for i in waiting]
            turns = [(i, agent) for i, agent in turns if agent is not None]
            batches: dict = {}
            for i, agent in turns:
                if isinstance(agent, PolicyAgent):
                    batches.setdefault(id(agent.network), []).append((i, agent))
                else:
                    raw = self.tables[i].raw
                    paid[position[i]] += self.tables[i].play(
                        checked_act(
                            agent,
                            raw.agent_name_mapping[raw.agent_selection],
                            raw.observe(raw.agent_selection),
                            raw.game,
                            role="opponent ",
                        )
                    )
            for group in batches.values():
                rows = len(group)
                for k, (i, _) in enumerate(group):
                    raw = self.tables[i].raw
                    raw.observe_into(raw.agent_selection, self._opponent_obs[k], self._opponent_masks[k])
                masks = self._opponent_masks[:rows]
                moves = choose_batch(
                    [agent for _, agent in group], group[0][1].logits(self._opponent_obs[:rows]), masks
                )
                for k, (i, agent) in enumerate(group):
                    raw = self.tables[i].raw
                    action = check_move(
                        agent,
                        raw.agent_name_mapping[raw.agent_selection],
                        moves[k],
                        masks[k],
                        raw.game,
                        role="opponent ",
                    )
                    paid[position[i]] += self.tables[i].play(action)
            waiting = [i for i, _ in turns]
        return paid


def _shard_worker(conn, env, make_table, ranks) -> None:
    """A worker process's games: a ``BatchedLearnerEnv`` over ``make_table(rank)`` for its ranks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's: it checkpoints, then ends us
    limit_threads(1)  # a worker per core
    venv = BatchedLearnerEnv(env, [make_table(rank) for rank in ranks])
    while True:
        command, payload = conn.recv()
        if command == "reset":
            venv._seeds = payload
            conn.send((venv.reset(), venv.masks.copy()))
        elif command == "step":
            venv.step_async(payload)
            conn.send((*venv.step_wait(), venv.masks.copy()))
        elif command == "call":
            name, args, kwargs = payload
            conn.send(venv.env_method(name, *args, **kwargs))
        elif command == "get_attr":
            conn.send(venv.get_attr(payload))
        else:  # "close"
            conn.close()
            return


class ShardedLearnerEnv(VecEnv):
    """The games of a ``BatchedLearnerEnv`` split over worker processes, each a batched env
    of its own: the games play while the main process runs the learner. Every game keeps
    its own seeds and opponents, so the results are those of one ``BatchedLearnerEnv``."""

    def __init__(self, env, make_table, num_envs: int, workers: int):
        shards = [list(r) for r in np.array_split(np.arange(num_envs), workers) if len(r)]
        context = multiprocessing.get_context("spawn")  # the learner's torch threads make fork unsafe
        self.conns, self.processes, self.slices = [], [], []
        for ranks in shards:
            parent, child = context.Pipe()
            process = context.Process(target=_shard_worker, args=(child, env, make_table, ranks), daemon=True)
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)
            self.slices.append(slice(ranks[0], ranks[-1] + 1))
        self.masks = np.zeros((num_envs, env.num_actions), np.int8)
        super().__init__(
            num_envs,
            gymnasium.spaces.Box(-np.inf, np.inf, (env.obs_size,), np.float32),
            gymnasium.spaces.Discrete(env.num_actions),
        )

    def reset(self):
        for conn, part in zip(self.conns, self.slices):
            conn.send(("reset", self._seeds[part]))
        obs = []
        for conn, part in zip(self.conns, self.slices):
            shard_obs, self.masks[part] = conn.recv()
            obs.append(shard_obs)
        self._reset_seeds()
        self._reset_options()
        return np.concatenate(obs)

    def step_async(self, actions) -> None:
        for conn, part in zip(self.conns, self.slices):
            conn.send(("step", actions[part]))

    def step_wait(self):
        obs, rewards, dones, infos = [], [], [], []
        for conn, part in zip(self.conns, self.slices):
            shard_obs, shard_rewards, shard_dones, shard_infos, self.masks[part] = conn.recv()
            obs.append(shard_obs)
            rewards.append(shard_rewards)
            dones.append(shard_dones)
            infos += shard_infos
        return np.concatenate(obs), np.concatenate(rewards), np.concatenate(dones), infos

    def close(self) -> None:
        """End the workers without waiting on a reply an interrupted step left unread."""
        for conn, process in zip(self.conns, self.processes):
            try:
                conn.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()

    def get_attr(self, attr_name, indices=None):
        if not hasattr(self, "conns"):  # VecEnv's __init__ asks before the workers exist
            raise AttributeError(attr_name)
        values = []
        for conn in self.conns:
            conn.send(("get_attr", attr_name))
            values += conn.recv()
        return values if indices is None else [values[i] for i in BatchedLearnerEnv._indices(self, indices)]

    def set_attr(self, attr_name, value, indices=None) -> None:
        raise NotImplementedError("the games live in worker processes")

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks" and indices is None:
            return list(self.masks.astype(bool))
        values = []
        for conn in self.conns:
            conn.send(("call", (method_name, method_args, method_kwargs)))
            values += conn.recv()
        return values if indices is None else [values[i] for i in BatchedLearnerEnv._indices(self, indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(BatchedLearnerEnv._indices(self, indices))


class SymlogReward(VecEnvWrapper):
    """Rewards as sign(r)·ln(1 + |r|) (``training.reward_transform: symlog``): order and sign
    kept, unbounded deal points squashed so no single deal swamps the value function."""

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, (np.sign(rewards) * np.log1p(np.abs(rewards))).astype(np.float32), dones, infos
