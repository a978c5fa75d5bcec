"""Checkpoints from anywhere are checked before use (meta.json fields, policy.npz headers),
and checkpoint writes survive what a kill or a user may leave in a run folder."""

import io
import json
import os
import threading
import zipfile
from types import SimpleNamespace

import numpy as np
import pytest

from training.agents.checkpoint import CheckpointError, check_compatible, load_policy, read_meta
from training.common.files import recover_swap, write_atomically

RULES = {"nine": "same_colour"}


def tiny_checkpoint(folder, **meta_changes):
    """A valid 3 -> 2 -> 2 -> 4 policy; returns its arrays."""
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    arrays = {
        "layer_0_weight": rng.normal(size=(2, 3)),
        "layer_0_bias": np.zeros(2),
        "layer_1_weight": rng.normal(size=(2, 2)),
        "layer_1_bias": np.zeros(2),
        "action_weight": rng.normal(size=(4, 2)),
        "action_bias": np.zeros(4),
    }
    np.savez(folder / "policy.npz", **arrays)
    meta = {
        "format_version": 1,
        "env_id": "craits_v0",
        "env_args": {},
        "rules": RULES,
        "observation_size": 3,
        "action_size": 4,
        "activation": "tanh",
        "hidden_sizes": [2, 2],
        "algorithm": {"net_arch": [2, 2]},
        **meta_changes,
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return arrays


def npy_bytes(array=None, header=None):
    """A .npy member; ``header`` writes just a header for an array that is not there."""
    out = io.BytesIO()
    if header is None:
        np.lib.format.write_array(out, np.asarray(array), allow_pickle=True)
    else:
        np.lib.format.write_array_header_1_0(out, header)
    return out.getvalue()


def rewrite_npz(folder, arrays, extra=()):
    with zipfile.ZipFile(folder / "policy.npz", "w") as archive:
        for name, array in arrays.items():
            archive.writestr(f"{name}.npy", npy_bytes(array))
        for name, data in extra:
            archive.writestr(name, data)


def no_hang(call, fifo):
    """``call()``'s exception, failing (not hanging) if it blocks opening ``fifo``."""
    outcome = []

    def run():
        try:
            call()
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # release the reader stuck in open(): a writer appears and leaves
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
        pytest.fail(f"blocked opening the FIFO {fifo}")
    return outcome[0]


def edit_meta(folder, **changes):
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, **changes}))


def damage_policy(folder, arrays, what):
    if what == "meta drops a layer":  # meta.json edited consistently: the npz has a layer too many
        edit_meta(folder, hidden_sizes=[2], algorithm={"net_arch": [2]})
        return "unexpected member 'layer_1_weight.npy'"
    if what == "meta hidden_sizes edited alone":
        edit_meta(folder, hidden_sizes=[2])
        return "'hidden_sizes'"
    if what == "missing array":
        rewrite_npz(folder, {k: v for k, v in arrays.items() if k != "layer_1_bias"})
        return "lacks layer_1_bias"
    if what == "extra array":
        rewrite_npz(folder, arrays, [("extra.npy", npy_bytes(np.zeros(3)))])
        return "unexpected member 'extra.npy'"
    if what == "duplicate array":
        rewrite_npz(folder, arrays, [("action_bias.npy", npy_bytes(np.ones(4)))])
        return "unexpected member 'action_bias.npy'"
    if what == "non-npy member":
        rewrite_npz(folder, arrays, [("notes.txt", b"hello")])
        return "unexpected member 'notes.txt'"
    if what == "wrong shape":
        rewrite_npz(folder, {**arrays, "layer_1_weight": np.zeros((2, 3))})
        return r"layer_1_weight is \(2, 3\)"
    if what == "int dtype":
        rewrite_npz(folder, {**arrays, "action_bias": np.zeros(4, np.int64)})
        return "action_bias has dtype int64, not a float dtype"
    if what == "object dtype":
        rewrite_npz(folder, {**arrays, "action_bias": np.array([None] * 4, dtype=object)})
        return "action_bias has dtype object"
    if what == "header lies about size":
        rewrite_npz(
            folder,
            {k: v for k, v in arrays.items() if k != "action_bias"},
            [("action_bias.npy", npy_bytes(header={"shape": (4,), "fortran_order": False, "descr": "<f8"}))],
        )
        return "action_bias holds 0 bytes of data"
    if what == "empty file":
        (folder / "policy.npz").write_bytes(b"")
        return "policy.npz is empty"
    if what == "a bare npy":
        np.save(folder / "policy.npz.npy", arrays["action_bias"])
        os.replace(folder / "policy.npz.npy", folder / "policy.npz")
        return "not a policy file"
    raise AssertionError(what)


