"""Test helpers shared by several test files: seeded playthroughs, golden-file comparison, env
loops and interrupted training runs."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from envs.present import presentation

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE = os.environ.get("DECKGYM_UPDATE_GOLDEN") == "1"


def playthrough(game, seed: int, deal_over=lambda game: False) -> str:
    """Play ``game`` to its end with seeded uniform-random legal actions, as text: every
    action with its seat, and the table (the game's ``present.render``) whenever a deal
    (``deal_over(game)``) or the game ends."""
    render = presentation(game).render
    rng = random.Random(seed)
    lines = [render(game), ""]
    while game.legal_actions():
        seat = game.current_player
        action = rng.choice(game.legal_actions())
        lines.append(f"seat {seat}: {game.action_to_text(action)}")
        game.apply(action)
        if deal_over(game) or game.is_over:
            lines += ["", render(game), ""]
    return "\n".join(lines) + "\n"


def check_golden(name: str, text: str) -> None:
    """Compare with ``tests/golden/<name>``; ``DECKGYM_UPDATE_GOLDEN=1`` rewrites it after a
    deliberate rule change (review the diff before committing)."""
    path = GOLDEN_DIR / name
    if UPDATE or not path.exists():
        if not UPDATE:
            raise AssertionError(f"golden file {path} is missing: run with DECKGYM_UPDATE_GOLDEN=1 to write it")
        path.write_text(text)
    expected = path.read_text()
    if text != expected:
        got, want = text.splitlines(), expected.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        raise AssertionError(
            f"{name} differs from the golden file at line {first + 1}:\n"
            f"  expected: {want[first] if first < len(want) else '<end>'}\n"
            f"  got:      {got[first] if first < len(got) else '<end>'}"
        )


def random_legal(rng: random.Random, mask: np.ndarray) -> int:
    return rng.choice(np.flatnonzero(mask).tolist())


def run_env_episode(env, rng: random.Random, on_step=None) -> dict:
    """Run one AEC episode with random legal actions; returns the summed rewards per agent.
    ``on_step(env, agent, action)`` is called after every live step."""
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        action = None if termination or truncation else random_legal(rng, obs["action_mask"])
        env.step(action)
        if action is not None and on_step is not None:
            on_step(env, agent, action)
    return totals


def live_turns(env):
    """The live turns of an AEC game already reset, as ``(seat, observation)``: the caller steps
    each one with its action; finished agents are stepped with None here."""
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        yield env.agent_name_mapping[agent], obs


def observation_playthrough(env, seed: int, entry) -> str:
    """The acting seat's observation at every step of a seeded random game, one line a step
    with the action taken (or the final reward), its nonzero entries as ``index:value``
    (``entry(index, value)`` formats one, or None to skip it): pins the layout down."""
    env.reset(seed=seed)
    rng = random.Random(seed)
    lines = []
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        entries = " ".join(e for i, v in enumerate(obs["observation"]) if v and (e := entry(i, v)))
        if termination or truncation:
            lines.append(f"{agent} final reward {reward:+.4f} | {entries}")
            env.step(None)
            continue
        action = random_legal(rng, obs["action_mask"])
        lines.append(f"{agent} {env.game.action_to_text(action)} | {entries}")
        env.step(action)
    return "\n".join(lines) + "\n"


def all_cards(game) -> Counter:
    """Every card of a Pairs Draft game, wherever it lies (a Counter of numbers)."""
    cards = Counter(game.set_aside())
    for seat in range(4):
        for place in (game.hand, game.pack, game.face_up, game.face_down):
            cards.update(place(seat))
        if game.discarded(seat) is not None:
            cards[game.discarded(seat)] += 1
    cards.update(play.number for play in game.current_trick())
    return cards


def interrupt_training(config, monkeypatch) -> int:
    """Train ``config`` and stop it as Ctrl-C would, at the 350th vectorised env step (mid-run for
    a tiny config of 2048 timesteps): checks it exits with code 130, puts the env's step back for
    a resume, and returns the timesteps of the checkpoint it saved."""
    # imported here, not above: the env tests use this module too, and training loads SB3 and torch
    from training.learning import train as train_module
    from training.learning.learner_env import BatchedLearnerEnv

    calls = {"n": 0}
    original = BatchedLearnerEnv.step_wait

    def interrupt_midway(self):
        calls["n"] += 1
        if calls["n"] == 350:
            raise KeyboardInterrupt
        return original(self)

    monkeypatch.setattr(BatchedLearnerEnv, "step_wait", interrupt_midway)
    with pytest.raises(SystemExit) as stop:
        train_module.train(config, config.run_dir)
    assert stop.value.code == 130
    monkeypatch.setattr(BatchedLearnerEnv, "step_wait", original)
    return json.loads((config.run_dir / "checkpoint" / "meta.json").read_text())["timesteps"]
