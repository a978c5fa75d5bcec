"""Where league matches, evaluation chunks and benchmark trials run: a local process pool
(the default, as always) or Ray tasks.

    python -m training.league --out leagues/craits --agents heuristic,checkpoints/craits --ray
    RAY_ADDRESS=head-node:6379 python -m training.league --out leagues/craits   # joins that cluster
    python -m training.benchmark --config configs/benchmark_small.yaml --ray-address head-node:6379

``--ray`` starts a local Ray (``--processes`` CPUs); ``--ray-address ADDRESS``, or Ray's own
``RAY_ADDRESS`` environment variable, joins a running cluster (and needs no ``--ray``). Ray is
the optional ``scale`` extra: ``pip install -e ".[scale]"``; nothing else imports it.

Nothing assumes a disk shared with the workers:

- the code (the ``envs`` and ``training`` packages) reaches them in Ray's runtime
  environment (``py_modules``);
- an agent that is a local folder (a checkpoint: meta.json + policy.npz; an exported bot:
  model.onnx + bot.json; ``onnx:DIR``) is read here, only those files and size-capped, put in
  the object store once, and written into a temporary folder on the worker, where
  ``make_agent`` finds it (``agent_folder``) under the spec as the user gave it, so names,
  match ids, seeds and results are the same as in a local run;
- results come back to this process, which alone writes the league log, the evaluation, the
  benchmark's trial folders.

A worker that dies is retried (``MAX_RETRIES``); since only this process writes, a retried task
is never counted twice.
"""

from __future__ import annotations

import functools
import importlib
import multiprocessing
import os
import sys
from pathlib import Path

import envs
import training
from training.agents.folders import agent_copies, pack_agents
from training.common.files import write_atomically

SCALE_EXTRA = 'pip install -e ".[scale]"'
MAX_RETRIES = 3  # a task whose worker died is run again up to this many times
EXCLUDES = ["__pycache__", "*.pyc"]


def limit_threads(n: int = 1) -> None:
    """At most ``n`` threads for numpy's BLAS in this process (torch has its own setting).
    Policy opponents and numpy bots multiply small matrices: extra BLAS threads gain nothing
    there, and with a process on every core (trials, pool workers, env workers) they spin
    waiting on each other: a batched opponent call took 37x longer on a loaded 2-core machine
    (``benchmarks/training_profile.py --pool checkpoints/craits``)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(n, user_api="blas")


def _pool_worker_init(init) -> None:
    limit_threads(1)  # one process per core
    if init:
        init[0](*init[1])


class ExecutorError(ValueError):
    """Ray missing, unreachable, or a task that failed for good: the message says what to do."""


def import_ray(what: str = "--ray / --ray-address"):
    """Ray, or ``ExecutorError`` naming the extra to install (``what`` needs it)."""
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            f"{what} need{'' if what.startswith('--') else 's'} Ray, which is not installed: "
            f"{SCALE_EXTRA} (the 'scale' extra)"
        ) from None
    return ray


# ---------------------------------------------------------------- executors
class LocalExecutor:
    """Today's behaviour: ``processes`` spawned workers (safe beside torch threads), or this
    process alone with 1."""

    ray = False

    def __init__(self, processes: int = 1):
        self.processes = self.workers = processes

    def describe(self) -> str:
        return f"{self.processes} process(es)"

    def imap(self, fn, tasks: list, init=None, chunksize: int = 1, agents=()):
        """``(index, fn(task))`` for every task, in order; ``init = (function, args)`` runs once
        per worker process first. ``agents`` (specs whose files a task needs) are on this disk."""
        if self.processes == 1 or len(tasks) <= 1:
            if init:
                init[0](*init[1])
            yield from enumerate(map(fn, tasks))
            return
        with multiprocessing.get_context("spawn").Pool(
            min(self.processes, len(tasks)), _pool_worker_init, (init,)
        ) as pool:
            yield from enumerate(pool.imap(fn, tasks, chunksize))


def _run_chunk(fn, init, packed, tasks):
    """A Ray task: the chunk's results, with the agents' files on this worker's disk."""
    with agent_copies(packed):
        _pool_worker_init(init)
        return [fn(task) for task in tasks]