@pytest.mark.filterwarnings("ignore:Duplicate name")  # zipfile warns writing the duplicate on purpose
@pytest.mark.parametrize(
    "what",
    [
        "meta drops a layer",
        "meta hidden_sizes edited alone",
        "missing array",
        "extra array",
        "duplicate array",
        "non-npy member",
        "wrong shape",
        "int dtype",
        "object dtype",
        "header lies about size",
        "empty file",
        "a bare npy",
    ],
)
def test_policy_npz_is_checked_against_meta_json(tmp_path, what):
    arrays = tiny_checkpoint(tmp_path / "ckpt")
    meta, hidden, action = load_policy(tmp_path / "ckpt")  # the undamaged one loads
    assert [w.shape for w, _ in hidden] == [(2, 3), (2, 2)] and action[0].shape == (4, 2)
    message = damage_policy(tmp_path / "ckpt", arrays, what)
    with pytest.raises(CheckpointError, match=message) as error:
        load_policy(tmp_path / "ckpt")
    assert "meta.json" in str(error.value) or "policy.npz" in str(error.value)


def test_unused_huge_array_is_refused_from_its_header_alone(tmp_path, monkeypatch):
    arrays = tiny_checkpoint(tmp_path / "ckpt")
    # An 8 TiB float64 array by its header: only a few bytes on disk, never to be read.
    huge = npy_bytes(header={"shape": (2**40,), "fortran_order": False, "descr": "<f8"})
    rewrite_npz(tmp_path / "ckpt", arrays, [("huge.npy", huge)])
    read = []
    real_read_array = np.lib.format.read_array

    def recording_read_array(fp, *args, **kwargs):
        read.append(getattr(fp, "name", fp))
        if read[-1] == "huge.npy":
            raise AssertionError("the unused array's data was read")
        return real_read_array(fp, *args, **kwargs)

    monkeypatch.setattr(np.lib.format, "read_array", recording_read_array)
    with pytest.raises(CheckpointError, match=r"policy.npz: unexpected member 'huge.npy'"):
        load_policy(tmp_path / "ckpt")
    assert read == []  # refused before any array's data, not only the huge one's


@pytest.mark.parametrize(
    "text, field",
    [
        ('{"activation": ["tanh"]}', "activation"),
        ('{"activation": "sigmoid"}', "activation"),
        ('{"hidden_sizes": null}', "hidden_sizes"),
        ('{"hidden_sizes": [2, 0]}', "hidden_sizes"),
        ('{"hidden_sizes": [2, 2.5]}', "hidden_sizes"),
        ('{"hidden_sizes": [2, true]}', "hidden_sizes"),
        ('{"rules": "abc"}', "rules"),
        ('{"env_args": [1]}', "env_args"),
        ('{"algorithm": 3}', "algorithm"),
        ('{"observation_size": "3"}', "observation_size"),
        ('{"action_size": 4.0}', "action_size"),
        ('{"action_size": -4}', "action_size"),
        ('{"env_id": 7}', "env_id"),
        ('{"format_version": true}', "format"),
        ('{"format_version": "1"}', "format"),
        ('{"observation_size": 100000000, "hidden_sizes": [100000000], "algorithm": {}}', "parameters"),
    ],
)
def test_malformed_meta_fields_are_named_everywhere(tmp_path, text, field):
    folder = tmp_path / "ckpt"
    tiny_checkpoint(folder)
    edit_meta(folder, **json.loads(text))
    meta_file = str(folder / "meta.json")
    for call in (lambda: read_meta(folder), lambda: load_policy(folder)):
        with pytest.raises(CheckpointError, match=field) as error:
            call()
        assert meta_file in str(error.value)
    with pytest.raises(CheckpointError, match=field) as error:  # a meta dict read by other means
        env = SimpleNamespace(id="craits_v0", rule_args=RULES, obs_size=3, num_actions=4)
        check_compatible(json.loads((folder / "meta.json").read_text()), env, where=str(folder))
    assert meta_file in str(error.value)


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"[" * 100_000 + b"]" * 100_000, "RecursionError"),
        (b'{"env_id": "\xff"}', "UTF-8"),
        (b"{oops", "JSON"),
        (b"[]", "JSON object"),
        (json.dumps({"format_version": 1, "env_id": "craits_v0"}).encode(), "lacks observation_size, action_size"),
    ],
)
def test_unreadable_meta_json_is_a_checkpoint_error(tmp_path, content, problem):
    folder = tmp_path / "ckpt"
    tiny_checkpoint(folder)
    (folder / "meta.json").write_bytes(content)
    for call in (read_meta, load_policy):
        with pytest.raises(CheckpointError, match=problem) as error:
            call(folder)
        assert str(folder / "meta.json") in str(error.value)


