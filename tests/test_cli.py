"""The ``deckgym`` command (``training/cli.py``): one line per subcommand, the version, and
each subcommand running its module with the same options."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from training import cli


def test_help_lists_every_command_in_one_line(capsys):
    cli.main(["--help"])
    out = capsys.readouterr().out
    for name in (
        "train",
        "evaluate",
        "play",
        "league",
        "benchmark",
        "export",
        "serve",
        "web",
        "replay",
        "ship",
        "ensemble",
    ):
        assert sum(line.split()[0] == name for line in out.splitlines() if line.startswith("  ")) == 1, name


def test_version_is_the_installed_one(capsys):
    from importlib.metadata import version

    cli.main(["--version"])
    assert capsys.readouterr().out.strip() == f"deckgym {version('deckgym')}"


def test_an_unknown_command_is_named():
    with pytest.raises(SystemExit, match="unknown command 'trian'"):
        cli.main(["trian"])


def test_a_subcommand_takes_its_modules_options(tmp_path):
    out = tmp_path / "result.json"
    cli.main(["evaluate", "--agents", "heuristic,random", "--games", "4", "--arg", "deals=[3]", "--json", str(out)])
    result = json.loads(out.read_text())
    assert result["env_id"] == "craits_v0" and set(result["agents"]) == {"heuristic", "random"}


def test_the_console_script_is_installed():
    script = shutil.which("deckgym") or shutil.which(
        "deckgym", path=str(__import__("pathlib").Path(sys.executable).parent)
    )
    assert script, "the deckgym console script is not installed (pip install -e .)"
    done = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "evaluate" in done.stdout


def test_a_subcommand_is_named_as_invoked(capsys):
    with pytest.raises(SystemExit):
        cli.main(["league", "--help"])
    assert capsys.readouterr().out.startswith("usage: deckgym league ")
    done = subprocess.run(
        [sys.executable, "-m", "training.league", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.startswith("usage: python -m training.league ")
