"""Where training time goes: opponent inference vs the game vs PPO.

Builds the vec env and model exactly as ``training.learning.train`` does (``make_vec_env``,
``new_model``, an initial ``save_snapshot`` when the pool has ``self_play``; a temporary
run folder, no callback: no checkpoints, evaluations or new snapshots) and runs
``model.learn(--steps)``. While it runs, methods are wrapped at class level with a timer:

- opponent ``act`` of ``RandomAgent`` and the game's heuristic class, ``logits`` and
  ``choose`` of ``PolicyAgent`` (checkpoint and self-play opponents: a numpy MLP, asked in
  batches across games), one row per kind, plus
  ``OpponentPool.draw`` (picking, and the first time loading, an opponent each episode);
- the raw AEC env's ``step``, ``observe_into`` (observation encoding) and ``reset``: the
  game itself, whoever calls it (the learner env for the learner's moves, observations and
  masks, and around opponents);
- the PPO policy's ``forward`` (torch inference during rollouts) and ``MaskablePPO.train``
  (the PPO updates);
- the rest of ``learn()``: SB3 rollout buffer and VecEnv plumbing, LearnerEnv glue.

Times are *exclusive*: when a timed call runs inside another (say ``observe`` inside a
wrapper), the inner time is charged to the inner row only, so rows add up to the total.
Each timed call adds roughly half a microsecond of timer overhead (estimated and
printed), charged to its own row. The figures are shares of one run, so they hold on a busy machine too; absolute
seconds and steps/s do not. ``vec.workers`` is forced to 1 (the timers live in this
process).

Run from the repository root::

    python benchmarks/training_profile.py                                  # configs/craits_quick.yaml
    python benchmarks/training_profile.py --pool self_play                 # 100% self-play opponents
    python benchmarks/training_profile.py --pool heuristic=0.5 --pool random=0.5
    python benchmarks/training_profile.py --pool runs/craits_quick/checkpoint
    python benchmarks/training_profile.py --config configs/pairs_draft_quick.yaml --steps 20000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from training.learning.config import ConfigError, load_config  # noqa: E402
from training.learning.preflight import check_config  # noqa: E402

# Component rows, in print order; "opponent" rows are summed into a subtotal.
OPPONENT_ROWS = ("opponent act: random", "opponent act: heuristic", "opponent act: policy", "opponent draw (pool)")
GAME_ROWS = ("game: env.step", "game: env.observe", "game: env.reset")
PPO_ROWS = ("ppo: rollout inference (torch)", "ppo: updates (train)")
REST = "rest: SB3 + LearnerEnv glue"


class Timers:
    """Exclusive wall time per component: entering a timed call pauses the enclosing one."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)
        self._stack = []  # [component, start of its current uncharged stretch]

    def wrap(self, component: str, fn):
        perf_counter, stack, seconds, calls = time.perf_counter, self._stack, self.seconds, self.calls

        def timed(*args, **kwargs):
            now = perf_counter()
            if stack:
                seconds[stack[-1][0]] += now - stack[-1][1]
            stack.append([component, now])
            try:
                return fn(*args, **kwargs)
            finally:
                now = perf_counter()
                seconds[component] += now - stack.pop()[1]
                calls[component] += 1
                if stack:
                    stack[-1][1] = now

        timed.__wrapped__ = fn
        return timed


@contextmanager
def patched(timers: Timers, targets):
    """``targets``: (class, method name, component); each wrapped on that class, then restored."""
    saved = []
    for cls, name, component in targets:
        saved.append((cls, name, cls.__dict__.get(name)))
        setattr(cls, name, timers.wrap(component, getattr(cls, name)))
    try:
        yield
    finally:
        for cls, name, original in reversed(saved):
            if original is None:
                delattr(cls, name)  # it was inherited
            else:
                setattr(cls, name, original)


def pool_override(specs: list[str]) -> str:
    """``--pool AGENT[=WEIGHT]`` flags as a ``--set opponents.pool=...`` override (JSON is YAML)."""
    pool = []
    for spec in specs:
        agent, _, weight = spec.rpartition("=")
        try:
            pool.append({"agent": agent, "weight": float(weight)} if agent else {"agent": spec, "weight": 1.0})
        except ValueError:  # an '=' that is part of a path
            pool.append({"agent": spec, "weight": 1.0})
    return "opponents.pool=" + json.dumps(pool)


