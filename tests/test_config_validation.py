"""Config validation: what would fail later (or never end) fails at load, with a short message
naming the key path."""
import os
import threading

import pytest

from training import config as config_module
from training.config import ConfigError, MAX_SHOWN, check_resumable, load_config
from training.games import make_raw_env, parse_env_args

QUICK = "configs/craits_quick.yaml"
MESSAGE_MAX = 3 * MAX_SHOWN + 200  # a message may quote a clipped value and some context, never more


def error(*args, **kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(*args, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------- YAML
@pytest.mark.parametrize("text, where", [
    ("algorithm:\n  learning_rate: 0.1\n  n_epochs: 2\n  learning_rate: 0.2\n", "'algorithm.learning_rate'"),
    ("algorithm: {n_epochs: 2}\ntraining: {seed: 1}\nalgorithm: {n_epochs: 3}\n", "'algorithm'"),
    ("opponents:\n  pool:\n  - {agent: random, weight: 1, weight: 2}\n", "'opponents.pool[0].weight'"),
])
def test_a_repeated_key_is_an_error_naming_its_path(tmp_path, text, where):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    message = error(path)
    assert f"duplicate key {where}" in message and str(path) in message
    assert "duplicate key 'env.args.deals'" in error(QUICK, ["env.args={deals: [1], deals: [2]}"])
    with pytest.raises(ValueError, match="duplicate key 'deals.a'"):
        parse_env_args(["deals={a: 1, a: 2}"])


BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(c)}: &{chr(c)} [{', '.join([f'*{chr(c - 1)}'] * 9)}]\n" for c in range(ord("b"), ord("j")))


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


@pytest.mark.parametrize("make", [
    lambda p: p.write_bytes(b"training:\n  seed: 1 \xff\xfe\n"),  # not UTF-8
    lambda p: p.mkdir(),
    lambda p: os.mkfifo(p),  # reading one waits for a writer: it must not even be read
])
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


@pytest.mark.parametrize("overrides, data", [
    (["algorithm.activation=" + "x" * 100_000], None),  # a bad value
    (["algorithm.learning_rate=[" + "1, " * 1_000 + "]"], None),  # a wrong type
    (["env.args.nine=" + "y" * 100_000], None),  # a bad env argument
    (["algorithm.n_steps=[" + "1, " * 1_000], None),  # not YAML
    (["algorithm." + "k" * 100_000 + "=1"], None),  # an unknown key
    (["no equals sign " * 10_000], None),
    ([], {"training": "z" * 100_000}),  # a section that isn't a mapping
])
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
    for pairs in (["deals=[" + "1, " * 1_000], ["no equals sign " * 10_000],
                  ["nine={" + "a: 1, " * 1_000 + "a: 2}"]):
        with pytest.raises(ValueError) as info:
            parse_env_args(pairs)
        assert len(str(info.value)) < MESSAGE_MAX, pairs


# ---------------------------------------------------------------- values that would fail later
def test_torch_threads_above_the_cores_is_refused(tmp_path):
    cores = os.cpu_count()
    sets = [f"output.dir={tmp_path}"]
    assert load_config(QUICK, sets + [f"algorithm.torch_threads={cores}"]).algorithm.torch_threads == cores
    message = error(QUICK, sets + ["algorithm.torch_threads=100000"])
    assert "'algorithm.torch_threads' is 100000" in message and f"{cores} cores" in message
    # A resumed run's saved config is only read: it may come from a bigger machine.
    assert load_config(QUICK, sets + ["algorithm.torch_threads=100000"], machine=False)


@pytest.mark.parametrize("override, message", [
    ("algorithm.learning_rate=5", "'algorithm.learning_rate' must be between 0 (excluded) and 1, got 5.0"),
    ("algorithm.learning_rate=1" + "0" * 400, "'algorithm.learning_rate' must be a finite number"),
    ("algorithm.clip_range=2.0", "'algorithm.clip_range' must be between 0 (excluded) and 1"),
    ("algorithm.ent_coef=1e30", "'algorithm.ent_coef' must be between 0 and 10.0"),
    ("algorithm.vf_coef=100", "'algorithm.vf_coef' must be between 0 and 10.0"),
])
def test_float_hyperparameters_must_be_in_a_sensible_range(override, message):
    assert message in error(QUICK, [override])


@pytest.mark.parametrize("overrides", [
    ["algorithm.net_arch=[1000000, 1000000]"],  # two trillion parameters
    ["algorithm.n_steps=1000000000"],  # a rollout buffer of petabytes
    ["vec.n_envs=100000", "vec.subprocesses=true"],  # a Python process per env
    ["algorithm.net_arch=[1" + "0" * 400 + "]"],  # beyond any float: still a message
])
def test_training_that_cant_fit_in_memory_is_refused(tmp_path, overrides):
    message = error(QUICK, [f"output.dir={tmp_path}"] + overrides)
    assert "'algorithm.net_arch'" in message and "GiB of memory" in message and "this machine has" in message


def test_memory_estimate_is_compared_with_this_machines_memory(tmp_path, monkeypatch):
    config = load_config(QUICK, [f"output.dir={tmp_path}"])
    env = make_raw_env(config.env.id, **config.env.args)
    agent = env.possible_agents[0]
    need = sum(config_module.memory_needed(config, env.observation_space(agent)["observation"].shape[0],
                                           env.action_space(agent).n).values())
    monkeypatch.setattr(config_module, "physical_memory", lambda: need - 1)
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
    assert load_config(QUICK, [f"output.dir={tmp_path}/new/runs"]).output.dir == f"{tmp_path}/new/runs"