class RayExecutor:
    """Ray tasks on a local Ray (``address`` None: started here with ``processes`` CPUs, unless
    this process is connected already) or on the cluster at ``address``."""

    ray = True

    def __init__(self, address: str | None = None, processes: int = 1):
        ray = import_ray()
        if not ray.is_initialized():
            options = {} if address else {"num_cpus": processes}
            try:
                ray.init(address=address, runtime_env=runtime_env(), include_dashboard=False, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(f"can't start or reach Ray{f' at {address}' if address else ''}: {exc}") from None
        self.address = address
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote = ray.remote(_run_chunk).options(num_cpus=1, max_retries=MAX_RETRIES)

    def describe(self) -> str:
        return f"Ray ({self.workers} CPUs{f' at {self.address}' if self.address else ''})"

    def imap(self, fn, tasks: list, init=None, chunksize: int = 1, agents=()):
        """``(index, fn(task))`` for every task, as the Ray tasks (``chunksize`` tasks each) finish;
        ``init = (function, args)`` runs first in each. A task's error is raised here as itself."""
        import ray
        from ray.exceptions import RayError, RayTaskError

        fn, init = _importable(fn), init and (_importable(init[0]), init[1])
        packed = ray.put(pack_agents(agents))  # once, whatever the number of tasks
        chunks = [range(i, min(i + chunksize, len(tasks))) for i in range(0, len(tasks), chunksize)]
        pending = {self._remote.remote(fn, init, packed, [tasks[i] for i in chunk]): chunk for chunk in chunks}
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                chunk = pending.pop(done[0])
                try:
                    results = ray.get(done[0])
                except RayTaskError as exc:  # the task's own exception (an illegal move, a bad agent)
                    cause = getattr(exc, "cause", None)
                    raise (cause if isinstance(cause, Exception) else exc) from None
                except RayError as exc:  # its worker died MAX_RETRIES + 1 times, the node was lost, ...
                    raise ExecutorError(
                        f"a Ray task failed for good ({type(exc).__name__}) after {MAX_RETRIES} retries: {exc}"
                    ) from None
                yield from zip(chunk, results)
        finally:
            for ref in pending:  # stopped early (an error, Ctrl-C): don't leave work behind
                ray.cancel(ref)


def _importable(fn):
    """A function of the module run as a script (``python -m training.league``: ``__main__``) as
    that module's own: Ray pickles ``__main__``'s functions by value, each with a globals dict of
    its own, so one could not see what another set (the league's worker env)."""
    if getattr(fn, "__module__", None) == "__main__":
        name = getattr(sys.modules["__main__"].__spec__, "name", None)
        if name:
            return getattr(importlib.import_module(name), fn.__qualname__)
    return fn


def runtime_env() -> dict:
    """What Ray ships to every worker: this code, from wherever it is (a checkout or installed)."""
    return {
        "py_modules": [str(Path(next(iter(pkg.__path__))).resolve()) for pkg in (envs, training)],
        "excludes": EXCLUDES,
    }


def make_executor(processes: int = 1, ray: bool = False, address: str | None = None):
    """The executor asked for: Ray when ``ray``, an ``address`` or ``RAY_ADDRESS`` says so,
    else the local pool."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    return RayExecutor(address, processes) if ray or address else LocalExecutor(processes)


def add_executor_arguments(parser) -> None:
    """``--ray`` and ``--ray-address``, as the league, evaluation and benchmark take them."""
    group = parser.add_argument_group(f"Ray (the scale extra: {SCALE_EXTRA}; docs/scaling.md)")
    group.add_argument(
        "--ray", action="store_true", help="run the work as Ray tasks on a local Ray started here (--processes CPUs)"
    )
    group.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="run it on the running Ray cluster at ADDRESS (also: the RAY_ADDRESS variable)",
    )


def executor_from_args(args, processes: int):
    return make_executor(processes, args.ray, args.ray_address)


def read_folder(folder: Path, skip=(".lock",)) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative path (POSIX), for sending it whole."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.name not in skip
    }


def write_folder(folder: Path, files: dict[str, bytes]) -> None:
    """``files`` (``read_folder``'s) written into ``folder`` (a new or empty one); a relative path
    that would leave it is refused."""
    root = folder.resolve()
    for name, data in files.items():
        path = (root / name).resolve()
        if root not in path.parents:
            raise ExecutorError(f"refusing to write {name!r}: outside {folder}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def replace_folder(folder: Path, files: dict[str, bytes]) -> None:
    """``folder`` replaced by one holding ``files`` (``training.common.files.write_atomically``)."""
    write_atomically(folder, functools.partial(write_folder, files=files))