def profile(config, env, steps: int) -> tuple[Timers, float, int]:
    import torch
    from sb3_contrib import MaskablePPO

    from training.agents import PolicyAgent, RandomAgent
    from training.algorithms import algorithm
    from training.learning.callback import save_snapshot, uses_self_play
    from training.learning.learner_env import OpponentPool
    from training.learning.train import make_vec_env, new_model
    from training.running.executor import limit_threads

    torch.set_num_threads(config.algorithm.torch_threads)
    limit_threads(config.algorithm.torch_threads)  # numpy's BLAS too, as training.learning.train does
    raw_cls, heuristic_cls = type(env.raw), type(env.spec.heuristic(env.raw))
    timers = Timers()
    targets = [
        (RandomAgent, "act", OPPONENT_ROWS[0]),
        (heuristic_cls, "act", OPPONENT_ROWS[1]),
        (PolicyAgent, "logits", OPPONENT_ROWS[2]),
        (PolicyAgent, "choose", OPPONENT_ROWS[2]),
        (OpponentPool, "draw", OPPONENT_ROWS[3]),
        (raw_cls, "step", GAME_ROWS[0]),
        (raw_cls, "observe_into", GAME_ROWS[1]),
        (raw_cls, "reset", GAME_ROWS[2]),
    ]
    with tempfile.TemporaryDirectory(prefix="training_profile_") as tmp:
        run_dir = Path(tmp) / config.output.name
        run_dir.mkdir(parents=True)
        try:
            venv = make_vec_env(config, env, run_dir)
        except ValueError as exc:  # a bad pool entry (OpponentPool loads every fixed entry up front)
            raise SystemExit(f"error: {exc}") from None
        model = new_model(config, venv)
        if uses_self_play(config):
            # as train(): the pool needs one before the first reset
            save_snapshot(config, env, model, run_dir, 0.0, algorithm(config.algorithm.name))
        targets += [(type(model.policy), "forward", PPO_ROWS[0]), (MaskablePPO, "train", PPO_ROWS[1])]
        with patched(timers, targets):
            started = time.perf_counter()
            model.learn(steps)
            total = time.perf_counter() - started
        done = int(model.num_timesteps)
        venv.close()
    return timers, total, done


def timer_overhead_us(n: int = 100_000) -> float:
    """Cost of one timed call beyond the call itself, in microseconds (this machine, now)."""
    probe = Timers()
    plain, timed = (lambda: None), probe.wrap("probe", lambda: None)
    outer = probe.wrap("outer", lambda: [timed() for _ in range(n)])
    t = time.perf_counter()
    for _ in range(n):
        plain()
    base = time.perf_counter() - t
    t = time.perf_counter()
    outer()
    return max(0.0, (time.perf_counter() - t - base) / n * 1e6)


def report(config, timers: Timers, total: float, steps: int) -> None:
    pool = ", ".join(f"{e.agent}:{e.weight:g}" for e in config.opponents.pool)
    print(
        f"{config.env.id}  pool [{pool}]  n_envs {config.vec.n_envs}  n_steps {config.algorithm.n_steps}  "
        f"net {config.algorithm.net_arch}  torch threads {config.algorithm.torch_threads}"
    )
    print(f"{steps} learner steps in {total:.1f} s: {steps / total:,.0f} learner steps/s\n")
    width = 34
    print(f"{'component':<{width}} {'seconds':>8} {'share':>7} {'calls':>10} {'us/call':>9}")

    def row(name, seconds, calls=None):
        per = f"{seconds / calls * 1e6:9.1f}" if calls else f"{'':>9}"
        print(f"{name:<{width}} {seconds:8.2f} {seconds / total:7.1%} {calls if calls else '':>10} {per}")

    accounted = 0.0
    for group in (OPPONENT_ROWS, GAME_ROWS, PPO_ROWS):
        for name in group:
            if timers.calls[name]:
                row(name, timers.seconds[name], timers.calls[name])
        subtotal = sum(timers.seconds[n] for n in group)
        accounted += subtotal
        label = {OPPONENT_ROWS: "= opponents", GAME_ROWS: "= game (raw AEC env)", PPO_ROWS: "= ppo (torch)"}[group]
        row(label, subtotal)
        print()
    row(REST, total - accounted)
    print("-" * (width + 38))
    row("total (model.learn)", total)
    calls = sum(timers.calls.values())
    overhead = calls * timer_overhead_us() / 1e6
    print(
        f"\ntimer overhead (est.): {overhead:.2f} s over {calls} timed calls ({overhead / total:.1%}), "
        f"spread over the timed rows"
    )
    acts = sum(timers.calls[n] for n in OPPONENT_ROWS[:3])
    print(f"opponent moves per learner step: {acts / steps:.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/craits_quick.yaml", help="YAML config (default %(default)s)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a config value, as in training.learning.train",
    )
    parser.add_argument("--steps", type=int, default=30_000, help="learner steps to train (default %(default)s)")
    parser.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="AGENT[=WEIGHT]",
        help="replace the opponent pool: random, heuristic, self_play or a checkpoint folder; "
        "repeat to mix (weight 1 unless given)",
    )
    args = parser.parse_args(argv)
    overrides = list(args.set) + ["vec.workers=1"] + ([pool_override(args.pool)] if args.pool else [])
    try:
        config = load_config(args.config, overrides)
        env = check_config(config)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None
    timers, total, steps = profile(config, env, args.steps)
    report(config, timers, total, steps)


if __name__ == "__main__":
    main()