@pytest.mark.parametrize("name", ["meta.json", "policy.npz"])
def test_fifo_or_missing_folder_is_refused_without_blocking(tmp_path, name):
    folder = tmp_path / "ckpt"
    tiny_checkpoint(folder)
    (folder / name).unlink()
    os.mkfifo(folder / name)
    error = no_hang(lambda: load_policy(folder), folder / name)
    assert isinstance(error, CheckpointError) and f"{folder / name} is not a regular file" in str(error)
    if name == "meta.json":
        error = no_hang(lambda: read_meta(folder), folder / name)
        assert isinstance(error, CheckpointError) and "not a regular file" in str(error)
    for call in (read_meta, load_policy):
        with pytest.raises(CheckpointError, match=f"{tmp_path / 'gone'} does not exist"):
            call(tmp_path / "gone")


def test_writes_survive_a_symlinked_checkpoint_and_stale_old_entries(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "meta.json").write_text("kept")
    run = tmp_path / "run"
    run.mkdir()
    target = run / "checkpoint"
    target.symlink_to(elsewhere, target_is_directory=True)
    for version in ("1", "2"):  # the link is replaced, then a real folder is, as always
        write_atomically(target, lambda d, version=version: (d / "meta.json").write_text(version))
        assert not target.is_symlink() and (target / "meta.json").read_text() == version
        assert not os.path.lexists(run / ".checkpoint.old")
    assert (elsewhere / "meta.json").read_text() == "kept"  # never written through or deleted

    (run / ".checkpoint.old").write_text("stale file")
    write_atomically(target, lambda d: (d / "meta.json").write_text("3"))
    assert (target / "meta.json").read_text() == "3" and not os.path.lexists(run / ".checkpoint.old")

    # A stale link under .old is no checkpoint to recover: it is unlinked, its folder kept.
    os.replace(target, run / "moved")
    (run / ".checkpoint.old").symlink_to(elsewhere, target_is_directory=True)
    recover_swap(target)
    assert not os.path.lexists(target)
    write_atomically(target, lambda d: (d / "meta.json").write_text("4"))
    assert (target / "meta.json").read_text() == "4" and not os.path.lexists(run / ".checkpoint.old")
    assert (elsewhere / "meta.json").read_text() == "kept"


def test_clean_leftovers_recovers_then_removes_temporary_folders(tmp_path):
    from training.agents.checkpoint import clean_leftovers

    run = tmp_path / "run"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("kept")
    (run / "snapshots" / "step_000000100").mkdir(parents=True)
    (run / "config.yaml").write_text("kept")
    # Killed between the two renames of a checkpoint replacement: the only copy is in .old,
    # with the unfinished temporary folder of the kill beside it.
    (run / ".checkpoint.old").mkdir()
    (run / ".checkpoint.old" / "meta.json").write_text("previous")
    (run / ".checkpoint.k3x9").mkdir()
    (run / ".checkpoint.k3x9" / "meta.json").write_text("half")
    (run / ".checkpoint.lnk").symlink_to(elsewhere, target_is_directory=True)
    (run / "snapshots" / ".step_000000200.ab12").mkdir()
    (run / "snapshots" / ".step_000000200.ab12" / "policy.npz").write_text("half")
    (run / "snapshots" / ".step_000000100.old").mkdir()  # stale: step_000000100 is in place
    clean_leftovers(run)
    assert (run / "checkpoint" / "meta.json").read_text() == "previous"
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint", "config.yaml", "snapshots"]
    assert [p.name for p in (run / "snapshots").iterdir()] == ["step_000000100"]
    assert (elsewhere / "keep").read_text() == "kept"
    clean_leftovers(run)  # nothing left to do; a fresh run folder is fine too
    clean_leftovers(tmp_path / "new-run")
    assert (run / "checkpoint" / "meta.json").read_text() == "previous"


def test_non_finite_weights_are_refused_when_loading(tmp_path):
    folder = tmp_path / "cp"
    arrays = tiny_checkpoint(folder)
    arrays["layer_0_bias"][0] = np.inf
    np.savez(folder / "policy.npz", **arrays)
    with pytest.raises(CheckpointError, match="layer_0_bias hold NaN or infinite"):
        load_policy(folder)
