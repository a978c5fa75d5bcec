import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray for the whole test session (2 CPUs, no dashboard), with deckgym's code in its
    runtime environment as training.running.executor ships it; skipped where Ray is not installed."""
    ray = pytest.importorskip("ray", reason='Ray is not installed (the scale extra: pip install -e ".[scale]")')
    from training.running.executor import runtime_env

    if not ray.is_initialized():
        ray.init(
            num_cpus=2, include_dashboard=False, runtime_env=runtime_env(), log_to_driver=False, configure_logging=False
        )
    yield ray
    ray.shutdown()
