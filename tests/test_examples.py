"""The Python examples of examples/ run with a tiny budget and print what they should.

Each runs as a subprocess, as a user would run it, from the repository root. An example
whose library is not installed (the ``examples`` extra: Tianshou, TorchRL; the ``scale``
extra: RLlib) skips with the reason, except where ``DECKGYM_REQUIRE_EXAMPLES=1`` (CI with
the extras installed), where a missing library fails the test.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = os.environ.get("DECKGYM_REQUIRE_EXAMPLES") == "1"
EXTRA = {"tianshou": "examples", "torchrl": "examples", "ray": "scale", "torch": "train"}


def needs(*modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        extras = ",".join(sorted({EXTRA[m] for m in missing}))
        reason = f"{', '.join(missing)} not installed (pip install -c constraints.txt -e '.[{extras}]')"
        if REQUIRED:
            pytest.fail(f"{reason}; DECKGYM_REQUIRE_EXAMPLES=1 says the examples must run", pytrace=False)
        pytest.skip(reason)


def run_example(script: str, *args: str, timeout: int = 120) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # deckgym from this checkout, installed or not
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_cleanrl_ppo():
    needs("torch")
    out = run_example("cleanrl_ppo.py", "--total-steps", "2048", "--eval-games", "40")
    assert "vs 3 x craits" in out  # the shipped bot holds the other seats
    assert re.search(r"update 4/4 +learner moves 2048 ", out), out
    assert re.search(r"evaluation vs heuristic .*\n +trained PPO +mean reward [-+]\d", out), out
    assert re.search(r"random play +mean reward [-+]\d", out), out


def test_rllib_ppo():
    needs("torch", "ray")
    out = run_example("rllib_ppo.py", "--total-steps", "200", "--tiny", "--eval-games", "1", timeout=240)
    assert "trained checkpoint:" in out, out
    assert re.search(r"vs 3 x heuristic +win share \d", out), out
    assert re.search(r"vs 3 x random +win share \d", out), out


def test_tianshou_dqn():
    needs("torch", "tianshou")
    out = run_example("tianshou_dqn.py", "--epochs", "1", "--epoch-steps", "1000", "--eval-games", "20")
    assert re.search(r"untrained +mean reward [-+]\d.* over 20 games", out), out
    assert re.search(r"trained \d+ learner moves", out), out
    assert re.search(r"\n +trained +mean reward [-+]\d.* over 20 games", out), out


def test_torchrl_mappo():
    needs("torch", "torchrl")
    out = run_example("torchrl_mappo.py", "--total-frames", "2048", "--eval-games", "20")
    assert "state 824" in out, out  # the critic's input: the env's state(), 4 x 206
    assert re.search(r"batch 2 +env steps 2048 ", out), out
    assert re.search(r"trained MAPPO mean reward [-+]\d.*win share \d", out), out
