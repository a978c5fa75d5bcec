"""Config validation: what would fail later (or never end) fails before training, with a short
message naming the key path: at load (``load_config``: the schema) or in the checks against the
env, the agents and this machine (``check_config``), which the CLI runs next."""

import ast
import os
import threading
from pathlib import Path

import pytest

from envs.engine import MAX_SHOWN
from training.common.games import make_raw_env, parse_env_args
from training.learning import preflight as preflight_module
from training.learning.config import ConfigError, check_resumable, load_config
from training.learning.preflight import check_config

QUICK = "configs/craits_quick.yaml"
MESSAGE_MAX = 3 * MAX_SHOWN + 200  # a message may quote a clipped value and some context, never more


def error(*args, **kwargs) -> str:
    """The message of the ConfigError a config gets before training: at load or in the checks."""
    with pytest.raises(ConfigError) as info:
        check_config(load_config(*args, **kwargs))
    return str(info.value)


# ---------------------------------------------------------------- YAML
@pytest.mark.parametrize(
    "text, where",
    [
        ("algorithm:\n  learning_rate: 0.1\n  n_epochs: 2\n  learning_rate: 0.2\n", "'algorithm.learning_rate'"),
        ("algorithm: {n_epochs: 2}\ntraining: {seed: 1}\nalgorithm: {n_epochs: 3}\n", "'algorithm'"),
        ("opponents:\n  pool:\n  - {agent: random, weight: 1, weight: 2}\n", "'opponents.pool[0].weight'"),
    ],
)
def test_a_repeated_key_is_an_error_naming_its_path(tmp_path, text, where):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    message = error(path)
    assert f"duplicate key {where}" in message and str(path) in message
    assert "duplicate key 'env.args.deals'" in error(QUICK, ["env.args={deals: [1], deals: [2]}"])
    with pytest.raises(ValueError, match="duplicate key 'deals.a'"):
        parse_env_args(["deals={a: 1, a: 2}"])


BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(c)}: &{chr(c)} [{', '.join([f'*{chr(c - 1)}'] * 9)}]\n" for c in range(ord("b"), ord("j"))
)


def test_aliases_are_refused_before_they_expand(tmp_path):
    """Nine lines of aliases make 9**9 strings: refused with a short message, not expanded."""
    path = tmp_path / "laughs.yaml"
    path.write_text("env:\n  args:\n    " + BILLION_LAUGHS.replace("\n", "\n    "))
    message = error(path)
    assert "aliases" in message and "line 4" in message and len(message) < MESSAGE_MAX
    message = error(QUICK, ["env.args.deals=[&x [1], *x]"])
    assert "--set env.args.deals" in message and "aliases" in message
    with pytest.raises(ValueError, match="aliases"):
        parse_env_args(["deals=[&x [1], *x]"])


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p.write_bytes(b"training:\n  seed: 1 \xff\xfe\n"),  # not UTF-8
        lambda p: p.mkdir(),
        lambda p: os.mkfifo(p),  # reading one waits for a writer: it must not even be read
    ],
)
def test_an_unusable_config_file_is_a_config_error_naming_it(tmp_path, make):
    path = tmp_path / "config.yaml"
    make(path)
    result = {}

    def load():
        try:
            load_config(path)
        except Exception as exc:  # noqa: BLE001 -- the test asserts which
            result["error"] = exc

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "load_config blocked"
    assert isinstance(result.get("error"), ConfigError), result
    assert f"can't read config {path}" in str(result["error"])


@pytest.mark.parametrize(
    "overrides, data",
    [
        (["algorithm.activation=" + "x" * 100_000], None),  # a bad value
        (["algorithm.learning_rate=[" + "1, " * 1_000 + "]"], None),  # a wrong type
        (["env.args.nine=" + "y" * 100_000], None),  # a bad env argument
        (["algorithm.n_steps=[" + "1, " * 1_000], None),  # not YAML
        (["algorithm." + "k" * 100_000 + "=1"], None),  # an unknown key
        (["no equals sign " * 10_000], None),
        ([], {"training": "z" * 100_000}),  # a section that isn't a mapping
    ],
)
def test_a_rejected_value_is_clipped_in_the_message(overrides, data):
    message = error(QUICK if data is None else None, overrides, data)
    assert len(message) < MESSAGE_MAX


def test_a_refused_resume_clips_the_changed_values():
    saved, wanted = load_config(QUICK), load_config(QUICK)
    wanted.env.args = dict(wanted.env.args, nine="x" * 100_000)
    with pytest.raises(ConfigError, match="a resumed run can't change env.args") as info:
        check_resumable(saved, wanted)
    assert len(str(info.value)) < MESSAGE_MAX


