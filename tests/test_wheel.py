"""The wheel carries what a user needs away from a clone: the shipped bots and configs, the
rules, the web app's files and the examples; installed (not editable), from an empty folder,
bots and configs are found by name."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from training import shipped

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [built] = out.glob("deckgym-*.whl")
    return built


def test_the_wheel_carries_bots_configs_rules_web_files_and_examples(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for bot in shipped.bot_names():
        assert {
            f"training/shipped/checkpoints/{bot}/meta.json",
            f"training/shipped/checkpoints/{bot}/policy.npz",
        } <= names
    assert {f"training/shipped/configs/{name}.yaml" for name in shipped.config_names()} <= names
    assert {
        "envs/RULES.md",
        "training/frontends/web_static/index.html",
        "training/frontends/web_static/app.js",
        "envs/craits/web.js",
        "training/shipped/examples/node/play_craits.js",
        "training/shipped/examples/cleanrl_ppo.py",
    } <= names
    assert not any(name.endswith((".zip", ".pyc")) or "/tests/" in name for name in names)  # no pickles, no tests
    assert any(name.endswith("entry_points.txt") for name in names)


def test_installed_it_finds_bots_and_configs_by_name_from_an_empty_folder(wheel, tmp_path):
    target, empty = tmp_path / "site", tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    script = """
import training, envs
from training.agents import make_agent
from training.common.games import EnvHandle
from training.learning.config import load_config
from training.matches.evaluate import evaluate
print(training.__file__)
agent = make_agent("pairs_draft", EnvHandle("pairs_draft_v0"))
print(agent.path)
print(load_config("craits_quick").output.name)
result = evaluate(EnvHandle("craits_v0", {"deals": [3]}), ["craits", "heuristic"], games=2)
print(sorted(result["agents"]))
"""
    # the wheel's packages first; the dependencies from this environment
    path = f"{target}:{sysconfig.get_paths()['purelib']}"
    done = subprocess.run(
        [sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {path.split(':')!r}\n{script}"],
        cwd=empty,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    where, bot, config, agents = done.stdout.splitlines()
    assert where.startswith(str(target)) and bot.startswith(str(target / "training" / "shipped" / "checkpoints"))
    assert config == "craits_quick" and agents == "['craits', 'heuristic']"


def test_a_folder_of_the_same_name_wins(tmp_path, monkeypatch):
    from training.agents.folders import agent_folder

    monkeypatch.chdir(tmp_path)
    assert Path(agent_folder("craits")) == shipped.bot_folder("craits")
    (tmp_path / "craits").mkdir()
    assert agent_folder("craits") == "craits"  # the folder here, as a spec that names a folder always meant
    assert shipped.config_path("craits_quick") == shipped.CONFIGS / "craits_quick.yaml"
    (tmp_path / "craits_quick").write_text("")
    assert shipped.config_path("craits_quick") == Path("craits_quick")