def test_parse_env_args_clips_long_values():
    for pairs in (["deals=[" + "1, " * 1_000], ["no equals sign " * 10_000], ["nine={" + "a: 1, " * 1_000 + "a: 2}"]):
        with pytest.raises(ValueError) as info:
            parse_env_args(pairs)
        assert len(str(info.value)) < MESSAGE_MAX, pairs


# ---------------------------------------------------------------- values that would fail later
def test_torch_threads_above_the_cores_is_refused(tmp_path):
    cores = os.cpu_count()
    sets = [f"output.dir={tmp_path}"]
    check_config(load_config(QUICK, sets + [f"algorithm.torch_threads={cores}"]))
    message = error(QUICK, sets + ["algorithm.torch_threads=100000"])
    assert "'algorithm.torch_threads' is 100000" in message and f"{cores} cores" in message
    # A resumed run's saved config is only read (not checked against this machine): it may come from a bigger one.
    assert load_config(QUICK, sets + ["algorithm.torch_threads=100000"]).algorithm.torch_threads == 100000


@pytest.mark.parametrize(
    "override, message",
    [
        ("algorithm.learning_rate=5", "'algorithm.learning_rate' must be less than or equal to 1, got 5.0"),
        ("algorithm.learning_rate=0", "'algorithm.learning_rate' must be greater than 0, got 0.0"),
        ("algorithm.learning_rate=1" + "0" * 400, "'algorithm.learning_rate' must be a finite number"),
        ("algorithm.learning_rate=.nan", "'algorithm.learning_rate' must be a finite number"),
        ("algorithm.clip_range=2.0", "'algorithm.clip_range' must be less than or equal to 1"),
        ("algorithm.ent_coef=1e30", "'algorithm.ent_coef' must be less than or equal to 10"),
        ("algorithm.vf_coef=100", "'algorithm.vf_coef' must be less than or equal to 10"),
        ("algorithm.gamma=-0.1", "'algorithm.gamma' must be greater than or equal to 0"),
    ],
)
def test_float_hyperparameters_must_be_in_a_sensible_range(override, message):
    assert message in error(QUICK, [override])


@pytest.mark.parametrize(
    "overrides",
    [
        ["algorithm.net_arch=[1000000, 1000000]"],  # two trillion parameters
        ["algorithm.n_steps=1000000000"],  # a rollout buffer of petabytes
        ["vec.n_envs=100000", "vec.workers=100000"],  # a Python process per worker
        ["algorithm.net_arch=[1" + "0" * 400 + "]"],  # beyond any float: still a message
    ],
)
def test_training_that_cant_fit_in_memory_is_refused(tmp_path, overrides):
    message = error(QUICK, [f"output.dir={tmp_path}"] + overrides)
    assert "'algorithm.*' and 'vec.n_envs'" in message and "GiB of memory" in message and "this machine has" in message


def test_memory_estimate_is_compared_with_this_machines_memory(tmp_path, monkeypatch):
    config = load_config(QUICK, [f"output.dir={tmp_path}"])
    env = make_raw_env(config.env.id, **config.env.args)
    agent = env.possible_agents[0]
    need = sum(
        preflight_module.memory_needed(
            config, env.observation_space(agent)["observation"].shape[0], env.action_space(agent).n
        ).values()
    )
    monkeypatch.setattr(preflight_module, "physical_memory", lambda: need - 1)
    assert f"more than the {(need - 1) / 2**30:.1f} GiB this machine has" in error(QUICK, [f"output.dir={tmp_path}"])


def test_render_mode_in_a_training_config_is_refused():
    assert "'env.args.render_mode': training never renders" in error(QUICK, ["env.args.render_mode=ansi"])


def test_output_dir_must_be_a_writable_folder(tmp_path, monkeypatch):
    file = tmp_path / "file"
    file.write_text("")
    message = error(QUICK, [f"output.dir={file}"])
    assert "'output.dir'" in message and "not a folder" in message
    assert "'output.dir'" in error(QUICK, [f"output.dir={file}/runs"])  # a file on the way
    # Root writes anywhere, so the permission is faked: the nearest existing folder is checked.
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: str(p) != str(locked) and real_access(p, mode))
    message = error(QUICK, [f"output.dir={locked}/new/runs"])
    assert "'output.dir'" in message and f"'{locked}' is not writable" in message
    config = load_config(QUICK, [f"output.dir={tmp_path}/new/runs"])
    check_config(config)
    assert config.output.dir == f"{tmp_path}/new/runs"


# ---------------------------------------------------------------- the schema
def test_algorithm_is_chosen_by_name_and_defaults_to_maskable_ppo():
    assert load_config(data={"algorithm": {"n_epochs": 2}}).algorithm.name == "MaskablePPO"  # no name: the default
    assert load_config(QUICK, ["algorithm.name=MaskablePPO"]).algorithm.n_epochs == 4
    assert (
        "config key 'algorithm.name' must be one of 'MaskablePPO', 'DoubleDQN', 'DMC', 'rllib_ppo', got 'PPO'"
        in error(QUICK, ["algorithm.name=PPO"])
    )
    # A key of the chosen algorithm's model is named without pydantic's label for the union's member.
    assert "unknown config key 'algorithm.n_step': allowed keys here are name, net_arch" in error(
        QUICK, ["algorithm.n_step=1"]
    )
    assert "config key 'algorithm.net_arch[1]' must be greater than 0, got 0" in error(
        QUICK, ["algorithm.net_arch=[16, 0]"]
    )


def test_numbers_are_read_as_today():
    # YAML reads 3e-4 (no dot) as a string: a float key takes it; an int key takes only an int.
    assert load_config(QUICK, ["algorithm.learning_rate=1e-3"]).algorithm.learning_rate == 0.001
    assert load_config(QUICK, ["algorithm.gamma=1"]).algorithm.gamma == 1.0
    assert "'algorithm.n_steps' must be a valid integer, got '5'" in error(QUICK, ["algorithm.n_steps='5'"])
    assert "'algorithm.n_steps' must be a valid integer, got 5.0" in error(QUICK, ["algorithm.n_steps=5.0"])
    # A bool is no number, nor a number a bool.
    assert "'algorithm.n_epochs' must be a valid integer, got True" in error(QUICK, ["algorithm.n_epochs=true"])
    assert "'algorithm.gamma' must be a valid number, got True" in error(QUICK, ["algorithm.gamma=true"])
    assert "'vec.workers' must be a valid integer, got True" in error(QUICK, ["vec.workers=true"])


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "opponents.learner_seat=-1",
            "'opponents.learner_seat' must be 'random' or greater than or equal to 0, got -1",
        ),
        ("opponents.learner_seat=x", "'opponents.learner_seat' must be 'random' or a valid integer, got 'x'"),
        (
            "opponents.pool=[{agent: random, weight: -1}]",
            "'opponents.pool[0].weight' must be greater than or equal to 0",
        ),
        ("opponents.pool=[{agent: random, weight: 0}]", "'opponents.pool' needs at least one entry with weight > 0"),
        ("opponents.pool=[heuristic]", "'opponents.pool[0]' must be a mapping of keys, got 'heuristic'"),
        ("output.name=../elsewhere", "'output.name' must be a plain folder name, got '../elsewhere'"),
        (
            "algorithm.batch_size=100000",
            "'algorithm.batch_size' is 100000: it must be at most algorithm.n_steps x vec.n_envs = 2048",
        ),
        ("env.args={1: 2}", "'env.args[1]' must be a valid string, got 1"),
    ],
)
def test_schema_errors_name_the_key_path(override, message):
    assert message in error(QUICK, [override])


def test_each_problem_is_one_line_and_their_number_is_bounded():
    lines = error(QUICK, ["algorithm.n_steps=0", "vec.n_envs=0", "algorithm.gamma=2"]).splitlines()
    assert lines == [
        "config key 'algorithm.n_steps' must be greater than 0, got 0",
        "config key 'algorithm.gamma' must be less than or equal to 1, got 2.0",
        "config key 'vec.n_envs' must be greater than 0, got 0",
    ]
    message = error(QUICK, ["opponents.pool=[" + "1, " * 1_000 + "]"])
    assert message.endswith("and 990 more problems") and len(message) < MESSAGE_MAX


def test_checks_needing_the_env_or_agents_run_apart_from_loading():
    # The schema knows no env, agent or checkpoint: training.learning.preflight checks those.
    config = load_config(QUICK, ["env.args.nine=any", "opponents.pool=[{agent: checkpoints/nothing_here}]"])
    with pytest.raises(ConfigError, match="'env.args'.*nine"):
        check_config(config)
    tree = ast.parse(Path("training/learning/config.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {"agents", "games", "checkpoint"} & {name.rsplit(".", 1)[-1] for name in imported if name}


def test_an_algorithm_on_a_missing_extra_is_refused_before_training(monkeypatch):
    """rllib_ppo without Ray installed: the message names the extra, before a run folder exists."""
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # "import ray" now raises ImportError
    message = error("configs/craits_rllib_quick.yaml")
    assert "config key 'algorithm.name': algorithm rllib_ppo needs Ray" in message
    assert 'pip install -e ".[scale]"' in message
